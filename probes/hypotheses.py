"""Machine-checkable hypotheses a judge (or the deterministic detector) can hand to a probe."""

from pydantic import BaseModel, ConfigDict


class JoinFanoutHypothesis(BaseModel):
    """A suspicion that a join multiplies the rows of the table being aggregated (seed 003)."""

    model_config = ConfigDict(extra="forbid")

    suspected: bool
    join_table: str | None = None  # the table thought to multiply rows
    grain_key: str | None = None  # the column that should be unique per fact row
    probe_sql: str | None = None  # must be a read-only query; guarded before execution

    @classmethod
    def not_suspected(cls) -> "JoinFanoutHypothesis":
        return cls(suspected=False)
