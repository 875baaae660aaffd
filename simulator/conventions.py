"""What the simulator shares with Docket without importing it: marker, error classes, caching rules.

The simulator is a separate program: it imports nothing of Docket, so what both sides must
agree on is written here once more, and `judges/tests/test_simulator_conventions.py` holds
each value to Docket's own (`judges/backends/simulator_marker.py`,
`labelling.models.ErrorClass`, `judges/backends/cache_minimums.py`).

- The marker: a response header and a JSON field on every answer, from which Docket's
  backends record a verdict as simulated.
- The error classes a simulated judge names (seed 001's taxonomy, Docket's default).
- The vendors' prompt-caching minimums, as their documentation gives them: Anthropic caches
  Sonnet and Opus 4 / 4.1 from 1,024 tokens, Haiku 3 / 3.5 from 2,048, Haiku 4.5 and
  Opus 4.5 / 4.6 from 4,096 (first match wins); OpenAI caches prompts of 1,024 tokens or
  more, in steps of 128.
"""

from __future__ import annotations

import re

SIMULATOR_HEADER = "x-docket-simulator"
SIMULATOR_FIELD = "docket_simulator"

ERROR_CLASSES = [
    "unknown_object",
    "join_fanout",
    "misread_intent",
    "aggregation_grain",
    "missing_filter",
    "dropped_rows",
    "wrong_measure",
    "syntax",
    "dialect",
    "other",
]

ANTHROPIC_CACHE_MINIMUMS = [
    (re.compile(r"haiku-4[-.]5"), 4096),
    (re.compile(r"opus-4[-.][56]"), 4096),
    (re.compile(r"haiku"), 2048),
    (re.compile(r"sonnet|opus|claude"), 1024),
]
ANTHROPIC_DEFAULT_CACHE_MINIMUM = 1024  # a simulated Claude-family model behaves like Sonnet
OPENAI_CACHE_MINIMUM = 1024
OPENAI_CACHE_STEP = 128


def anthropic_cache_minimum(model_name: str) -> int:
    """Return the shortest prefix, in tokens, Anthropic caches for this model."""
    for pattern, minimum in ANTHROPIC_CACHE_MINIMUMS:
        if pattern.search(model_name.lower()):
            return minimum
    return ANTHROPIC_DEFAULT_CACHE_MINIMUM
