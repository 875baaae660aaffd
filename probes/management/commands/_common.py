"""Helpers shared by the probes management commands."""

import sys
from pathlib import Path

from django.core.management.base import CommandError

from probes.models import Warehouse


def get_warehouse(name: str) -> Warehouse:
    try:
        return Warehouse.objects.get(name=name)
    except Warehouse.DoesNotExist as exc:
        known = ", ".join(Warehouse.objects.values_list("name", flat=True)) or "none registered"
        raise CommandError(f"unknown warehouse {name!r} (known: {known})") from exc


def read_sql(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    file = Path(path)
    if not file.is_file():
        raise CommandError(f"no SQL file at {path}")
    return file.read_text()
