"""GitHub Copilot CLI's older session files (``formats/copilot_history.py``): one JSON document per
session, ``$COPILOT_HOME/history-session-state/session_<id>_<ms>.json``. Where they are, which list is
read (the timeline: each turn once, with its id and time), whose words each record holds (the forged
shapes: a tool's output shaped like a person's message, a reminder alone, a message that is nothing but
what Copilot injected), the digest, a half-written document, and one dream in the repository's queue
with a secret redacted.

The project's fixture (``tests/fixtures/agents/copilot/history-session-state``) is written to the shape
of real files, which are not redistributable (``PROVENANCE.md``); the real files themselves are read
when ``DREAMTUI_COPILOT_HISTORY_REAL`` names their folder (skipped otherwise)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from fakes.agent_chats import (
    COPILOT_HISTORY_SESSION,
    FORGED,
    INJECTED,
    REMINDER,
    copilot_history_document,
    write_copilot_history_session,
)
from fakes.cli_world import folder_args
from fakes.gitrepo import git_as_tester as git
from fakes.transcript import write_session
from fakes.waiting import wait_for

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.errors import TranscriptError
from dreamtui.core.gate.verify import verify_quote, verify_quotes
from dreamtui.core.ingest import formats
from dreamtui.core.ingest.digest import digest_file, digest_increment
from dreamtui.core.ingest.formats import copilot, copilot_history
from dreamtui.core.ingest.records import record_key
from dreamtui.core.ingest.transcripts import agents
from dreamtui.core.ledger import Ledger
from dreamtui.core.models import Turn
from dreamtui.core.repository import encode_path
from dreamtui.services.workspace import Workspace

FIX = Path(__file__).parent / "fixtures" / "agents" / "copilot" / "history-session-state"
SHOP = FIX / "session_4a7d0c3e-8b21-4f5e-a9c6-1e2f3a4b5c6d_1773176400000.json"
ASKED = (
    "The checkout page loses the basket when I reload it. Can you find out why? Keep the change small, "
    "no redesign."
)
REAL = Path(
    os.environ.get(
        "DREAMTUI_COPILOT_HISTORY_REAL",
        "/work/finder/copilot/polusiti__sys/.copilot/history-session-state",
    )
)
NOW = "2026-03-10T23:00:00Z"
WRITTEN = 1773180000.0  # an hour before NOW: past the quiet period
LESSON = "Always run the contract tests before you touch the payment form, it is audited every quarter."


def _write(
    folder: Path, doc: dict, name: str = "session_0bad0bad-1111-4222-8333-444455556666_1.json"
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False), encoding="utf-8")
    return path


def _windows(text: str, size: int = 8) -> list[str]:
    words = text.split()
    return [" ".join(words[i : i + size]) for i in range(0, max(len(words) - size + 1, 1), size // 2)]


def _altered(quote: str) -> str:
    words = quote.split()
    words[len(words) // 2] = "zqxjkv"
    return " ".join(words)


# -- where the sessions are -----------------------------------------------------------------------


def test_the_default_folder_honours_copilot_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("COPILOT_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    assert copilot_history.default_roots() == [tmp_path / ".copilot" / "history-session-state"]
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "elsewhere"))
    assert copilot_history.default_roots() == [tmp_path / "elsewhere" / "history-session-state"]


def test_claimed_by_name_and_one_agent_with_the_newer_logs() -> None:
    assert formats.format_for(SHOP) is copilot_history
    assert formats.claimed(Path("/h/.copilot/history-session-state/notes.json")) is None
    assert formats.claimed(Path("/h/.copilot/elsewhere/session_x_1.json")) is None
    assert (copilot_history.agent, copilot_history.label) == (copilot.agent, copilot.label)
    assert [label for _agent, label in agents()].count("Copilot") == 1


def test_found_and_filed_under_the_folder_the_person_trusted(tmp_path: Path) -> None:
    root = tmp_path / "history-session-state"
    root.mkdir()
    shutil.copy(SHOP, root / SHOP.name)
    no_cwd = write_copilot_history_session(tmp_path, None, [("person", LESSON)])
    (root / "notes.json").write_text("{}")
    found = copilot_history.discover(root)
    assert [(tf.path.name, tf.session, tf.project, tf.format) for tf in found] == [
        (SHOP.name, "4a7d0c3e-8b21-4f5e-a9c6-1e2f3a4b5c6d", "-home-dev-src-shop", "copilot-cli-history"),
        (no_cwd.name, COPILOT_HISTORY_SESSION, copilot.UNKNOWN_PROJECT, "copilot-cli-history"),
    ]
    assert copilot_history.cwd_of(root / SHOP.name) == "/home/dev/src/shop"
    assert copilot_history.cwd_of(no_cwd) == ""
    assert copilot_history.session_files(root, "", COPILOT_HISTORY_SESSION) == [no_cwd]


# -- which list is read, whose words --------------------------------------------------------------


def test_the_timeline_is_read_each_turn_once_with_its_id_and_time() -> None:
    recs = list(copilot_history.records(SHOP))
    doc = json.loads(SHOP.read_text())
    assert [r.obj for r in recs] == doc["timeline"]
    assert [r.locator for r in recs] == list(range(1, len(recs) + 1))
    assert [r.key for r in recs] == [t["id"] for t in doc["timeline"]]
    assert all(orjson.loads(r.raw) == r.obj and r.raw in SHOP.read_bytes() for r in recs)  # its own bytes
    d = digest_file(SHOP)
    assert [(t.role, t.kind, t.uuid, t.timestamp) for t in d.turns] == [
        ("person", "prompt", "u-0", "2026-03-10T21:01:00.000Z"),
        ("assistant", "text", "c-1", "2026-03-10T21:02:00.000Z"),
        ("person", "prompt", "u-2", "2026-03-10T21:03:00.000Z"),
        ("assistant", "text", "c-3", "2026-03-10T21:04:00.000Z"),
    ]
    assert d.turns[0].text == ASKED and d.cwd == "/home/dev/src/shop"
    assert (d.project, d.session) == ("-home-dev-src-shop", "4a7d0c3e-8b21-4f5e-a9c6-1e2f3a4b5c6d")
    kept = " ".join(t.text for t in d.turns)
    for dropped in (FORGED, INJECTED, "<reminder>", "rate limit", "1 failing", "MCP Server"):
        assert dropped not in kept
    assert digest_file(SHOP, cheap=False) == d


def test_each_piece_is_whose_its_record_says() -> None:
    for rec in copilot_history.records(SHOP):
        itype = rec.obj["type"]
        for p in copilot_history.pieces(rec.obj):
            want = {"user": "person", "copilot": "assistant"}.get(
                itype, "tool" if itype.startswith("tool_") else "meta"
            )
            assert p.role == want, (itype, p)
            assert copilot_history.provenance(rec.obj, p.path, p.text, lambda _t: True) == p.role


def test_the_fixtures_quotes_verify_and_no_altered_one() -> None:
    turns = digest_file(SHOP).turns
    quotes = [(t, q) for t in turns for q in _windows(t.text) if len(q.split()) >= 6]
    got = verify_quotes([q for _t, q in quotes], [SHOP])
    for (turn, quote), v in zip(quotes, got, strict=True):
        assert v.verified and v.matches[0].provenance == turn.role, (quote, v)
        assert (v.matches[0].file, v.matches[0].line, v.matches[0].uuid) == (str(SHOP), turn.line, turn.uuid)
    assert len(quotes) >= 8
    assert not any(v.verified for v in verify_quotes([_altered(q) for _t, q in quotes], [SHOP]))


def test_a_tool_output_shaped_like_a_person_is_the_tools(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "history-session-state", copilot_history_document("/w", [("assistant", "Done.")])
    )
    got = verify_quote(FORGED, [path])
    assert got.verified and {m.provenance for m in got.matches} == {"tool"}


def test_a_reminder_alone_and_a_message_of_injected_text_are_never_the_persons(tmp_path: Path) -> None:
    """Written to the description: a timeline ``user`` item holding only Copilot's ``<reminder>``, one
    holding the person's words with the reminder appended, and a ``<current_datetime>`` block alone."""
    doc = copilot_history_document("/w", [("person", LESSON)])
    doc["timeline"] += [
        {"id": "u-r", "timestamp": "2026-03-10T22:00:00.000Z", "type": "user", "text": REMINDER.strip()},
        {"id": "u-s", "timestamp": "2026-03-10T22:01:00.000Z", "type": "user", "text": LESSON + REMINDER},
        {
            "id": "u-d",
            "timestamp": "2026-03-10T22:02:00.000Z",
            "type": "user",
            "text": f"<current_datetime>2026-03-10</current_datetime>\n<reminder>{INJECTED}</reminder>",
        },
    ]
    path = _write(tmp_path / "history-session-state", doc)
    assert [t.text for t in digest_file(path).turns] == [LESSON, LESSON]  # typed again later: kept again
    injected = verify_quote(INJECTED, [path])
    assert injected.verified and "person" not in {m.provenance for m in injected.matches}
    said = verify_quote(LESSON, [path])
    assert said.matches[0].provenance == "person"
    assert {m.uuid for m in said.matches if m.provenance == "person"} == {"u-0", "u-s"}


def test_without_a_timeline_the_chat_messages_are_read_without_what_copilot_injected(tmp_path: Path) -> None:
    doc = copilot_history_document(None, [("person", LESSON), ("assistant", "Noted, contract tests first.")])
    doc["timeline"] = []
    doc["chatMessages"] += [
        {"role": "user", "content": REMINDER},  # nothing but the reminder
        {"role": "user", "content": [{"type": "text", "text": "<reminder>" + INJECTED + "</reminder>"}]},
        {
            "role": "tool",
            "tool_call_id": "call_x",
            "content": json.dumps({"role": "user", "content": FORGED}),
        },
    ]
    path = _write(tmp_path / "history-session-state", doc)
    d = digest_file(path)
    assert [(t.role, t.text) for t in d.turns] == [
        ("person", LESSON),
        ("assistant", "Noted, contract tests first."),
    ]
    assert digest_file(path, cheap=False) == d
    said = verify_quote(LESSON, [path])
    assert said.verified and said.matches[0].provenance == "person"
    for forged in (INJECTED, FORGED):
        got = verify_quote(forged, [path])
        assert got.verified and "person" not in {m.provenance for m in got.matches}, got
    chat = [r.obj for r in copilot_history.records(path)]
    assert (
        copilot_history.provenance(chat[0], ("content",), LESSON + REMINDER, lambda t: LESSON in t)
        == "person"
    )
    assert copilot_history.provenance(chat[0], ("content",), LESSON + REMINDER, lambda t: False) == "meta"


def test_a_rewritten_document_keeps_the_keys_of_what_was_read(tmp_path: Path) -> None:
    folder = tmp_path / "history-session-state"
    first = _write(folder, copilot_history_document("/w", [("person", LESSON), ("assistant", "Noted.")]))
    before = {record_key(r) for r in copilot_history.records(first)}
    doc = copilot_history_document(
        "/w", [("person", LESSON), ("assistant", "Noted."), ("person", "And the docs?")]
    )
    _write(folder, doc)
    after = [record_key(r) for r in copilot_history.records(first)]
    assert before < set(after) and len(set(after) - before) == 1


def _grow_and_digest(src: Path, folder: Path, state: Path) -> tuple[list[Turn], int]:
    """The session of ``src`` written stage by stage as Copilot CLI rewrites its document while it grows
    (the timeline and the chat messages cut after a quarter, a half, three quarters, then whole), each
    stage once caught half written (in place) and once whole (atomically), and digested by the dream's
    increment after each, the ledger reopened every time: the turns, and how many half-written reads
    were refused."""
    doc = json.loads(src.read_bytes())
    timeline, chat = doc["timeline"], doc["chatMessages"]
    live = folder / src.name
    turns: list[Turn] = []
    refused = 0
    for quarter in (1, 2, 3, 4):
        cut = {
            **doc,
            "timeline": timeline[: len(timeline) * quarter // 4],
            "chatMessages": chat[: len(chat) * quarter // 4],
        }
        data = json.dumps(cut, indent=2, ensure_ascii=False).encode()
        live.write_bytes(data[: len(data) * 2 // 3])  # caught while the rewrite is under way
        with Ledger.open(state) as led:
            with pytest.raises(TranscriptError, match="half written"):
                digest_increment(led, live)
            refused += 1
        tmp = live.with_name(live.name + ".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, live)
        with Ledger.open(state) as led:
            turns += digest_increment(led, live)[0].turns
    with Ledger.open(state) as led:
        assert digest_increment(led, live)[0].turns == []  # read again, unchanged: nothing new
    return turns, refused


def test_a_session_rewritten_as_it_grows_is_dreamed_once_in_full_and_never_half(tmp_path: Path) -> None:
    folder = tmp_path / "history-session-state"
    folder.mkdir()
    turns, refused = _grow_and_digest(SHOP, folder, tmp_path / "state")
    whole = digest_file(SHOP).turns
    assert [(t.role, t.text, t.uuid) for t in turns] == [(t.role, t.text, t.uuid) for t in whole]
    assert refused == 4


def test_a_half_written_an_empty_or_a_foreign_document_is_refused_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "history-session-state"
    folder.mkdir()
    data = SHOP.read_bytes()
    for name, body, why in (
        ("session_a_1.json", data[: len(data) // 2], "half written"),
        ("session_b_1.json", b"", "empty"),
        ("session_c_1.json", b'{"messages": []}', "not a Copilot CLI session"),
        ("session_d_1.json", b"[1, 2]", "not a Copilot CLI session"),
    ):
        (folder / name).write_bytes(body)
        with pytest.raises(TranscriptError) as caught:
            list(copilot_history.records(folder / name))
        assert why in str(caught.value) and "\n" not in str(caught.value)
    monkeypatch.setattr(copilot_history, "MAX_DOCUMENT", 1024)
    with pytest.raises(TranscriptError, match="over"):
        list(copilot_history.records(SHOP))


def test_tool_calls_and_the_evidence_view() -> None:
    recs = {r.obj["id"]: r for r in copilot_history.records(SHOP)}
    calls = {
        i: copilot_history.tool_calls(r.obj) for i, r in recs.items() if copilot_history.tool_calls(r.obj)
    }
    assert calls["t-edit"][0].wrote == "/home/dev/src/shop/src/basket.js"
    assert calls["t-bash"][0].command == "npm test -- basket"
    assert calls["t-1"][0].wrote is None  # str_replace_editor view reads, writes nothing
    shown = copilot_history.render(recs["t-bash"].locator, recs["t-bash"].obj)
    assert shown.folds and not shown.bookkeeping and ("call", shown.texts[0][1]) == shown.texts[0]
    asked = copilot_history.render(recs["u-0"].locator, recs["u-0"].obj)
    assert asked.texts == [("person", ASKED)] and not asked.folds
    note = copilot_history.render(1, recs["i-mcp"].obj)
    assert note.bookkeeping and note.folds


# -- the real files (not redistributable: read where they are) -------------------------------------


@pytest.mark.skipif(
    not REAL.is_dir(),
    reason="the real history files are not redistributable: set DREAMTUI_COPILOT_HISTORY_REAL to their folder",
)
def test_on_the_real_files_the_typed_words_quotes_and_tools(tmp_path: Path) -> None:
    files = sorted(REAL.glob("session_*.json"))
    assert files
    root = tmp_path / "history-session-state"  # read from a folder of the format's own name
    root.mkdir()
    real = altered_found = checked = 0
    cwds = {}
    for src in files:
        path = root / src.name
        shutil.copy(src, path)
        doc = json.loads(path.read_bytes())
        said = [m["content"] for m in doc["chatMessages"] if m["role"] == "user"]
        typed = [t["text"] for t in doc["timeline"] if t["type"] == "user"]
        assert [c[: c.index("\n\n<reminder>")] for c in said] == typed  # the timeline holds what was typed
        assert [copilot_history.typed(c) for c in said] == [t.strip() for t in typed]
        fast, exact = digest_file(path), digest_file(path, cheap=False)
        assert fast == exact
        assert [t.text for t in fast.turns if t.role == "person"] == [t.strip() for t in typed]
        replies = [m["content"] for m in doc["chatMessages"] if m["role"] == "assistant" and m.get("content")]
        assert [t.text for t in fast.turns if t.role == "assistant"] == [r.strip() for r in replies]
        trusted = [
            m.group(1)
            for t in doc["timeline"]
            if t["type"] == "info"
            and (m := re.match(r"Folder (/.+) has been added to trusted folders", t["text"]))
        ]
        assert fast.cwd == (trusted[0] if trusted else "")
        assert fast.project == (encode_path(trusted[0]) if trusted else copilot.UNKNOWN_PROJECT)
        cwds[src.name] = fast.cwd
        quotes = [(t, q) for t in fast.turns for q in _windows(t.text) if len(q.split()) >= 6]
        quotes += [
            (t, t.text)
            for t in fast.turns
            if t.role == "person" and len("".join(t.text.split())) >= 45 and len(t.text.split()) >= 2
        ]
        got = verify_quotes([q for _t, q in quotes], [path])
        for (turn, quote), v in zip(quotes, got, strict=True):
            assert v.verified and v.matches[0].provenance == turn.role, (path.name, quote, v.reason)
            assert any(m.line == turn.line and m.provenance == turn.role for m in v.matches)
        real += len(quotes)
        altered_found += sum(v.verified for v in verify_quotes([_altered(q) for _t, q in quotes], [path]))
        for rec in copilot_history.records(path):
            for piece in copilot_history.pieces(rec.obj):
                if piece.role in ("tool", "meta") and len(re.findall(r"[A-Za-z]{3,}", piece.text)) >= 8:
                    v = verify_quote(" ".join(piece.text.split()[:10]), [path])
                    if v.verified:
                        checked += 1
                        assert v.matches[0].provenance != "person", (path.name, piece.text[:80])
    assert real >= 1000 and altered_found == 0 and checked >= 50
    # one session started in a folder the person trusted then; the others name no working directory
    assert sorted(bool(c) for c in cwds.values()) == [False, False, False, False, True]


@pytest.mark.skipif(
    not REAL.is_dir(),
    reason="the real history files are not redistributable: set DREAMTUI_COPILOT_HISTORY_REAL to their folder",
)
def test_the_real_files_rewritten_as_they_grow_are_dreamed_once_in_full(tmp_path: Path) -> None:
    for n, src in enumerate(sorted(REAL.glob("session_*.json"))):
        folder = tmp_path / str(n) / "history-session-state"
        folder.mkdir(parents=True)
        turns, _ = _grow_and_digest(src, folder, tmp_path / str(n) / "state")
        whole = digest_file(src).turns
        assert [(t.role, t.text, t.uuid) for t in turns] == [(t.role, t.text, t.uuid) for t in whole]


def test_a_good_night_in_a_rewritten_history_document_is_heard_once(tmp_path: Path) -> None:
    """Watched live as the other whole-file formats are: the document rewritten in place (a watcher may
    catch it half written) with the person's new good night is heard once, for the project of the folder
    they trusted; the good night already there when watching began is not, nor the same record rewritten."""
    from dreamtui.core.ingest.watch import Watcher

    home = tmp_path / "copilot-home"
    said = [("person", "That is all for today, good night!"), ("assistant", "Night."), ("person", LESSON)]
    doc = write_copilot_history_session(home, "/home/dev/src/shop", said)
    claude = tmp_path / "claude"
    claude.mkdir()
    heard: list[str] = []
    changes: list[Path] = []
    with Watcher(
        claude,
        extra=[home / "history-session-state"],
        on_change=changes.extend,
        on_goodnight=heard.append,
        debounce=0.2,
    ) as watcher:
        assert watcher.primed.wait(20)  # what was there when watching began is known

        def rewritten(turns: list[tuple[str, str]]) -> None:
            """The document rewritten with ``turns``; returns once the watcher reported the change."""
            before = len(changes)
            write_copilot_history_session(home, "/home/dev/src/shop", turns)
            assert wait_for(lambda: doc in changes[before:], 20), changes

        rewritten([*said, ("assistant", "Noted.")])
        assert heard == []  # the good night already there is not new
        rewritten([*said, ("person", "Thanks, sleep well")])
        assert wait_for(lambda: len(heard) == 1, 20), (heard, changes)
        rewritten([*said, ("person", "Thanks, sleep well"), ("assistant", "You too.")])
    assert heard == ["-home-dev-src-shop"]  # heard once: the same record rewritten is not new


# -- through the whole seam -----------------------------------------------------------------------


def _repository(tmp_path: Path) -> Path:
    main = (tmp_path / "src" / "shop").resolve()
    main.mkdir(parents=True)
    git("init", "-q", cwd=main)
    git("commit", "-q", "--allow-empty", "-m", "start", cwd=main)
    return main


def test_one_dream_files_a_history_session_in_the_repositorys_queue_and_redacts_its_secret(
    tmp_path: Path, config: Config, ledger: Ledger, git_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", NOW)
    monkeypatch.setenv("COPILOT_HOME", str(tmp_path / "copilot-home"))
    repo = _repository(tmp_path)
    claude = write_session(
        config.transcripts,
        [
            (
                "person",
                "Never deploy on a Friday afternoon, nobody from the on-call rotation is around then.",
            ),
            ("assistant", "Understood."),
        ],
        project=encode_path(str(repo)),
        session="5e55a0a0-1111-4222-8333-444455556666",
        cwd=str(repo),
    )
    os.utime(claude, (WRITTEN, WRITTEN))
    github = "ghp_" + "aB3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"  # assembled: no credential in clear here
    said = f"Always push with the token {github} from now on, the old one was revoked last week."
    old = write_copilot_history_session(
        tmp_path / "copilot-home",
        str(repo),
        [("person", LESSON), ("assistant", "Noted."), ("person", said)],
        WRITTEN,
    )
    got = CliRunner().invoke(cli, [*folder_args(config), "--extractor", "heuristic", "dream", "--json"])
    assert got.exit_code == 0, got.output
    pending = ledger.list_candidates(status="pending")
    mine = [c for c in pending if c.session == COPILOT_HISTORY_SESSION]
    assert mine and {c.project for c in pending} == {encode_path(str(repo))}  # one repository, one queue
    for c in mine:
        assert c.transcript == str(old) and c.matches[0].provenance == "person"
        assert FORGED[:30] not in c.quote and INJECTED[:30] not in c.quote
    with Workspace(config, ledger) as ws:
        assert {r.agent for r in ws.queue_rows() if r.session == COPILOT_HISTORY_SESSION} == {"Copilot CLI"}
    ledger.close()
    stored = b"".join(
        p.read_bytes() for root in (config.state, config.memory) for p in root.rglob("*") if p.is_file()
    )
    assert github.encode() not in stored and github not in got.output
