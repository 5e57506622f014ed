"""The SQLite ledger: offsets, candidates, decisions, cycles, batches, promotion.

WAL mode; every write runs inside ``BEGIN IMMEDIATE`` through :meth:`Ledger.write`. One connection
per thread (SQLite connections must not be shared across threads). The schema lives here; the
functions that read and write each table live in the module of the step that owns it.

No secret is ever stored: every text parameter of every statement passes through the one redaction
(:func:`dreamtui.core.secrets.redact`) on its way in (:class:`RedactingConnection`), whichever step
writes it — a claim, a quote, a reject reason, an extractor's error, a cycle's stats. Parameters of
reads pass through it too, so a lookup finds what was stored.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dreamtui.core.errors import LedgerError
from dreamtui.core.models import Candidate, FileRow, Match, QueueRow, Usage
from dreamtui.core.secrets import redact, scan

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
-- One row per transcript file: how far it has been read, and how it is known.
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    project TEXT NOT NULL,
    session TEXT NOT NULL,
    dev INTEGER, ino INTEGER, size INTEGER,
    head_hash TEXT,
    tail_hash TEXT,                        -- hash of the bytes just before offset (rewrite check)
    offset INTEGER NOT NULL DEFAULT 0,     -- bytes read (up to the last complete line)
    lines INTEGER NOT NULL DEFAULT 0,      -- complete lines read
    dreamed_offset INTEGER NOT NULL DEFAULT 0,  -- bytes already extracted by a cycle
    dreamed_lines INTEGER NOT NULL DEFAULT 0,
    skipped INTEGER NOT NULL DEFAULT 0,
    resets INTEGER NOT NULL DEFAULT 0,      -- truncations / replacements seen
    mtime REAL,
    updated_at TEXT
);
CREATE INDEX IF NOT EXISTS files_session ON files(session);
CREATE INDEX IF NOT EXISTS files_project ON files(project);
-- Assistant (message.id, block) keys already digested, so rewritten blocks are not kept twice.
CREATE TABLE IF NOT EXISTS seen_blocks (
    path TEXT NOT NULL,
    key TEXT NOT NULL,
    PRIMARY KEY (path, key)
) WITHOUT ROWID;
-- Each extraction of a range of a session's content: content is extracted once.
CREATE TABLE IF NOT EXISTS extractions (
    id INTEGER PRIMARY KEY,
    session TEXT NOT NULL,
    project TEXT NOT NULL,
    path TEXT NOT NULL,
    start_offset INTEGER NOT NULL,
    end_offset INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    extractor TEXT NOT NULL,
    model TEXT,
    cycle_id INTEGER,
    calls INTEGER NOT NULL DEFAULT 0,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    cached_tokens INTEGER NOT NULL DEFAULT 0,
    candidates INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (path, start_offset, end_offset)
);
CREATE TABLE IF NOT EXISTS candidates (
    id TEXT PRIMARY KEY,
    session TEXT NOT NULL,
    project TEXT NOT NULL,
    transcript TEXT NOT NULL,
    claim TEXT NOT NULL,
    why TEXT NOT NULL DEFAULT '',
    how_to_apply TEXT NOT NULL DEFAULT '',
    type TEXT NOT NULL,
    scope TEXT NOT NULL,
    quote TEXT NOT NULL,
    extractor TEXT NOT NULL,
    model TEXT,
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'accepted', 'rejected', 'dropped')),
    provenance TEXT,
    matches TEXT NOT NULL DEFAULT '[]',    -- JSON list of Match
    duplicate_of TEXT,
    duplicate_kind TEXT,
    duplicate_score REAL,
    secrets TEXT NOT NULL DEFAULT '[]',    -- JSON list of rule names (never the secret)
    corroborated INTEGER NOT NULL DEFAULT 0,
    drop_reason TEXT,
    cycle_id INTEGER,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    duplicate_judged TEXT,                 -- the model dedup judge: 'same' | 'distinct' | 'cleared' | NULL
    duplicate_reason TEXT                  -- the judge's one-line reason
);
CREATE INDEX IF NOT EXISTS candidates_status ON candidates(status);
CREATE INDEX IF NOT EXISTS candidates_session ON candidates(session);
CREATE INDEX IF NOT EXISTS candidates_project ON candidates(project);
CREATE TABLE IF NOT EXISTS decisions (
    id INTEGER PRIMARY KEY,
    candidate_id TEXT NOT NULL REFERENCES candidates(id),
    action TEXT NOT NULL CHECK (action IN ('accept', 'reject', 'skip', 'undo')),
    decided_by TEXT NOT NULL DEFAULT 'person' CHECK (decided_by IN ('person', 'auto')),
    category TEXT,
    reason TEXT,
    commit_sha TEXT,
    memory_path TEXT,
    extractor TEXT,
    model TEXT,
    type TEXT,
    undone INTEGER NOT NULL DEFAULT 0,
    decided_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS decisions_candidate ON decisions(candidate_id);
-- A memory write in flight (issue 5): what dreamtui is about to write, so a crash can be undone.
CREATE TABLE IF NOT EXISTS memory_intents (
    id INTEGER PRIMARY KEY,
    candidate_id TEXT NOT NULL,
    action TEXT NOT NULL,                  -- accept | undo
    paths TEXT NOT NULL DEFAULT '{}',      -- JSON path -> sha256 of the bytes written (null: deleted)
    created_dirs TEXT NOT NULL DEFAULT '[]',
    payload TEXT NOT NULL DEFAULT '{}',    -- JSON: decided_by, memory_path, decision id, ...
    created_at TEXT NOT NULL
);
-- A person's edit of a candidate (claim / why / how to apply): the candidate row holds the edited
-- text from then on (an undone or failed accept keeps it), this keeps the text as extracted.
CREATE TABLE IF NOT EXISTS candidate_edits (
    candidate_id TEXT PRIMARY KEY,
    original TEXT NOT NULL DEFAULT '{}',   -- JSON claim, why, how_to_apply as extracted
    edited_at TEXT NOT NULL
);
-- A file the dream cycle generates (review file, briefing) as dreamtui wrote it and has not yet
-- seen committed: an interrupted run's leftover is recognised as dreamtui's own, never a person's edit.
CREATE TABLE IF NOT EXISTS generated_writes (
    path TEXT NOT NULL,                    -- relative to the memory repository
    blob TEXT NOT NULL,                    -- git blob id of the bytes written
    subject TEXT NOT NULL,                 -- the commit it was meant for
    trailers TEXT NOT NULL DEFAULT '{}',
    written_at TEXT NOT NULL,
    PRIMARY KEY (path, blob)
);
CREATE TABLE IF NOT EXISTS dream_cycles (
    id INTEGER PRIMARY KEY,
    chat_id TEXT NOT NULL,
    date TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
    started_at TEXT NOT NULL,
    completed_at TEXT,
    error_message TEXT,
    trigger TEXT NOT NULL DEFAULT 'manual',
    depth TEXT,
    phases TEXT NOT NULL DEFAULT '[]',
    stats TEXT NOT NULL DEFAULT '{}',
    kind TEXT NOT NULL DEFAULT 'full' CHECK (kind IN ('full', 'on-demand'))
);
-- A proposed briefing.md (issue 14): built from accepted memories and session facts, waiting for a
-- person until auto-write is promoted. ``sources`` is JSON [{section, text, source}].
CREATE TABLE IF NOT EXISTS briefings (
    id INTEGER PRIMARY KEY,
    cycle_id INTEGER,
    text TEXT NOT NULL,
    sources TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'accepted', 'rejected', 'superseded')),
    reason TEXT,
    decided_by TEXT CHECK (decided_by IN ('person', 'auto')),
    commit_sha TEXT,
    reviewed_at TEXT,
    created_at TEXT NOT NULL,
    decided_at TEXT
);
CREATE INDEX IF NOT EXISTS briefings_status ON briefings(status);
CREATE TABLE IF NOT EXISTS batches (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    requests TEXT NOT NULL DEFAULT '{}',   -- JSON custom_id -> {session, path, start, end}
    model TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS promotions (
    id INTEGER PRIMARY KEY,
    extractor TEXT NOT NULL,
    model TEXT,
    status TEXT NOT NULL CHECK (status IN ('approved', 'revoked', 'demoted')),
    evidence TEXT NOT NULL DEFAULT '{}',
    approved_at TEXT NOT NULL,
    ended_at TEXT,
    end_reason TEXT,
    commit_sha TEXT
);
-- A change to the memory repository dreamtui did not make (issue 17), one per file while pending.
CREATE TABLE IF NOT EXISTS outside_items (
    id TEXT PRIMARY KEY,
    path TEXT NOT NULL,
    old_path TEXT,                         -- a rename's old path
    kind TEXT NOT NULL,                    -- added | modified | deleted | renamed
    blob TEXT,                             -- git blob id of the reviewed bytes (stored in git), NULL when deleted
    head_blob TEXT,                        -- HEAD's blob id when seen
    writer TEXT NOT NULL,                  -- auto-memory | auto-dream | person
    session TEXT, transcript TEXT, line INTEGER, tool TEXT,
    batch TEXT,                            -- a mass deletion/rewrite seen together
    status TEXT NOT NULL DEFAULT 'pending',  -- pending | accepted | rejected | gone
    decided_as TEXT,                       -- reviewed | mine
    reason TEXT,
    commit_sha TEXT,
    detected_at TEXT NOT NULL,
    decided_at TEXT
);
CREATE INDEX IF NOT EXISTS outside_status ON outside_items(status);
"""


def stored_text(value: str) -> str:
    """``value`` as the ledger stores it: every secret redacted. A JSON document (stats, matches)
    stays valid JSON: the strings inside it are redacted and it is written again."""
    if not value or not scan(value):
        return value
    if value[0] in "{[":
        try:
            return json.dumps(_redact_json(json.loads(value)), ensure_ascii=False)
        except (ValueError, RecursionError):
            pass
    return redact(value)


def _redact_json(obj: Any) -> Any:
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, list):
        return [_redact_json(v) for v in obj]
    if isinstance(obj, dict):
        return {redact(k) if isinstance(k, str) else k: _redact_json(v) for k, v in obj.items()}
    return obj


def _redacted(params: Any) -> Any:
    """Statement parameters with every text value as :func:`stored_text` makes it."""
    if isinstance(params, dict):
        return {k: stored_text(v) if isinstance(v, str) else v for k, v in params.items()}
    if isinstance(params, (list, tuple)):
        return tuple(stored_text(v) if isinstance(v, str) else v for v in params)
    return params


class RedactingCursor(sqlite3.Cursor):
    """A cursor whose statement parameters are redacted (see :class:`RedactingConnection`)."""

    def execute(self, sql: str, parameters: Any = (), /) -> RedactingCursor:  # type: ignore[override]
        return super().execute(sql, _redacted(parameters))

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> RedactingCursor:  # type: ignore[override]
        return super().executemany(sql, (_redacted(p) for p in seq_of_parameters))


class RedactingConnection(sqlite3.Connection):
    """The ledger's connection: the choke point between dreamtui and the ledger file. Every text
    parameter of every statement is redacted on its way in, so no column can hold a secret."""

    def cursor(self, factory: Any = RedactingCursor) -> Any:  # type: ignore[override]
        return super().cursor(factory)

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:  # type: ignore[override]
        return super().execute(sql, _redacted(parameters))

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> sqlite3.Cursor:  # type: ignore[override]
        return super().executemany(sql, (_redacted(p) for p in seq_of_parameters))


def _unusable(path: Path, exc: sqlite3.Error) -> str:
    """One line saying why the ledger at ``path`` cannot be used."""
    text = str(exc)
    if "not a database" in text or "malformed" in text:
        return f"ledger {path} is not a usable SQLite database: {text}"
    if "readonly" in text or "unable to open" in text:
        return (f"cannot write the ledger {path}: {text} "
                f"(check that you may write to {path} and its folder {path.parent})")
    if "disk" in text or "full" in text:
        return f"cannot write the ledger {path}: {text} (is the disk full?)"
    return f"cannot use the ledger {path}: {text}"


OPEN_WAIT_SECONDS = 30.0
"""How long opening waits for another process that holds the new ledger's lock."""


class Ledger:
    """The ledger database in the state directory."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LedgerError(f"cannot create state directory {self.path.parent}: {exc.strerror}") from exc
        deadline = time.monotonic() + OPEN_WAIT_SECONDS
        while True:
            try:
                self.conn.execute("PRAGMA journal_mode=WAL")
                self._migrate()
                return
            except sqlite3.OperationalError as exc:
                # two processes creating or switching a new ledger at once: SQLite answers "locked"
                # at once, without its busy handler, to the one that loses the race; wait for the other
                if "locked" in str(exc) and time.monotonic() < deadline:
                    time.sleep(0.05)
                    continue
                self.close()
                raise LedgerError(_unusable(self.path, exc)) from exc
            except sqlite3.DatabaseError as exc:
                self.close()
                raise LedgerError(_unusable(self.path, exc)) from exc

    @classmethod
    def open(cls, state_dir: Path) -> Ledger:
        """Open (creating when missing) the ledger in ``state_dir``."""
        return cls(Path(state_dir) / "ledger.sqlite3")

    @property
    def conn(self) -> sqlite3.Connection:
        """This thread's connection (autocommit; writes go through :meth:`write`)."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None,
                                       check_same_thread=False, factory=RedactingConnection)
            except sqlite3.Error as exc:
                raise LedgerError(f"cannot open ledger {self.path}: {exc}") from exc
            try:
                conn.row_factory = sqlite3.Row
                conn.execute("PRAGMA busy_timeout=30000")
                conn.execute("PRAGMA foreign_keys=ON")
                conn.execute("PRAGMA synchronous=NORMAL")
            except sqlite3.Error as exc:  # a read-only or broken file: one line, never a traceback
                conn.close()
                raise LedgerError(_unusable(self.path, exc)) from exc
            self._local.conn = conn
        return conn

    def _migrate(self) -> None:
        with self.write() as c:
            _exec_script(c, SCHEMA)
            _add_columns(c)
            _cycles_with_kind(c)
            c.execute(
                "INSERT INTO meta(key, value) VALUES('schema_version', ?) "
                "ON CONFLICT(key) DO NOTHING",
                (str(SCHEMA_VERSION),),
            )

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """A write transaction: ``BEGIN IMMEDIATE`` … ``COMMIT`` (``ROLLBACK`` on any error).

        Nested calls join the outer transaction.
        """
        conn = self.conn
        depth = getattr(self._local, "depth", 0)
        if depth:
            self._local.depth = depth + 1
            try:
                yield conn
            finally:
                self._local.depth -= 1
            return
        conn.execute("BEGIN IMMEDIATE")
        self._local.depth = 1
        try:
            yield conn
        except BaseException:
            self._local.depth = 0
            conn.execute("ROLLBACK")
            raise
        else:
            self._local.depth = 0
            conn.execute("COMMIT")

    def query(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        """Run a read query and return every row."""
        return self.conn.execute(sql, params).fetchall()

    def integrity_ok(self) -> bool:
        """``PRAGMA integrity_check`` says ok."""
        row = self.conn.execute("PRAGMA integrity_check").fetchone()
        return bool(row) and row[0] == "ok"

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close this thread's connection."""
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    # -- candidates: shared row <-> dataclass mapping ------------------------------------------

    def get_candidate(self, cid: str) -> Candidate | None:
        """One candidate by id."""
        row = self.conn.execute("SELECT * FROM candidates WHERE id = ?", (cid,)).fetchone()
        return row_to_candidate(row) if row else None

    def list_candidates(self, status: str | None = None, project: str | None = None) -> list[Candidate]:
        """Candidates, newest first, optionally filtered by status and project."""
        sql = "SELECT * FROM candidates"
        where, params = [], []
        if status:
            where.append("status = ?")
            params.append(status)
        if project:
            where.append("project = ?")
            params.append(project)
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created_at DESC, id"
        return [row_to_candidate(r) for r in self.conn.execute(sql, params)]

    def put_candidate(self, cand: Candidate) -> None:
        """Insert or replace a candidate row (call inside :meth:`write`)."""
        data = candidate_to_row(cand)
        cols = ", ".join(data)
        marks = ", ".join("?" for _ in data)
        updates = ", ".join(f"{k} = excluded.{k}" for k in data if k != "id")
        with self.write() as c:
            c.execute(
                f"INSERT INTO candidates ({cols}) VALUES ({marks}) ON CONFLICT(id) DO UPDATE SET {updates}",
                tuple(data.values()),
            )


    # -- read models for the front ends (the one place their SQL lives) ------------------------

    def queue_rows(self) -> list[QueueRow]:
        """Every pending candidate, newest first, as light rows (no JSON decoding of matches)."""
        rows = self.query(
            "SELECT id, project, session, type, claim, provenance, duplicate_of, corroborated, secrets, "
            "created_at FROM candidates WHERE status = 'pending' ORDER BY created_at DESC, id"
        )
        return [
            QueueRow(r["id"], r["project"], r["session"], r["type"], r["claim"], r["provenance"],
                     bool(r["duplicate_of"]), int(r["corroborated"] or 0),
                     bool(r["secrets"]) and r["secrets"] != "[]", r["created_at"] or "")
            for r in rows
        ]

    def skipped_ids(self) -> list[str]:
        """Pending candidates with a skip that was not undone, in the order they were skipped."""
        rows = self.query(
            "SELECT d.candidate_id, MAX(d.id) AS last FROM decisions d JOIN candidates c ON c.id = d.candidate_id "
            "WHERE d.action = 'skip' AND d.undone = 0 AND c.status = 'pending' GROUP BY d.candidate_id ORDER BY last"
        )
        return [str(r["candidate_id"]) for r in rows]

    def pending_count(self) -> int:
        """How many candidates wait for a decision."""
        return int(self.query("SELECT COUNT(*) FROM candidates WHERE status = 'pending'")[0][0])

    def pending_by_session(self) -> dict[str, int]:
        """Pending candidates per session."""
        return {str(r["session"]): int(r["n"]) for r in self.query(
            "SELECT session, COUNT(*) AS n FROM candidates WHERE status = 'pending' GROUP BY session")}

    def file_rows(self) -> list[FileRow]:
        """Every transcript file the tailer has read, with its offsets."""
        return [FileRow(r["path"], r["project"], r["session"],
                        r["size"] if r["size"] is not None else r["offset"], int(r["lines"] or 0),
                        int(r["dreamed_offset"] or 0), int(r["dreamed_lines"] or 0), r["updated_at"] or "")
                for r in self.query("SELECT path, project, session, size, offset, lines, dreamed_offset, "
                                    "dreamed_lines, updated_at FROM files")]


ADDED_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("candidates", "duplicate_judged", "TEXT"),
    ("candidates", "duplicate_reason", "TEXT"),
)
"""Columns added after a table was first created: ``(table, column, declaration)``. A ledger made
before them gets them with ``ALTER TABLE … ADD COLUMN`` (SQLite has no ``ADD COLUMN IF NOT EXISTS``)."""


def record_extraction(c: sqlite3.Connection, *, session: str, project: str, path: str, start_offset: int,
                      end_offset: int, content_hash: str | None, extractor: str, model: str | None,
                      cycle_id: int | None, usage: Usage, candidates: int, now: str) -> None:
    """Record (or re-record) that the bytes ``start_offset``..``end_offset`` of ``path`` were extracted,
    with the call's usage and how many candidates it gave (inside the caller's transaction)."""
    c.execute(
        """INSERT INTO extractions (session, project, path, start_offset, end_offset, content_hash,
               extractor, model, cycle_id, calls, input_tokens, output_tokens, cached_tokens,
               candidates, error, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)
           ON CONFLICT(path, start_offset, end_offset) DO UPDATE SET
               content_hash = excluded.content_hash, extractor = excluded.extractor,
               model = excluded.model, cycle_id = excluded.cycle_id, calls = excluded.calls,
               input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
               cached_tokens = excluded.cached_tokens, candidates = excluded.candidates,
               error = NULL, created_at = excluded.created_at""",
        (session, project, path, start_offset, end_offset, content_hash, extractor, model, cycle_id,
         usage.calls, usage.input_tokens, usage.output_tokens, usage.cached_tokens, candidates, now))


def record_failed_extraction(c: sqlite3.Connection, *, session: str, project: str, path: str,
                             start_offset: int, end_offset: int, content_hash: str | None, extractor: str,
                             model: str | None, cycle_id: int | None, usage: Usage, error: str | None,
                             now: str) -> None:
    """Record that extracting ``start_offset``..``end_offset`` of ``path`` failed, with the error (inside
    the caller's transaction); the content stays undreamed, so a later cycle tries again."""
    c.execute(
        """INSERT INTO extractions (session, project, path, start_offset, end_offset, content_hash,
               extractor, model, cycle_id, calls, input_tokens, output_tokens, cached_tokens,
               candidates, error, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)
           ON CONFLICT(path, start_offset, end_offset) DO UPDATE SET error = excluded.error,
               cycle_id = excluded.cycle_id, created_at = excluded.created_at""",
        (session, project, path, start_offset, end_offset, content_hash, extractor, model, cycle_id,
         usage.calls, usage.input_tokens, usage.output_tokens, usage.cached_tokens,
         redact(error or "failed")[:500],  # redacted before it is cut: a cut secret is not found
         now))


def _add_columns(conn: sqlite3.Connection) -> None:
    """Add each of :data:`ADDED_COLUMNS` that an older ledger lacks (inside the migration transaction)."""
    for table, column, decl in ADDED_COLUMNS:
        have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if column not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")


CYCLE_COLUMNS = ("id", "chat_id", "date", "status", "started_at", "completed_at", "error_message", "trigger",
                 "depth", "phases", "stats")


def _cycles_with_kind(conn: sqlite3.Connection) -> None:
    """Give ``dream_cycles`` its ``kind`` (``full`` / ``on-demand``) and make "one cycle per project per
    date" hold for full cycles only (a partial unique index), so a person's on-demand passes of the same
    date can be recorded beside the day's full cycle. A ledger made before (a table-wide
    ``UNIQUE (chat_id, date)``) is rebuilt once, its rows and ids kept (inside the migration transaction)."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(dream_cycles)")}
    if "kind" not in have:
        cols = ", ".join(CYCLE_COLUMNS)
        conn.execute("ALTER TABLE dream_cycles RENAME TO dream_cycles_before_kind")
        table = SCHEMA[SCHEMA.index("CREATE TABLE IF NOT EXISTS dream_cycles"):]
        conn.execute(table[:table.index(";")])
        conn.execute(f"INSERT INTO dream_cycles ({cols}) SELECT {cols} FROM dream_cycles_before_kind")
        conn.execute("DROP TABLE dream_cycles_before_kind")
    conn.execute("CREATE UNIQUE INDEX IF NOT EXISTS dream_cycles_full ON dream_cycles(chat_id, date) "
                 "WHERE kind = 'full'")


def _exec_script(conn: sqlite3.Connection, script: str) -> None:
    """Run each statement of ``script`` inside the current transaction (executescript would commit)."""
    for stmt in script.split(";"):
        body = "\n".join(line for line in stmt.splitlines() if not line.strip().startswith("--")).strip()
        if body:
            conn.execute(body)


def candidate_to_row(cand: Candidate) -> dict[str, Any]:
    """A Candidate as a ``candidates`` row."""
    return {
        "id": cand.id,
        "session": cand.session,
        "project": cand.project,
        "transcript": cand.transcript,
        "claim": cand.claim,
        "why": cand.why,
        "how_to_apply": cand.how_to_apply,
        "type": cand.type,
        "scope": cand.scope,
        "quote": cand.quote,
        "extractor": cand.extractor,
        "model": cand.model,
        "status": cand.status,
        "provenance": cand.provenance,
        "matches": json.dumps([m.to_json() for m in cand.matches], ensure_ascii=False),
        "duplicate_of": cand.duplicate_of,
        "duplicate_kind": cand.duplicate_kind,
        "duplicate_score": cand.duplicate_score,
        "secrets": json.dumps(cand.secrets),
        "corroborated": cand.corroborated,
        "drop_reason": cand.drop_reason,
        "cycle_id": cand.cycle_id,
        "created_at": cand.created_at or "",
        "updated_at": cand.updated_at or cand.created_at or "",
        "duplicate_judged": cand.duplicate_judged,
        "duplicate_reason": cand.duplicate_reason,
    }


def _optional(row: sqlite3.Row, column: str) -> Any:
    """A column added later (:data:`ADDED_COLUMNS`), None when a query did not select it."""
    return row[column] if column in row.keys() else None  # noqa: SIM118 (``in row`` tests values)


def row_to_candidate(row: sqlite3.Row) -> Candidate:
    """A ``candidates`` row as a Candidate."""
    matches = [Match(**m) for m in json.loads(row["matches"] or "[]")]
    return Candidate(
        id=row["id"],
        session=row["session"],
        project=row["project"],
        transcript=row["transcript"],
        claim=row["claim"],
        why=row["why"],
        how_to_apply=row["how_to_apply"],
        type=row["type"],
        scope=row["scope"],
        quote=row["quote"],
        extractor=row["extractor"],
        model=row["model"],
        status=row["status"],
        provenance=row["provenance"],
        matches=matches,
        duplicate_of=row["duplicate_of"],
        duplicate_kind=row["duplicate_kind"],
        duplicate_score=row["duplicate_score"],
        secrets=json.loads(row["secrets"] or "[]"),
        corroborated=row["corroborated"],
        drop_reason=row["drop_reason"],
        cycle_id=row["cycle_id"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        duplicate_judged=_optional(row, "duplicate_judged"),
        duplicate_reason=_optional(row, "duplicate_reason"),
    )
