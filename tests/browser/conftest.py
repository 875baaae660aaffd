"""Browser fixtures: Debian's Chromium driven by Playwright against a live test server.

Playwright's own browser download cannot work here, so the system Chromium is launched by
path. Under CI=true a missing Chromium fails the test; locally it skips.
"""

import json
import os
import shutil
from pathlib import Path

import pytest
from django.db import connections
from playwright.sync_api import sync_playwright

from judges.simulator_truth import gold_label_oracle
from labelling.demo import DEMO_GOLD_FILE
from probes.catalogue import catalogue_refresh
from probes.demo_warehouse import build_demo_warehouse, register_demo_warehouse
from simulator import SimModel, Simulator, start_in_thread
from tests.support.fixtures import WorkerProcess
from tests.support.services import require

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
SCREENSHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"

# Playwright's sync API runs an event loop in this thread; the ORM calls the tests make
# between page actions are still synchronous and safe.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


def chromium_path() -> str | None:
    return os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def browser():
    path = chromium_path()
    require(path is not None, "Debian's Chromium (apt-get install chromium)")

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()
        # Inside sync_playwright() the loop counts as running, so Django keeps this thread's
        # connections in a per-context store that closes nowhere else. Left open, one made
        # the test database's DROP wait 5 s at the end of the session, then fail.
        connections.close_all()


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{request.node.name}.png"), full_page=True)
    context.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Keep each phase's report on the item so `page` can screenshot failures."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)


def log_in(page, live_server, username, password="pw-for-tests"):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")


# --- What the journeys seed: only what each one needs -------------------------------------


@pytest.fixture
def demo_warehouse(settings, tmp_path):
    """Build the demo warehouse into a temporary file, register it as `demo`, snapshot its catalogue."""

    settings.WAREHOUSES_FILE = tmp_path / "warehouses.json"
    path = tmp_path / "demo_warehouse.sqlite3"
    build_demo_warehouse(str(path))
    warehouse = register_demo_warehouse(str(path))
    catalogue_refresh(warehouse=warehouse)
    return warehouse


def demo_gold_slice(tmp_path, external_ids=None, count=None):
    """Write a slice of the demo gold file (by id, or the first `count` lines) and return its path."""

    lines = DEMO_GOLD_FILE.read_text().splitlines()
    if external_ids is not None:
        wanted = set(external_ids)
        lines = [line for line in lines if json.loads(line)["id"] in wanted]
    elif count is not None:
        lines = lines[:count]
    path = tmp_path / "gold-slice.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def journey_simulator(settings):
    """Serve the vendor simulator (with the gold-label oracle) on a free port, in a thread."""

    models = {
        # Two simulated judges of one seed share blind spots, so the overlap heatmap has misses.
        "sim-journey-a": SimModel(
            catch_probability=0.5, false_reject_probability=0.1, flip_probability=0.0, seed="journey", latency_ms=2
        ),
        "sim-journey-b": SimModel(
            catch_probability=0.5, false_reject_probability=0.05, flip_probability=0.0, seed="journey", latency_ms=2
        ),
        "sim-journey-sure": SimModel(
            catch_probability=1.0, false_reject_probability=0.0, flip_probability=0.0, class_accuracy=1.0, latency_ms=2
        ),
    }
    simulator = Simulator(models=models, oracle=gold_label_oracle())
    server, url = start_in_thread(simulator)
    settings.VENDOR_SIMULATOR_URL = url
    simulator.url = url
    yield simulator
    server.shutdown()
    server.server_close()


@pytest.fixture
def journey_worker(transactional_db, settings, demo_warehouse, journey_simulator):
    """A real Celery worker on the live server's database, the simulator and the journey's warehouses file."""

    env = {"VENDOR_SIMULATOR_URL": journey_simulator.url, "WAREHOUSES_FILE": str(settings.WAREHOUSES_FILE)}
    worker = WorkerProcess(extra_env=env).start()
    yield worker
    worker.discard()


def new_judge_submit(page, live_server, *, name: str, backend: str, family: str, model: str, config: str):
    """Fill the new-judge form and save it; return the summary at the top (it may never appear)."""
    page.goto(f"{live_server.url}/judges/new/")
    page.fill("#id_name", name)
    page.select_option("#id_backend", backend)
    page.fill("#id_family", family)
    page.fill("#id_model", model)
    page.fill("#id_config", config)
    page.click("button:has-text('Save')")
    return page.locator("#error-summary")


def screenshot(page, name: str) -> Path:
    """Save a full-page screenshot of a journey's key page under var/screenshots/."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def assert_no_sideways_scroll(page) -> None:
    """The page fits the viewport's width: nothing (a long SQL line, a wide grid) pushes it wider."""
    widths = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert widths[0] <= widths[1], f"page is {widths[0]}px wide in a {widths[1]}px viewport"
