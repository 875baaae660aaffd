"""House rules on the shape of the tree (issue 28): the import direction between apps, and
one reader of the environment.

Imports go one way, `loops → triage → judges → labelling → probes`; `config` is infrastructure that
every app uses and that imports no app (the demo's `seed_demo` and `reset_demo` aside). Tests are not apps:
a test may import anything.
"""

import ast
import os
import subprocess
import sys

from tests.test_house_rules import ROOT, python_modules, relative

# Each app and the apps it may import (config is below all of them).
MAY_IMPORT = {
    "probes": {"config"},
    "labelling": {"config", "probes"},
    "judges": {"config", "probes", "labelling"},
    "triage": {"config", "probes", "labelling", "judges"},
    # The loop lab stands on top: it may use every app, and no app imports it.
    "loops": {"config", "probes", "labelling", "judges", "triage"},
    "config": set(),
}
APPS = set(MAY_IMPORT)
# The demo's commands build (and reset) every app's data, so they import the apps.
CONFIG_MAY_IMPORT_APPS = {"config/management/commands/seed_demo.py", "config/management/commands/reset_demo.py"}
# Where a module may read os.environ itself: the one reader, processes that set the settings
# module, a child's environment, and secrets looked up by a name only known at run time.
ENVIRONMENT_READERS = {
    "config/env.py",
    "config/celery.py",
    "config/asgi.py",
    "config/wsgi.py",
    "config/gunicorn.conf.py",  # gunicorn's own settings, read before Django is set up
    "manage.py",
    "judges/vendor_access.py",
    "judges/backends/vendors.py",
    "probes/sqlite_runner.py",
    "probes/warehouses.py",
    "probes/admin.py",
}


def product_modules():
    """(path, app) of every product module: an app's code, not its tests nor the tests/ tree."""
    for path in python_modules():
        parts = path.relative_to(ROOT).parts
        if parts[0] in APPS and "tests" not in parts and len(parts) > 1:
            yield path, parts[0]


def imported_modules(source: str) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_no_app_imports_an_app_above_it():
    wrong = []
    for path, app in product_modules():
        allowed = MAY_IMPORT[app] | {app}
        if relative(path) in CONFIG_MAY_IMPORT_APPS:
            allowed = APPS
        for name in imported_modules(path.read_text()):
            top = name.partition(".")[0]
            if top in APPS and top not in allowed:
                wrong.append(f"{relative(path)} imports {name}")
    assert not wrong, wrong


def test_no_app_imports_the_loop_lab():
    """Pages reach the loop lab by URL and template include; no module of another app imports it."""
    importers = sorted(
        relative(path)
        for path, app in product_modules()
        if app != "loops" and any(name.partition(".")[0] == "loops" for name in imported_modules(path.read_text()))
    )
    assert not importers, importers
    assert all("loops" not in allowed for app, allowed in MAY_IMPORT.items() if app != "loops")


def simulator_modules():
    return [path for path in python_modules() if path.relative_to(ROOT).parts[0] == "simulator"]


def test_no_app_module_imports_the_simulator():
    """The vendor simulator is a development and test tool: the product reaches it over HTTP only.

    `make run` starts it as a process (`python -m simulator`, bin/run-local) and the tests on
    a thread; no module of an app (tests aside) imports it.
    """
    importers = sorted(
        relative(path)
        for path, _app in product_modules()
        if any(name.partition(".")[0] == "simulator" for name in imported_modules(path.read_text()))
    )
    assert not importers, importers


def test_the_simulator_imports_nothing_of_docket():
    """No app, no Django: what it needs from Docket is handed to it (a truth callable or file)."""
    assert simulator_modules(), "the simulator package has moved: update this rule"
    wrong = sorted(
        f"{relative(path)} imports {name}"
        for path in simulator_modules()
        for name in imported_modules(path.read_text())
        if name.partition(".")[0] in APPS | {"django", "rest_framework", "celery"}
    )
    assert not wrong, wrong


def test_starting_the_simulator_loads_no_django():
    loaded = subprocess.run(
        [sys.executable, "-c", "import simulator.__main__, sys; print(sorted(sys.modules))"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"},
    ).stdout
    modules = {name.strip("'") for name in loaded.strip("[]\n").split(", ")}
    assert "aiohttp" in modules
    assert not modules & (APPS | {"django"}), sorted(modules & (APPS | {"django"}))


def test_the_layering_check_sees_an_upward_import():
    assert "triage.models" in imported_modules("from triage.models import LiveQuery\n")
    assert "triage" not in MAY_IMPORT["judges"]


def test_settings_are_read_from_the_environment_in_one_place():
    readers = set()
    for path in python_modules():
        text = path.read_text()
        parts = path.relative_to(ROOT).parts
        if "tests" in parts or parts[0] == "clients" or path.name == "conftest.py":
            continue
        if "os.environ" in text or "environ.Env" in text or "getenv(" in text:
            readers.add(relative(path))
    assert readers <= ENVIRONMENT_READERS, sorted(readers - ENVIRONMENT_READERS)


def test_no_product_module_imports_a_view_module_or_a_management_command():
    """Shared code lives in a module of its own: views import no views, nothing imports a command.

    URL modules mount views and commands import their helpers; neither is imported itself.
    """
    wrong = []
    for path, _app in product_modules():
        if path.name in {"urls.py", "api_urls.py", "otlp_urls.py"}:
            continue
        for name in imported_modules(path.read_text()):
            last = name.rpartition(".")[2]
            is_view = last == "views" or last.endswith("_views")
            if name.partition(".")[0] in APPS and (is_view or ".management.commands." in name + "."):
                if name.endswith("commands._common"):
                    continue  # the commands' shared argument helpers
                wrong.append(f"{relative(path)} imports {name}")
    assert not wrong, wrong
