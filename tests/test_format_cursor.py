"""Cursor CLI chats (``formats/cursor.py``): the ``store.db`` of each chat, whose words each message
holds (the person's only inside ``<user_query>``), tool calls, the working directory and the
forged-looking shapes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from fakes.agent_dbs import build_cursor_store

from dreamtui.core.errors import TranscriptError
from dreamtui.core.ingest.formats import cursor

CWD = "/home/dev/proj"
AGENT = "4f1c2a9e-6d3b-4c8e-9a57-2b1e0d7c6f34"


def chat(root: Path, cwd: str = CWD) -> Path:
    return build_cursor_store(root / cursor.cwd_hash(cwd) / AGENT)


def pieces_of(path: Path) -> list[tuple[str, str, str]]:
    return [(p.role, p.kind, p.text) for r in cursor.records(path) for p in cursor.pieces(r.obj)]


def test_the_chat_folder_is_the_md5_of_the_working_directory() -> None:
    # the value backpass checked against a real store (kunchenguid/backpass test/adapters.test.js)
    assert (
        cursor.cwd_hash("/Users/kunchen/.treehouse/sshhip-b697bb/9/sshhip")
        == "43ed8ea0825f9a5321fbe6d772769411"
    )


def test_discover_and_describe(tmp_path: Path) -> None:
    store = chat(tmp_path)
    (tmp_path / "notes.txt").write_text("not a chat")
    found = cursor.discover(tmp_path)
    assert [(f.path, f.project, f.session, f.kind) for f in found] == [
        (store, "-home-dev-proj", AGENT, "main")
    ]
    assert cursor.session_files(tmp_path, cursor.cwd_hash(CWD), AGENT) == [store]
    assert cursor.is_main_file(tmp_path, store)
    assert cursor.meta_of(store)["agentId"] == AGENT
    assert cursor.created_at(store) == "2026-10-08T23:02:11.462Z"


def test_cwd_is_the_workspace_path_whose_md5_is_the_folder(tmp_path: Path) -> None:
    assert cursor.cwd_of(chat(tmp_path)) == CWD
    # the same chat under another folder: the named path is not this chat's, so no cwd at all
    elsewhere = build_cursor_store(tmp_path / cursor.cwd_hash("/somewhere/else") / AGENT)
    assert cursor.cwd_of(elsewhere) == ""


def _without_workspace_line(store: Path, mention: str | None = None) -> None:
    """The chat as real stores of 2025 keep it: no ``Workspace Path`` line in any message (and, with
    ``mention``, every path in it replaced by that one)."""
    with sqlite3.connect(store) as conn:
        for blob_id, data in conn.execute("SELECT id, data FROM blobs").fetchall():
            new = data.replace(b"Workspace Path: /home/dev/proj", b"OS Version: linux 6.8")
            if mention is not None:
                new = new.replace(b"/home/dev/proj/migrations/0042_add_index.sql", mention.encode())
            if new != data:
                conn.execute("UPDATE blobs SET data = ? WHERE id = ?", (new, blob_id))
    conn.close()


def test_with_no_workspace_line_the_cwd_is_the_named_folder_whose_md5_is_the_folder(tmp_path: Path) -> None:
    store = chat(tmp_path)
    _without_workspace_line(store)
    assert b"Workspace Path" not in b"".join(r.raw for r in cursor.records(store))
    # the tool call's file (/home/dev/proj/migrations/0042_add_index.sql): its parent two up is the cwd
    assert cursor.cwd_of(store) == CWD
    assert cursor.describe(store).project == "-home-dev-proj"


def test_a_path_the_chat_only_mentions_is_never_its_cwd(tmp_path: Path) -> None:
    store = chat(tmp_path)
    _without_workspace_line(store, mention="/srv/other/app/main.py")
    assert cursor.cwd_of(store) == ""  # /srv/other/app, /srv/other, /srv, /: no MD5 is the folder's
    assert cursor.describe(store).project == cursor.cwd_hash(CWD)  # filed under its folder, as before


def test_records_are_the_json_messages_in_order(tmp_path: Path) -> None:
    store = chat(tmp_path)
    recs = list(cursor.records(store))
    assert [r.obj["role"] for r in recs] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    with sqlite3.connect(store) as conn:
        stored = conn.execute("SELECT data FROM blobs WHERE id = ?", (recs[1].key,)).fetchone()[0]
    conn.close()
    assert recs[1].raw == stored
    assert [r.locator for r in recs] == list(range(1, 9))


def test_the_persons_words_are_inside_user_query_only(tmp_path: Path) -> None:
    got = pieces_of(chat(tmp_path))
    person = [t for role, _, t in got if role == "person"]
    assert person == [
        "The migrations must run before the API starts; never edit an applied migration, add a new one.",
        "thanks - and keep the index name short",
    ]
    kinds = {(role, kind) for role, kind, _ in got}
    assert (
        ("meta", "system") in kinds
        and ("assistant", "thinking") in kinds
        and ("tool", "tool_result") in kinds
    )


def test_forged_looking_shapes_are_never_the_persons(tmp_path: Path) -> None:
    """A tool result that holds a ``<user_query>`` span, and the context Cursor attaches around the
    person's words, are not the person's; a quote is the person's only inside the span."""
    store = chat(tmp_path)
    recs = list(cursor.records(store))
    tool = recs[3].obj
    text = tool["content"][0]["result"]
    assert "<user_query>" in text
    assert cursor.provenance(tool, ("content", 0, "result"), text, lambda t: True) == "tool"
    user = recs[1].obj
    value = user["content"][0]["text"]
    query = cursor.person_text(value)
    assert query is not None
    inside = cursor.provenance(user, ("content", 0, "text"), value, lambda t: "never edit an applied" in t)
    outside = cursor.provenance(user, ("content", 0, "text"), value, lambda t: "Workspace Path" in t)
    assert (inside, outside) == ("person", "meta")
    call = recs[2].obj
    assert cursor.provenance(call, ("content", 2, "args", "code_edit"), "", lambda t: True) == "tool"
    assert cursor.person_text("<user_info>\nOS Version: linux\n</user_info>") is None
    assert cursor.person_text("plain words, no tags") == "plain words, no tags"


def test_tool_calls_name_the_file_written_and_the_command(tmp_path: Path) -> None:
    calls = [c for r in cursor.records(chat(tmp_path)) for c in cursor.tool_calls(r.obj)]
    assert [(c.name, c.wrote, c.command) for c in calls] == [
        ("edit_file", f"{CWD}/migrations/0042_add_index.sql", None),
        ("run_terminal_cmd", None, "make migrate && make api"),
    ]


def test_render(tmp_path: Path) -> None:
    recs = list(cursor.records(chat(tmp_path)))
    shown = cursor.render(3, recs[2].obj)
    assert shown.type == "assistant"
    assert [role for role, _ in shown.texts] == ["assistant", "assistant", "call"]
    assert cursor.render(1, recs[0].obj).folds


def test_binary_and_odd_blobs_are_left_out(tmp_path: Path) -> None:
    store = chat(tmp_path)
    with sqlite3.connect(store) as conn:
        conn.execute("INSERT INTO blobs VALUES ('a', X'7b6e6f74206a736f6e')")  # "{not json"
        conn.execute("INSERT INTO blobs VALUES ('b', ?)", (json.dumps({"no": "role"}).encode(),))
        conn.execute("INSERT INTO blobs VALUES ('c', ?)", (json.dumps([1, 2]).encode(),))
    conn.close()
    assert len(list(cursor.records(store))) == 8


def test_a_hostile_store_gives_a_one_line_notice(tmp_path: Path) -> None:
    folder = tmp_path / cursor.cwd_hash(CWD) / AGENT
    folder.mkdir(parents=True)
    store = folder / "store.db"
    store.write_bytes(b"SQLite format 3\x00" + b"\xff" * 1000)
    with pytest.raises(TranscriptError) as info:
        list(cursor.records(store))
    assert "\n" not in str(info.value)
    assert cursor.cwd_of(store) == ""
    assert cursor.meta_of(store) == {}
