"""Issue 31's seam, proved: a format that dreamtui has never heard of, added as one module and one
entry in ``formats.FORMATS`` (``tests/plainchat_format.py``), is found at its own default folder,
dreamed beside a Claude Code session of the same repository into one queue, each proposal marked with
its agent and its quote verified against its own file, its tool output never taken for the person's
words, listed by ``config`` and watched live, with no other module of dreamtui changed."""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import plainchat_format
import pytest
from click.testing import CliRunner
from fakes.cli_world import folder_args
from fakes.transcript import write_session
from fakes.waiting import wait_for

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.gate.verify import verify_quotes
from dreamtui.core.ingest import formats
from dreamtui.core.ingest.watch import Watcher
from dreamtui.core.ledger import Ledger
from dreamtui.core.repository import encode_path

NOW = "2026-03-10T23:00:00Z"
WRITTEN = 1773180000.0  # an hour before NOW: past the quiet period
LESSON = "Never run the integration suite without the compose stack up, the tests hang forever."
TOOL_LESSON = "Never trust the cache folder after a rebase, it keeps stale wheels around for days."
CLAUDE_LESSON = "Always pin container images by digest in the manifests, tags get overwritten upstream."
PACKAGE = Path(formats.__file__).resolve().parents[3]


@pytest.fixture
def plainchat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """PlainChat registered (one entry in ``FORMATS``) with its home under the test's folder."""
    monkeypatch.setenv("DREAMTUI_NOW", NOW)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    home = tmp_path / "plainchat-home"
    monkeypatch.setenv("PLAINCHAT_HOME", str(home))
    monkeypatch.setitem(formats.FORMATS, plainchat_format.name, plainchat_format)  # type: ignore[arg-type]
    formats._claimed.cache_clear()
    yield home / "chats"
    formats._claimed.cache_clear()


def _chat(folder: Path, session: str, cwd: str, lines: list[dict[str, str]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session}.pchat"
    rows = [{"type": "start", "cwd": cwd}, *lines]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    os.utime(path, (WRITTEN, WRITTEN))
    return path


def _world(tmp_path: Path, chats: Path) -> tuple[Config, Path, Path]:
    repo = (tmp_path / "src" / "spotter").resolve()
    repo.mkdir(parents=True)
    transcripts = tmp_path / "transcripts"
    transcripts.mkdir()
    config = Config(transcripts=transcripts, memory=tmp_path / "memory", state=tmp_path / "state")
    claude = write_session(
        transcripts,
        [("person", CLAUDE_LESSON), ("assistant", "Noted, digests from now on.")],
        project=encode_path(str(repo)),
        cwd=str(repo),
    )
    os.utime(claude, (WRITTEN, WRITTEN))
    chat = _chat(
        chats,
        "s-0001",
        str(repo),
        [
            {"type": "person", "id": "p1", "at": "2026-03-10T21:00:00Z", "text": LESSON},
            {"type": "tool", "id": "t1", "at": "2026-03-10T21:00:05Z", "text": TOOL_LESSON},
            {"type": "reply", "id": "r1", "at": "2026-03-10T21:00:09Z", "text": "Understood, compose first."},
        ],
    )
    return config, chat, claude


def _run(config: Config, *args: str) -> CliRunner:
    got = CliRunner().invoke(cli, [*folder_args(config), "--extractor", "heuristic", *args])
    assert got.exit_code == 0 and got.exception is None, got.output
    return got


def test_a_new_format_is_one_module_and_one_registry_entry(tmp_path: Path, plainchat: Path) -> None:
    config, chat, claude = _world(tmp_path, plainchat)

    listed = _run(config, "config").output
    assert "PlainChat" in listed and str(plainchat) in listed  # found at its own default folder

    record = json.loads(_run(config, "dream", "--json").stdout)
    assert record["status"] == "completed", record

    with Ledger.open(config.state) as ledger:
        pending = ledger.list_candidates(status="pending")
    by_file = {c.transcript.split("#")[0]: c for c in pending}
    assert set(by_file) == {str(chat), str(claude)}, [c.transcript for c in pending]
    assert by_file[str(chat)].project == by_file[str(claude)].project  # one queue for the repository
    assert by_file[str(chat)].quote in LESSON and by_file[str(chat)].provenance == "person"
    # the tool's output is never the person's words: nothing is proposed from it
    assert not any("cache folder" in (c.claim + c.quote) for c in pending)

    shown = json.loads(_run(config, "candidates", "--json").stdout)
    agents = {row["transcript"].split("#")[0]: row["agent"] for row in shown}
    assert agents == {str(chat): "PlainChat", str(claude): "Claude Code"}

    (real,) = verify_quotes([by_file[str(chat)].quote], [chat])
    assert real.verified and real.best is not None and real.best.provenance == "person"
    (tool,) = verify_quotes([TOOL_LESSON], [chat])
    assert tool.verified and tool.best is not None and tool.best.provenance == "tool"
    (altered,) = verify_quotes([LESSON.replace("compose", "kompose")], [chat])
    assert not altered.verified


def test_the_watcher_hears_a_new_format_by_its_registry_entry(tmp_path: Path, plainchat: Path) -> None:
    chat = _chat(plainchat, "s-0002", str(tmp_path), [])
    heard: list[Path] = []
    watcher = Watcher(
        tmp_path / "transcripts-none",
        extra=[plainchat],
        on_change=heard.extend,
        debounce=0.2,
        rescan_seconds=3600,  # only an event can deliver it
    )
    (tmp_path / "transcripts-none").mkdir()
    with watcher:
        with chat.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"type": "person", "id": "p2", "at": NOW, "text": LESSON}) + "\n")
        wait_for(lambda: chat in heard, timeout=30)


def test_no_module_of_dreamtui_names_a_format_module_but_the_registry() -> None:
    """Only ``formats/__init__.py`` imports the format modules (and a format its own helpers); the
    memory side's guard of Codex's and Gemini's own memory files is the one other reader (their homes)."""
    allowed = {
        PACKAGE / "core" / "ingest" / "formats" / "__init__.py",
        PACKAGE / "core" / "memory" / "outside_agents.py",  # codex_home(), gemini_dir(): item 4's files
    }
    module_names = {f.__name__.rsplit(".", 1)[1] for f in formats.FORMATS.values()}
    assert (PACKAGE / "cli").is_dir() and (PACKAGE / "core" / "ingest" / "formats").is_dir()
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path in allowed or path.parent.name == "formats":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module == "dreamtui.core.ingest.formats":
                    named = {a.name for a in node.names} & module_names
                elif node.module.startswith("dreamtui.core.ingest.formats."):
                    named = {node.module.rsplit(".", 1)[1]} & module_names
                else:
                    named = set()
                if named:
                    offenders.append(f"{path.relative_to(PACKAGE)}: {sorted(named)}")
    assert offenders == []
