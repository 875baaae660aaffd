"""Plain multi-row INSERTs for the import and publish hot paths.

`bulk_create` builds a model instance and prepares every field of every row in Python,
about a third of a millisecond a row; a 50,000-item import writes three rows an item.
Here each row is a tuple of already-adapted values: SQLite gets `executemany` (one
prepared statement, no round trips); PostgreSQL gets multi-row `VALUES` statements of
ROWS_PER_STATEMENT rows, since a statement per row costs a server round trip each even
when pipelined.
"""

import itertools
from collections.abc import Iterable, Sequence

from django.db import connection

ROWS_PER_STATEMENT = 1000  # x 14 columns at most: well under PostgreSQL's 65,535 parameters


def db_value(model, field_name: str, value):
    """Adapt one Python value for `field_name` as Django would when saving it."""
    return model._meta.get_field(field_name).get_db_prep_save(value, connection)


# The Query fields a bulk insert gives values for, in this order: the gold-set import's writer
# and the ingestion API's one statement both (the id aside; `invariants` and `origin` take the
# database's default).
QUERY_INSERT_FIELDS = (
    "question",
    "sql",
    "dialect",
    "warehouse",
    "source",
    "gold_set",
    "external_id",
    "fingerprint",
    "reference_sql",
    "metadata",
    "created_at",
    "label_count",
    "overlap_key",
    "wants_second_label",
)


def insert_rows(model, field_names: Sequence[str], rows: Iterable[Sequence]) -> None:
    """INSERT rows (tuples in the order of `field_names`, values already adapted) into model's table."""
    quote = connection.ops.quote_name
    columns = ", ".join(quote(model._meta.get_field(name).column) for name in field_names)
    one_row = "(" + ", ".join(["%s"] * len(field_names)) + ")"
    head = f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES "
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            cursor.executemany(head + one_row, list(rows))
            return
        iterator = iter(rows)
        while chunk := list(itertools.islice(iterator, ROWS_PER_STATEMENT)):
            cursor.execute(head + ", ".join([one_row] * len(chunk)), [value for row in chunk for value in row])
