"""Small builders for triage tests: warehouses, live queries, queue items, judges, tokens."""

import itertools

from judges.models import Backend, Judge, JudgeVersion, Verdict
from labelling.models import Query, QuerySource
from probes.models import Warehouse
from triage.models import IngestStatus, LiveQuery, TriageItem
from triage.services import api_token_issue, policy_publish

_counter = itertools.count(1)


def warehouse(name="shop", dialect="sqlite"):
    return Warehouse.objects.get_or_create(name=name, defaults={"dialect": dialect})[0]


def live_query(*, status=IngestStatus.PENDING, wh=None, external_id=None, sql="SELECT 1", question="How many?"):
    n = next(_counter)
    query = Query.objects.create(
        question=f"{question} #{n}",
        sql=sql,
        dialect="sqlite",
        warehouse=wh or warehouse(),
        source=QuerySource.LIVE,
        external_id=external_id or f"ext-{n}",
    )
    return LiveQuery.objects.create(query=query, status=status)


def triage_item(*, probe_confirmed=False, judges_agreeing=1, wh=None, **extra):
    live = live_query(status=IngestStatus.FLAGGED, wh=wh)
    return TriageItem.objects.create(
        query=live.query,
        flagged_because="test",
        probe_confirmed=probe_confirmed,
        judges_agreeing=judges_agreeing,
        judges_answered=max(judges_agreeing, 1),
        **extra,
    )


def judge_version(name=None, model="sim-model-1"):
    judge = Judge.objects.create(name=name or f"judge-{next(_counter)}")
    return JudgeVersion.objects.create(judge=judge, number=1, backend=Backend.ANTHROPIC, model=model, is_simulated=True)


def live_verdict(version, query, decision, model="sim-model-1", **extra):
    return Verdict.objects.create(judge_version=version, query=query, decision=decision, model_reported=model, **extra)


def token(scopes=("ingest", "read"), client="acme"):
    return api_token_issue(client=client, scopes=list(scopes))


def quiet_policy(**changes):
    """A policy that calls no judge, verifier or probe: for tests of the pipeline's bookkeeping."""
    values = {"run_verifier": False, "run_fanout_detector": False, "audit_share": 0.0} | changes
    return policy_publish(changes=values, judge_versions=[])
