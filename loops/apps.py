from django.apps import AppConfig


class LoopsConfig(AppConfig):
    """The loop lab: what a checker does to a generation loop, and recorded attempts replayed.

    It stands on top of the other apps (it keeps the attempts triage's ingestion takes, reads
    judges' reports and labelling's gold sets) and no app imports it: pages reach it by URL,
    and triage's ingestion reaches its attempts store through the registration below.
    """

    default_auto_field = "django.db.models.BigAutoField"
    name = "loops"

    def ready(self):
        from loops.attempts import request_attempts_bulk_store  # noqa: PLC0415 — imports models: apps must be ready
        from triage.attempts import request_attempts_store_register  # noqa: PLC0415 — imports models: idem

        request_attempts_store_register(request_attempts_bulk_store)
