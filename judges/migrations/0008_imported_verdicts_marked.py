from django.db import migrations


def mark_imported(apps, schema_editor):
    """Say of verdicts already imported what import_verdicts now records: imported, not simulated.

    Only replay versions' verdicts can be told apart; their source format was not kept, so
    the next import of such a judge makes a version of its own with its format.
    """
    JudgeVersion = apps.get_model("judges", "JudgeVersion")
    Verdict = apps.get_model("judges", "Verdict")
    for version in JudgeVersion.objects.filter(backend="replay"):
        version.config = {**(version.config or {}), "imported": True}
        version.save(update_fields=["config"])
    Verdict.objects.filter(judge_version__backend="replay", endpoint="").update(endpoint="imported", simulated=False)


class Migration(migrations.Migration):
    dependencies = [
        ("judges", "0007_runchunk_lease_token"),
    ]

    operations = [
        migrations.RunPython(mark_imported, migrations.RunPython.noop),
    ]
