"""Where a vendor backend sends its calls, with which key, and whether that is the simulator.

Keys come only from the environment (settings read them); a judge version's config may
name another environment variable (`api_key_env`) but never holds a key itself.
Without a key, calls go to the local vendor simulator (settings.VENDOR_SIMULATOR_URL).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

from django.conf import settings

SIMULATOR_KEY = "simulated-no-key"


@dataclass(frozen=True)
class Endpoint:
    base_url: str | None
    api_key: str
    simulated: bool


def _key_from(config: dict, default: str) -> str:
    env_name = config.get("api_key_env")
    if env_name:
        return os.environ.get(env_name, "")
    return default


def anthropic_endpoint(config: dict) -> Endpoint:
    """Resolve base URL and key for the Anthropic backend."""
    key = _key_from(config, settings.ANTHROPIC_API_KEY)
    base_url = config.get("base_url") or settings.ANTHROPIC_BASE_URL or None
    if config.get("simulated") or (not key and not base_url):
        return Endpoint(settings.VENDOR_SIMULATOR_URL.rstrip("/"), SIMULATOR_KEY, True)
    return Endpoint(base_url, key or SIMULATOR_KEY, is_simulator_url(base_url))


def openai_endpoint(config: dict) -> Endpoint:
    """Resolve base URL and key for an OpenAI-compatible backend (OpenAI, vLLM, Ollama...)."""
    key = _key_from(config, settings.OPENAI_API_KEY)
    base_url = config.get("base_url") or settings.OPENAI_BASE_URL or None
    if config.get("simulated") or (not key and not base_url):
        return Endpoint(settings.VENDOR_SIMULATOR_URL.rstrip("/") + "/v1", SIMULATOR_KEY, True)
    # Local OpenAI-compatible servers often need no key; the SDK insists on one.
    return Endpoint(base_url, key or "no-key", is_simulator_url(base_url))


def is_simulator_url(base_url: str | None) -> bool:
    if not base_url:
        return False
    return base_url.rstrip("/").removesuffix("/v1") == settings.VENDOR_SIMULATOR_URL.rstrip("/")


_clients: dict = {}
_clients_lock = threading.Lock()


def cached_client(kind: str, endpoint: Endpoint, timeout_s: float):
    """Return one SDK client per (kind, endpoint, timeout) per process; SDK retries are off."""
    cache_key = (kind, endpoint, timeout_s, os.getpid())
    with _clients_lock:
        client = _clients.get(cache_key)
        if client is None:
            if kind == "anthropic":
                import anthropic

                client = anthropic.Anthropic(
                    api_key=endpoint.api_key, base_url=endpoint.base_url, timeout=timeout_s, max_retries=0
                )
            else:
                import openai

                client = openai.OpenAI(
                    api_key=endpoint.api_key, base_url=endpoint.base_url, timeout=timeout_s, max_retries=0
                )
            _clients[cache_key] = client
        return client
