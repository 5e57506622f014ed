"""The SQLite formats on real data: a real Cursor CLI chat (RLuf/FazAI, CC BY 4.0) and a real OpenCode
session (op30mmd/JulesGuiCs, Apache-2.0), each trimmed by whole messages (``PROVENANCE.md`` and
``trim_real.py`` beside them). Issue 31's per-format checks: every quote of the person's words and the
assistant's prose verifies against its own file with its own provenance, no altered one does, tool
output is never the person's, the conversation is read in its own order, and the working directory
is found."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from dreamtui.core.gate.verify import verify_quotes
from dreamtui.core.ingest.digest import digest_file
from dreamtui.core.ingest.formats import cursor, opencode

FIX = Path(__file__).parent / "fixtures" / "agents"
WORD = re.compile(r"\S+")
FAZAI_FOLDER = "887904812217cca9bc2b9adb875daf42"  # the MD5 of /root, where the chat ran
FAZAI_AGENT = "5bebe878-a662-4cde-9494-07e08efb24d5"
JULES_SESSION = "ses_1c8b39b5effe4o5uhFQCXUEu5m"


def _built(sql: Path, db: Path) -> Path:
    db.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(db) as conn:
        conn.executescript(sql.read_text(encoding="utf-8"))
    conn.close()
    return db


@pytest.fixture
def fazai(tmp_path: Path) -> Path:
    return _built(
        FIX / "cursor" / "real-fazai-5bebe878.sql",
        tmp_path / "chats" / FAZAI_FOLDER / FAZAI_AGENT / "store.db",
    )


@pytest.fixture
def jules(tmp_path: Path) -> Path:
    return _built(FIX / "opencode" / "real-julesguics.sql", tmp_path / "opencode" / "opencode.db")


def _quotes(fmt: object, address: str) -> list[tuple[str, str]]:
    """(first eight words, whose words) of every person and assistant piece of six words or more."""
    out = []
    for rec in fmt.records(*_split(address)):  # type: ignore[attr-defined]
        for piece in fmt.pieces(rec.obj):  # type: ignore[attr-defined]
            if piece.role in ("person", "assistant") and piece.kind != "thinking":
                words = WORD.findall(piece.text)
                if len(words) >= 6:
                    out.append((" ".join(words[:8]), piece.role))
    return out


def _split(address: str) -> tuple[Path, str]:
    path, _, member = address.partition("#")
    return Path(path), member


def _altered(quote: str) -> str:
    words = quote.split(" ")
    words[len(words) // 2] = "zqxjv" + words[len(words) // 2]
    return " ".join(words)


def _check_quotes(fmt: object, address: str) -> int:
    quotes = _quotes(fmt, address)
    found = verify_quotes([q for q, _ in quotes], [address])
    assert all(v.verified for v in found), [
        q for (q, _), v in zip(quotes, found, strict=True) if not v.verified
    ]
    for (quote, role), v in zip(quotes, found, strict=True):
        assert v.best is not None and v.best.provenance == role, (quote, v.best)
    assert not any(v.verified for v in verify_quotes([_altered(q) for q, _ in quotes], [address]))
    return len(quotes)


def test_a_real_cursor_chat_is_read_in_its_conversations_order_not_its_row_order(fazai: Path) -> None:
    with sqlite3.connect(fazai) as conn:
        rows = [bytes(d) for (d,) in conn.execute("SELECT data FROM blobs ORDER BY rowid")]
    conn.close()
    row_roles = [re.search(rb'"role":"(\w+)"', d).group(1).decode() for d in rows if d[:1] == b"{"]  # type: ignore[union-attr]
    assert row_roles[-2:] == ["user", "user"]  # the store keeps the person's messages last
    roles = [rec.obj["role"] for rec in cursor.records(fazai)]
    assert roles == ["user", "assistant", "user", "assistant", *["tool"] * 6, "assistant"]
    turns = digest_file(fazai).turns
    assert [t.role for t in turns][:3] == ["person", "assistant", "person"]


def test_a_real_cursor_chat_whose_words_are_whose(fazai: Path) -> None:
    person = [p.text for rec in cursor.records(fazai) for p in cursor.pieces(rec.obj) if p.role == "person"]
    assert len(person) == 2 and person[0].startswith("guardou onde paramos")
    tool = [p for rec in cursor.records(fazai) for p in cursor.pieces(rec.obj) if p.role == "tool"]
    assert len(tool) == 6 and all(p.kind == "tool_result" for p in tool)
    assert _check_quotes(cursor, str(fazai)) >= 4


def test_a_real_cursor_chat_names_no_workspace_yet_its_directory_is_found(fazai: Path) -> None:
    assert cursor.cwd_of(fazai) == "/root"  # the parent of /root/gemma.cpp, whose MD5 is the folder
    assert cursor.describe(fazai).project == "-root"


def test_a_real_opencode_session_whose_words_are_whose(jules: Path) -> None:
    (found,) = opencode.discover(jules.parent)
    assert found.member == JULES_SESSION and found.kind == "main"
    assert found.project == "D--a-JulesGuiCs-JulesGuiCs"  # a Windows runner's D:\a\JulesGuiCs\JulesGuiCs
    address = found.address
    turns = digest_file(address).turns
    person = [t.text for t in turns if t.role == "person"]
    assert len(person) == 2
    tool = [
        p
        for rec in opencode.records(jules, JULES_SESSION)
        for p in opencode.pieces(rec.obj)
        if p.role == "tool"
    ]
    assert tool and not any(t.text in {p.text for p in tool} for t in turns if t.role == "person")
    assert _check_quotes(opencode, address) >= 4
