from django.apps import AppConfig
from django.db.models.signals import post_migrate

from config.signals import role_groups_after_migrate


class ConfigConfig(AppConfig):
    """The project app: roles, the home page and cross-app commands such as seed_demo."""

    name = "config"
    verbose_name = "Docket"

    def ready(self):
        post_migrate.connect(role_groups_after_migrate, sender=self)
