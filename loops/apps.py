from django.apps import AppConfig


class LoopsConfig(AppConfig):
    """The loop lab: what a checker does to a generation loop, and recorded attempts replayed.

    It stands on top of the other apps (it reads triage's recorded attempts, judges' reports,
    labelling's gold sets) and no app imports it: pages reach it by URL.
    """

    default_auto_field = "django.db.models.BigAutoField"
    name = "loops"
