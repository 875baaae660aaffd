"""A truth file as the simulator's oracle: what each SQL text really is, as Docket's gold labels say.

The simulator reads no database. Docket writes the file (`manage.py export_simulator_truth`,
and `seed_demo` under `var/`): JSON lines of `{"sql": ..., "wrong": bool, "error_class": ...}`.
A SQL text is looked up with its white space folded and its case ignored, and the file is
read again when it changes, so a fresh export reaches a simulator that is already running.
"""

from __future__ import annotations

import json
import os
import re
import threading

from simulator.vendor import Truth, truth_of_label

WHITE_SPACE = re.compile(r"\s+")


def sql_key(sql: str) -> str:
    """The lookup key of a SQL text: white space folded, case ignored, a final semicolon dropped."""
    return WHITE_SPACE.sub(" ", sql).strip().rstrip(";").strip().casefold()


def read_truth_file(path) -> dict[str, Truth]:
    """Read a truth file into {sql_key: Truth}; a missing file is an empty truth."""
    truths: dict[str, Truth] = {}
    if not os.path.exists(path):
        return truths
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
                truths[sql_key(entry["sql"])] = truth_of_label(entry)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise ValueError(f"{path}, line {number}: not a truth entry ({exc})") from None
    return truths


class TruthFile:
    """oracle(sql) -> Truth | None from a truth file, read again whenever its modification time changes."""

    def __init__(self, path):
        self.path = path
        self._lock = threading.Lock()
        self._stamp: float | None = None
        self._truths: dict[str, Truth] = {}

    def _current(self) -> dict[str, Truth]:
        try:
            stamp = os.stat(self.path).st_mtime_ns
        except FileNotFoundError:
            stamp = None
        with self._lock:
            if stamp != self._stamp:
                self._truths, self._stamp = read_truth_file(self.path), stamp
            return self._truths

    def __call__(self, sql: str) -> Truth | None:
        return self._current().get(sql_key(sql))

    def __len__(self) -> int:
        return len(self._current())
