"""The ledger's schema and its migrations (run once per open, inside one write transaction).

A schema change goes in :data:`SCHEMA` (add columns/tables with ``IF NOT EXISTS``); a column added to a
table that already shipped goes in :data:`ADDED_COLUMNS` too. Hand-written on purpose: two added
columns and one table rebuild do not pay for a migration framework (Alembic would bring SQLAlchemy in).
"""

from __future__ import annotations

import sqlite3

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
-- What a dream cycle found too quiet to dream (issue 24): the content of a file up to ``offset`` held
-- fewer words of a person than ``min_person_chars``. It waits for more words, and the app says so.
CREATE TABLE IF NOT EXISTS quiet_files (
    path TEXT PRIMARY KEY,
    offset INTEGER NOT NULL,
    cycle_id INTEGER,
    found_at TEXT NOT NULL,
    size INTEGER,                          -- a whole-file (records) source: its size and mtime then
    mtime REAL
);
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
-- Which project each transcript folder's sessions belong to (issue 21): a worktree's or a subfolder's
-- folder belongs to its repository's project, decided once (while the worktree is on this machine).
CREATE TABLE IF NOT EXISTS project_folders (
    folder TEXT PRIMARY KEY,               -- the transcript folder (Claude Code's name of the cwd)
    project TEXT NOT NULL,                 -- the project key: the folder name of the repository's root
    root TEXT NOT NULL DEFAULT '',         -- the repository's root (main worktree), as found
    how TEXT NOT NULL DEFAULT '',          -- git | layout | folder
    decided_at TEXT NOT NULL
);
-- The outside scan's hash cache (issue 23): a memory file's git blob id by its stat, so a start with
-- nothing new re-hashes nothing (and nothing is written into git before a person accepts).
CREATE TABLE IF NOT EXISTS outside_hashes (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    blob TEXT NOT NULL
);
-- A proposal to change memory already there (issue 26): update, retire or merge existing files, with
-- its evidence (a verified quote from a newer transcript, or the check that failed). One row per
-- evidence key, whatever its status: the same proposal with the same evidence is never made again.
CREATE TABLE IF NOT EXISTS consolidations (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('update', 'retire', 'merge')),
    project TEXT NOT NULL,
    targets TEXT NOT NULL DEFAULT '[]',    -- JSON list of the memory files it changes (repo-relative)
    seen TEXT NOT NULL DEFAULT '{}',       -- JSON path -> sha256 of each target's bytes when proposed
    keep_path TEXT,                        -- update / merge: the file that holds the new text
    new_text TEXT,                         -- update / merge: that file's new content (whole file)
    evidence_kind TEXT NOT NULL CHECK (evidence_kind IN ('quote', 'check')),
    evidence TEXT NOT NULL,                -- the verified quote, or the check that failed (one line)
    evidence_key TEXT NOT NULL UNIQUE,     -- sha256 of kind, targets and evidence
    reason TEXT NOT NULL DEFAULT '',       -- why, in one line (the finder's or the model's)
    session TEXT, transcript TEXT, line INTEGER, provenance TEXT,
    source TEXT NOT NULL,                  -- offline | <extractor>/<model>
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'accepted', 'rejected', 'undone')),
    decided_by TEXT CHECK (decided_by IN ('person', 'auto')),
    decision_reason TEXT,
    commit_sha TEXT,
    undo_sha TEXT,
    cycle_id INTEGER,
    created_at TEXT NOT NULL,
    decided_at TEXT
);
CREATE INDEX IF NOT EXISTS consolidations_status ON consolidations(status);
-- An outside accept or reject in flight (issue 23), so a kill can be finished or undone at the next start.
CREATE TABLE IF NOT EXISTS outside_intents (
    id INTEGER PRIMARY KEY,
    item_id TEXT NOT NULL,
    action TEXT NOT NULL,                  -- accept | reject
    payload TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL
);
-- A decision on an outside change or a briefing (issue 24), in the order it was made among every
-- decision: ``after_decision`` is the last ``decisions.id`` when it was made, so one undo takes back
-- the most recent decision of any kind.
CREATE TABLE IF NOT EXISTS decision_journal (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL CHECK (kind IN ('outside', 'briefing', 'consolidation')),
    action TEXT NOT NULL,                  -- accept | mine | reject
    refs TEXT NOT NULL,                    -- JSON: the outside item ids, [briefing id] or [consolidation id]
    payload TEXT NOT NULL DEFAULT '{}',    -- JSON: what an undo needs (commit, statuses before)
    after_decision INTEGER NOT NULL DEFAULT 0,
    undone INTEGER NOT NULL DEFAULT 0,
    decided_at TEXT NOT NULL
);
"""


ADDED_COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("candidates", "duplicate_judged", "TEXT"),
    ("candidates", "duplicate_reason", "TEXT"),
    ("outside_items", "entry", "TEXT"),  # file | symlink | special | large (NULL: deleted or older ledger)
    ("outside_items", "note", "TEXT"),  # "symlink → /target", "FIFO", "too large to review: …"
    ("outside_items", "secrets", "TEXT"),  # the secret scanner's rule names, comma-separated (NULL: none)
    # a whole-file (records) source found too quiet: its size and mtime then, to see it unchanged since
    ("quiet_files", "size", "INTEGER"),
    ("quiet_files", "mtime", "REAL"),
)
"""Columns added after a table was first created: ``(table, column, declaration)``. A ledger made
before them gets them with ``ALTER TABLE … ADD COLUMN`` (SQLite has no ``ADD COLUMN IF NOT EXISTS``)."""


def _add_columns(conn: sqlite3.Connection) -> None:
    """Add each of :data:`ADDED_COLUMNS` that an older ledger lacks (inside the migration transaction)."""
    for table, column, decl in ADDED_COLUMNS:
        have = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        if column not in have:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {decl}")


CYCLE_COLUMNS = (
    "id",
    "chat_id",
    "date",
    "status",
    "started_at",
    "completed_at",
    "error_message",
    "trigger",
    "depth",
    "phases",
    "stats",
)


def _cycles_with_kind(conn: sqlite3.Connection) -> None:
    """Give ``dream_cycles`` its ``kind`` (``full`` / ``on-demand``) and make "one cycle per project per
    date" hold for full cycles only (a partial unique index), so a person's on-demand passes of the same
    date can be recorded beside the day's full cycle. A ledger made before (a table-wide
    ``UNIQUE (chat_id, date)``) is rebuilt once, its rows and ids kept (inside the migration transaction)."""
    have = {row[1] for row in conn.execute("PRAGMA table_info(dream_cycles)")}
    if "kind" not in have:
        cols = ", ".join(CYCLE_COLUMNS)
        conn.execute("ALTER TABLE dream_cycles RENAME TO dream_cycles_before_kind")
        table = SCHEMA[SCHEMA.index("CREATE TABLE IF NOT EXISTS dream_cycles") :]
        conn.execute(table[: table.index(";")])
        conn.execute(f"INSERT INTO dream_cycles ({cols}) SELECT {cols} FROM dream_cycles_before_kind")
        conn.execute("DROP TABLE dream_cycles_before_kind")
    conn.execute(
        "CREATE UNIQUE INDEX IF NOT EXISTS dream_cycles_full ON dream_cycles(chat_id, date) "
        "WHERE kind = 'full'"
    )


def _exec_script(conn: sqlite3.Connection, script: str) -> None:
    """Run each statement of ``script`` inside the current transaction (executescript would commit)."""
    for stmt in script.split(";"):
        body = "\n".join(line for line in stmt.splitlines() if not line.strip().startswith("--")).strip()
        if body:
            conn.execute(body)


def stored_version(conn: sqlite3.Connection) -> str | None:
    """The ``schema_version`` a ledger's ``meta`` table holds (``None`` for a new, empty ledger)."""
    has_meta = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").fetchone()
    if has_meta is None:
        return None
    row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return None if row is None else str(row[0])


def newer_schema(version: str | None) -> str | None:
    """Why a ledger of schema ``version`` must not be opened by this code (one line), or ``None``:
    a newer schema than :data:`SCHEMA_VERSION` (written by a newer dreamtui), or no number at all."""
    if version is None:
        return None
    try:
        number = int(version)
    except ValueError:
        return f"this ledger has an unknown schema version {version!r}; it was not written by this dreamtui"
    if number > SCHEMA_VERSION:
        return f"this ledger was written by a newer dreamtui (schema {number}); upgrade"
    return None


def migrate(conn: sqlite3.Connection) -> None:
    """Create what is missing and bring an older ledger up to :data:`SCHEMA` (inside a write transaction).
    A ledger of a newer schema is refused before anything is written (``ValueError``, one line)."""
    problem = newer_schema(stored_version(conn))
    if problem is not None:
        raise ValueError(problem)
    _exec_script(conn, SCHEMA)
    _add_columns(conn)
    _cycles_with_kind(conn)
    conn.execute(
        "INSERT INTO meta(key, value) VALUES('schema_version', ?) ON CONFLICT(key) DO NOTHING",
        (str(SCHEMA_VERSION),),
    )
