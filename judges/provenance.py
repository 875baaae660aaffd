"""Where verdicts came from, as the verdicts themselves say: simulated, imported or real.

Every badge (judges index, judge page, run header and rows) reads this, never how a
version was registered: a verdict is `simulated` when the answer it got carried the
simulator's marker (`judges/backends/simulator_marker.py`), and imported when
`import_verdicts` stored it (endpoint `imported`). Nothing here imports a model, so
`judges/models.py` can use it too.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Q

# The endpoint an imported verdict records: it was judged elsewhere, by no host Docket called.
IMPORTED_ENDPOINT = "imported"


@dataclass(frozen=True)
class Provenance:
    """How many of some verdicts were simulated, imported, or neither (real vendor calls, checks)."""

    total: int = 0
    simulated: int = 0
    imported: int = 0

    @property
    def real(self) -> int:
        return self.total - self.simulated - self.imported

    @property
    def label(self) -> str:
        """One word for a badge: "simulated", "imported", "mixed", or "" (all real, or no verdict yet)."""
        kinds = [count for count in (self.simulated, self.imported, self.real) if count]
        if len(kinds) > 1:
            return "mixed"
        if self.simulated:
            return "simulated"
        return "imported" if self.imported else ""

    def as_dict(self) -> dict:
        return {"simulated": self.simulated, "imported": self.imported, "real": self.real, "label": self.label}


def provenance_counts(verdicts, *, by: tuple[str, ...]) -> dict:
    """Count a verdict queryset's provenance per value of the `by` fields ({key tuple: Provenance})."""
    rows = (
        verdicts.order_by()
        .values(*by)
        .annotate(
            n=Count("id"),
            n_simulated=Count("id", filter=Q(simulated=True)),
            n_imported=Count("id", filter=Q(simulated=False, endpoint=IMPORTED_ENDPOINT)),
        )
    )
    return {tuple(row[f] for f in by): Provenance(row["n"], row["n_simulated"], row["n_imported"]) for row in rows}


def provenance_of(verdicts) -> Provenance:
    """Count one verdict queryset's provenance as a whole."""
    figures = verdicts.aggregate(
        n=Count("id"),
        n_simulated=Count("id", filter=Q(simulated=True)),
        n_imported=Count("id", filter=Q(simulated=False, endpoint=IMPORTED_ENDPOINT)),
    )
    return Provenance(figures["n"], figures["n_simulated"], figures["n_imported"])
