"""What a vendor judge is sent: instructions, the schema slice, the query, an optional preview.

The request is built so that caching pays: the stable part (tool definition, system
instructions and, when the whole catalogue fits the version's budget, the warehouse's
rendered catalogue) comes first and is the cached prefix; the question and SQL (and a
per-query slice or result preview) come after it. A request is stored split the same
way: the prefix once by hash (`PromptPrefix`), the tail on the verdict.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass

from django.core.cache import cache

from judges.examples import examples_prompt_text
from probes.preview import result_preview_run
from probes.schema_slice import SchemaSlice, no_slice, schema_slice
from probes.selectors import catalogue_get_latest

# A worker asks for a warehouse's latest catalogue at most this often (seconds).
CATALOGUE_TTL_S = 30.0
PREVIEW_ROWS = 10
NO_WAREHOUSE = "the query names no warehouse: judged without a schema"


def catalogue_for(query):
    """Return the latest catalogue of the query's warehouse (None without one).

    The runner resolves it once per chunk on its own thread (`query.judge_catalogue`);
    a live call looks it up here, kept for CATALOGUE_TTL_S in the process's cache (Django's
    cache, like tokens and warehouses, so that it is emptied with them: a module-level dict
    outlived the rows it was read from and handed a reused warehouse id another's catalogue).
    """
    if hasattr(query, "judge_catalogue"):
        return query.judge_catalogue
    warehouse_id = getattr(query, "warehouse_id", None)
    if warehouse_id is None:
        return None
    key = f"judges:catalogue:{warehouse_id}"
    catalogue = cache.get(key)
    if catalogue is None:
        catalogue = catalogue_get_latest(warehouse_id=warehouse_id)
        if catalogue is not None:
            cache.set(key, catalogue, CATALOGUE_TTL_S)
    return catalogue


def slice_for(judge_version, query) -> SchemaSlice:
    """The schema this version shows a judge for this query."""
    if getattr(query, "warehouse_id", None) is None:
        return no_slice(NO_WAREHOUSE)
    return schema_slice(
        catalogue=catalogue_for(query),
        sql=query.sql,
        dialect=getattr(query, "dialect", ""),
        token_budget=judge_version.schema_token_budget,
    )


def egress_withheld_reason(warehouse) -> str:
    return f"warehouse {warehouse.name} does not allow result rows to be sent to vendors"


def result_preview(query, *, rows: int = PREVIEW_ROWS) -> dict:
    """Run the SQL read-only: its first rows and its row count (what a reviewer would look at).

    The rows go into a prompt sent to a vendor, so they are read only from a warehouse an
    admin has allowed to send result rows to vendors (`Warehouse.allow_result_egress`);
    for any other the preview is withheld and says why, and the query is judged without it.
    """
    warehouse = getattr(query, "warehouse", None)
    if warehouse is None:
        return {"included": False, "reason": "no warehouse"}
    if not warehouse.allow_result_egress:
        return {"included": False, "withheld": egress_withheld_reason(warehouse)}
    consent = {"included": True, "consent": f"warehouse {warehouse.name} allows result rows to be sent to vendors"}
    run = result_preview_run(warehouse=warehouse, sql=query.sql, rows=rows, count=True)
    first = run.result
    if not first.executed or first.error:
        return {**consent, "error": first.error or first.reason or "not run"}
    return {**consent, "columns": first.columns, "rows": first.rows, "row_count": run.row_count}


def render_preview(preview: dict) -> str:
    if preview.get("error"):
        return f"<result_preview>\nThe SQL failed when run: {preview['error']}\n</result_preview>"
    count = preview.get("row_count")
    lines = [" | ".join(preview["columns"])]
    lines += [" | ".join("NULL" if v is None else str(v) for v in row) for row in preview["rows"]]
    head = f"{count if count is not None else 'more than ' + str(len(preview['rows']))} rows in total; the first:"
    return "<result_preview>\n" + head + "\n" + "\n".join(lines) + "\n</result_preview>"


@dataclass
class Prompt:
    """The parts of one judge request, before they are shaped for a vendor."""

    instructions: str
    schema: SchemaSlice
    user_text: str
    preview: dict | None = None

    @property
    def shared_schema_text(self) -> str:
        """The catalogue text that belongs in the cached prefix (empty unless shared)."""
        return f"<schema>\n{self.schema.text}\n</schema>" if self.schema.shared else ""

    def context(self) -> dict:
        """What the verdict records about the prompt: schema slice, preview."""
        data = {"schema": self.schema.as_context()}
        if self.preview is not None:
            data["result_preview"] = {k: v for k, v in self.preview.items() if k not in ("rows", "columns")}
        return data


def prompt_build(judge_version, query, *, instructions: str) -> Prompt:
    """Assemble the prompt parts of one query for a judge version."""
    schema = slice_for(judge_version, query)
    parts = [
        f"<question>\n{query.question}\n</question>",
        f'<sql dialect="{query.dialect}">\n{query.sql}\n</sql>',
    ]
    if schema.mode == "referenced":
        parts.append(f"<schema>\n{schema.text}\n</schema>")
    elif schema.mode == "none":
        parts.append(f"<schema>No schema is available: {schema.reason}.</schema>")
    examples = examples_prompt_text(judge_version)
    if examples:
        # The version's worked examples (gold items of a dev split) go after the instructions.
        instructions = f"{instructions}\n\n{examples}"
    preview = None
    if judge_version.include_result_preview:
        preview = result_preview(query)
        if preview.get("included"):
            parts.append(render_preview(preview))
    return Prompt(instructions=instructions, schema=schema, user_text="\n".join(parts), preview=preview)


def request_split(request: dict) -> tuple[dict, dict]:
    """Split a request into (prefix, tail): the tail is the last message, the prefix the rest."""
    messages = request.get("messages") or []
    prefix = {key: value for key, value in request.items() if key != "messages"}
    prefix["messages"] = messages[:-1]
    return prefix, {"messages": messages[-1:]}


def request_join(prefix: dict | None, tail: dict | None) -> dict:
    """Rebuild the request as sent from its stored prefix and tail."""
    request = dict(prefix or {})
    tail = tail or {}
    request["messages"] = list(request.get("messages") or []) + list(tail.get("messages") or [])
    for key, value in tail.items():
        if key != "messages":
            request[key] = value
    return request


def prefix_sha256(prefix: dict) -> str:
    return hashlib.sha256(json.dumps(prefix, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


class CacheWarmGate:
    """Let the first call with a new cached prefix finish before its siblings are sent.

    A vendor cache entry exists only once the call that wrote it has answered; calls sent
    at the same moment all pay the cache-write price. Holding the others back for one
    call's latency turns N writes into one write and N-1 reads.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.events: dict[str, threading.Event] = {}

    def enter(self, key: str, timeout_s: float) -> threading.Event | None:
        """Return an event the caller must set() after its call if it is the first; else wait."""
        with self.lock:
            event = self.events.get(key)
            if event is None:
                event = self.events[key] = threading.Event()
                return event
        event.wait(timeout_s)
        return None
