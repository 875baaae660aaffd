"""Concurrent posts of one web process share the ingestion statement.

PostgreSQL spends about as much CPU planning and committing one post's statement as storing a
hundred rows in it (README, "Ingestion speed"). A web process serves several posts at once
(gunicorn's threads): while one thread's statement is in flight, the posts that reach this
point wait for it to finish and then go in together, in one statement run by the first of them
on its own connection. A thread that finds no statement in flight runs its own at once, so a
quiet server adds no wait. If a shared statement fails, each of its posts runs a statement of
its own, so one post's failure is never another's. Posts inside a transaction never come here
(`triage/ingest.py` sends them to the ORM path).
"""

import os
import threading

from django.utils import timezone

from triage import ingest_sql

RUN_ALONE = object()  # a post's answer when its shared statement failed: it runs its own


class _Post:
    __slots__ = ("rows", "keys", "turn", "leads", "stored")

    def __init__(self, rows: list[dict]):
        self.rows = rows
        self.keys: list[tuple[str, str]] = []  # the rows this post put in the shared statement
        self.turn = threading.Event()
        self.leads = False
        self.stored = RUN_ALONE


class StatementSharing:
    """One web process's queue of posts waiting for the statement in flight."""

    def __init__(self):
        self._lock = threading.Lock()
        self._waiting: list[_Post] = []
        self._busy = False

    def store(self, rows: list[dict]) -> list[ingest_sql.StoredLiveQuery]:
        """Store `ingest_sql.statement_rows` output in a statement shared with concurrent posts; return the new rows."""
        post = _Post(rows)
        with self._lock:
            if self._busy:
                self._waiting.append(post)
            else:
                self._busy = post.leads = True
        if not post.leads:
            post.turn.wait()  # served by the leader, or made the next leader
        if post.leads:
            self._lead(post)
        if post.stored is RUN_ALONE:
            return ingest_sql.statement_run(rows=rows, now=timezone.now())
        return post.stored

    def _lead(self, leader: _Post) -> None:
        with self._lock:
            batch, self._waiting = [leader, *self._waiting], []
        try:
            self._run(batch)
        finally:
            with self._lock:
                following = self._waiting.pop(0) if self._waiting else None
                self._busy = following is not None
            if following is not None:
                following.leads = True  # takes every post waiting by then
                following.turn.set()
            for post in batch[1:]:
                post.turn.set()

    @staticmethod
    def _run(batch: list[_Post]) -> None:
        rows, taken = [], set()
        for post in batch:
            for row in post.rows:
                key = (row["client"], row["external_id"])
                if key not in taken:  # a later post's equal key finds the first's row stored
                    taken.add(key)
                    post.keys.append(key)
                    rows.append(row)
        try:
            stored = ingest_sql.statement_run(rows=rows, now=timezone.now())
        except Exception:
            if len(batch) == 1:
                raise  # its own statement failed: the caller sees why
            return  # every post keeps RUN_ALONE
        by_key = {(live.client, live.external_id): live for live in stored}
        for post in batch:
            post.stored = [by_key[key] for key in post.keys if key in by_key]


_sharing: StatementSharing | None = None
_sharing_pid = 0
_sharing_lock = threading.Lock()


def live_rows_store(*, rows: list[dict], warehouses: dict, token) -> list[ingest_sql.StoredLiveQuery]:
    """Insert validated rows like `ingest_sql.live_rows_insert`, sharing the statement with concurrent posts."""
    global _sharing, _sharing_pid
    with _sharing_lock:
        if _sharing is None or _sharing_pid != os.getpid():  # a forked worker starts its own queue
            _sharing, _sharing_pid = StatementSharing(), os.getpid()
        sharing = _sharing
    return sharing.store(ingest_sql.statement_rows(rows=rows, warehouses=warehouses, token=token))
