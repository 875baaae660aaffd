from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class ProbesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "probes"

    def ready(self):
        # Models and the modules that import them can only load once the app registry is ready.
        from probes.models import Warehouse  # noqa: PLC0415 — app loading: models are not ready at import
        from probes.signals import forget_warehouse  # noqa: PLC0415 — app loading: imports probes.models

        post_save.connect(forget_warehouse, sender=Warehouse, dispatch_uid="probes-forget-warehouse-save")
        post_delete.connect(forget_warehouse, sender=Warehouse, dispatch_uid="probes-forget-warehouse-delete")
