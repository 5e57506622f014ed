"""Digest benchmark for the SQLite formats (OpenCode's ``opencode.db``, Cursor CLI's ``store.db``): the
digest of every session (``digest_file``: the safe read-only open, the records, the format's digester)
against reading the same rows plainly (a plain read-only connection, one ``SELECT`` of the rows and
``orjson.loads`` of each).

OpenCode's sessions are digested two ways: in one pass (``digest.shared_reads``, as the dream cycle's
light phase reads every session: one connection to the database for all of them, each session its
own short read transaction) and each alone (``digest_file`` by itself: the safe open per session).

Run:  python3 tests/bench/bench_agent_dbs.py [--sessions 40] [--parts 400] [--reps 5]

The database is built in a temporary folder with OpenCode's own schema (``tests/fixtures/agents``),
``--sessions`` sessions of ``--parts`` parts each in the fixture's mix (person and assistant text,
reasoning, tool calls with outputs of 0.5–16 KB, step markers), and the Cursor store the same way.
Prints CPU time (best of ``--reps``, baseline and digest interleaved) and the ratio digest / plain:
the target is at most 2. Nothing is committed.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from fakes.agent_dbs import OPENCODE, build_cursor_store  # noqa: E402

from dreamtui.core.ingest import digest as digest_mod  # noqa: E402
from dreamtui.core.ingest.formats import cursor, opencode  # noqa: E402

WORDS = [
    "the",
    "tests",
    "need",
    "docker",
    "compose",
    "stack",
    "up",
    "before",
    "you",
    "run",
    "them",
    "never",
    "push",
    "to",
    "main",
    "here",
    "fixture",
    "timeout",
]


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def build_opencode(folder: Path, sessions: int, parts: int, seed: int = 7) -> Path:
    """An opencode.db of ``sessions`` sessions of about ``parts`` parts each."""
    rng = random.Random(seed)
    db = folder / "opencode.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.executescript((OPENCODE / "schema.sql").read_text(encoding="utf-8"))
    conn.execute(
        "INSERT INTO project VALUES ('p', '/home/dev/proj', 'git', NULL, NULL, NULL, 1, 1, NULL, '[]')"
    )
    t = 1791500000000
    for s in range(sessions):
        sid = f"ses_{s:08d}"
        conn.execute(
            "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) "
            "VALUES (?, 'p', 'x', '/home/dev/proj', 't', '1.15.10', ?, ?)",
            (sid, t, t),
        )
        made = 0
        m = 0
        while made < parts:
            t += 1000
            uid, aid = f"msg_{s:06d}{m:06d}u", f"msg_{s:06d}{m:06d}a"
            m += 1
            conn.execute(
                "INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                (uid, sid, t, t, json.dumps({"role": "user", "time": {"created": t}, "agent": "build"})),
            )
            assistant = {
                "role": "assistant",
                "path": {"cwd": "/home/dev/proj", "root": "/"},
                "time": {"created": t + 1},
            }
            conn.execute(
                "INSERT INTO message VALUES (?, ?, ?, ?, ?)", (aid, sid, t + 1, t + 1, json.dumps(assistant))
            )
            rows = [(uid, {"type": "text", "text": words(rng, rng.randint(5, 60))})]
            for _ in range(rng.randint(2, 8)):
                rows.append((aid, {"type": "step-start"}))
                rows.append((aid, {"type": "reasoning", "text": words(rng, rng.randint(10, 120))}))
                out = words(rng, rng.randint(80, 2800))
                state = {
                    "status": "completed",
                    "input": {"command": "pytest -q"},
                    "output": out,
                    "title": "run",
                }
                rows.append((aid, {"type": "tool", "tool": "bash", "callID": "c", "state": state}))
                rows.append((aid, {"type": "text", "text": words(rng, rng.randint(5, 80))}))
                rows.append((aid, {"type": "step-finish", "reason": "stop", "cost": 0.01}))
            for i, (mid, data) in enumerate(rows):
                conn.execute(
                    "INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                    (f"prt_{mid}{i:04d}", mid, sid, t + 2 + i, t + 2 + i, json.dumps(data)),
                )
            made += len(rows)
    conn.commit()
    conn.close()
    return db


def cpu(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def plain_opencode(db: Path) -> None:
    """Read every session's rows the plain way: one SELECT per session, orjson on each data column."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    for (sid,) in conn.execute("SELECT id FROM session").fetchall():
        for (data,) in conn.execute("SELECT data FROM message WHERE session_id = ?", (sid,)):
            orjson.loads(data)
        for (data,) in conn.execute("SELECT data FROM part WHERE session_id = ?", (sid,)):
            orjson.loads(data)
    conn.close()


def digest_all(addresses: list[str]) -> int:
    """The digest of every session (``digest_file``: the format's records, then its digester)."""
    return sum(len(digest_mod.digest_file(a).turns) for a in addresses)


def digest_pass(addresses: list[str]) -> int:
    """The digest of every session in one pass, as the dream cycle reads them (``shared_reads``)."""
    with digest_mod.shared_reads():
        return digest_all(addresses)


def plain_cursor(stores: list[Path]) -> None:
    for store in stores:
        conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        for (data,) in conn.execute("SELECT data FROM blobs"):
            if data[:1] == b"{":
                orjson.loads(data)
        conn.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sessions", type=int, default=40)
    ap.add_argument("--parts", type=int, default=400)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = build_opencode(Path(tmp), args.sessions, args.parts)
        paths = [tf.address for tf in opencode.discover(Path(tmp))]
        size = (
            db.stat().st_size + Path(f"{db}-wal").stat().st_size
            if Path(f"{db}-wal").exists()
            else db.stat().st_size
        )
        stores = [
            build_cursor_store(Path(tmp) / "chats" / cursor.cwd_hash(f"/p/{i}") / f"agent-{i}")
            for i in range(50)
        ]
        base, mine, alone, cbase, cmine = [], [], [], [], []
        for _ in range(args.reps):
            base.append(cpu(lambda: plain_opencode(db)))
            mine.append(cpu(lambda: digest_pass(paths)))
            alone.append(cpu(lambda: digest_all(paths)))
            cbase.append(cpu(lambda: plain_cursor(stores)))
            cmine.append(cpu(lambda: digest_all([str(s) for s in stores])))
        print(f"opencode.db: {len(paths)} sessions, {size / 1e6:.1f} MB")
        print(
            f"  plain (SELECT + orjson): {min(base) * 1000:.0f} ms   digest in one pass: {min(mine) * 1000:.0f} ms   "
            f"ratio {min(mine) / min(base):.2f}x"
        )
        print(f"  each session alone: {min(alone) * 1000:.0f} ms   ratio {min(alone) / min(base):.2f}x")
        print(f"cursor store.db x{len(stores)}")
        print(
            f"  plain: {min(cbase) * 1000:.1f} ms   digest: {min(cmine) * 1000:.1f} ms   "
            f"ratio {min(cmine) / min(cbase):.2f}x"
        )


if __name__ == "__main__":
    main()
