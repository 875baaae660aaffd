"""Replay recorded generation attempts under a retry/escalation policy (seed 001)."""

import json
import re
from datetime import datetime, timedelta
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from loops import policy_replay
from loops.selectors import live_attempt_records_list

RELATIVE = re.compile(r"^(\d+)\s*([dhm])$")


def parse_since(text: str) -> datetime:
    """Parse "7d", "24h", "30m", an ISO date or an ISO date-time (naive = the server's zone)."""
    text = text.strip()
    match = RELATIVE.match(text.lower())
    if match:
        unit = {"d": "days", "h": "hours", "m": "minutes"}[match.group(2)]
        return timezone.now() - timedelta(**{unit: int(match.group(1))})
    try:
        moment = parse_datetime(text)
        if moment is None:
            day = parse_date(text)
            moment = datetime(day.year, day.month, day.day) if day else None
    except ValueError:
        moment = None
    if moment is None:
        raise CommandError(f"--live: expected 7d, 24h, 30m or an ISO date/time; got {text!r}")
    return timezone.make_aware(moment) if timezone.is_naive(moment) else moment


def load_policy(name: str) -> policy_replay.Policy:
    """Return a built-in policy by name, or a user table from a JSON file."""
    path = Path(name)
    if name.endswith(".json") or path.is_file():
        try:
            table = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as error:
            raise CommandError(f"--policy {name}: cannot read a JSON table ({error})") from None
        return policy_replay.policy_from_table(table, name=path.stem)
    return policy_replay.policy_named(name)


def summary_as_table(summary: dict) -> str:
    counts = ", ".join(f"{outcome} {n}" for outcome, n in summary["counts"].items())
    spend = summary["spend_per_accepted"]
    lines = [
        f"policy {summary['policy']['name']}, weights {summary['weights']}",
        f"{len(summary['requests'])} requests: {counts}",
        f"accepted by tier: {summary['accepted_by_tier']}",
        f"spend per accepted: {'-' if spend is None else f'{spend:.4g}'} (total {summary['total_spent']:.4g})",
    ]
    return "\n".join(lines) + "\n"


class Command(BaseCommand):
    help = "Replay recorded attempts (a JSONL file or live requests since a time) under a policy."

    def add_arguments(self, parser):
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--attempts", help='JSONL: {"request_id", "tier", "attempt", "failure_class", "tokens"}.')
        source.add_argument("--live", help="Replay live requests' recorded attempts since 7d, 24h or an ISO date.")
        parser.add_argument(
            "--policy", default="seed001", help="seed001, retryN (e.g. retry2), escalate_first, or a JSON table file."
        )
        parser.add_argument("--weights", default="cheap=1,strong=8", help="Units per token per tier.")
        parser.add_argument("--format", choices=["json", "table"], default="json")

    def handle(self, *args, attempts, live, policy, weights, format, **options):
        try:
            chosen = load_policy(policy)
            tier_weights = policy_replay.parse_weights(weights)
            if attempts is not None:
                try:
                    with open(attempts, encoding="utf-8") as handle:
                        records = policy_replay.read_attempts_jsonl(handle)
                except OSError as error:
                    raise CommandError(f"--attempts {attempts}: {error.strerror}") from None
            else:
                records = live_attempt_records_list(since=parse_since(live))
        except policy_replay.ReplayInputError as error:
            raise CommandError(str(error)) from error
        results = policy_replay.replay(records, chosen, tier_weights)
        summary = policy_replay.replay_summary(results, chosen, tier_weights)
        if format == "json":
            # Compact: the C encoder; an indented dump of 10,000 ledgers takes seconds.
            self.stdout.write(json.dumps(summary))
        else:
            self.stdout.write(summary_as_table(summary), ending="")
