from django.core.management.base import BaseCommand

from triage.alert_checks import minute_checks_run
from triage.monitoring import live_judges_monitor


class Command(BaseCommand):
    help = (
        "Run the alert checks (queue SLA, live failures, failed calibration runs) and, unless --checks-only, "
        "re-measure live judges on labels since calibration, alert on drift, store estimates."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--checks-only", action="store_true", help="Only the every-minute checks, not the hourly drift pass."
        )

    def handle(self, *args, checks_only, **options):
        if not checks_only:
            for snapshot, alerts in live_judges_monitor():
                self.stdout.write(
                    f"{snapshot.judge_version}: flag rate {snapshot.flag_rate}, corrected error rate "
                    f"{snapshot.corrected_error_rate} [{snapshot.corrected_low}, {snapshot.corrected_high}], "
                    f"audit {snapshot.audit_error_rate}; {len(alerts)} new alert(s)"
                )
        for alert in minute_checks_run():
            self.stdout.write(f"alert {alert.kind}: {alert.message}")
