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
    """Read a SQL text from a file or stdin (`-`); bytes that are not UTF-8 are a clear error."""
    if path == "-":
        data, where = sys.stdin.buffer.read(), "stdin"
    else:
        file = Path(path)
        if not file.is_file():
            raise CommandError(f"no SQL file at {path}")
        data, where = file.read_bytes(), path
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CommandError(f"the SQL in {where} is not valid UTF-8 (byte {exc.start})") from exc
