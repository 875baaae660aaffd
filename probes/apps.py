from django.apps import AppConfig


class ProbesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "probes"
