"""The ledger's connection: WAL mode, one connection per thread, writes in ``BEGIN IMMEDIATE``.

Every write runs inside ``BEGIN IMMEDIATE`` through :meth:`Ledger.write`. One connection per thread
(SQLite connections must not be shared across threads). The schema is in :mod:`.schema`; the named
reads and writes of each group of tables are the package's other modules.

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
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

from dreamtui.core.errors import LedgerError
from dreamtui.core.ledger import candidates, decisions, offsets
from dreamtui.core.ledger.schema import migrate, newer_schema, stored_version
from dreamtui.core.models import Candidate, QueueRow
from dreamtui.core.secrets import redact, scan


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


class LedgerStorageError(LedgerError, sqlite3.OperationalError):
    """The ledger's disk is full or failed (``database or disk is full``, ``disk I/O error``): one line
    for the person; the transaction it interrupted is rolled back whole. Still a
    ``sqlite3.OperationalError`` for code that handles those."""


_STORAGE_FAILURES = ("database or disk is full", "disk i/o error")


def _storage_error(exc: sqlite3.OperationalError, path: str) -> sqlite3.OperationalError:
    """``exc`` as a one-line :class:`LedgerStorageError` when the disk is at fault, else ``exc``."""
    text = str(exc)
    if isinstance(exc, LedgerStorageError) or not any(f in text.lower() for f in _STORAGE_FAILURES):
        return exc
    return LedgerStorageError(
        f"cannot write the ledger {path}: {text} (free some space on its disk and try again; "
        "the change was not made)"
    )


class LedgerDamagedError(LedgerError, sqlite3.DatabaseError):
    """A page of the ledger file is damaged (``database disk image is malformed``, a value that is no
    longer UTF-8): one line saying how to go on, never a traceback on every command."""


_DAMAGE = ("malformed", "not a database", "could not decode")


def _damaged(exc: sqlite3.DatabaseError, path: str) -> sqlite3.DatabaseError:
    """``exc`` as a one-line :class:`LedgerDamagedError` when the file is damaged, else as
    :func:`_storage_error` makes it (an ``OperationalError``) or unchanged."""
    text = str(exc)
    if isinstance(exc, LedgerError):
        return exc
    if any(d in text.lower() for d in _DAMAGE):
        return LedgerDamagedError(
            f"the ledger {path} is damaged ({text}); move it aside (mv {path} {path}.damaged; "
            "`sqlite3 … .recover` may save its rows) and run dreamtui again: a new ledger is made, and the "
            "memory repository keeps every accepted memory, with each decision in its commits' "
            "Dreamtui-* trailers"
        )
    return _storage_error(exc, path) if isinstance(exc, sqlite3.OperationalError) else exc


class RedactingCursor(sqlite3.Cursor):
    """A cursor whose statement parameters are redacted (see :class:`RedactingConnection`); a damaged
    page met while stepping or fetching is a one-line :class:`LedgerDamagedError`."""

    def _path(self) -> str:
        return getattr(self.connection, "ledger_path", "")

    def execute(self, sql: str, parameters: Any = (), /) -> RedactingCursor:  # type: ignore[override]
        try:
            return super().execute(sql, _redacted(parameters))
        except sqlite3.DatabaseError as exc:
            raise _damaged(exc, self._path()) from exc

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> RedactingCursor:  # type: ignore[override]
        try:
            return super().executemany(sql, (_redacted(p) for p in seq_of_parameters))
        except sqlite3.DatabaseError as exc:
            raise _damaged(exc, self._path()) from exc

    def fetchone(self) -> sqlite3.Row | None:
        try:
            row: sqlite3.Row | None = super().fetchone()
            return row
        except sqlite3.DatabaseError as exc:
            raise _damaged(exc, self._path()) from exc

    def fetchmany(self, size: int | None = 1) -> list[Any]:
        try:
            return super().fetchmany(size if size is not None else self.arraysize)
        except sqlite3.DatabaseError as exc:
            raise _damaged(exc, self._path()) from exc

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.DatabaseError as exc:
            raise _damaged(exc, self._path()) from exc

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except sqlite3.DatabaseError as exc:
            raise _damaged(exc, self._path()) from exc


class RedactingConnection(sqlite3.Connection):
    """The ledger's connection: the choke point between dreamtui and the ledger file. Every text
    parameter of every statement is redacted on its way in, so no column can hold a secret; a full or
    failing disk is a one-line :class:`LedgerStorageError`, never a traceback."""

    ledger_path = ""

    def cursor(self, factory: Any = RedactingCursor) -> sqlite3.Cursor:  # type: ignore[override]
        cursor: sqlite3.Cursor = super().cursor(factory)
        return cursor

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:  # type: ignore[override]
        try:
            return super().execute(sql, _redacted(parameters))
        except sqlite3.DatabaseError as exc:
            raise _damaged(exc, self.ledger_path) from exc

    def executemany(self, sql: str, seq_of_parameters: Any, /) -> sqlite3.Cursor:  # type: ignore[override]
        try:
            return super().executemany(sql, (_redacted(p) for p in seq_of_parameters))
        except sqlite3.DatabaseError as exc:
            raise _damaged(exc, self.ledger_path) from exc


def _unusable(path: Path, exc: sqlite3.Error) -> str:
    """One line saying why the ledger at ``path`` cannot be used."""
    text = str(exc)
    if "not a database" in text or "malformed" in text:
        return f"ledger {path} is not a usable SQLite database: {text}"
    if "readonly" in text or "unable to open" in text:
        return (
            f"cannot write the ledger {path}: {text} "
            f"(check that you may write to {path} and its folder {path.parent})"
        )
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
        self._refuse_newer_schema()
        deadline = time.monotonic() + OPEN_WAIT_SECONDS
        while True:
            try:
                self.conn.execute("PRAGMA journal_mode=WAL")
                self._migrate()
                self._check_tables()
                return
            except LedgerError:  # a full disk, a damaged page: already one line
                self.close()
                raise
            except ValueError as exc:  # migrate: a newer schema appeared meanwhile
                self.close()
                raise LedgerError(f"{exc} (ledger {self.path})") from None
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

    def _check_tables(self) -> None:
        """Read the first row of every table, past any index: a table whose first page is damaged is
        a one-line :class:`LedgerDamagedError` at open, not a query that an index answers without
        meeting the damage (an empty queue shown from a damaged ledger)."""
        names = [str(r[0]) for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for name in names:
            if not name.startswith("sqlite_"):
                self.conn.execute(f'SELECT * FROM "{name}" NOT INDEXED LIMIT 1').fetchall()

    def _refuse_newer_schema(self) -> None:
        """Refuse a ledger a newer dreamtui wrote before writing a byte (not even the journal mode):
        its version is read through a read-only connection."""
        if not self.path.is_file():
            return
        try:
            uri = f"{self.path.resolve().as_uri()}?mode=ro&immutable=1"  # no -wal/-shm made, no lock taken
            with closing(sqlite3.connect(uri, uri=True)) as conn:
                conn.execute("PRAGMA busy_timeout=30000")
                problem = newer_schema(stored_version(conn))
        except sqlite3.DatabaseError:
            return  # not readable this way: the normal open says why, in one line
        if problem is not None:
            raise LedgerError(f"{problem} (ledger {self.path})")

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
                conn = sqlite3.connect(
                    str(self.path),
                    timeout=30.0,
                    isolation_level=None,
                    check_same_thread=False,
                    factory=RedactingConnection,
                )
            except sqlite3.Error as exc:
                raise LedgerError(f"cannot open ledger {self.path}: {exc}") from exc
            conn.ledger_path = str(self.path)  # type: ignore[attr-defined]
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
            migrate(c)

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
            if conn.in_transaction:  # SQLite may already have rolled back (a full disk does)
                conn.execute("ROLLBACK")
            raise
        else:
            self._local.depth = 0
            try:
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def query(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> list[sqlite3.Row]:
        """Run a read query and return every row."""
        return self.conn.execute(sql, params).fetchall()

    def one(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> sqlite3.Row | None:
        """Run a read query and return its first row (None when there is none)."""
        row: sqlite3.Row | None = self.conn.execute(sql, params).fetchone()
        return row

    def run(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> sqlite3.Cursor:
        """Run one write statement in a write transaction (joining the caller's, if any)."""
        with self.write() as c:
            return c.execute(sql, params)

    def run_many(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """Run one write statement for each of ``rows``, in one write transaction."""
        with self.write() as c:
            c.executemany(sql, rows)

    def insert(self, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> int:
        """Run one ``INSERT`` in a write transaction; the new row's id."""
        return int(self.run(sql, params).lastrowid or 0)

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

    # -- candidates and files: the front ends' read models (:mod:`.candidates`, :mod:`.offsets`) ----

    def get_candidate(self, cid: str) -> Candidate | None:
        """One candidate by id."""
        return candidates.get(self, cid)

    def list_candidates(self, status: str | None = None, project: str | None = None) -> list[Candidate]:
        """Candidates, newest first, optionally filtered by status and project."""
        return candidates.listed(self, status, project)

    def put_candidate(self, cand: Candidate) -> None:
        """Insert or replace a candidate row (joins the caller's transaction)."""
        candidates.put(self, cand)

    def queue_rows(self) -> list[QueueRow]:
        """Every pending candidate, newest first, as light rows (no JSON decoding of matches)."""
        return candidates.queue_rows(self)

    def skipped_ids(self) -> list[str]:
        """Pending candidates with a skip that was not undone, in the order they were skipped."""
        return decisions.skipped_ids(self)

    def pending_count(self) -> int:
        """How many candidates wait for a decision."""
        return candidates.pending_count(self)

    def pending_by_session(self) -> dict[str, int]:
        """Pending candidates per session."""
        return candidates.pending_by_session(self)

    def file_rows(self) -> list[offsets.FileState]:
        """Every transcript file the tailer has read, with its offsets."""
        return offsets.file_rows(self)
