"""Measure how the package is laid out: the figures issue 25 asks for, before and after.

Run from the repository root: ``python scripts/structure_measures.py``. It reads the
source with ``ast`` and plain text search; it imports nothing from the package.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "dreamtui"

# Words only a transcript format uses (Claude Code's records, its folder): a core module outside
# ``core/ingest/formats/`` that says one of them knows a format, so a new format would touch it.
FORMAT_WORDS = re.compile(
    r"toolUseResult|isSidechain|parentUuid|isMeta|isCompactSummary|\"tool_use\"|\"tool_result\""
    r"|'tool_use'|'tool_result'|\.claude/projects|\"sessionId\"|<command-name>|<local-command"
    r"|\"leafUuid\"|\"summary\"|\"file-history-snapshot\"|\"uuid\""
)
# The extractor names as string literals: a module that says one decides something per
# extractor, so a new extractor may have to be added there.
EXTRACTOR_WORDS = re.compile(r"[\"'](anthropic|claude-code|openai|heuristic|command)[\"']")


def _inner_imports(tree: ast.AST) -> int:
    """Imports inside a function body (TYPE_CHECKING blocks at module level excluded)."""
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    count += 1
    return count


def _imported(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            for alias in node.names:
                names.add(f"{node.module}.{alias.name}")
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def main() -> int:
    files = sorted(p for p in ROOT.rglob("*.py"))
    lines = 0
    inner = 0
    ledger_open_front = 0
    front_core: set[str] = set()
    front_files_core = 0
    front_beyond: set[str] = set()
    format_files: list[str] = []
    extractor_files: list[str] = []
    anthropic_checks = 0
    for path in files:
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(ROOT.parent).as_posix()
        lines += text.count("\n")
        tree = ast.parse(text)
        inner += _inner_imports(tree)
        front = rel.startswith(("dreamtui/cli/", "dreamtui/tui/"))
        if front:
            ledger_open_front += text.count("Ledger.open(") + text.count("open_ledger(")
            core = {
                m
                for m in _imported(tree)
                if m.startswith("dreamtui.core")
                and m.count(".") >= 2
                and not m.startswith("dreamtui.core.models")
            }
            modules = {".".join(m.split(".")[:3]) for m in core}
            front_core.update(f"{rel} -> {m}" for m in modules)
            front_files_core += bool(modules)
            front_beyond.update(
                f"{rel} -> {m}" for m in modules if m not in ("dreamtui.core.errors", "dreamtui.core.config")
            )
        if (
            rel.startswith("dreamtui/core/")
            and not rel.startswith("dreamtui/core/ingest/formats/")
            and FORMAT_WORDS.search(text)
        ):
            format_files.append(rel)
        if EXTRACTOR_WORDS.search(text) and not rel.startswith("dreamtui/demo/"):
            extractor_files.append(rel)
        anthropic_checks += len(re.findall(r"==\s*[\"']anthropic[\"']", text))
    cycle = ROOT / "core" / "dream" / "cycle.py"
    cycle_lines = cycle.read_text(encoding="utf-8").count("\n") if cycle.exists() else 0
    print(f"modules (.py files)                      {len(files)}")
    print(f"lines                                    {lines}")
    print(f"imports inside functions                 {inner}")
    print(f"ledger opened in cli/ and tui/           {ledger_open_front}")
    print(f"cli/tui modules importing core beyond models  {front_files_core}")
    print(f"(module, core module) import pairs       {len(front_core)}")
    print(f"  of them beyond errors and config (the settings)  {len(front_beyond)}")
    print(f"core/dream/cycle.py lines                {cycle_lines}")
    print(f"== 'anthropic' checks                    {anthropic_checks}")
    formats_dir = ROOT / "core" / "ingest" / "formats"
    print(f"transcript format modules                {len(list(formats_dir.glob('*.py')))}")
    print(f"core modules outside formats/ naming records  {len(format_files)}")
    for rel in format_files:
        print(f"    {rel}")
    print(f"modules naming an extractor              {len(extractor_files)}")
    for rel in extractor_files:
        print(f"    {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
