from django.apps import AppConfig


class ConfigConfig(AppConfig):
    """The project app: roles, the home page and cross-app commands such as seed_demo."""

    name = "config"
    verbose_name = "Docket"

    def ready(self):
        from django.db.models.signals import post_migrate

        from config.roles import ensure_role_groups

        post_migrate.connect(ensure_role_groups, sender=self)
