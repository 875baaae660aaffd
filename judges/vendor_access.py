"""Which key a judge may read and which host it may send it to; secrets kept out of records.

A judge version's config may name an environment variable for its API key
(`api_key_env`) and a `base_url`. Both are chosen by whoever edits the judge, so both are
held to lists an admin sets in the environment:

- `api_key_env` must be on `JUDGE_API_KEY_VARS` (default the two vendor keys), so a judge
  can never read `DATABASE_URL` or a warehouse DSN and send it as a bearer token;
- `base_url` must match an entry of `JUDGE_BASE_URLS` (or the vendor simulator's URL, when
  `VENDOR_SIMULATOR_ENABLED` is on), so a key is only ever sent to a host an admin approved;
  only an admin may set or change it. The simulator's URL is a local port anything may
  bind: it is sent the simulator's own key, never a vendor's (`judges/backends/vendors.py`).

The lists are checked when a version is saved (`judge_config_check`) and again when a judge
is called (`judges/backends/refused.py` `refused_backend`): a version saved before a list changed is answered with
`error` verdicts, never a reject and never a call. `redact_secrets` takes out of a verdict
(and `RedactSecretsFilter` out of a log line) any key or DSN the process holds, in case a
vendor echoes one back.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError

from config.roles import SET_JUDGE_BASE_URL

REDACTED = "[redacted]"
# Shorter values are not redacted: they would blank out ordinary words.
MIN_SECRET_LENGTH = 8
# Environment variables whose values are connection strings or credentials.
SECRET_VARIABLE = re.compile(r"^(DATABASE_URL|CELERY_BROKER_URL|WAREHOUSE_\w+_URL)$|(KEY|SECRET|TOKEN|PASSWORD)$")
DEFAULT_PORTS = {"http": 80, "https": 443}


# --- Checks ------------------------------------------------------------------------------


def _url_parts(url: str) -> tuple[str, str, int | None, str] | None:
    """Return (scheme, host, port, path) of an http(s) URL without credentials, else None."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port or DEFAULT_PORTS.get(parts.scheme.lower())
    except ValueError:
        return None
    if parts.scheme.lower() not in DEFAULT_PORTS or not parts.hostname or parts.username or parts.password:
        return None
    return parts.scheme.lower(), parts.hostname.lower(), port, parts.path.rstrip("/")


def same_origin_and_path(url: str, other: str) -> bool:
    """Say whether two URLs name the same scheme, host, port and path (case and default port aside)."""
    parts, other_parts = _url_parts(url), _url_parts(other)
    return parts is not None and parts == other_parts


def allowed_base_urls() -> list[str]:
    """The base URLs a judge may call: JUDGE_BASE_URLS, plus the simulator's when it is enabled."""
    simulator = [settings.VENDOR_SIMULATOR_URL] if settings.VENDOR_SIMULATOR_ENABLED else []
    return [*settings.JUDGE_BASE_URLS, *simulator]


def is_simulator_url(base_url: str | None) -> bool:
    """Say whether a base URL is the simulator's, however spelt (case, default port, a slash, /v1)."""
    if not isinstance(base_url, str) or not base_url:
        return False
    return same_origin_and_path(base_url.rstrip("/").removesuffix("/v1"), settings.VENDOR_SIMULATOR_URL)


def base_url_allowed(base_url: str) -> bool:
    """Say whether `base_url` is an allowed URL or lies under one (same scheme, host, port; path below)."""
    wanted = _url_parts(base_url)
    if wanted is None:
        return False
    for allowed in allowed_base_urls():
        entry = _url_parts(allowed)
        if entry is None or entry[:3] != wanted[:3]:
            continue
        if wanted[3] == entry[3] or wanted[3].startswith(entry[3] + "/"):
            return True
    return False


def judge_config_problems(config: dict) -> list[str]:
    """Name what in a judge config reaches outside the allow-lists (empty when nothing does)."""
    problems = []
    key_env = config.get("api_key_env")
    if key_env not in (None, "") and key_env not in settings.JUDGE_API_KEY_VARS:
        problems.append(
            f"api_key_env {key_env!r} is not an allowed key variable "
            f"(JUDGE_API_KEY_VARS: {', '.join(settings.JUDGE_API_KEY_VARS)})"
        )
    base_url = config.get("base_url")
    if not settings.VENDOR_SIMULATOR_ENABLED and (config.get("simulated") or is_simulator_url(base_url)):
        problems.append("the vendor simulator is off here (VENDOR_SIMULATOR_ENABLED); bind the judge to a vendor")
    elif base_url not in (None, "") and not (isinstance(base_url, str) and base_url_allowed(base_url)):
        problems.append(
            f"base_url {str(base_url)[:200]!r} is not an allowed base URL "
            "(an admin lists them in JUDGE_BASE_URLS; the vendor simulator's is allowed when it is enabled)"
        )
    return problems


def judge_config_check(*, config: dict, previous_config: dict | None, user=None) -> None:
    """Refuse a config outside the allow-lists, or a base_url set or changed by a non-admin.

    `previous_config` is the config of the judge's latest version (None for a new judge);
    `user` None is the system itself (management commands, the demo).
    """
    problems = judge_config_problems(config)
    previous_url = (previous_config or {}).get("base_url") or ""
    if (config.get("base_url") or "") != previous_url and user is not None and not user.has_perm(SET_JUDGE_BASE_URL):
        problems.append(
            "only an admin can set or change a judge's base_url; to answer from the local vendor simulator, "
            'leave base_url out and put {"simulated": true} in the config'
        )
    if problems:
        raise ValidationError({"config": problems})


# --- Keeping secrets out of records --------------------------------------------------------


class SecretCache:
    """Every key, DSN and DSN password this process can read, read again only when they change.

    A log filter runs on every record: reading the environment, the settings and the
    warehouses file each time would cost a regex per variable per line. They are read once;
    each call then only checks whether anything they come from changed (the environment's
    entries, the few settings, the file's modification time), and reads again if so.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.stamp = None
        self.environment: dict = {}
        self.values: list[str] = []
        self.reads = 0  # how often the secrets were read, for the tests

    def current(self) -> list[str]:
        """Return the secrets, longest first."""
        stamp = _sources_stamp()
        # os.environ keeps its entries in `_data`; comparing it with the copy taken at the
        # last read compares the same objects, so an unchanged environment costs a few µs.
        environment = getattr(os.environ, "_data", os.environ)
        with self.lock:
            if stamp == self.stamp and environment == self.environment:
                return self.values
            self.environment = dict(environment)
            self.stamp = stamp
            self.values = _secret_values_read()
            self.reads += 1
            return self.values


def _sources_stamp() -> tuple:
    """What secrets are read from besides the environment: a few settings and the file's mtime."""
    path = settings.WAREHOUSES_FILE
    try:
        stat = path.stat()
        file_stamp = (str(path), stat.st_ino, stat.st_mtime_ns, stat.st_size)
    except OSError:
        file_stamp = (str(path), None)
    return (
        settings.ANTHROPIC_API_KEY,
        settings.OPENAI_API_KEY,
        settings.DATABASES["default"].get("PASSWORD") or "",
        tuple(settings.JUDGE_API_KEY_VARS),
        file_stamp,
    )


def _secret_values_read() -> list[str]:
    found = {settings.ANTHROPIC_API_KEY, settings.OPENAI_API_KEY, settings.DATABASES["default"].get("PASSWORD") or ""}
    names = set(settings.JUDGE_API_KEY_VARS) | {name for name in os.environ if SECRET_VARIABLE.search(name)}
    found.update(os.environ.get(name, "") for name in names)
    found.update(_warehouses_file_dsns())
    for value in list(found):
        if "://" in value:
            try:
                found.add(urlsplit(value).password or "")
            except ValueError:
                continue
    return sorted((v for v in found if len(v) >= MIN_SECRET_LENGTH), key=len, reverse=True)


def _warehouses_file_dsns() -> list[str]:
    """The DSNs in WAREHOUSES_FILE (none when it is missing or unreadable)."""
    try:
        data = json.loads(settings.WAREHOUSES_FILE.read_text())
    except (OSError, ValueError):
        return []
    return [v for v in data.values() if isinstance(v, str)] if isinstance(data, dict) else []


SECRETS = SecretCache()


def secret_values() -> list[str]:
    """Every key, DSN and DSN password this process can read, longest first."""
    return SECRETS.current()


def redact_secrets(value, secrets: list[str] | None = None):
    """Return `value` (text, or JSON-like dicts and lists) with every secret replaced by [redacted]."""
    secrets = secret_values() if secrets is None else secrets
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            if secret in value:
                value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {redact_secrets(k, secrets): redact_secrets(v, secrets) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_secrets(item, secrets) for item in value]
    return value


class RedactSecretsFilter(logging.Filter):
    """A log handler filter: the formatted message and traceback lose any secret they carry."""

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = secret_values()
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            message = None  # a malformed call: left for the handler to report as usual
        clean = redact_secrets(message, secrets)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_secrets(record.exc_text, secrets)
        return True
