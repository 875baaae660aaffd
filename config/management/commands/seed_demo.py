"""Load everything the demo needs: users, warehouse, gold set, simulated judges. Idempotent."""

import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management.base import BaseCommand

from config.env import env_text
from config.private_files import write_private_file
from config.roles import ALL_ROLES, ensure_role_groups
from judges import demo as judges_demo
from judges.simulator_truth import simulator_truth_path, simulator_truth_write
from labelling.demo import demo_gold_load
from labelling.models import Query
from probes.catalogue import catalogue_refresh
from probes.demo_warehouse import DEMO_WAREHOUSE_NAME, build_demo_warehouse, register_demo_warehouse
from triage.ingest import live_queries_ingest
from triage.policy import policy_current, policy_publish

DEMO_USERS = {role: f"demo-{role.replace('_', '-')}" for role in ALL_ROLES}


def demo_password() -> str:
    """Return DOCKET_DEMO_PASSWORD, else a random one generated once and kept under var/."""
    from_env = env_text("DOCKET_DEMO_PASSWORD")
    if from_env:
        return from_env
    path = settings.VAR_DIR / "demo_password"
    if not path.exists():
        write_private_file(path, secrets.token_urlsafe(12), replace=False)
    return path.read_text().strip()


def ensure_demo_users(password: str) -> list[str]:
    """Create one demo user per role (granting the admin role makes its user staff: config/signals.py)."""
    ensure_role_groups()
    user_model = get_user_model()
    created = []
    for role, username in DEMO_USERS.items():
        user, was_created = user_model.objects.get_or_create(username=username)
        if was_created:
            user.set_password(password)
            created.append(username)
        user.save()
        user.groups.add(Group.objects.get(name=role))
    return created


class Command(BaseCommand):
    help = "Load the demo users, warehouse, gold set and simulated judges (safe to run again)."

    def add_arguments(self, parser):
        parser.add_argument("--quiet-logins", action="store_true", help="Do not print the demo logins.")
        parser.add_argument("--logins-only", action="store_true", help="Only print the demo logins.")
        parser.add_argument(
            "--calibration-only",
            action="store_true",
            help="Only run the demo calibration (make run does, once its simulator answers).",
        )

    def handle(self, *args, quiet_logins=False, logins_only=False, calibration_only=False, **options):
        password = demo_password()
        if logins_only:
            self.print_logins(password)
            return
        if calibration_only:
            run_demo_calibration(self.stdout)
            return
        created = ensure_demo_users(password)
        self.stdout.write(f"demo users: {len(created)} created, {len(DEMO_USERS) - len(created)} already there")
        for step in self.demo_steps():
            step(self.stdout)
        if not quiet_logins:
            self.print_logins(password)

    def print_logins(self, password):
        self.stdout.write(f"Demo logins (password for all: {password})")
        for role, username in DEMO_USERS.items():
            self.stdout.write(f"  {role:<12} {username}")

    def demo_steps(self):
        """Each app's demo loader, bottom to top: warehouse, gold set, judges, triage."""

        return [
            load_demo_warehouse,
            demo_gold_load,
            write_simulator_truth,
            run_demo_calibration,
            publish_demo_triage_policy,
            ingest_demo_live_traffic,
        ]


def write_simulator_truth(stdout):
    """Write the gold labels where `make run`'s vendor simulator reads its truth (only where it is on)."""
    if not settings.VENDOR_SIMULATOR_ENABLED:
        stdout.write("simulator truth: the vendor simulator is off here, not written")
        return
    rows = simulator_truth_write(simulator_truth_path())
    stdout.write(f"simulator truth: {rows} SQL texts written for the vendor simulator")


def run_demo_calibration(stdout):
    """Register the simulated judges and finish one calibration run, so the dashboard has data.

    The judges call the vendor simulator, a process of its own: without one answering at
    VENDOR_SIMULATOR_URL the step is skipped, and `seed_demo --calibration-only` runs it later.
    """
    judges_demo.register_ladder_judges()
    url = settings.VENDOR_SIMULATOR_URL
    if not (settings.VENDOR_SIMULATOR_ENABLED and judges_demo.simulator_is_up(url)):
        stdout.write(f"demo calibration: no vendor simulator answers at {url}, skipped")
        return
    run_ = judges_demo.run_demo_calibration()
    if run_ is None:
        stdout.write("demo calibration: no demo gold set, skipped")
        return
    stdout.write(f"demo calibration: run {run_.pk} {run_.status} ({run_.verdicts.count()} verdicts, simulated)")


def publish_demo_triage_policy(stdout):
    """Put the simulated judges on live traffic unless a policy already exists."""
    if policy_current() is not None:
        stdout.write(f"triage policy: {policy_current()} already in force")
        return
    policy = policy_publish(
        changes={"flag_rule": "any", "audit_share": 0.1},
        judge_versions=judges_demo.register_simulated_judges(),
        note="Demo: simulated judges, any reject flags.",
    )
    stdout.write(f"triage policy: {policy} published")


def load_demo_warehouse(stdout):
    """Build the demo warehouse once; later runs only re-register it."""
    path = settings.VAR_DIR / "demo_warehouse.sqlite3"
    if not path.exists():
        counts = build_demo_warehouse(str(path))
        stdout.write(f"demo warehouse built: {sum(counts.values())} rows in {len(counts)} tables")
    warehouse = register_demo_warehouse(str(path))
    # The verifier and the fan-out detector read keys from the catalogue.
    catalogue = catalogue_refresh(warehouse=warehouse)
    stdout.write(f"demo warehouse registered as `{DEMO_WAREHOUSE_NAME}` (catalogue v{catalogue.version})")


DEMO_LIVE_COUNT = 40


def ingest_demo_live_traffic(stdout):
    """Replay a slice of the demo gold set as live traffic, so the analyst's queue has work.

    Ingested like any API post (idempotent on external id); the worker started by
    `make run` judges them with the simulated judges and probes.
    """

    gold = Query.objects.filter(gold_set__name="demo").order_by("external_id")[:DEMO_LIVE_COUNT]
    rows = [
        {
            "external_id": f"live-{query.external_id}",
            "question": query.question,
            "sql": query.sql,
            "warehouse": "demo",
            "metadata": {"generator": "demo replay"},
        }
        for query in gold
    ]
    if not rows:
        stdout.write("demo live traffic: no demo gold set, skipped")
        return
    ingested = live_queries_ingest(rows=rows)
    fresh = sum(1 for entry in ingested if entry.created)
    stdout.write(f"demo live traffic: {fresh} new live queries queued for judging ({len(rows) - fresh} already there)")
