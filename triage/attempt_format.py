"""What a recorded generation attempt may say: seed 001's failure classes and JSONL lines.

The ingestion API (`triage/attempts.py`) validates posted attempts with it, and the loop lab's
replay (`loops/policy_replay.py`) reads attempt files with it. Pure Python: no ORM, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

FAILURE_CLASSES = ("syntax", "dialect", "unknown_obj", "empty_result", "timeout", "transport")
# The verifier (probes.verifier) names catalogue misses `unknown_object`; seed 001 says `unknown_obj`.
CLASS_ALIASES = {"unknown_object": "unknown_obj", "empty_res": "empty_result", "empty": "empty_result"}


class ReplayInputError(ValueError):
    """Recorded attempts, weights or a policy that cannot be replayed, with where and why."""


def normalise_failure_class(value, *, where: str) -> str | None:
    """Return a seed 001 class for a recorded value (None / "" / "none" mean the attempt passed)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ReplayInputError(f"{where}: failure_class must be a string or null, got {value!r}")
    key = value.strip().lower()
    if key in ("", "none", "null", "ok", "passed"):
        return None
    key = CLASS_ALIASES.get(key, key)
    if key not in FAILURE_CLASSES:
        raise ReplayInputError(f"{where}: unknown failure_class {value!r}; use one of {', '.join(FAILURE_CLASSES)}")
    return key


def numbered_json_lines(lines: Iterable[str], error: type[Exception] = ValueError):
    """Yield (line number, parsed value) of each non-blank JSONL line; raise `error` naming a bad one."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise error(f"line {number}: not JSON ({exc.msg})") from None
        yield number, row
