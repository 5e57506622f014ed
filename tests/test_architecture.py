"""The shape of the code: the core runs headless (never loads Textual), all SQL lives in the ledger, and
the front ends reach the core through the services."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path


def test_core_and_cli_never_import_textual() -> None:
    code = (
        "import pkgutil, importlib, sys\n"
        "import dreamtui.core\n"
        "for m in pkgutil.walk_packages(dreamtui.core.__path__, 'dreamtui.core.'):\n"
        "    importlib.import_module(m.name)\n"
        "import dreamtui.cli.main\n"
        "loaded = sorted(n for n in sys.modules if n == 'textual' or n.startswith('textual.'))\n"
        "print(len(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0", out.stdout + out.stderr


# -- all SQL lives with the ledger ------------------------------------------------------------------

PACKAGE = Path(__file__).resolve().parents[1] / "dreamtui"
LEDGER = PACKAGE / "core" / "ledger"
SQL_STATEMENT = re.compile(
    r"^\s*((SELECT|INSERT|UPDATE|DELETE|REPLACE|CREATE|ALTER|DROP|BEGIN|COMMIT|ROLLBACK|WITH|"
    r"VACUUM)\b|PRAGMA\s+\w+\s*(\(.*\)|=.*)?\s*$)"
)
STATEMENT_CALLS = {"execute", "executemany", "executescript"}


def _is_git(node: ast.expr) -> bool:
    """``repo.git.execute(...)`` and ``git.Git(path).execute(...)`` run git, not SQL."""
    if isinstance(node, ast.Attribute):
        return node.attr == "git"
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "Git"


def sql_outside_ledger(source: str, name: str) -> list[str]:
    """Where ``source`` runs or spells SQL: an ``import sqlite3``, a call of ``execute``/``executemany``/
    ``executescript`` (other than git's), or a string that starts like an SQL statement."""
    found = []
    for node in ast.walk(ast.parse(source, name)):
        where = f"{name}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Import) and any(a.name == "sqlite3" for a in node.names):
            found.append(f"{where}: import sqlite3")
        elif isinstance(node, ast.ImportFrom) and node.module == "sqlite3":
            found.append(f"{where}: from sqlite3 import")
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in STATEMENT_CALLS
            and not _is_git(node.func.value)
        ):
            found.append(f"{where}: .{node.func.attr}(...)")
        elif (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL_STATEMENT.match(node.value)
        ):
            found.append(f"{where}: {node.value.strip()[:60]!r}")
    return found


def test_the_detector_finds_sql_spelled_or_run_in_any_way() -> None:
    bad = (
        "import sqlite3\n"
        "def f(ledger, c, x):\n"
        '    ledger.query("SELECT 1 FROM candidates")\n'
        '    ledger.query(f"UPDATE files SET offset = {x}")\n'
        "    c.execute(x)\n"
        "    c.executemany(x, [])\n"
    )
    assert sorted(f.split(": ", 1)[1][:9] for f in sql_outside_ledger(bad, "bad.py")) == [
        "'SELECT 1",
        "'UPDATE f",
        ".execute(",
        ".executem",
        "import sq",
    ]
    fine = (
        "def f(repo, git, path):\n"
        '    repo.git.execute(["git", "status"])\n'
        '    git.Git(str(path)).execute(["git", "init"])\n'
        '    return "Select the lines to keep"\n'
    )
    assert sql_outside_ledger(fine, "fine.py") == []


def test_no_sql_is_run_outside_the_ledger_package() -> None:
    """Every statement lives in ``dreamtui/core/ledger/``, as a named function returning typed rows."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if LEDGER in path.parents:
            continue
        found += sql_outside_ledger(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE.parent)))
    assert found == [], "SQL outside dreamtui/core/ledger/:\n" + "\n".join(found)


# -- typed results -----------------------------------------------------------------------------------

TYPED = [PACKAGE / "core", PACKAGE / "services"]


def any_returns(source: str, name: str) -> list[str]:
    """Public functions and methods of ``source`` declared to return ``Any`` (a function nested in another
    is not public)."""
    found = []
    tree = ast.parse(source, name)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and not n.name.startswith("_")]
    for node in [*tree.body, *(n for c in classes for n in c.body)]:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            returns = node.returns
            if isinstance(returns, ast.Constant):  # a string annotation
                returns = ast.parse(str(returns.value), mode="eval").body
            if (isinstance(returns, ast.Name) and returns.id == "Any") or (
                isinstance(returns, ast.Attribute) and returns.attr == "Any"
            ):
                found.append(f"{name}:{node.lineno}: {node.name}")
    return found


def test_the_detector_finds_a_public_any_return() -> None:
    source = (
        "def f() -> Any: ...\ndef g() -> 'typing.Any': ...\ndef _h() -> Any: ...\ndef k() -> int: ...\n"
        "class C:\n    def m(self) -> Any: ...\n"
    )
    assert any_returns(source, "x.py") == ["x.py:1: f", "x.py:2: g", "x.py:6: m"]


def test_no_public_function_of_the_core_or_the_services_returns_any() -> None:
    """Callers get a type to work with (mypy checks the rest: ``warn_return_any``)."""
    found = []
    for root in TYPED:
        for path in sorted(root.rglob("*.py")):
            found += any_returns(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE.parent)))
    assert found == [], "public functions returning Any:\n" + "\n".join(found)


# -- the front ends go through the services ----------------------------------------------------------

FRONT_ENDS = [PACKAGE / "cli", PACKAGE / "tui"]
FRONT_END_CORE = {"dreamtui.core.models", "dreamtui.core.errors", "dreamtui.core.config"}
"""The only core modules the CLI and the app import: the typed models, the errors and the settings."""


def core_imports(source: str, name: str) -> set[str]:
    """Every ``dreamtui.core`` module ``source`` imports, anywhere (inside functions and ``TYPE_CHECKING``
    blocks too): ``from dreamtui.core import clock`` is ``dreamtui.core.clock``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "dreamtui.core":
                found.update(f"dreamtui.core.{a.name}" for a in node.names)
            else:
                found.add(node.module)
    return {m for m in found if m == "dreamtui.core" or m.startswith("dreamtui.core.")}


def test_the_detector_finds_a_core_import_in_any_form() -> None:
    source = (
        "import dreamtui.core.ledger\n"
        "from dreamtui.core import clock, models\n"
        "from dreamtui.core.memory.outside import scan\n"
        "from dreamtui.services import Workspace\n"
        "if TYPE_CHECKING:\n    from dreamtui.core.gate import verify\n"
        "def f():\n    from dreamtui.core.new_module import x\n"
    )
    assert core_imports(source, "x.py") == {
        "dreamtui.core.ledger",
        "dreamtui.core.clock",
        "dreamtui.core.models",
        "dreamtui.core.memory.outside",
        "dreamtui.core.gate",
        "dreamtui.core.new_module",
    }


def test_the_front_ends_import_the_core_only_through_the_services() -> None:
    """The CLI and the app reach the core through ``dreamtui.services``; of the core itself they import
    only the models, the errors and the config (pyproject's contract lists the rest by name; this walk
    also catches a core module added after it)."""
    found = []
    for root in FRONT_ENDS:
        for path in sorted(root.rglob("*.py")):
            rel = str(path.relative_to(PACKAGE.parent))
            beyond = core_imports(path.read_text(encoding="utf-8"), rel) - FRONT_END_CORE
            found += [f"{rel}: {module}" for module in sorted(beyond)]
    assert found == [], "core imports in cli/ or tui/ (go through dreamtui.services):\n" + "\n".join(found)
