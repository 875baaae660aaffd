import json

from django.core.management.base import BaseCommand

from triage.alert_checks import minute_checks_run
from triage.monitoring import live_judges_monitor


def snapshot_as_dict(snapshot) -> dict:
    """Return one live judge's monitoring figures (the `--format json` entry)."""
    details = snapshot.details or {}
    return {
        "judge": snapshot.judge_version.judge.name,
        "version": snapshot.judge_version.number,
        "policy": snapshot.policy.version if snapshot.policy_id else None,
        "live_queries": snapshot.live_queries,
        "flag_rate": snapshot.flag_rate,
        "live_catch_rate": snapshot.live_catch_rate,
        "live_false_reject_rate": snapshot.live_false_reject_rate,
        "live_error_rate": details.get("live_error_rate"),
        "live_error_rate_reasons": details.get("live_error_rate_reasons", {}),
        "live_fitness": details.get("live_fitness"),
    }


class Command(BaseCommand):
    help = (
        "Run the alert checks (queue SLA, live failures, failed calibration runs) and, unless --checks-only, "
        "re-measure live judges on labels since calibration, alert on drift, store estimates."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--checks-only", action="store_true", help="Only the every-minute checks, not the hourly drift pass."
        )
        parser.add_argument("--format", choices=["text", "json"], default="text")

    def handle(self, *args, checks_only, **options):
        results = [] if checks_only else live_judges_monitor()
        raised = minute_checks_run()
        if options.get("format") == "json":
            judges = [{**snapshot_as_dict(snapshot), "new_alerts": len(alerts)} for snapshot, alerts in results]
            checks = [{"kind": alert.kind, "message": alert.message} for alert in raised]
            self.stdout.write(json.dumps({"judges": judges, "alerts": checks}, indent=2))
            return
        for snapshot, alerts in results:
            self.stdout.write(
                f"{snapshot.judge_version}: flag rate {snapshot.flag_rate}, corrected error rate "
                f"{snapshot.corrected_error_rate} [{snapshot.corrected_low}, {snapshot.corrected_high}], "
                f"audit {snapshot.audit_error_rate}; {len(alerts)} new alert(s)"
            )
        for alert in raised:
            self.stdout.write(f"alert {alert.kind}: {alert.message}")
