"""Blind double labelling: who may see other people's labels of an item, and what seeing them costs.

The rule (DESIGN.md, "Blind labels"): a labeller does not see the other labels of an item
(nor who gave them) before giving their own. ML engineers and admins see every label; a
labeller sees an item's other labels only once they hold a label on it, and only where an
admin allowed it on the gold set (`GoldSet.reveal_labels_after_labelling`). Everything
derived from labels per item (final labels, disagreements, adjudications, the audit's
findings) counts as seeing them.

Every page and download that shows a user someone else's label of an item records it
(`label_reveals_record`: a `LabelReveal`, the first per user and item). A label given
after such a reveal is not blind (`label_given_blind`), and agreement is computed on blind
labels only, so seeing the others and then relabelling cannot inflate κ. The rule is the
same for every source: a triage decision or an imported label with a labeller is blind
unless Docket showed that person another label of the item first; an import without a
labeller is blind (Docket showed it nothing).
"""

from collections.abc import Iterable

from django.db.models import QuerySet

from config.roles import MANAGE_GOLDSETS
from labelling.models import Adjudication, GoldSet, Label, LabelReveal, Query

REVEAL_CHUNK = 1000


def sees_every_label(user) -> bool:
    """Say whether the user may see every label of every item (ML engineers and admins)."""
    return user.has_perm(MANAGE_GOLDSETS)


def revealed_query_ids(*, user, gold_set: GoldSet | None, query_ids: Iterable[int]) -> set[int]:
    """Return the ids among `query_ids` whose other labels the user may see now.

    All of them for an ML engineer or admin; for anyone else, the items they hold a current
    label on, when the gold set reveals labels after labelling, and none otherwise.
    """
    ids = set(query_ids)
    if sees_every_label(user):
        return ids
    if gold_set is None or not gold_set.reveal_labels_after_labelling or not ids:
        return set()
    return set(
        Label.objects.filter(labeller=user, is_current=True, query_id__in=ids).values_list("query_id", flat=True)
    )


def label_reveals_record(*, user, query_ids: Iterable[int] | QuerySet, shown_on: str) -> int:
    """Record that the user was shown the items' labels; return how many items were new reveals.

    `query_ids` is a list, or a queryset of query ids (a whole version's download: read by the
    database as a subquery). Only items holding a label by someone else (an import without
    labeller included) or an adjudication count: the user's own labels reveal nothing. Only
    the first reveal of an item is kept.
    """
    if not getattr(user, "is_authenticated", False):
        return 0
    scopes = [query_ids] if isinstance(query_ids, QuerySet) else _chunks(sorted(set(query_ids)))
    recorded = 0
    for scope in scopes:
        # exclude() on the nullable labeller keeps the labels without one (imports).
        shown = set(Label.objects.filter(query_id__in=scope).exclude(labeller=user).values_list("query_id", flat=True))
        shown |= set(Adjudication.objects.filter(query_id__in=scope).values_list("query_id", flat=True))
        if not shown:
            continue
        known = set(LabelReveal.objects.filter(user=user, query_id__in=scope).values_list("query_id", flat=True))
        fresh = [LabelReveal(user=user, query_id=query_id, shown_on=shown_on) for query_id in sorted(shown - known)]
        # ignore_conflicts: a page shown at the same moment may record one of them too.
        LabelReveal.objects.bulk_create(fresh, batch_size=REVEAL_CHUNK, ignore_conflicts=True)
        recorded += len(fresh)
    return recorded


def _chunks(ids: list[int]) -> list[list[int]]:
    return [ids[start : start + REVEAL_CHUNK] for start in range(0, len(ids), REVEAL_CHUNK)]


def other_labels_for_labeller(*, user, query: Query) -> list[Label] | None:
    """Return the other current labels of an item for the labeller's own item page, or None when hidden.

    The queue shows them to everyone on the same terms, admins included (it is where labels
    are given): only once the user holds a current label on the item, and only when its gold
    set reveals labels after labelling. Showing them records the reveal.
    """
    gold_set = query.gold_set
    if gold_set is None or not gold_set.reveal_labels_after_labelling:
        return None
    if not Label.objects.filter(query=query, labeller=user, is_current=True).exists():
        return None
    others = list(
        Label.objects.filter(query=query, is_current=True)
        .exclude(labeller=user)
        .select_related("labeller")
        .order_by("created_at", "id")
    )
    if others:
        label_reveals_record(user=user, query_ids=[query.pk], shown_on="queue")
    return others


def label_given_blind(*, query, labeller) -> bool:
    """Say whether a label the labeller gives now is blind: Docket never showed them another label of the query."""
    if labeller is None:
        return True
    return not LabelReveal.objects.filter(user=labeller, query=query).exists()


def revealed_pairs_get(*, pairs: Iterable[tuple[int, int]]) -> set[tuple[int, int]]:
    """Return the (user id, query id) pairs among `pairs` that have had a reveal: their new labels are not blind."""
    pairs = set(pairs)
    if not pairs:
        return set()
    users = {user_id for user_id, _ in pairs}
    queries = {query_id for _, query_id in pairs}
    revealed = LabelReveal.objects.filter(user_id__in=users, query_id__in=queries).values_list("user_id", "query_id")
    return set(revealed) & pairs
