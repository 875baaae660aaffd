from django.apps import AppConfig


class LabellingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "labelling"
