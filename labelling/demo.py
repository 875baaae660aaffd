"""The labelling step of `seed_demo`: import the demo gold set once (idempotent)."""

from pathlib import Path

from labelling.goldset_io import goldset_import
from labelling.models import GoldSet

DEMO_GOLD_FILE = Path(__file__).resolve().parent / "data" / "demo_gold.jsonl"
DEMO_GOLD_SET = "demo"


def demo_gold_load(stdout) -> None:
    """Import labelling/data/demo_gold.jsonl as gold set `demo` and publish v1, unless already there."""

    if not DEMO_GOLD_FILE.exists():
        stdout.write(f"demo gold set: {DEMO_GOLD_FILE} missing, skipped")
        return
    if GoldSet.objects.filter(name=DEMO_GOLD_SET, versions__isnull=False).exists():
        stdout.write("demo gold set: already imported")
        return
    version = goldset_import(path_or_file=DEMO_GOLD_FILE, gold_set_name=DEMO_GOLD_SET, fmt="jsonl")
    stdout.write(f"demo gold set: {version} with {version.items.count()} items")
