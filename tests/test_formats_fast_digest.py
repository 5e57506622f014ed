"""The fast digest of the records formats (a format's ``digest_records``: one read, the records the
digest drops never built) gives exactly what the reference gives (``digest_file(path, cheap=False)``:
the format's ``describe``, ``records`` and ``digester``, record by record): the same turns, stats,
session, project and working directory, on every real fixture in ``tests/fixtures/agents``, on large
generated sources in the fixtures' shapes, and on hostile ones (rows that are not JSON, parts of odd
types, text a tool wrote in a person's shape).
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

import pytest
from fakes.agent_dbs import (
    CHILD,
    SESSION,
    build_cursor_store,
    build_opencode_db,
    build_opencode_storage,
    start_writer,
)

from dreamtui.core.errors import TranscriptError
from dreamtui.core.ingest.digest import DigestState, digest_file, shared_reads
from dreamtui.core.ingest.formats import cursor, opencode
from dreamtui.core.models import Digest


def _same(address: str | Path, **kw: object) -> Digest:
    """The fast digest of ``address``, checked equal to the reference in every field."""
    fast = digest_file(address, **kw)  # type: ignore[arg-type]
    exact = digest_file(address, cheap=False, **kw)  # type: ignore[arg-type]
    assert fast.turns == exact.turns
    assert fast.stats == exact.stats
    assert (fast.session, fast.project, fast.files, fast.cwd) == (
        exact.session,
        exact.project,
        exact.files,
        exact.cwd,
    )
    return fast


WORDS = [
    "the",
    "tests",
    "need",
    "docker",
    "compose",
    "up",
    "before",
    "you",
    "run",
    "them",
    "never",
    "push",
    "to",
    "main",
    "fixture",
    "timeout",
]


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


# -- OpenCode -------------------------------------------------------------------------------------


def test_opencode_fixture_sessions(tmp_path: Path) -> None:
    db = build_opencode_db(tmp_path / "oc")
    for session, turns in ((SESSION, 2), (CHILD, 1)):
        d = _same(opencode.address(db, session))
        assert len(d.turns) == turns
    # a sub-agent read as a main session, and a kind the fast path does not take (every part a record)
    for kind in ("main", "subagent", "compact"):
        _same(opencode.address(db, CHILD), kind=kind)
        _same(opencode.address(db, SESSION), kind=kind)


def test_opencode_older_layout_takes_the_records(tmp_path: Path) -> None:
    storage = build_opencode_storage(tmp_path / "share")
    for path in sorted((storage / "session").rglob("*.json")):
        _same(path)
        assert opencode.digest_records(path, None, DigestState(), digest_file(path).stats, True) is None


def _opencode_rows(rng: random.Random, sid: str, m: int, t: int) -> list[tuple[str, dict[str, object] | str]]:
    uid, aid = f"msg_{sid[-4:]}{m:06d}u", f"msg_{sid[-4:]}{m:06d}a"
    rows: list[tuple[str, dict[str, object] | str]] = [(uid, {"type": "text", "text": _words(rng, 20)})]
    if rng.random() < 0.2:
        rows.append(
            (
                uid,
                {"type": "text", "synthetic": True, "text": "Never push to main (a reminder OpenCode wrote)"},
            )
        )
    if rng.random() < 0.1:  # an older version's unmarked injection
        rows.append(
            (uid, {"type": "text", "text": "<path>/a</path>\n<content>#### never the person</content>"})
        )
    for _ in range(rng.randint(1, 4)):
        rows.append((aid, {"type": "step-start"}))
        rows.append((aid, {"type": "reasoning", "text": _words(rng, 30)}))
        out = "#### Never push to main  \n" + _words(rng, rng.randint(20, 600))
        rows.append((aid, {"type": "tool", "tool": "bash", "state": {"status": "completed", "output": out}}))
        rows.append((aid, {"reason": "stop", "type": "step-finish", "text": "a step's text is not prose"}))
        rows.append((aid, {"type": "text", "text": "  " + _words(rng, 15) + "\n"}))
    odd = rng.random()
    if odd < 0.05:
        rows.append((aid, "not json at all"))
    elif odd < 0.1:
        rows.append((aid, "[1, 2, 3]"))
    elif odd < 0.15:
        rows.append((aid, {"type": "text", "text": 42}))
    elif odd < 0.2:
        rows.append((aid, {"type": "text", "text": "   "}))
    elif odd < 0.25:  # the same words again (kept once)
        rows.append((uid, rows[0][1]))
    return rows


def _grown_opencode(folder: Path, sessions: int, messages: int, seed: int) -> tuple[Path, list[str]]:
    rng = random.Random(seed)
    db = build_opencode_db(folder)
    conn = sqlite3.connect(db)
    t = 1791600000000
    ids = []
    for s in range(sessions):
        sid = f"ses_grown{s:04d}"
        ids.append(sid)
        parent = SESSION if s % 5 == 4 else None
        conn.execute(
            "INSERT INTO session (id, project_id, parent_id, slug, directory, title, version, time_created, "
            "time_updated) VALUES (?, (SELECT project_id FROM session WHERE id = ?), ?, 'x', ?, 't', '1', ?, ?)",
            (sid, SESSION, parent, "/home/dev/grown" if s % 3 else "", t, t),
        )
        for m in range(messages):
            t += 1000
            rows = _opencode_rows(rng, sid, m, t)
            for mid, role in {(r[0], "user" if r[0].endswith("u") else "assistant") for r in rows}:
                info: dict[str, object] = {"role": role, "time": {"created": t}}
                if role == "assistant":
                    info["path"] = {"cwd": "/home/dev/grown", "root": "/"}
                    if m % 7 == 6:
                        info["summary"] = True
                # one message in four is created out of its id's order
                when = t - 5000 if (m % 4 == 3 and role == "user") else t
                conn.execute(
                    "INSERT INTO message VALUES (?, ?, ?, ?, ?)", (mid, sid, when, when, json.dumps(info))
                )
            for i, (mid, data) in enumerate(rows):
                text = data if isinstance(data, str) else json.dumps(data)
                stamp = t + i if i % 9 else "not a time"
                conn.execute(
                    "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                    (f"prt_{mid}{i:04d}", mid, sid, stamp, stamp, text),
                )
        if s % 4 == 1:  # a part whose message is gone, and one whose data is a number
            conn.execute(
                "INSERT INTO part VALUES (?, 'msg_gone', ?, ?, ?, ?)",
                (f"prt_gone{s}", sid, t, t, json.dumps({"type": "text", "text": "orphan"})),
            )
            conn.execute(
                "INSERT INTO part VALUES (?, 'msg_gone', ?, ?, ?, 12345)", (f"prt_num{s}", sid, t, t)
            )
    conn.commit()
    conn.close()
    return db, ids


def test_opencode_generated_sessions(tmp_path: Path) -> None:
    db, ids = _grown_opencode(tmp_path / "grown", sessions=10, messages=60, seed=3)
    turns = 0
    for sid in ids:
        d = _same(opencode.address(db, sid))
        turns += len(d.turns)
        assert all("#### Never push" not in t.text for t in d.turns)  # tool output never a turn
        assert all("<path>" not in t.text and "a reminder OpenCode wrote" not in t.text for t in d.turns)
    assert turns > 500
    # one dedup state across two reads of a session: the second keeps nothing already kept
    fast_state, exact_state = DigestState(), DigestState()
    for _ in range(2):
        fast = digest_file(opencode.address(db, ids[0]), state=fast_state)
        exact = digest_file(opencode.address(db, ids[0]), state=exact_state, cheap=False)
        assert fast.turns == exact.turns and fast.stats == exact.stats
    assert fast.turns and not any(t.role == "assistant" or t.timestamp for t in fast.turns)


def test_opencode_unreadable_database_raises_the_same(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    db.write_bytes(b"not sqlite at all")
    for cheap in (True, False):
        with pytest.raises(TranscriptError, match="cannot read"):
            digest_file(opencode.address(db, SESSION), cheap=cheap)


def _fields(d: Digest) -> tuple[object, ...]:
    return (d.turns, d.stats, d.session, d.project, d.files, d.cwd)


def _alone(address: str) -> tuple[object, ...] | str:
    """A session's digest read by itself (its own connection), checked equal to the reference; or the
    one-line error both give."""
    try:
        return _fields(_same(address))
    except TranscriptError as exc:
        with pytest.raises(TranscriptError) as again:
            digest_file(address, cheap=False)
        assert str(again.value) == str(exc)
        return str(exc)


def _in_pass(address: str) -> tuple[object, ...] | str:
    """A session's digest read inside a pass (``shared_reads``, the caller's), fast and reference alike."""
    try:
        fast = _fields(digest_file(address))
    except TranscriptError as exc:
        with pytest.raises(TranscriptError) as again:
            digest_file(address, cheap=False)
        assert str(again.value) == str(exc)
        return str(exc)
    assert fast == _fields(digest_file(address, cheap=False))
    return fast


def test_opencode_sessions_read_in_one_pass_digest_as_each_alone(tmp_path: Path) -> None:
    """Every session of one database digested in one pass (one connection, each session its own read
    transaction), a session named twice, one the database never held, and the sub-agent session read
    as a main one: each the digest it gives read alone, fast and reference alike."""
    db, ids = _grown_opencode(tmp_path / "grown", sessions=8, messages=30, seed=11)
    addresses = [str(opencode.address(db, s)) for s in [SESSION, CHILD, *ids, ids[2], "ses_never_there"]]
    alone = [_alone(a) for a in addresses]
    with shared_reads():
        together = [_in_pass(a) for a in addresses]
        again = [_in_pass(a) for a in reversed(addresses)]
    assert together == alone
    assert again == list(reversed(alone))
    assert sum(len(d[0]) for d in alone if isinstance(d, tuple)) > 200  # type: ignore[arg-type]


def test_opencode_a_pass_sees_what_is_committed_between_its_sessions(tmp_path: Path) -> None:
    """While a pass reads, the agent deletes a session, adds text to another and replaces the database
    with a file that is not one: each session read afterwards in the pass is digested as a read of it
    alone at that moment gives (the rows as committed then; the deleted one as a session the database
    no longer holds; the replaced file one line)."""
    db, ids = _grown_opencode(tmp_path / "grown", sessions=4, messages=12, seed=13)
    first, gone, grows, last = (str(opencode.address(db, s)) for s in ids)
    writer = sqlite3.connect(db, isolation_level=None, timeout=0)
    with shared_reads():
        before = [_in_pass(a) for a in (first, gone, grows)]
        writer.execute("BEGIN IMMEDIATE")  # the pass holds nothing now: the writer gets its lock at once
        writer.execute("DELETE FROM part WHERE session_id = ?", (ids[1],))
        writer.execute("DELETE FROM message WHERE session_id = ?", (ids[1],))
        writer.execute("DELETE FROM session WHERE id = ?", (ids[1],))
        message = writer.execute(
            "SELECT id FROM message WHERE session_id = ? AND data LIKE '%\"user\"%' ORDER BY time_created DESC",
            (ids[2],),
        ).fetchone()[0]
        writer.execute(
            "INSERT INTO part VALUES ('prt_zz_late', ?, ?, 1791700000000, 1791700000000, ?)",
            (message, ids[2], json.dumps({"type": "text", "text": "written while the pass read"})),
        )
        writer.execute("COMMIT")
        after = [_in_pass(a) for a in (gone, grows, last)]
    assert after == [_alone(gone), _alone(grows), _alone(last)]
    assert after[0] != before[1] and not after[0][0]  # type: ignore[index]
    assert any("written while the pass read" in t.text for t in after[1][0])  # type: ignore[index,union-attr]
    assert not any("written while the pass read" in t.text for t in before[2][0])  # type: ignore[index,union-attr]
    writer.close()
    # the database swapped for another file mid-pass: the kept connection is not used, the new file
    # is checked as any file is (not an SQLite database: one line)
    with shared_reads():
        assert isinstance(_in_pass(first), tuple)
        db.unlink()
        db.write_bytes(b"not an SQLite database, written over it" * 10)
        refused = _in_pass(last)
    assert isinstance(refused, str) and "not an SQLite database" in refused and "\n" not in refused


def test_opencode_a_pass_while_the_agent_writes_reads_what_is_committed(tmp_path: Path) -> None:
    """A real writer process inserts text parts in WAL mode with no busy wait at all while passes read
    every session over and over: the writer meets no lock, and every read of the live session gives a
    prefix of what was written, as much as a read before or more, each one as its reference gives it."""
    db, ids = _grown_opencode(tmp_path / "grown", sessions=3, messages=8, seed=17)
    live_message = "msg_11dc0b885001JwsqYzBEsi74Ue"
    writer = start_writer(db, SESSION, live_message, 300)
    assert writer.stdin is not None
    writer.stdin.write("go\n")
    writer.stdin.flush()
    seen: list[int] = []
    passes = 0
    done = False
    while not done or passes < 2:
        # looked at before the pass: the last pass begins after the last write
        done = writer.poll() is not None
        passes += 1
        with shared_reads():
            for sid in [SESSION, *ids]:
                d = digest_file(opencode.address(db, sid))
                if sid == SESSION:
                    live = [t.text for t in d.turns if t.text.startswith("live line")]
                    assert live == [f"live line {i}" for i in range(len(live))]
                    seen.append(len(live))
                    exact = digest_file(opencode.address(db, sid), cheap=False)
                    assert len(exact.turns) >= len(d.turns)  # the writer only adds
    out, err = writer.communicate()
    assert json.loads(out.strip().splitlines()[-1]) == {"busy": 0}, err
    assert seen == sorted(seen) and seen[-1] == 300
    assert len(set(seen)) > 1  # the passes overlapped the writes


# -- Cursor ---------------------------------------------------------------------------------------


def _grown_cursor(store: Path, messages: int, seed: int) -> None:
    rng = random.Random(seed)
    conn = sqlite3.connect(store)
    for i in range(messages):
        roll = rng.random()
        if roll < 0.3:
            obj: object = {
                "role": "user",
                "content": f"<user_query>{_words(rng, 12)}</user_query>\nWorkspace Path: /x",
            }
        elif roll < 0.6:
            obj = {"id": f"a{i}", "role": "assistant", "content": [{"type": "text", "text": _words(rng, 25)}]}
        elif roll < 0.85:
            obj = {"role": "tool", "content": [{"type": "tool-result", "result": "#### " + _words(rng, 200)}]}
        elif roll < 0.9:
            obj = {"role": 7, "content": "not a message"}
        elif roll < 0.95:
            conn.execute("INSERT INTO blobs VALUES (?, ?)", (f"bin{i}", b"\x0a\x01binary node"))
            continue
        else:
            conn.execute("INSERT INTO blobs VALUES (?, ?)", (f"bad{i}", b"{not json"))
            continue
        conn.execute("INSERT INTO blobs VALUES (?, ?)", (f"blob{i:06d}", json.dumps(obj).encode()))
    conn.commit()
    conn.close()


def test_cursor_fixture_and_generated_chats(tmp_path: Path) -> None:
    root = tmp_path / "chats"
    fixture = build_cursor_store(root / cursor.cwd_hash("/p/x") / "agent-1")
    assert len(_same(fixture).turns) == 4
    _same(Path(f"{fixture}-wal")) if Path(f"{fixture}-wal").exists() else None
    grown = build_cursor_store(root / cursor.cwd_hash("/x") / "agent-2")
    _grown_cursor(grown, 3000, seed=5)
    d = _same(grown)
    assert d.cwd == "" and d.project == "-x"  # the workspace whose MD5 is the chat folder's
    assert len(d.turns) > 100
    assert all(not t.text.startswith("#### ") for t in d.turns)
    bare = build_cursor_store(root / "not-an-md5" / "agent-3")
    _grown_cursor(bare, 200, seed=6)
    _same(bare)


def test_cursor_assistant_messages_of_every_shape(tmp_path: Path) -> None:
    """The messages the fast path makes turns of inline, in every shape. The assistant's: its content a
    string or parts (text among thinking and tool calls, a text that is not a string, blank), with an
    id, without one, the same message written twice (kept once) and the same words under another id.
    The person's: a query span, words with no tag, context only, blank, several text parts (spans
    joined), a tool result holding a span, the same message twice (no time: kept twice). Read as a
    main chat, a sub-agent's and the compaction helper's."""
    store = build_cursor_store(tmp_path / "chats" / cursor.cwd_hash("/p/odd") / "agent-odd")
    shapes: list[object] = [
        {"id": "s1", "role": "assistant", "content": "  a reply as a plain string  "},
        {"role": "assistant", "content": "a reply without an id"},
        {"role": "assistant", "content": "a reply without an id"},
        {
            "id": "s2",
            "role": "assistant",
            "content": [
                {"type": "reasoning", "text": "thinking, never kept"},
                {"type": "text", "text": "first words"},
                {"type": "tool-call", "toolName": "run_terminal_cmd", "args": {"command": "ls"}},
                {"type": "text", "text": 42},
                {"type": "text", "text": "   "},
                "not a part",
                {"type": "text", "text": "second words"},
            ],
        },
        {"id": "s2", "role": "assistant", "content": [{"type": "text", "text": "first words"}]},
        {"id": "s3", "role": "assistant", "content": [{"type": "text", "text": "first words"}]},
        {"id": 7, "role": "assistant", "content": "an id that is a number"},
        {"id": "s4", "role": "assistant", "content": {"not": "a list"}},
        {"id": "s5", "role": "assistant"},
        {"role": "user", "content": "<user_query>and the person</user_query>"},
        {"role": "user", "content": "<user_query>and the person</user_query>"},
        {"id": "u1", "role": "user", "content": "  words with no tag at all  "},
        {"role": "user", "content": "<user_info>Workspace Path: /elsewhere</user_info>"},
        {"role": "user", "content": "   "},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<rules>context only</rules>"},
                {"type": "text", "text": "<user_query>one</user_query> and <user_query> two </user_query>"},
                {"type": "tool-result", "result": "<user_query>a tool's output</user_query>"},
                {"type": "reasoning", "text": "not the person"},
                {"type": "text", "text": "plain words too"},
                {"type": "text", "text": "<user_query>   </user_query>"},
            ],
        },
        {"role": "user", "content": [{"type": "text", "text": 5}]},
        {"role": "user"},
    ]
    conn = sqlite3.connect(store)
    for i, obj in enumerate(shapes):
        conn.execute("INSERT INTO blobs VALUES (?, ?)", (f"odd{i:03d}", json.dumps(obj).encode()))
    conn.commit()
    conn.close()
    texts = [t.text for t in _same(store).turns]
    assert "a reply as a plain string" in texts and texts.count("a reply without an id") == 2
    assert texts.count("first words") == 2 and "second words" in texts
    assert not any("thinking" in t for t in texts)
    assert texts.count("and the person") == 2 and "words with no tag at all" in texts
    assert "one\n\ntwo\n\nplain words too" in texts
    assert not any("a tool's output" in t or "context only" in t or "/elsewhere" in t for t in texts)
    for kind in ("subagent", "compact"):
        _same(store, kind=kind)


def test_cursor_chats_read_in_one_pass_digest_as_each_alone(tmp_path: Path) -> None:
    """More chats than a pass keeps connections for, each read twice in the pass (its description and
    its digest), a store that is not a database and one that is gone: each as it is read alone."""
    root = tmp_path / "chats"
    stores = [build_cursor_store(root / cursor.cwd_hash(f"/p/{i}") / f"agent-{i}") for i in range(7)]
    for i, store in enumerate(stores[:3]):
        _grown_cursor(store, 150, seed=20 + i)
    bad = root / cursor.cwd_hash("/p/bad") / "agent-bad" / "store.db"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"{" * 64)
    addresses = [str(p) for p in [*stores, bad, root / "gone" / "agent" / "store.db", *stores[:2]]]
    alone = [_alone(a) for a in addresses]
    with shared_reads():
        together = [_in_pass(a) for a in addresses]
        described = [cursor.describe(Path(a)).project for a in addresses]
    assert together == alone
    assert described == [cursor.describe(Path(a)).project for a in addresses]
    assert sum(isinstance(d, str) for d in alone) == 2


def test_cursor_paths_found_by_one_search_are_each_strings_own() -> None:
    """The working directory's search by MD5 runs once over a chat's strings joined by newlines: on
    random strings of path characters, separators, quotes, dots and newlines it finds exactly the
    paths, in the same order, that a search of each string alone (a look-behind before the ``/``)
    finds."""
    import re

    each = re.compile(r"(?<![\w.~$/-])(/[^\s'\"`<>|;,(){}\[\]*?]+)")
    rng = random.Random(41)
    alphabet = "ab/.~$-_ \n\t\"'`<>|;,(){}[]*?:é1\\"
    for _ in range(3000):
        strings = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24))) for _ in range(4)]
        alone = [m.group(1) for t in strings for m in each.finditer(t)]
        joined = [m.group(0) for m in cursor._ABSOLUTE.finditer("\n".join(t for t in strings if "/" in t))]
        assert joined == alone, strings


def test_cursor_unreadable_store_raises_the_same(tmp_path: Path) -> None:
    store = tmp_path / "chats" / cursor.cwd_hash("/p") / "agent" / "store.db"
    store.parent.mkdir(parents=True)
    store.write_bytes(b"")
    for cheap in (True, False):
        with pytest.raises(TranscriptError, match="cannot read"):
            digest_file(store, cheap=cheap)


# -- Gemini CLI -----------------------------------------------------------------------------------

GEMINI = Path(__file__).parent / "fixtures" / "agents" / "gemini"


def test_gemini_every_fixture_chat() -> None:
    chats = sorted(GEMINI.rglob("*.json")) + sorted(GEMINI.rglob("*.jsonl"))
    assert len(chats) >= 7
    for path in chats:
        if "chats" in path.parts:
            _same(path)


def _chat_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "tmp" / ("ab" * 32) / "chats"
    folder.mkdir(parents=True)
    return folder


def _grown_gemini_lines(path: Path, copies: int, seed: int) -> None:
    """A JSON-lines chat in every shape the format reads: messages written again (tokens, tool
    calls), the time alone, rewinds, checkpoints (new and old messages), a legacy record, notices."""
    rng = random.Random(seed)
    out = [json.dumps({"sessionId": "s-1", "projectHash": "ab" * 32, "startTime": "2026-01-01T00:00:00Z"})]
    for c in range(copies):
        at = f"2026-01-01T{c // 60 % 24:02d}:{c % 60:02d}:00.000Z"
        user = {"id": f"u{c}", "timestamp": at, "type": "user", "content": [{"text": _words(rng, 10)}]}
        if c % 5 == 1:
            user["displayContent"] = [{"text": "what the person typed " + _words(rng, 3)}]
        if c % 7 == 2:
            user["content"] = [
                {"text": "@a.md " + _words(rng, 3)},
                {"text": "--- Content from referenced files ---"},
            ]
        out.append(json.dumps(user))
        reply = {"id": f"g{c}", "timestamp": at, "type": "gemini", "content": _words(rng, 30)}
        out.append(json.dumps(reply))
        out.append(json.dumps({"$set": {"lastUpdated": at}}))
        tool = {
            "name": "run_shell_command",
            "args": {"command": "ls"},
            "result": [{"text": _words(rng, 400)}],
        }
        out.append(json.dumps({**reply, "tokens": {"input": 5}, "toolCalls": [tool]}, separators=(",", ":")))
        if c % 3 == 0:
            parts = [{"text": "thinking", "thought": True}, {"text": _words(rng, 8)}]
            out.append(json.dumps({"id": f"p{c}", "timestamp": at, "type": "gemini", "content": parts}))
            out.append(
                json.dumps(
                    {
                        "id": f"r{c}",
                        "timestamp": at,
                        "type": "user",
                        "content": [
                            {
                                "functionResponse": {
                                    "name": "x",
                                    "response": {"output": "#### " + _words(rng, 9)},
                                }
                            }
                        ],
                    }
                )
            )
        if c % 11 == 4:
            out.append(json.dumps({"$rewindTo": f"g{c}"}))
        if c % 13 == 6:
            listed = [
                user,
                {"id": f"k{c}", "timestamp": at, "type": "user", "content": "a summary Gemini wrote"},
            ]
            out.append(json.dumps({"$set": {"messages": listed}}))
        if c % 17 == 8:
            out.append(json.dumps({"id": f"w{c}", "timestamp": at, "type": "warning", "content": "a notice"}))
        if c % 19 == 9:  # a message with a backslash in its id, one whose id is not first, one not an object
            out.append(
                json.dumps({"id": f"q\\{c}", "timestamp": at, "type": "gemini", "content": "escaped id"})
            )
            out.append(
                json.dumps({"type": "gemini", "id": f"late{c}", "timestamp": at, "content": "id later"})
            )
            out.append("[1, 2]")
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def test_gemini_generated_chats(tmp_path: Path) -> None:
    folder = _chat_folder(tmp_path)
    lines = folder / "session-2026-01-01T00-00-aaaaaaaa.jsonl"
    _grown_gemini_lines(lines, 600, seed=9)
    d = _same(lines)
    assert len(d.turns) > 600
    assert all(not t.text.startswith("#### ") and "a summary Gemini wrote" not in t.text for t in d.turns)
    # the same messages as one document, written as Gemini CLI writes it (indent 2), and minified
    doc = {"sessionId": "s-2", "projectHash": "ab" * 32, "messages": []}
    for raw in lines.read_text(encoding="utf-8").splitlines():
        obj = json.loads(raw)
        if isinstance(obj, dict) and isinstance(obj.get("id"), str):
            doc["messages"].append(obj)  # type: ignore[attr-defined]
    pretty = folder / "session-2026-01-02T00-00-bbbbbbbb.json"
    pretty.write_text(json.dumps(doc, indent=2), encoding="utf-8")
    assert len(_same(pretty).turns) > 600
    pretty.write_text(json.dumps(doc), encoding="utf-8")
    _same(pretty)
    # a sub-agent's chat
    sub = folder / "s-2" / "agent-1.jsonl"
    sub.parent.mkdir()
    sub.write_bytes(lines.read_bytes())
    assert {t.kind for t in _same(sub).turns if t.role == "assistant"} == {"subagent"}


def test_gemini_lines_msgspec_and_orjson_disagree_on(tmp_path: Path) -> None:
    """Lines msgspec reads and ``orjson`` refuses (``decode_line`` then repairs or refuses them): the
    fast digest reads each as the reference does."""
    folder = _chat_folder(tmp_path)
    at = '"timestamp":"2026-01-01T00:00:00Z"'
    big = "7" * 5000  # an integer Python's json refuses (over sys.get_int_max_str_digits)
    lines = [
        b'{"sessionId":"s-3"}',
        b'{"id":"a",' + at.encode() + b',"type":"gemini","content":"a bad byte after","x":"\xff"}',
        b'{"id":"b",' + at.encode() + b',"type":"gemini","content":"an infinite number after","x":1e400}',
        b'{"id":"c",'
        + at.encode()
        + b',"type":"gemini","content":"a huge integer after","x":'
        + big.encode()
        + b"}",
        b'{"id":"d",' + at.encode() + b',"type":"gemini","content":"a lone surrogate \\ud800 inside"}',
        b'{"id":"e",'
        + at.encode()
        + b',"type":"user","content":[{"text":"keep the first"}],"content":"the last wins"}',
        b'{"id":"f",'
        + at.encode()
        + b',"type":"gemini","content":"deep","x":'
        + b"[" * 1100
        + b"]" * 1100
        + b"}",
        b'{"id":"g","id":"h",' + at.encode() + b',"type":"gemini","content":"another id last"}',
        b'{"id":"i",'
        + at.encode()
        + b',"type":"gemini","content":"huge digits in a string", "x":"'
        + big.encode()
        + b'"}',
        b'\xef\xbb\xbf{"id":"j",' + at.encode() + b',"type":"gemini","content":"a byte-order mark"}',
        b'{"id":"k",' + at.encode() + b',"type":"user","content":"a bad byte \xff in the words"}',
    ]
    path = folder / "session-2026-01-03T00-00-cccccccc.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    d = _same(path)
    texts = {t.text for t in d.turns}
    assert "a bad byte after" in texts and "the last wins" in texts
    assert "a huge integer after" not in texts  # the reference refuses that line


# -- Aider ----------------------------------------------------------------------------------------

AIDER = Path(__file__).parent / "fixtures" / "agents" / "aider"


def _aider_histories() -> list[bytes]:
    return [p.read_bytes() for p in sorted(AIDER.glob("*.chat.history.md"))]


def _history(tmp_path: Path, name: str, data: bytes) -> Path:
    from dreamtui.core.ingest.formats import aider

    path = tmp_path / name / aider.HISTORY_NAME
    path.parent.mkdir(parents=True)
    path.write_bytes(data)
    return path


def test_aider_every_fixture_history(tmp_path: Path) -> None:
    histories = _aider_histories()
    assert len(histories) >= 5
    for i, data in enumerate(histories):
        path = _history(tmp_path, f"h{i}", data)
        _same(path)
        for kind in ("subagent", "compact"):
            _same(path, kind=kind)
        # the same history as an editor may leave it: Windows line ends, a byte-order mark, the two
        # trailing spaces trimmed, a bad byte, a last block not finished yet
        variants = {
            "crlf": data.replace(b"\n", b"\r\n"),
            "bom": b"\xef\xbb\xbf" + data,
            "trimmed": b"\n".join(line.rstrip(b" ") for line in data.split(b"\n")),
            "bad-byte": data.replace(b"the", b"th\xff", 3),
            "unfinished": data + b"\n#### half a prompt",
            "open-reply": data + b"\nA reply still being written",
        }
        for label, variant in variants.items():
            _same(_history(tmp_path, f"h{i}-{label}", variant))


def test_aider_generated_history(tmp_path: Path) -> None:
    """The fixtures' sessions over and over (each a minute later), with replies whose fences hold
    ``####`` lines, and the same sessions under one dedup state twice."""
    import re

    sessions = [
        s for data in _aider_histories() for s in re.split(rb"(?m)^(?=# aider chat started at )", data)
    ]
    sessions = [s for s in sessions if s.startswith(b"#")]
    fenced = (
        b"\n#### show me the fixture  \n\nHere it is:\n\n```python\n#### Never push to main  \nx = 1\n```\n\n"
        b"> Tokens: 1k sent  \n\n#### /run pytest  \n\n> ^C again to exit  \n\n```bash\n#### not the person  \n"
    )
    out = bytearray()
    for minute in range(40):
        for s in sessions:
            stamp = f"2030-01-{1 + minute // 1440:02d} {minute // 60 % 24:02d}:{minute % 60:02d}:00".encode()
            out += b"\n" + re.sub(rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", stamp, s, count=1)
        if minute % 10 == 0:
            out += fenced + b"\n\n#### the next turn  \n\n"
    path = _history(tmp_path, "grown", bytes(out))
    d = _same(path)
    assert len(d.turns) > 100
    assert not any(t.role == "person" and "Never push to main" in t.text for t in d.turns)
    assert not any("not the person" in t.text and t.role == "person" for t in d.turns)
    fast_state, exact_state = DigestState(), DigestState()
    for _ in range(2):
        fast = digest_file(path, state=fast_state)
        exact = digest_file(path, state=exact_state, cheap=False)
        assert fast.turns == exact.turns and fast.stats == exact.stats
    assert not fast.turns


def test_aider_one_session_takes_the_records(tmp_path: Path) -> None:
    from dreamtui.core.ingest.formats import aider

    path = _history(tmp_path, "one", _aider_histories()[0])
    member = next(rec.obj["session"] for rec in aider.records(path) if rec.obj["type"] == "session")
    address = f"{path}#{member}"
    assert aider.digest_records(Path(address), None, DigestState(), digest_file(path).stats, True) is None


def test_aider_scan_never_reads_a_blank_line_as_text() -> None:
    """The byte scan takes a line as plain text only where it holds a byte no whitespace character is
    made of: a line of any whitespace Python strips (U+00A0, U+3000, U+001C, ...) is never one."""
    from dreamtui.core.ingest.formats import aider

    spaces = [chr(i) for i in range(0x110000) if chr(i).isspace() and chr(i) != "\n"]
    assert {"\u00a0", "\u3000", "\x1c", "\u2028", "\x85"} <= set(spaces)
    for ch in spaces:
        for line in (ch, " " + ch, ch + "\t" + ch, ch * 3 + "\r"):
            assert aider._PLAIN.match(line.encode() + b"\n") is None, repr(line)
    for line in ("x", "\u00a0x", "\u3000\u00e9", "\u65e5", "\t\u00a0.", "  <code>"):
        assert aider._PLAIN.match(line.encode() + b"\n") is not None, repr(line)


_AIDER_LINES: list[bytes] = [
    s.encode() if isinstance(s, str) else s
    for s in (
        "",
        "",
        "",
        "   ",
        "\t",
        "\u00a0",
        "\u3000 ",
        "\x1c",
        "\u2028",
        "#### show me the fixture  ",
        "#### /run pytest  ",
        "#### # Fix any errors below, if possible.  ",
        "#### ",
        "####",
        "####  ",
        "####x  ",
        "#### no two spaces",
        "#### Never push to main  ",
        "#### plain words of the reply  ",
        "#### \u00a0plain words of the reply  ",
        "> Tokens: 1k sent  ",
        ">  ",
        "> a message of several lines",
        ">",
        "> ^C again to exit  ",
        "> ^C KeyboardInterrupt  ",
        "> Applied edit to a.py  ",
        "plain words of the reply",
        "more words",
        "a line ending in two spaces  ",
        "  indented text",
        "    ```",
        "\t```",
        " <code>",
        "<code>",
        "</code>",
        "<source>",
        "</source>",
        "```",
        "```",
        "```python",
        "````",
        "~~~",
        "~~~ bash",
        "```bash",
        "```diff",
        "+++ b/src/x.py",
        "   ```",
        " ~~~",
        "\u00a0```",
        "<<<<<<< SEARCH",
        "<<<<<<< ORIGINAL",
        "=======",
        ">>>>>>> REPLACE",
        "src/app/main.py",
        "# a heading",
        "## another",
        "- an item  ",
        "-*- mode: fundamental -*-",
        "\u00e9t\u00e9 accentu\u00e9",
        "\u2500\u2500\u2500",
        "\u65e5\u672c\u8a9e\u306e\u6587  ",
        b"a bad byte \xff here",
        b"\xe2\x80 cut short",
        b"\xc2",
        "# aider chat started at 2030-01-01 10:00:00",
        "# aider chat started at 2030-01-01 10:00:00  ",
        "# aider chat started at 2030-01-01 10:00:00\u00a0",
        "# aider chat started at \u0662\u0660\u0663\u0660-01-01 10:00:00",
        "# aider chat started at 2030-01-01 10:00",
    )
]


def _aider_random(rng: random.Random) -> bytes:
    """A history of random lines of every shape the format knows and many it must not be fooled by."""
    head = b"# aider chat started at 2030-01-0%d 10:00:00" % rng.randint(1, 3)
    lines = [head] if rng.random() < 0.9 else []
    lines += [rng.choice(_AIDER_LINES) for _ in range(rng.randint(1, 80))]
    if rng.random() < 0.3:
        lines.insert(rng.randrange(len(lines) + 1), head)
    ends = [b"\r\n" if rng.random() < 0.05 else b"\n" for _ in lines]
    if rng.random() < 0.2:
        ends = [b"\r\n"] * len(lines)
    data = b"".join(line + end for line, end in zip(lines, ends, strict=True))
    roll = rng.random()
    if roll < 0.1:
        data = data.rstrip(b"\n")  # the last line not finished
    elif roll < 0.15:
        data = data.rstrip(b"\n") + b"\r"
    elif roll < 0.25:
        data += b"\n"
    if rng.random() < 0.1:
        data = b"\xef\xbb\xbf" + data
    return data


def test_aider_random_histories(tmp_path: Path) -> None:
    """Random histories of hostile lines (fences of every kind, ``####`` lines inside them, messages
    of several lines, replies cut short, person lines with and without their two spaces, other
    whitespace, bad bytes, Windows line ends, byte-order marks, unfinished last lines): the byte scan
    cuts every one as the reference does, or refuses it the same way."""
    rng = random.Random(31)
    scanned = 0
    for i in range(400):
        data = _aider_random(rng)
        path = _history(tmp_path, f"r{i}", data)
        try:
            exact = digest_file(path, cheap=False)
        except TranscriptError as exc:
            with pytest.raises(TranscriptError) as fast_exc:
                digest_file(path)
            assert str(fast_exc.value) == str(exc)
            continue
        _same(path)
        scanned += bool(exact.turns)
    assert scanned > 200


_REPLY_LINES: list[bytes] = [
    s.encode() if isinstance(s, str) else s
    for s in (
        "",
        "",
        "",
        "  ",
        "\u00a0",
        "Here is the change:",
        "plain words of the reply",
        "\u00e9t\u00e9 \u65e5\u672c",
        b"a bad byte \xff here",
        b"cut \xe2\x80",
        "src/app/main.py",
        "**src/app/main.py**",
        "`a.py`:",
        "C:\\work\\x.py",
        "not a path here",
        "```",
        "```",
        "```python",
        "```diff",
        "```bash",
        "```sh ls",
        "~~~",
        "````",
        "   ```",
        "<source>",
        "</source>",
        "<<<<<<< SEARCH",
        "<<<<<<< ORIGINAL",
        "=======",
        ">>>>>>> REPLACE",
        "--- a/src/x.py",
        "+++ b/src/x.py",
        "+++",
        "@@ -1 +1 @@",
        "-old line",
        "+new line",
    )
]


def _aider_random_replies(rng: random.Random) -> bytes:
    """A history of replies made mostly of fences (edits named before or inside them, unified diffs,
    shell commands, fences left open, file names, blank lines of every kind), some of them handed on
    as the person's next turn (the architect's copy)."""
    out = [b"# aider chat started at 2030-01-01 10:00:00", b""]
    for _ in range(rng.randint(1, 6)):
        out += [b"#### " + rng.choice([b"go", b"fix it", b"/run pytest"]) + b"  ", b""]
        reply = [rng.choice(_REPLY_LINES) for _ in range(rng.randint(1, 30))]
        while reply and not reply[0].strip():
            reply.pop(0)
        out += reply
        out += [b""] * rng.randint(1, 2)
        if reply and rng.random() < 0.2:  # the reply handed on as the person's words
            out += [b"#### " + line + b"  " for line in reply] + [b""]
        if rng.random() < 0.3:
            out += [rng.choice([b"> Tokens: 1k sent  ", b"> ^C again to exit  "]), b""]
    end = b"\r\n" if rng.random() < 0.15 else b"\n"
    return end.join(out) + end


def test_aider_random_replies(tmp_path: Path) -> None:
    """Random replies of fences, edits and file names: the byte scan's prose is the reference's."""
    rng = random.Random(131)
    kept = 0
    for i in range(300):
        path = _history(tmp_path, f"q{i}", _aider_random_replies(rng))
        kept += sum(t.role == "assistant" for t in _same(path).turns)
    assert kept > 300


def test_aider_edge_histories(tmp_path: Path) -> None:
    """Each edge the byte scan reads on its own, as the reference reads it."""
    head = b"# aider chat started at 2030-01-01 10:00:00\n\n"
    cases = {
        "fence-holds-person": head
        + b"#### go  \n\nSure:\n\n```python\n#### Never push to main  \nx = 1\n```\n\nDone.\n\n",
        "cut-short-fence": head
        + b"#### go  \n\n> ^C again to exit  \n\n```bash\nls\n\n\n#### the next turn  \n\nreply\n\n",
        "cut-short-one-blank": head
        + b"#### go  \n\n> ^C again to exit  \n\n```bash\nls\n\n#### inside  \n\n",
        "two-space-person": head + b"#### first line  \n#### second line  \n\n",
        "person-no-spaces": head + b"#### first line\n#### second  \n\nreply\n\n",
        "crlf": (head + b"#### go  \n\nreply\n\n> Tokens: 1k  \n\n").replace(b"\n", b"\r\n"),
        "bom": b"\xef\xbb\xbf" + head + b"#### go  \n\nreply\n\n",
        "bom-first-person": b"\xef\xbb\xbf#### before any session  \n\n" + head + b"#### go  \n\n",
        "unfinished-person": head + b"#### go  \n\nreply\n\n#### half",
        "unfinished-reply": head + b"#### go  \n\nreply still being written\n",
        "unfinished-notice": head + b"#### go  \n\n> Tokens  ",
        "unfinished-cr": head + b"#### go  \n\n#### more  \r",
        "invalid-utf8": head + b"#### g\xffo  \n\nre\xe2\x80ply\n\n",
        "tag-fence": head + b"#### go  \n\n<source>\n#### not a turn  \n</source>\n\nafter\n\n",
        "tilde-fence": head + b"#### go  \n\n~~~\n#### not a turn  \n```\n~~~\n\nafter\n\n",
        "long-fence": head + b"#### go  \n\n````\n```\n#### not a turn  \n````\n\nafter\n\n",
        "indented-fence": head + b"#### go  \n\n    ```\n#### a turn  \n\n",
        "message-fence": head + b"> Running lint\n```\n#### not a turn  \n```\nlast line  \n\n#### go  \n\n",
        "message-person-end": head + b"> Running lint\nsome output\n#### ends it  \n#### a turn  \n\n",
        "nbsp-blank": head + "#### go  \n\u00a0\nreply\n\n".encode(),
        "box-line": head + "#### go  \n\u2500\u2500\n\n".encode(),
        "ideographic-blank": head + "#### go  \n\u3000\nreply\n\n\u3000\n".encode(),
        "session-in-fence": head + b"#### go  \n\n```\ncode\n" + head + b"#### again  \n\n",
        "same-time": head + b"#### one  \n\n" + head + b"#### one  \n\n",
        "mode-line": b"-*- mode: fundamental -*-\n" + head + b"#### go  \n\n",
        "architect-copy": head
        + b"#### plan it  \n\n  Step one: do x.\n\nStep two.\n\n#### Step one: do x.  \n#### Step two.  \n\n",
        "copy-head-only": head
        + b"#### plan it  \n\nStep one: do x.\n\n#### Step one: do x.  \n#### then more  \n\n",
        "copy-trailing-spaces": head + b"#### plan  \n\nStep one: do x.  \n\n#### Step one: do x.  \n\n",
        "copy-after-session": head
        + b"#### plan  \n\nStep one.\n\n"
        + head.replace(b"10:00", b"11:00")
        + b"#### Step one.  \n\n",
        "quote-in-reply": head + b"#### go  \n\nreply\n> a quote in it\n\n> Tokens: 1k  \n\n",
        "heading-in-reply": head + b"#### go  \n\nreply\n## a heading\n####x  \n#### no spaces\nmore\n\n",
        "tag-in-reply": head + b"#### go  \n\nreply\n<source>python\n<b>x</b>\n</source>\nmore\n\n",
        "message-blank-lines": head + b"> Running lint\n  \n\t  \n\nout  \n\n#### go  \n\nreply\n\n",
        "no-session": b"#### go  \n\nreply\n\n",
        "only-blank": b"\n\n  \n",
        "empty": b"",
    }
    for label, data in cases.items():
        path = _history(tmp_path, label, data)
        try:
            digest_file(path, cheap=False)
        except TranscriptError as exc:
            with pytest.raises(TranscriptError, match="not an Aider chat history"):
                digest_file(path)
            assert "not an Aider" in str(exc)
            continue
        _same(path)


# -- Copilot CLI's older history documents ---------------------------------------------------------

COPILOT_HISTORY = Path(__file__).parent / "fixtures" / "agents" / "copilot" / "history-session-state"


def _copilot_history(tmp_path: Path, doc: object, *, indent: int | None = 2) -> Path:
    folder = tmp_path / "history-session-state"
    folder.mkdir(exist_ok=True)
    path = folder / f"session_{len(list(folder.iterdir()))}-0000_1773176400000.json"
    path.write_text(json.dumps(doc, indent=indent, ensure_ascii=False), encoding="utf-8")
    return path


def test_copilot_history_fixture_grown_and_odd_documents(tmp_path: Path) -> None:
    """The fixture; a document grown from it (items repeated, ids unique, a user item only a reminder, a
    reply with odd fields); the same written on one line (no item where Copilot puts it: the records'
    bytes re-encoded); one whose timeline holds things that are not items; one without a timeline (the
    chat messages read), one with neither list (refused alike); and each digested twice with one state."""
    from dreamtui.core.ingest.formats import copilot_history

    (fixture,) = sorted(COPILOT_HISTORY.glob("session_*.json"))
    assert len(_same(fixture).turns) == 4
    doc = json.loads(fixture.read_bytes())
    rng = random.Random(31)
    grown = []
    for c in range(60):
        for item in doc["timeline"]:
            item = {**item, "id": f"{item['id']}-{c}"}
            if item["type"] in ("user", "copilot") and rng.random() < 0.5:
                item["text"] = _words(rng, 12)
            grown.append(item)
        grown.append(
            {
                "id": f"r-{c}",
                "timestamp": "2026-03-10T22:00:00.000Z",
                "type": "user",
                "text": "<reminder>x</reminder>",
            }
        )
        grown.append({"id": f"o-{c}", "type": "copilot", "text": ["not", "a string"], "extra": {"x": 1}})
    big = {**doc, "timeline": grown}
    for written in (_copilot_history(tmp_path, big), _copilot_history(tmp_path, big, indent=None)):
        d = _same(written)
        assert d.cwd == "/home/dev/src/shop" and len(d.turns) > 100
        assert d.stats.lines == len(grown)
    odd = {**doc, "timeline": [*doc["timeline"], 7, None, "text", ["a", "list"]]}
    assert _same(_copilot_history(tmp_path, odd)).stats.lines == len(doc["timeline"])
    notice = {"type": "info", "text": "Folder /elsewhere has been added to trusted folders."}
    chat = {**doc, "timeline": [], "chatMessages": [*doc["chatMessages"], notice]}  # shaped as an item
    d = _same(_copilot_history(tmp_path, chat))
    assert [t.role for t in d.turns] == ["person", "assistant", "person", "assistant"] and d.cwd == ""
    assert d.project == "copilot-sessions"  # a chat message never names the folder
    later = {**doc, "timeline": [doc["timeline"][0], {**notice, "id": "i-2"}, *doc["timeline"][1:]]}
    assert _same(_copilot_history(tmp_path, later)).cwd == "/elsewhere"  # the first notice names it
    neither = _copilot_history(tmp_path, {"sessionId": "x"})
    for cheap in (True, False):
        with pytest.raises(TranscriptError, match="not a Copilot CLI session"):
            digest_file(neither, cheap=cheap)
    fast_state, exact_state = DigestState(), DigestState()
    for _ in range(2):
        fast = digest_file(fixture, state=fast_state)
        exact = digest_file(fixture, state=exact_state, cheap=False)
        assert fast.turns == exact.turns and fast.stats == exact.stats
    assert not fast.turns
    assert copilot_history.digest_records(fixture, None, DigestState(), fast.stats, True) is not None
