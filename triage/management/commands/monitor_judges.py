from django.core.management.base import BaseCommand

from triage.monitoring import live_judges_monitor


class Command(BaseCommand):
    help = "Re-measure live judges on labels since calibration, alert on drift, store estimates."

    def handle(self, *args, **options):
        for snapshot, alerts in live_judges_monitor():
            self.stdout.write(
                f"{snapshot.judge_version}: flag rate {snapshot.flag_rate}, corrected error rate "
                f"{snapshot.corrected_error_rate} [{snapshot.corrected_low}, {snapshot.corrected_high}], "
                f"audit {snapshot.audit_error_rate}; {len(alerts)} new alert(s)"
            )
