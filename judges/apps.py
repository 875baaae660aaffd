from django.apps import AppConfig


class JudgesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "judges"

    def ready(self):
        from judges.informative_selectors import informative_rank  # noqa: PLC0415 — imports models: apps must be ready
        from labelling.queue_orders import queue_order_register  # noqa: PLC0415 — imports models: apps must be ready

        # Labelling sits below judges and cannot read verdicts: offer the order on its queue from here.
        queue_order_register(name="informative", label="Informative first", rank=informative_rank)
