"""Stream a queryset in chunks by keyset pagination: each chunk one query starting after the last row.

An export of every row must neither hold the whole result (a client-side cursor: what
`.iterator()` becomes behind PgBouncer, with `DISABLE_SERVER_SIDE_CURSORS`) nor page with
OFFSET (each page re-reads every row before it, so a large export costs n²). Here each
chunk is `WHERE (k1, k2, …) after (the last row's keys) ORDER BY k1, k2, … LIMIT chunk`,
served by the index of the ordering, and no connection state is kept between chunks. The
keys must be non-null and end in a unique one (the primary key).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from functools import reduce

from django.db.models import Q

DEFAULT_CHUNK = 1000


def after_q(order: tuple[str, ...], last: tuple) -> Q:
    """Rows after `last` in `order` (fields, "-" for descending): the lexicographic comparison as a Q."""
    branches, equal = [], Q()
    for field, value in zip(order, last, strict=True):
        name = field.lstrip("-")
        branches.append(equal & Q(**{f"{name}__lt" if field.startswith("-") else f"{name}__gt": value}))
        equal &= Q(**{name: value})
    return reduce(operator.or_, branches)


def keyset_chunks(
    queryset, order: tuple[str, ...], *, chunk: int = DEFAULT_CHUNK, key: Callable | None = None
) -> Iterator[list]:
    """Yield the queryset's rows in `order`, a list of up to `chunk` rows per query.

    `key(row)` returns the row's values of `order` (default: the attributes of a model
    instance, so "query_id" reads the foreign key's column); pass one for `values_list` rows.
    """
    names = [field.lstrip("-") for field in order]
    key = key or (lambda row: tuple(getattr(row, name) for name in names))
    ordered = queryset.order_by(*order)
    last = None
    while True:
        page = ordered if last is None else ordered.filter(after_q(order, last))
        rows = list(page[:chunk])
        if rows:
            yield rows
        if len(rows) < chunk:
            return
        last = key(rows[-1])


def keyset_rows(queryset, order: tuple[str, ...], *, chunk: int = DEFAULT_CHUNK, key: Callable | None = None):
    """Yield the rows of `keyset_chunks` one by one."""
    for rows in keyset_chunks(queryset, order, chunk=chunk, key=key):
        yield from rows
