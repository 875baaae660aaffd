"""Refuse, in the database, any change to a published gold set version or its items."""

from django.db import migrations

from labelling.immutability import drop_triggers, install_triggers


class Migration(migrations.Migration):
    dependencies = [
        ("labelling", "0002_adjudication_frozen_versions_queue"),
    ]

    operations = [
        migrations.RunPython(install_triggers, drop_triggers),
    ]
