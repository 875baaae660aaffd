from django.apps import AppConfig
from django.db.backends.signals import connection_created

from labelling.signals import register_sqlite_function


class LabellingConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "labelling"

    def ready(self):
        connection_created.connect(register_sqlite_function, dispatch_uid="labelling_sqlite_function")
