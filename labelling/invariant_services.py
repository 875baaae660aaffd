"""Writes of an item's answer-free invariants (the form they take: labelling/invariants.py)."""

from django.db import transaction

from labelling.invariants import invariants_validate
from labelling.models import Query


@transaction.atomic
def query_invariants_set(*, query: Query, invariants) -> Query:
    """Replace the item's invariants after validating them; raise InvariantsInvalid naming bad fields.

    Invariants describe the question, not a label: they live on the item, and each ladder
    verdict records the invariants it checked.
    """
    query.invariants = invariants_validate(invariants=invariants)
    query.save(update_fields=["invariants"])
    return query
