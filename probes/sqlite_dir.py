"""Registering a folder of SQLite files (the layout Spider and BIRD ship) as read-only warehouses.

Each file becomes a warehouse named after the file (`concert_singer/concert_singer.sqlite` →
`concert_singer`), opened `mode=ro&immutable=1`, and its catalogue is introspected. A gold
item picks its warehouse by name, or by a metadata key (`import_gold --warehouse-from db_id`).
"""

from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from django.core.exceptions import ValidationError
from django.core.validators import validate_slug

from probes.catalogue import catalogue_refresh
from probes.models import Dialect
from probes.warehouses import warehouse_register

SUFFIXES = (".sqlite", ".sqlite3", ".db")
SQLITE_HEADER = b"SQLite format 3\x00"


@dataclass
class SqliteDirResult:
    registered: list[tuple[str, int]] = field(default_factory=list)  # (warehouse, tables in its catalogue)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file, why)


def sqlite_files_find(directory: Path) -> list[Path]:
    """Return the SQLite files of a folder and of its subfolders, sorted (Spider and BIRD nest one a folder)."""
    return sorted(path for path in directory.rglob("*") if path.is_file() and path.suffix.lower() in SUFFIXES)


def sqlite_dir_register(*, directory, catalogue: bool = True) -> SqliteDirResult:
    """Register every SQLite file under `directory` as a read-only warehouse; raise ValueError for a bad folder.

    A file that is not SQLite or whose name is not a warehouse name is skipped and reported; two
    files with one name are refused, since a gold item could not say which it means.
    """
    directory = Path(directory).resolve()
    if not directory.is_dir():
        raise ValueError(f"{directory} is not a folder")
    files = sqlite_files_find(directory)
    if not files:
        raise ValueError(f"no SQLite file ({', '.join(SUFFIXES)}) in {directory}")
    by_name: dict[str, list[Path]] = {}
    for path in files:
        by_name.setdefault(path.stem, []).append(path)
    clashes = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    if clashes:
        listed = "; ".join(f"{name}: {', '.join(str(p) for p in paths)}" for name, paths in sorted(clashes.items()))
        raise ValueError(f"several files would be one warehouse ({listed})")
    result = SqliteDirResult()
    for path in files:
        problem = _file_problem(path)
        if problem:
            result.skipped.append((str(path), problem))
            continue
        warehouse = warehouse_register(
            name=path.stem,
            dialect=Dialect.SQLITE,
            dsn=f"sqlite:///{quote(str(path))}?immutable=1",
            description=f"read-only SQLite file {path.name} (registered from {directory})",
        )
        tables = len(catalogue_refresh(warehouse=warehouse).snapshot.get("tables", {})) if catalogue else 0
        result.registered.append((warehouse.name, tables))
    return result


def _file_problem(path: Path) -> str | None:
    try:
        validate_slug(path.stem)
    except ValidationError:
        return "its name is not a warehouse name (letters, digits, - and _ only)"
    if len(path.stem) > 64:
        return "its name is longer than 64 characters"
    with path.open("rb") as stream:
        if stream.read(len(SQLITE_HEADER)) != SQLITE_HEADER:
            return "not a SQLite database"
    return None
