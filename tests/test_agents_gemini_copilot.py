"""Issue 31 for Gemini CLI and GitHub Copilot CLI through the whole seam: the real files digested and
every real quote verified (and no altered one), tool output never the person's words, one dream over
Claude Code, Gemini CLI and Copilot CLI sessions of one repository, hostile files named in one line
without stopping the other formats, a rewritten Gemini document dreamed once more only for what is
new, and ``watch`` hearing an append and a rewrite."""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.agent_chats import (
    COPILOT_SESSION,
    FORGED,
    GEMINI_SESSION,
    INJECTED,
    write_copilot_session,
    write_gemini_chat,
)
from fakes.cli_world import folder_args
from fakes.gitrepo import git_as_tester as git
from fakes.transcript import write_session
from fakes.waiting import wait_for

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.errors import TranscriptError
from dreamtui.core.files import LINK_REASON, Skipped
from dreamtui.core.gate.verify import verify_quote, verify_quotes
from dreamtui.core.ingest import formats
from dreamtui.core.ingest.digest import digest_file
from dreamtui.core.ingest.formats import copilot, gemini
from dreamtui.core.ingest.sources import discover_all
from dreamtui.core.ledger import Ledger
from dreamtui.core.repository import encode_path
from dreamtui.services.workspace import Workspace

AGENTS = Path(__file__).parent / "fixtures" / "agents"
GEMINI_REAL = sorted((AGENTS / "gemini" / "tmp").rglob("session-*.json"))
GEMINI_LINES = sorted((AGENTS / "gemini" / "tmp").rglob("*.jsonl"))
COPILOT_REAL = sorted((AGENTS / "copilot" / "session-state").rglob("events.jsonl"))
NOW = "2026-03-10T23:00:00Z"
WRITTEN = 1773180000.0  # an hour before NOW: past the quiet period
CI = "Never push to the release branch without a green CI run, it deploys straight to customers."
MIGRATIONS = "From now on always run the migrations against the throwaway container before touching them."
LOCKFILE = "Always commit the lockfile together with the manifest, the deploy script refuses a mismatch."
CLAUDE_SESSION = "5e55a0a0-1111-4222-8333-444455556666"


def _windows(text: str, size: int = 8) -> list[str]:
    words = text.split()
    return [" ".join(words[i : i + size]) for i in range(0, max(len(words) - size + 1, 1), size // 2)]


def _altered(quote: str) -> str:
    words = quote.split()
    words[len(words) // 2] = "zqxjkv"
    return " ".join(words)


@pytest.mark.parametrize("files", [GEMINI_REAL + GEMINI_LINES, COPILOT_REAL], ids=["gemini", "copilot"])
def test_on_the_real_files_every_real_quote_verifies_and_no_altered_one_does(files: list[Path]) -> None:
    real = refused = 0
    for path in files:
        assert formats.format_for(path).name in (gemini.name, copilot.name)
        turns = digest_file(path).turns
        quotes = [(t, q) for t in turns for q in _windows(t.text) if len(q.split()) >= 6]
        found = verify_quotes([q for _t, q in quotes], [path])
        for (turn, quote), got in zip(quotes, found, strict=True):
            real += 1
            assert got.verified, (path.name, quote, got.reason)
            assert got.matches[0].provenance == ("person" if turn.role == "person" else "assistant")
            assert got.matches[0].file == str(path) and got.matches[0].line == turn.line
        altered = verify_quotes([_altered(q) for _t, q in quotes], [path])
        refused += sum(not v.verified for v in altered)
    assert real >= 10 and refused == real


@pytest.mark.parametrize("files", [GEMINI_REAL + GEMINI_LINES, COPILOT_REAL], ids=["gemini", "copilot"])
def test_on_the_real_files_tool_output_is_never_the_persons_words(files: list[Path]) -> None:
    checked = 0
    for path in files:
        fmt = formats.format_for(path)
        for rec in fmt.records(path):
            for piece in fmt.pieces(rec.obj):
                if piece.role != "tool" or len(re.findall(r"[A-Za-z]{3,}", piece.text)) < 8:
                    continue
                quote = " ".join(piece.text.split()[:10])
                got = verify_quote(quote, [path])
                if got.verified:
                    checked += 1
                    assert got.matches[0].provenance != "person", (path.name, quote, got.matches)
    assert checked >= 3


def _repository(tmp_path: Path) -> Path:
    main = (tmp_path / "src" / "spotter").resolve()
    main.mkdir(parents=True)
    git("init", "-q", cwd=main)
    git("commit", "-q", "--allow-empty", "-m", "start", cwd=main)
    return main


@pytest.fixture
def homes(git_home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[Path, Path]:
    monkeypatch.setenv("DREAMTUI_NOW", NOW)
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gemini-home"))
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot-home"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    gemini._resolved.clear()
    return tmp_path / "gemini-home", tmp_path / "copilot-home"


def _dream(config: Config) -> dict:
    got = CliRunner().invoke(cli, [*folder_args(config), "--extractor", "heuristic", "dream", "--json"])
    assert got.exit_code == 0, got.output
    return json.loads(got.stdout)


def test_one_dream_gives_one_queue_for_a_repository_worked_on_by_three_agents(
    tmp_path: Path, config: Config, ledger: Ledger, homes: tuple[Path, Path]
) -> None:
    gemini_home, copilot_home = homes
    repo = _repository(tmp_path)
    (repo / "web").mkdir()
    claude = write_session(
        config.transcripts,
        [("person", MIGRATIONS), ("assistant", "Understood.")],
        project=encode_path(str(repo)),
        session=CLAUDE_SESSION,
        cwd=str(repo),
    )
    os.utime(claude, (WRITTEN, WRITTEN))
    chat = write_gemini_chat(
        gemini_home, str(repo), [("person", CI), ("assistant", "Understood, I will.")], WRITTEN
    )
    log = write_copilot_session(
        copilot_home, str(repo / "web"), [("person", LOCKFILE), ("assistant", "Noted.")], WRITTEN
    )

    assert _dream(config)["stats"]["sessions_new"] == 3
    key = encode_path(str(repo))
    pending = ledger.list_candidates(status="pending")
    own = {CLAUDE_SESSION: str(claude), GEMINI_SESSION: str(chat), COPILOT_SESSION: str(log)}
    assert {c.session for c in pending} == set(own)
    assert {c.project for c in pending} == {key}  # one repository: one queue, one dedup scope
    for c in pending:  # each quote verified against its own agent's file, as the person's words
        assert c.transcript == own[c.session] and {m.file for m in c.matches} == {own[c.session]}
        assert c.matches[0].provenance == "person"
        assert FORGED[:30] not in c.quote and INJECTED[:30] not in c.quote
    with Workspace(config, ledger) as ws:
        agents = {r.session: r.agent for r in ws.queue_rows()}
    assert agents == {
        CLAUDE_SESSION: "Claude Code",
        GEMINI_SESSION: "Gemini CLI",
        COPILOT_SESSION: "Copilot CLI",
    }

    again = _dream(config)
    assert again.get("stats", {}).get("sessions_new", 0) == 0, again  # nothing dreamed twice
    assert len(ledger.list_candidates(status="pending")) == 3

    # Gemini rewrites its document as the session goes: only the new message is read
    late = "Never deploy on a Friday afternoon, the on-call rotation is empty then."
    doc = json.loads(chat.read_text())
    doc["messages"].append(
        {"id": "u-late", "timestamp": "2026-03-10T22:00:00.000Z", "type": "user", "content": [{"text": late}]}
    )
    chat.write_text(json.dumps(doc, indent=2))
    os.utime(chat, (WRITTEN + 60, WRITTEN + 60))
    light = _dream(config)["phases"][0]["counts"]
    assert (light["sessions_new"], light["person_chars"]) == (1, len(late))


def test_hostile_files_are_named_in_one_line_and_the_other_agents_still_read(
    tmp_path: Path, config: Config, ledger: Ledger, homes: tuple[Path, Path]
) -> None:
    gemini_home, copilot_home = homes
    repo = _repository(tmp_path)
    log = write_copilot_session(
        copilot_home, str(repo), [("person", LOCKFILE), ("assistant", "Noted.")], WRITTEN
    )
    chat = write_gemini_chat(gemini_home, str(repo), [("person", CI), ("assistant", "Understood.")], WRITTEN)
    half = chat.with_name("session-2026-03-10T22-00-aaaaaaaa.json")
    half.write_bytes(chat.read_bytes()[:300])  # caught half written
    os.mkfifo(chat.with_name("session-fifo.json"))
    os.mkfifo(log.parent.parent / "11111111-2222-4333-8444-555555555555.jsonl")
    (log.parent.parent / "22222222-2222-4333-8444-555555555555").mkdir()
    (log.parent.parent / "22222222-2222-4333-8444-555555555555" / "events.jsonl").symlink_to(
        tmp_path / "nowhere"
    )

    skipped: list[Skipped] = []
    found = {tf.path for tf in discover_all(config, skipped)}
    assert {chat, half, log} <= found
    # the two FIFOs, and the link (to nothing) named like a session: a link is never read through
    assert all("\n" not in s.notice for s in skipped) and len(skipped) == 3, skipped
    assert [s.reason for s in skipped if s.path.endswith("/events.jsonl")] == [LINK_REASON]
    with pytest.raises(TranscriptError) as caught:
        digest_file(half)
    assert "\n" not in str(caught.value) and "half written" in str(caught.value)

    dreamed = _dream(config)
    assert dreamed["stats"]["sessions_new"] >= 2
    assert [u for u in dreamed["stats"]["unreadable_files"] if "aaaaaaaa" in u] == [
        str(half)
    ]  # retried next time
    assert {c.session for c in ledger.list_candidates(status="pending")} == {GEMINI_SESSION, COPILOT_SESSION}
    half.write_bytes(
        chat.read_bytes().replace(GEMINI_SESSION.encode(), b"aaaaaaaa-0000-4000-8000-000000000000")
    )
    os.utime(half, (WRITTEN, WRITTEN))
    assert digest_file(half).turns  # finished: read on the next look


def test_watch_hears_a_copilot_append_and_a_gemini_rewrite(tmp_path: Path, homes: tuple[Path, Path]) -> None:
    from dreamtui.core.ingest.watch import Watcher

    gemini_home, copilot_home = homes
    repo = _repository(tmp_path)
    log = write_copilot_session(copilot_home, str(repo), [("person", LOCKFILE)])
    chat = write_gemini_chat(gemini_home, str(repo), [("person", CI)])
    claude = tmp_path / "claude"
    claude.mkdir()
    changes: list[Path] = []
    lock = threading.Lock()

    def changed(paths: list[Path]) -> None:
        with lock:
            changes.extend(paths)

    roots = [copilot_home / "session-state", gemini_home / ".gemini" / "tmp"]
    with Watcher(claude, extra=roots, on_change=changed, debounce=0.2, rescan_seconds=3600) as watcher:
        assert log in watcher.initial and chat in watcher.initial
        with log.open("a") as fh:
            fh.write(
                json.dumps({"type": "assistant.message", "data": {"content": "Noted."}, "id": "x"}) + "\n"
            )
        assert wait_for(lambda: log in changes, 10)
        tmp = chat.with_name(chat.name + ".tmp-1")  # Gemini writes a temporary file and renames it
        shutil.copy(chat, tmp)
        os.replace(tmp, chat)
        assert wait_for(lambda: chat in changes, 10)


def test_a_secret_typed_to_gemini_or_copilot_never_reaches_the_ledger_the_memory_or_the_output(
    tmp_path: Path, config: Config, ledger: Ledger, homes: tuple[Path, Path]
) -> None:
    gemini_home, copilot_home = homes
    repo = _repository(tmp_path)
    stripe = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"  # assembled: no credential in clear here
    github = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
    write_gemini_chat(
        gemini_home,
        str(repo),
        [
            (
                "person",
                f"Never push to the release branch without the deploy key {stripe} set, it deploys to customers.",
            ),
            ("assistant", "Understood."),
        ],
        WRITTEN,
    )
    write_copilot_session(
        copilot_home,
        str(repo),
        [
            (
                "person",
                f"Always push with the token {github} from now on, the old one was revoked last week.",
            ),
            ("assistant", "Noted."),
        ],
        WRITTEN,
    )
    got = CliRunner().invoke(cli, [*folder_args(config), "--extractor", "heuristic", "dream"])
    assert got.exit_code == 0, got.output
    pending = ledger.list_candidates(status="pending")
    assert {c.session for c in pending} == {GEMINI_SESSION, COPILOT_SESSION}
    assert all("REDACTED" in c.quote + c.claim for c in pending), [(c.quote, c.claim) for c in pending]
    ledger.close()
    stored = b"".join(
        p.read_bytes() for root in (config.state, config.memory) for p in root.rglob("*") if p.is_file()
    )
    for secret in (stripe, github):
        assert secret.encode() not in stored and secret not in got.output


def test_a_good_night_in_a_rewritten_gemini_chat_starts_a_dream(
    tmp_path: Path, homes: tuple[Path, Path]
) -> None:
    """A Gemini chat is one JSON document rewritten as it grows: the person's new good night is heard
    (issue 31 left-over), the chat as it was when watching began is not."""
    from dreamtui.core.ingest.watch import Watcher

    gemini_home, _copilot_home = homes
    repo = _repository(tmp_path)
    said = [("person", CI), ("assistant", "Understood, I will.")]
    chat = write_gemini_chat(gemini_home, str(repo), said)
    claude = tmp_path / "claude"
    claude.mkdir()
    heard: list[str] = []
    changes: list[Path] = []
    roots = [gemini_home / ".gemini" / "tmp"]
    with Watcher(
        claude, extra=roots, on_change=changes.extend, on_goodnight=heard.append, debounce=0.2
    ) as watcher:
        assert watcher.primed.wait(10)  # what was there when watching began is known
        write_gemini_chat(gemini_home, str(repo), [*said, ("person", "Thanks, good night!")])
        assert wait_for(lambda: len(heard) == 1, 10), (heard, changes)
        write_gemini_chat(
            gemini_home, str(repo), [*said, ("person", "Thanks, good night!"), ("assistant", "Night!")]
        )
        assert wait_for(lambda: changes.count(chat) >= 2, 10)
    assert len(heard) == 1  # heard once: the same record rewritten is not new
