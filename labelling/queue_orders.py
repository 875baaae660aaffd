"""Orders the labelling queue can offer besides its own (id order), registered by higher apps.

Labelling sits below judges, so it cannot read verdicts; the judges app registers its
"informative first" order here at start-up (`judges.apps`), and the queue only calls the
ranking it was given. An order ranks a batch of candidate query ids, best first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_ORDER = "id"
# How many waiting items an order ranks per "next item": enough to find the informative
# ones in a large set without loading every verdict of 100,000 items on each click.
RANK_BATCH = 2000


@dataclass(frozen=True)
class QueueOrder:
    name: str
    label: str
    rank: Callable[..., list[int]]  # rank(*, gold_set, query_ids) -> query ids, best first


_ORDERS: dict[str, QueueOrder] = {}


def queue_order_register(*, name: str, label: str, rank: Callable[..., list[int]]) -> None:
    """Offer an order on the labelling queue (idempotent: the last registration wins)."""
    _ORDERS[name] = QueueOrder(name=name, label=label, rank=rank)


def queue_order_choices() -> list[tuple[str, str]]:
    """Return (name, label) of every order the queue offers, its own first."""
    return [(DEFAULT_ORDER, "In order"), *((order.name, order.label) for order in _ORDERS.values())]


def queue_order_get(*, name: str | None) -> QueueOrder | None:
    """Return the registered order called `name`, or None for the queue's own order or an unknown name."""
    return _ORDERS.get(name or "")


def queue_order_first(
    *, order: QueueOrder, gold_set, candidate_ids: list[int], labelled_by_user: set[int]
) -> int | None:
    """Return the best-ranked candidate the user has not labelled, or None."""
    waiting = [query_id for query_id in candidate_ids if query_id not in labelled_by_user]
    if not waiting:
        return None
    ranked = order.rank(gold_set=gold_set, query_ids=waiting)
    return ranked[0] if ranked else None
