"""The shortest prompt prefix each vendor caches, and whether a request's prefix can reach it.

Pure and free of Django: the backends use it to skip a cache warm-up that cannot pay off
(`judges.backends.policy`). The vendor simulator, which imports nothing of Docket, bills by
its own copy (`simulator/conventions.py`), held to this one by `judges/tests/test_simulator_conventions.py`.

Anthropic's prompt-caching documentation: Sonnet and Opus 4 / 4.1 cache from 1,024 tokens,
Haiku 3 / 3.5 from 2,048, Haiku 4.5 and Opus 4.5 / 4.6 from 4,096 (first match wins).
OpenAI caches prompts of 1,024 tokens or more automatically, in steps of 128 tokens.
"""

from __future__ import annotations

import json
import re

ANTHROPIC_CACHE_MINIMUMS = [
    (re.compile(r"haiku-4[-.]5"), 4096),
    (re.compile(r"opus-4[-.][56]"), 4096),
    (re.compile(r"haiku"), 2048),
    (re.compile(r"sonnet|opus|claude"), 1024),
]
ANTHROPIC_DEFAULT_CACHE_MINIMUM = 1024  # an unknown (e.g. simulated) Claude-family model
OPENAI_CACHE_MINIMUM = 1024
OPENAI_CACHE_STEP = 128
# Tokens are estimated from characters generously (3 a token, where English prose averages
# about 4): a prefix is taken as uncacheable only when even this over-count is below the minimum.
CHARS_PER_TOKEN_GENEROUS = 3


def anthropic_cache_minimum(model_name: str) -> int:
    """Return the shortest prefix, in tokens, Anthropic caches for this model."""
    for pattern, minimum in ANTHROPIC_CACHE_MINIMUMS:
        if pattern.search(model_name.lower()):
            return minimum
    return ANTHROPIC_DEFAULT_CACHE_MINIMUM


def prefix_may_be_cached(prefix: dict, minimum_tokens: int) -> bool:
    """Could the vendor cache this request prefix? False only when it is surely too short."""
    characters = len(json.dumps(prefix, separators=(",", ":")))
    return characters // CHARS_PER_TOKEN_GENEROUS >= minimum_tokens
