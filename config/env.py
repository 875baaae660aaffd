"""Reading settings from the environment: one function per kind of value, each failing loudly.

`env_setting` reads every variable: unset or empty gives the default, a value the parser
rejects stops start-up with the variable's name, its value and the form it should take.
"""

import os
from collections.abc import Callable
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured


def env_setting(name: str, default, parse: Callable[[str], object], expected: str):
    """Read one variable: `default` when unset or empty, else `parse(raw)`.

    Every variable goes through here. A value `parse` rejects (by raising ValueError)
    stops start-up with the variable's name, its value and the form it should take.
    """
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return parse(raw.strip())
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}={raw!r} is not valid: expected {expected}.") from exc


def _parse_bool(raw: str) -> bool:
    lowered = raw.lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ValueError(raw)


def _number_parser(kind: type, minimum: float, inclusive: bool) -> Callable[[str], float]:
    def parse(raw: str):
        value = kind(raw)  # int("2.9") and int("1.5e6") raise ValueError: no silent rounding
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(raw)
        if value < minimum or (value == minimum and not inclusive):
            raise ValueError(raw)
        return value

    return parse


def parse_choice(choices: tuple[str, ...]) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        if raw.upper() not in choices:
            raise ValueError(raw)
        return raw.upper()

    return parse


def env_bool(name: str, default: bool) -> bool:
    return env_setting(name, default, _parse_bool, "a boolean (true/false, 1/0, yes/no, on/off)")


def env_positive_float(name: str, default: float) -> float:
    return env_setting(name, default, _number_parser(float, 0, inclusive=False), "a positive number")


def env_non_negative_float(name: str, default: float) -> float:
    return env_setting(name, default, _number_parser(float, 0, inclusive=True), "a number, 0 or more")


def env_positive_int(name: str, default: int) -> int:
    return env_setting(name, default, _number_parser(int, 1, inclusive=True), "a whole number, 1 or more")


def env_non_negative_int(name: str, default: int) -> int:
    return env_setting(name, default, _number_parser(int, 0, inclusive=True), "a whole number, 0 or more")


def env_text(name: str, default: str = "") -> str:
    return env_setting(name, default, str, "text")


def env_path(name: str, default: Path) -> Path:
    return env_setting(name, Path(default), Path, "a path")


def env_list(name: str, default: list[str]) -> list[str]:
    return env_setting(
        name, default, lambda raw: [item.strip() for item in raw.split(",") if item.strip()], "comma-separated names"
    )


def parse_database_url(raw: str) -> dict:
    if raw.partition("://")[0] not in environ.Env.DB_SCHEMES:
        raise ValueError(raw)
    try:
        config = environ.Env.db_url_config(raw)
    except (KeyError, ImproperlyConfigured) as exc:
        raise ValueError(raw) from exc
    if not config.get("ENGINE"):
        raise ValueError(raw)
    return config
