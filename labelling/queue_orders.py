"""Orders the labelling queue can offer besides its own (id order), registered by higher apps.

Labelling sits below judges, so it cannot read verdicts; the judges app registers its
"informative first" order here at start-up (`judges.apps`), and the queue only calls the
ranking it was given. An order ranks a batch of candidate query ids, best first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from labelling.models import Label, Query

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


def queue_order_first(*, order: QueueOrder, user, candidates, gold_set, after_id: int | None = None) -> Query | None:
    """Return the waiting candidate the order ranks first that the user never labelled, or None.

    A skipped item (`after_id`) comes back only when nothing else is left.
    """
    ids = list(candidates.order_by("id").values_list("id", flat=True)[:RANK_BATCH])
    mine = set(Label.objects.filter(labeller=user, query_id__in=ids).order_by().values_list("query_id", flat=True))
    waiting = [query_id for query_id in ids if query_id not in mine]
    for pool in ([query_id for query_id in waiting if query_id != after_id], waiting):
        ranked = order.rank(gold_set=gold_set, query_ids=pool) if pool else []
        if ranked:
            return Query.objects.select_related("warehouse").get(pk=ranked[0])
    return None


def queue_order_from_request(request, *, session_key: str = "labelling_queue_order") -> str:
    """Return the order this labeller chose (`?order=` on the queue, kept in the session)."""
    choices = dict(queue_order_choices())
    chosen = request.GET.get("order")
    if chosen in choices:
        request.session[session_key] = chosen
    order = request.session.get(session_key, DEFAULT_ORDER)
    return order if order in choices else DEFAULT_ORDER
