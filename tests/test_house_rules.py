"""The house rules a newcomer relies on, checked on the whole tree (issue 15).

Modules stay small, imports sit at the top of the module, `manage.py flush` is Django's own,
and ARCHITECTURE.md names only modules that exist and lists every module there is.
"""

import ast
import re
from pathlib import Path

from django.core.management import get_commands

ROOT = Path(__file__).resolve().parents[1]
MAX_MODULE_LINES = 400
# Generators of demo data: long tables of hand-written rows, not logic.
LONG_MODULES_ALLOWED = {"labelling/data/build_demo_gold.py", "probes/demo_warehouse.py"}
PROJECT_PACKAGES = {"config", "probes", "labelling", "judges", "triage", "loops", "simulator"}
MAX_FUNCTION_LEVEL_PROJECT_IMPORTS = 10
# A function-level import says why Django needs it there.
# Other codes may share the noqa (`# noqa: PLC0415, F401 — why`); the reason must follow them.
EXPLAINED = re.compile(r"#\s*noqa:\s*(?:[A-Z]+[0-9]+,\s*)*PLC0415(?:,\s*[A-Z]+[0-9]+)*\s*[—–-]+\s*\S")


def python_modules() -> list[Path]:
    """Every .py file of the project: no migrations, no virtualenv, var/ or hidden folders."""
    found = []
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT).parts
        if any(part.startswith(".") or part in {"var", "node_modules", "migrations"} for part in parts[:-1]):
            continue
        found.append(path)
    return sorted(found)


def relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def function_level_imports(source: str):
    """Yield the import statements inside a function or class body, with their first line number."""

    def visit(node, nested: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom) and nested:
                yield child
            inner = nested or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda)
            yield from visit(child, inner)

    yield from visit(ast.parse(source), False)


def imported_packages(node) -> set[str]:
    if isinstance(node, ast.ImportFrom):
        return {"(relative)"} if node.level else {(node.module or "").partition(".")[0]}
    return {alias.name.partition(".")[0] for alias in node.names}


def project_function_level_imports() -> list[tuple[str, int, str]]:
    """Return (module, line, text) of each function-level import of a project package."""
    found = []
    for path in python_modules():
        source = path.read_text()
        lines = source.splitlines()
        for node in function_level_imports(source):
            if imported_packages(node) & (PROJECT_PACKAGES | {"(relative)"}):
                text = " ".join(line.strip() for line in lines[node.lineno - 1 : node.end_lineno])
                found.append((relative(path), node.lineno, text))
    return found


def test_no_module_is_longer_than_four_hundred_lines():
    long_modules = {
        relative(path): count
        for path in python_modules()
        if (count := len(path.read_text().splitlines())) > MAX_MODULE_LINES
        and relative(path) not in LONG_MODULES_ALLOWED
    }
    assert not long_modules, f"split these by job (lines): {long_modules}"


def test_project_modules_are_imported_in_functions_only_where_django_needs_it_and_say_why():
    imports = project_function_level_imports()
    unexplained = [f"{module}:{line} {text}" for module, line, text in imports if not EXPLAINED.search(text)]
    assert not unexplained, "move to the module's top, or say why: # noqa: PLC0415 — <why>\n" + "\n".join(unexplained)
    assert len(imports) < MAX_FUNCTION_LEVEL_PROJECT_IMPORTS, imports


def test_the_import_counter_sees_nested_imports_and_skips_module_level_ones():
    source = (
        "import config\n"
        "if True:\n    from labelling import models\n"
        "def f():\n    from probes import guard  # noqa: PLC0415 — app loading\n"
        "class C:\n    def g(self):\n        import json\n"
    )
    found = [(node.lineno, imported_packages(node)) for node in function_level_imports(source)]
    assert found == [(5, {"probes"}), (8, {"json"})]
    assert EXPLAINED.search("from probes import guard  # noqa: PLC0415 — app loading")
    assert not EXPLAINED.search("from probes import guard  # noqa: PLC0415")


def test_manage_py_flush_is_djangos_own_command():
    assert get_commands()["flush"] == "django.core"


def architecture_paths() -> set[str]:
    """Return every repository path ARCHITECTURE.md names in backticks (a file, or a folder/)."""
    text = (ROOT / "ARCHITECTURE.md").read_text()
    paths = set()
    for quoted in re.findall(r"`([^`\s]+)`", text):
        path = quoted.partition("#")[0]
        if path.startswith("../") or "/" not in path or "://" in path:
            continue
        if re.fullmatch(r"[\w./-]+", path):
            paths.add(path)
    return paths


def test_every_module_architecture_md_names_exists():
    paths = architecture_paths()
    assert "labelling/goldset_io.py" in paths and "config/" in paths  # the map is read at all
    # A template is named from templates/ (`judges/dashboard.html#missed-items`).
    missing = sorted(path for path in paths if not (ROOT / path).exists() and not (ROOT / "templates" / path).exists())
    assert not missing, f"ARCHITECTURE.md names modules that do not exist: {missing}"


def listed_modules() -> set[str]:
    """Return the modules ARCHITECTURE.md's last section lists ("- `path.py`: what it does")."""
    text = (ROOT / "ARCHITECTURE.md").read_text()
    section = text[text.index("## 10. Every module") :]
    return set(re.findall(r"^- `([\w./-]+\.py)`:", section, flags=re.MULTILINE))


def tree_modules() -> set[str]:
    """Return every module of the apps: no tests, no migrations, no package `__init__.py`."""
    found = set()
    for path in python_modules():
        parts = path.relative_to(ROOT).parts
        if parts[0] in PROJECT_PACKAGES and "tests" not in parts and path.name != "__init__.py":
            found.add(relative(path))
    return found


def test_architecture_md_lists_every_module_of_the_tree():
    listed, tree = listed_modules(), tree_modules()
    assert "config/roles.py" in listed and "triage/pipeline.py" in tree  # both sides are read
    assert not tree - listed, f"modules ARCHITECTURE.md does not list: {sorted(tree - listed)}"
    assert not listed - tree, f"ARCHITECTURE.md lists modules the tree does not have: {sorted(listed - tree)}"
