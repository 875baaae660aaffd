from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class ProbesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "probes"

    def ready(self):
        from probes.models import Warehouse
        from probes.selectors import forget_warehouse

        post_save.connect(forget_warehouse, sender=Warehouse, dispatch_uid="probes-forget-warehouse-save")
        post_delete.connect(forget_warehouse, sender=Warehouse, dispatch_uid="probes-forget-warehouse-delete")
