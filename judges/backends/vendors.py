"""Where a vendor backend sends its calls, with which key, and whether that is the simulator.

Keys come only from the environment (settings read them); a judge version's config may
name another environment variable (`api_key_env`) but never holds a key itself.

A version goes to the local vendor simulator only when it says so (config `simulated`,
or a base URL that is the simulator's). A version bound to a real vendor whose key is
missing is never switched to the simulator: its calls fail with an `error` verdict
naming the variable (`Endpoint.missing_key`). The simulator is a local port anything on
the machine could bind: it is sent the simulator's own key (`SIMULATOR_KEY`), never a
vendor's, however its URL is spelt.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from django.conf import settings

from judges.models import Backend
from judges.vendor_access import is_simulator_url

SIMULATOR_KEY = "simulated-no-key"
ANTHROPIC_KEY_ENV = "ANTHROPIC_API_KEY"
OPENAI_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_HOSTS = {"anthropic": "api.anthropic.com", "openai": "api.openai.com"}


@dataclass(frozen=True)
class Endpoint:
    base_url: str | None
    # Never in a repr: an endpoint sits in contexts (templates, tracebacks) that print one.
    api_key: str = field(repr=False)
    simulated: bool
    # The environment variable that should hold the key, when it is missing: calls fail.
    missing_key: str = ""
    vendor: str = "anthropic"

    def __post_init__(self):
        # The simulator is a local port anything may bind: it never gets a real key.
        if self.simulated and self.api_key != SIMULATOR_KEY:
            raise ValueError("a simulated endpoint carries the simulator's key only")

    @property
    def label(self) -> str:
        """What a verdict records as its endpoint: "simulated" or the vendor's host."""
        if self.simulated:
            return "simulated"
        if self.base_url:
            return urlsplit(self.base_url).netloc or self.base_url
        return DEFAULT_HOSTS.get(self.vendor, self.vendor)


def vendor_api_key(config: dict, default_env: str) -> tuple[str, str]:
    """Return (variable name, key) for a version: the one place a vendor key is looked up."""
    env_name = config.get("api_key_env") or default_env
    if env_name == ANTHROPIC_KEY_ENV:
        return env_name, settings.ANTHROPIC_API_KEY
    if env_name == OPENAI_KEY_ENV:
        return env_name, settings.OPENAI_API_KEY
    return env_name, os.environ.get(env_name, "")


def simulator_endpoint(vendor: str) -> Endpoint:
    base = settings.VENDOR_SIMULATOR_URL.rstrip("/")
    return Endpoint(base + ("/v1" if vendor == "openai" else ""), SIMULATOR_KEY, True, vendor=vendor)


def vendor_endpoint(vendor: str, config: dict, *, key_env: str, base_url: str | None) -> Endpoint:
    """Resolve base URL and key for a vendor backend: the simulator, a proxy or the vendor itself.

    `base_url` is the deployment's default for the vendor (settings), used when the version
    names none.
    """
    if config.get("simulated"):
        return simulator_endpoint(vendor)
    env_name, key = vendor_api_key(config, key_env)
    base_url = config.get("base_url") or base_url or None
    if is_simulator_url(base_url):
        return Endpoint(base_url, SIMULATOR_KEY, True, vendor=vendor)
    if not key and not base_url:
        return Endpoint(None, "", False, missing_key=env_name, vendor=vendor)
    # A base URL without a key is a proxy that adds its own, or a local OpenAI-compatible
    # server that needs none; the SDKs insist on one.
    return Endpoint(base_url, key or "no-key", False, vendor=vendor)


def anthropic_endpoint(config: dict) -> Endpoint:
    """Resolve base URL and key for the Anthropic backend."""
    return vendor_endpoint("anthropic", config, key_env=ANTHROPIC_KEY_ENV, base_url=settings.ANTHROPIC_BASE_URL)


def openai_endpoint(config: dict) -> Endpoint:
    """Resolve base URL and key for an OpenAI-compatible backend (OpenAI, vLLM, Ollama...)."""
    return vendor_endpoint("openai", config, key_env=OPENAI_KEY_ENV, base_url=settings.OPENAI_BASE_URL)


# The backends that call an LLM vendor (the composite ones through `config["vendor"]`).
VENDOR_BACKENDS = {Backend.ANTHROPIC, Backend.OPENAI_COMPATIBLE, Backend.SELF_CONSISTENCY, Backend.HYPOTHESIS_PROBE}


def version_endpoint(backend: str, config: dict | None) -> Endpoint | None:
    """Where a version with this backend and config sends its vendor calls (None: it calls no vendor)."""
    if backend not in VENDOR_BACKENDS:
        return None
    config = config or {}
    vendor = (
        config.get("vendor", Backend.ANTHROPIC)
        if backend in (Backend.SELF_CONSISTENCY, Backend.HYPOTHESIS_PROBE)
        else backend
    )
    return anthropic_endpoint(config) if vendor == Backend.ANTHROPIC else openai_endpoint(config)


_clients: dict = {}
_clients_lock = threading.Lock()


def vendor_sdks_import(kinds=("anthropic", "openai")) -> None:
    """Import vendor SDKs now ("anthropic", "openai"), rather than on a judge's first call.

    A Celery worker calls this before it forks its pool (`judges/tasks.py`
    `vendor_sdks_preload`): each SDK takes seconds of CPU to import, and eight pool
    processes importing it at once on a busy machine took past a live query's time limit.
    Imported in the parent, the children share it from the fork. `run_calibration --inline`
    calls it before its run starts, so the run's own time holds no import.
    """
    if "anthropic" in kinds:
        import anthropic  # noqa: PLC0415, F401 — a heavy SDK, loaded only by processes that call vendors
    if "openai" in kinds:
        import openai  # noqa: PLC0415, F401 — idem


def sdk_kinds(backends) -> set[str]:
    """Return the SDKs judges of these backends call (a backend that wraps a model may use either)."""
    kinds = set()
    for backend in backends:
        if backend in ("anthropic", "self_consistency", "hypothesis_probe"):
            kinds.add("anthropic")
        if backend in ("openai_compatible", "self_consistency", "hypothesis_probe"):
            kinds.add("openai")
    return kinds


def cached_client(kind: str, endpoint: Endpoint, timeout_s: float):
    """Return one SDK client per (kind, endpoint, timeout) per process; SDK retries are off."""
    cache_key = (kind, endpoint, timeout_s, os.getpid())
    with _clients_lock:
        client = _clients.get(cache_key)
        if client is None:
            if kind == "anthropic":
                import anthropic  # noqa: PLC0415 — a heavy SDK (tens of MB), loaded only when called

                client = anthropic.Anthropic(
                    api_key=endpoint.api_key, base_url=endpoint.base_url, timeout=timeout_s, max_retries=0
                )
            else:
                import openai  # noqa: PLC0415 — a heavy SDK (tens of MB), loaded only when called

                client = openai.OpenAI(
                    api_key=endpoint.api_key, base_url=endpoint.base_url, timeout=timeout_s, max_retries=0
                )
            _clients[cache_key] = client
        return client
