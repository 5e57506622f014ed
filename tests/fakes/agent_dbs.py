"""Agents' SQLite databases for tests, built at test time from the committed SQL under
``tests/fixtures/agents/`` (OpenCode's own schema; rows in the shapes the agents write), and a real
writer process that keeps inserting rows while a test reads."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agents"
OPENCODE = FIXTURES / "opencode"
CURSOR = FIXTURES / "cursor"
SESSION = "ses_ee23f48fafferHslj7rwP1LkA5"
CHILD = "ses_ee23f2130ffeQJ1hVVb2kYmDG5"


def build_opencode_db(folder: Path, *, wal: bool = True) -> Path:
    """``<folder>/opencode.db`` made with OpenCode's migration SQL and the fixture session's rows."""
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "opencode.db"
    with sqlite3.connect(db) as conn:
        if wal:
            conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript((OPENCODE / "schema.sql").read_text(encoding="utf-8"))
        conn.executescript((OPENCODE / "session.sql").read_text(encoding="utf-8"))
    conn.close()
    return db


def build_cursor_store(folder: Path) -> Path:
    """``<folder>/store.db`` of a Cursor CLI chat, from ``cursor/store.sql``."""
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "store.db"
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript((CURSOR / "store.sql").read_text(encoding="utf-8"))
    conn.close()
    return db


WRITER = r"""
import json, sqlite3, sys
db, session, message, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
conn = sqlite3.connect(db, timeout=0, isolation_level=None)   # busy_timeout 0: any lock is an error
conn.execute("PRAGMA journal_mode=WAL")
busy = 0
print("ready", flush=True)
sys.stdin.readline()                                           # the test says go
for i in range(count):
    data = json.dumps({"type": "text", "text": f"live line {i}"})
    try:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                     (f"prt_live{i:06d}", message, session, 1791600000000 + i, 1791600000000 + i, data))
        conn.execute("COMMIT")
        if i % 50 == 49:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
    except sqlite3.OperationalError as exc:
        busy += 1
        print("busy", exc, file=sys.stderr, flush=True)
        try:
            conn.execute("ROLLBACK")
        except sqlite3.OperationalError:
            pass
print(json.dumps({"busy": busy}), flush=True)
"""


def start_writer(db: Path, session: str, message: str, count: int) -> subprocess.Popen[str]:
    """A process that inserts ``count`` text parts into ``message`` of ``session``, each in its own
    ``BEGIN IMMEDIATE`` with no busy wait at all, once a line is written to its stdin; it prints
    ``ready`` first and ``{"busy": n}`` (the writes a lock refused) last."""
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), session, message, str(count)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    return proc


def build_opencode_storage(root: Path, export: Path = OPENCODE / "export-tool-calls.json") -> Path:
    """OpenCode's older ``storage/`` layout under ``root`` (its data folder), written from an
    ``opencode export`` document (the same session, message and part objects the files hold):
    ``session/global/<session>.json``, ``message/<session>/<message>.json``,
    ``part/<message>/<part>.json``. Gives the session file's path."""
    import json

    doc = json.loads(export.read_text(encoding="utf-8"))
    storage = root / "storage"
    info = doc["info"]
    session_file = storage / "session" / "global" / f"{info['id']}.json"
    session_file.parent.mkdir(parents=True, exist_ok=True)
    session_file.write_text(json.dumps(info, indent=2), encoding="utf-8")
    for message in doc["messages"]:
        m = message["info"]
        target = storage / "message" / info["id"] / f"{m['id']}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(m, indent=2), encoding="utf-8")
        for part in message["parts"]:
            p = storage / "part" / m["id"] / f"{part['id']}.json"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(json.dumps(part, indent=2), encoding="utf-8")
    return session_file
