"""Start (or resume) a calibration run from the command line and follow it with a progress bar."""

import time

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from judges.backends.vendors import sdk_kinds, vendor_sdks_import
from judges.models import CalibrationRun, Judge, JudgeVersion, RunStatus
from judges.selectors import run_progress_get
from judges.services import calibration_run_resume, calibration_run_start
from labelling.models import GoldSetVersion

# How often the command reads the run's status: it returns at most this long after the run
# ends (it was 1 s, a tenth of a 2,000-call run at the latency bound; issue 33). One
# column of one row: the figures the bar shows (an aggregate) are read every BAR_REFRESH_S.
FOLLOW_POLL_S = 0.05
BAR_REFRESH_S = 0.5


def resolve_judge_version(spec: str) -> JudgeVersion:
    """Read NAME (latest version) or NAME@vN / NAME@N."""
    name, _, number = spec.partition("@")
    judge = Judge.objects.filter(name=name).first()
    if judge is None:
        raise CommandError(f"--judge {spec}: no judge named {name!r}")
    if not number:
        return judge.latest_version
    version = judge.versions.filter(number=int(number.lstrip("v"))).first()
    if version is None:
        raise CommandError(f"--judge {spec}: {name} has no version {number}")
    return version


class Command(BaseCommand):
    help = "Run judge versions over a gold-set version N times on Celery and show progress."
    # The system checks load every URL and view of the site (~0.35 s, a tenth of this
    # command's start-up; issue 33) and check nothing a run needs: `manage.py check`,
    # the web server and the deploy run them.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--gold-set", help="Gold set name (its latest version), or NAME@vN.")
        parser.add_argument("--judge", action="append", default=[], help="Judge name or NAME@vN; repeat for several.")
        parser.add_argument("--repeats", type=int, default=3)
        parser.add_argument("--spend-cap", type=float, help="Stop the run when it has spent this many dollars.")
        parser.add_argument("--label", default="")
        parser.add_argument("--resume", type=int, metavar="RUN_ID", help="Resume a cancelled or interrupted run.")
        parser.add_argument(
            "--inline", action="store_true", help="Execute in this process instead of on Celery workers."
        )
        parser.add_argument("--no-wait", action="store_true", help="Start the run and return.")

    def handle(self, *args, **options):
        if options["resume"]:
            run = CalibrationRun.objects.filter(pk=options["resume"]).first()
            if run is None:
                raise CommandError(f"--resume {options['resume']}: no such run")
            run = self.call(calibration_run_resume, run=run, spend_cap_usd=options["spend_cap"])
        else:
            run = self.start(options)
        self.stdout.write(f"run {run.pk}: {run.total_tasks or 'planning'} verdicts to make")
        if options["no_wait"]:
            return
        self.follow(run)

    def start(self, options):
        if not options["gold_set"] or not options["judge"]:
            raise CommandError("give --gold-set and at least one --judge (or --resume RUN_ID)")
        name, _, number = options["gold_set"].partition("@")
        versions = GoldSetVersion.objects.filter(gold_set__name=name).order_by("-number")
        if number:
            versions = versions.filter(number=int(number.lstrip("v")))
        gold_set_version = versions.first()
        if gold_set_version is None:
            raise CommandError(f"--gold-set {options['gold_set']}: no published version")
        judge_versions = [resolve_judge_version(spec) for spec in options["judge"]]
        if options["inline"]:
            from judges.demo import run_inline  # noqa: PLC0415 — the runner: only an inline run judges here

            vendor_sdks_import(sdk_kinds(version.backend for version in judge_versions))
            bar = tqdm(total=None, unit="verdict")
            return run_inline(
                gold_set_version=gold_set_version,
                judge_versions=judge_versions,
                repeats=options["repeats"],
                label=options["label"],
                spend_cap_usd=options["spend_cap"],
                progress=lambda run: self.update_bar(bar, run_progress_get(run=run)),
            )
        return self.call(
            calibration_run_start,
            gold_set_version=gold_set_version,
            judge_versions=judge_versions,
            repeats=options["repeats"],
            spend_cap_usd=options["spend_cap"],
            label=options["label"],
        )

    def call(self, service, **kwargs):
        try:
            return service(**kwargs)
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc

    @staticmethod
    def update_bar(bar, progress):
        bar.total = progress["total"]
        bar.n = progress["done"]
        bar.set_postfix(errors=progress["errors"], spent=f"${progress['spent_usd']:.4f}")
        bar.refresh()

    def follow(self, run):
        """Poll the run until it stops, drawing a tqdm bar with errors and spend."""
        with tqdm(total=run.total_tasks or None, unit="verdict") as bar:
            drawn_at = -BAR_REFRESH_S
            while run.is_active:
                if time.monotonic() - drawn_at >= BAR_REFRESH_S:
                    self.update_bar(bar, run_progress_get(run=run))
                    drawn_at = time.monotonic()
                time.sleep(FOLLOW_POLL_S)
                run.status = CalibrationRun.objects.values_list("status", flat=True).get(pk=run.pk)
            run.refresh_from_db()
            progress = run_progress_get(run=run)
            self.update_bar(bar, progress)
        self.stdout.write(
            f"run {run.pk} {run.status}: {progress['done']} verdicts, {progress['errors']} errors, "
            f"${progress['spent_usd']:.4f} spent" + (f" ({run.stop_reason})" if run.stop_reason else "")
        )
        if run.status not in (RunStatus.COMPLETED,):
            raise CommandError(f"run {run.pk} ended {run.status}")
