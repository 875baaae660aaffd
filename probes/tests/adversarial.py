"""The older adversarial corpus, folded into the hostile corpus (`probes.tests.hostile`, issue 13).

Every text that used to live here is now an entry of the hostile corpus; this module keeps
the `(label, sql)` view that `test_adversarial.py` runs through `run_sql` on both dialects:
every text the guard must refuse (those it can write to a file: a lone surrogate cannot
be), plus the harmless tricks the guard may let through, labelled as before. The families
issue 27 added are dialect-specific (PostgreSQL's functional notation is a plain column on
SQLite); they run, each on its own dialects, in the hostile-corpus tests only.
"""

from probes.tests.hostile.corpus import CORPUS as HOSTILE_CORPUS
from probes.tests.hostile.corpus import ISSUE_27_FAMILIES

# Hostile-corpus names of harmless texts → the labels the run_sql test knows them by.
HARMLESS_LABELS = {
    "line-comment-hides-delete": "line comment hides delete",
    "block-comment-hides-drop": "block comment hides drop",
    "semicolon-in-string": "semicolon in string",
    "escaped-quote-in-string": "escaped quote in string",
    "quoted-identifier": "quoted identifier",
    "table-shorthand": "table shorthand",
}


def _writable(sql: str) -> bool:
    try:
        sql.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


CORPUS: list[tuple[str, str]] = [
    (HARMLESS_LABELS.get(entry.name, entry.name), entry.sql)
    for entry in HOSTILE_CORPUS
    if (entry.guard_must_refuse or entry.name in HARMLESS_LABELS)
    and _writable(entry.sql)
    and entry.family not in ISSUE_27_FAMILIES
]
