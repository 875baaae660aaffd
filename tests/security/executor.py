"""Run SQL texts through Docket's entry points in a process of their own, one JSON line each.

The hostile-corpus harness (`tests/security/test_hostile_corpus.py`) starts this with the
test database and warehouse DSNs in its environment, sends one JSON request per line on
stdin and reads one JSON answer per line on stdout. Each answer carries how long the call
took and the process's peak resident memory so far, so the memory bound is measured on
the process that ran the warehouse SQL, not on the test process.

Requests: {"entry": "run_sql" | "preview" | "verify" | "probe" | "triage", "warehouse": name,
"sql": text, ...}; `preview` also takes "query_id", `triage` "token" and "external_id".
"""

import io
import json
import os
import resource
import sys
import tempfile
import time
import traceback

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()

from django.conf import settings  # noqa: E402 - after django.setup()
from django.core.management import call_command  # noqa: E402
from django.core.management.base import CommandError  # noqa: E402
from django.test import Client  # noqa: E402

from labelling.models import Query  # noqa: E402
from labelling.preview import query_preview  # noqa: E402
from probes.fanout import check_fanout  # noqa: E402
from probes.hypotheses import JoinFanoutHypothesis  # noqa: E402
from probes.models import Warehouse  # noqa: E402
from probes.selectors import catalogue_get_latest  # noqa: E402
from probes.verifier import verify  # noqa: E402
from triage.models import LiveQuery  # noqa: E402
from triage.pipeline import live_query_process, result_preview  # noqa: E402


def peak_rss_mb() -> float:
    """Peak resident set size of this process's own memory so far, in MB.

    Linux's `ru_maxrss` survives execve: a process started from a large parent (pytest late
    in a full run) would report the parent's size. VmHWM is the high-water mark of this
    process's own address space.
    """
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_sql(request: dict) -> dict:
    with tempfile.NamedTemporaryFile("wb", suffix=".sql", delete=False) as file:
        file.write(request["sql"].encode("utf-8", errors="surrogatepass"))
    out = io.StringIO()
    try:
        call_command(
            "run_sql",
            "--warehouse",
            request["warehouse"],
            "--sql-file",
            file.name,
            "--format",
            "json",
            "--timeout",
            str(settings.WAREHOUSE_STATEMENT_TIMEOUT_S),
            stdout=out,
        )
    except CommandError as exc:  # run_sql refused the text before any guard (e.g. not UTF-8)
        return {"allowed": False, "executed": False, "reason": str(exc), "error": None, "rows": 0}
    finally:
        os.unlink(file.name)
    result = json.loads(out.getvalue())
    return {
        "allowed": result["allowed"],
        "executed": result["executed"],
        "reason": result["reason"],
        "error": result["error"],
        "rows": len(result["rows"]),
        "stored_bytes": len(out.getvalue()),
        "shown": shown({"columns": result["columns"], "rows": result["rows"]}),
    }


def shown(value) -> str:
    """What an answer shows a user, as text (for the harness's leaked-name check), capped."""
    return json.dumps(value, default=str)[:SHOWN_MAX_CHARS]


SHOWN_MAX_CHARS = 4 * 2**20


def preview(request: dict) -> dict:
    previewed = query_preview(query=Query.objects.select_related("warehouse").get(pk=request["query_id"]))
    result = previewed.result
    return {
        "ok": result.ok,
        "message": result.message[:500],
        "rows": len(result.rows),
        "stored_bytes": len(json.dumps(result.rows, default=str)),
        "shown": shown({"columns": result.columns, "rows": result.rows}),
    }


def verify_entry(request: dict) -> dict:
    warehouse = Warehouse.objects.get(name=request["warehouse"])
    outcome = verify(request["sql"], catalogue_get_latest(warehouse_id=warehouse.pk), warehouse=warehouse)
    answer = outcome.as_dict()
    return {
        "passed": answer["passed"],
        "failure_class": answer["failure_class"],
        "message": (outcome.message or "")[:500],
        "shown": shown(outcome.message or ""),
    }


def probe(request: dict) -> dict:
    """The hypothesis judge's probe: a model-written probe SQL handed to `check_fanout`."""
    warehouse = Warehouse.objects.get(name=request["warehouse"])
    hypothesis = JoinFanoutHypothesis(
        suspected=True, join_table="order_items", grain_key="order_id", probe_sql=request["sql"]
    )
    run = check_fanout(hypothesis=hypothesis, warehouse=warehouse, subject_fingerprint="hostile")
    return {
        "outcome": str(run.outcome),
        "message": run.message[:500],
        "stored_bytes": len(run.message) + len(json.dumps(run.figures)),
        "shown": shown({"figures": run.figures}),
    }


def triage(request: dict) -> dict:
    """Post the text as a live query through the API, run the pipeline and its result preview."""
    body = {
        "external_id": request["external_id"],
        "question": "hostile",
        "sql": request["sql"],
        "warehouse": request["warehouse"],
    }
    response = Client().post(
        "/api/v1/queries",
        data=json.dumps(body),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {request['token']}",
    )
    if response.status_code not in (200, 202):
        return {"status": response.status_code, "body": response.content.decode()[:500]}
    live_id = response.json()["id"]
    live_query_process(live_id=live_id)  # a no-op if the eager task already ran it
    live = LiveQuery.objects.select_related("query__warehouse").get(pk=live_id)
    preview = result_preview(query=live.query)
    return {
        "status": response.status_code,
        "ingest_status": str(live.status),
        "stored_bytes": max(len(json.dumps(live.result_preview or {})), len(json.dumps(preview))),
        "preview_allowed": preview.get("allowed"),
        "preview_error": (preview.get("error") or preview.get("reason") or "")[:500],
        "shown": shown({"stored": live.result_preview, "preview": preview.get("rows")}),
    }


ENTRY_POINTS = {"run_sql": run_sql, "preview": preview, "verify": verify_entry, "probe": probe, "triage": triage}


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        started = time.monotonic()
        try:
            answer = ENTRY_POINTS[request["entry"]](request)
        except Exception as exc:  # noqa: BLE001 - a crash is reported to the harness, which fails the test
            answer = {"crash": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()[-2000:]}
        answer["elapsed_s"] = round(time.monotonic() - started, 3)
        answer["peak_rss_mb"] = round(peak_rss_mb(), 1)
        sys.stdout.write(json.dumps(answer, default=str) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
