"""Other agents' SQLite databases, read only: OpenCode's ``opencode.db`` and Cursor CLI's ``store.db``.

These files belong to an agent that may be writing them while dreamtui reads, so every read here:

- checks the file first (:func:`store_problem`): a symlink, a FIFO, a device, a folder, an empty file
  or one shorter than SQLite's header is refused with a one-line reason and never handed to SQLite
  (SQLite opens without ``O_NONBLOCK``: a FIFO would hang the read for ever). A regular file is not
  opened by dreamtui itself to look at its header (closing a descriptor of a file drops every POSIX
  lock the process holds on it, SQLite's among them): SQLite, opening it read-only, refuses a file
  without its header, and only then are the first bytes read to say which it is, "not an SQLite
  database" or "damaged";
- opens it with ``file:<path>?mode=ro`` (never ``immutable=1`` while a writer may be there: SQLite then
  ignores locks and the write-ahead log, and could read a page the agent is half-way through writing)
  and ``PRAGMA query_only``: nothing dreamtui runs can change it;
- reads inside one short deferred transaction and closes the connection at once (:func:`reading`):
  in WAL mode a reader never blocks the writer, and in rollback mode the shared lock lasts only as
  long as the few ``SELECT`` s take. A busy database waits at most :data:`BUSY_MS` and then gives up
  with a notice (the writer is never the one made to wait long). Inside a :func:`sharing` block (a
  pass that reads many sessions of one database) the connection is kept for the next read instead
  of closed: each read is still its own short transaction, and the connection is closed when the
  block ends;
- handles a read-only folder: a WAL database opened read-only needs its ``-wal`` and ``-shm`` files,
  or the right to create them. When neither exists and they cannot be made (no writer is running, or
  it would have made them), the file is read with ``immutable=1`` and its size and change time are
  checked to be the same after the read as before; otherwise the read is refused with a notice.

Every failure is a :class:`StoreUnreadable` (an ``OSError``) whose ``strerror`` is one line, so a
caller that reports unreadable files already reports these. All of dreamtui's SQL lives in the
ledger package, these reads of other programs' schemas included.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dreamtui.core.files import LINK_REASON, error_reason, kind_of_mode, read_head

SQLITE_HEADER = b"SQLite format 3\x00"
BUSY_MS = 50
"""How long a read waits on a lock the agent holds before giving up (milliseconds)."""
MAX_ROW_BYTES = 64 * 1024 * 1024
"""A row's ``data`` longer than this is given as empty (it is not decoded)."""


class StoreUnreadable(OSError):
    """An agent's database could not be read now; ``strerror`` says why in one line."""

    def __init__(self, path: Path | str, reason: str) -> None:
        super().__init__(errno.EIO, reason, os.fspath(path))


def _checked(path: Path) -> os.stat_result:
    """``path``'s ``lstat`` when it is a regular file that is not empty; else raises
    :class:`StoreUnreadable` saying why. Nothing is opened: whether the file starts like an SQLite
    database is asked only when SQLite cannot read it (:func:`_header_problem`), so the file is never
    opened and closed outside SQLite while a connection of this process may hold a lock on it (closing
    any descriptor of a file drops every POSIX lock the process holds on it)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise StoreUnreadable(path, "it does not exist") from None
    except OSError as exc:
        raise StoreUnreadable(path, f"cannot read it ({error_reason(exc)})") from None
    if stat.S_ISLNK(st.st_mode):
        raise StoreUnreadable(path, LINK_REASON)
    if not stat.S_ISREG(st.st_mode):
        raise StoreUnreadable(path, f"it is {kind_of_mode(st.st_mode)}, not a regular file")
    if st.st_size == 0:
        raise StoreUnreadable(path, "it is empty")
    if st.st_size < len(SQLITE_HEADER):  # (SQLite takes a one-byte file for an empty database)
        raise StoreUnreadable(path, "it is not an SQLite database")
    return st


def _header_problem(path: Path) -> str | None:
    """Why ``path`` is not an SQLite database by its first bytes (one line), None when it starts like one."""
    try:
        head = read_head(path, len(SQLITE_HEADER))
    except OSError as exc:
        return f"cannot read it ({error_reason(exc)})"
    return None if head == SQLITE_HEADER else "it is not an SQLite database"


def store_problem(path: Path | str) -> str | None:
    """Why the database file ``path`` is not read (one line), or None when it is a regular file that
    starts like an SQLite database. A symlink is refused: the agent writes its database at its own
    path, and a link there is not the agent's."""
    try:
        _checked(Path(path))
    except StoreUnreadable as exc:
        return exc.strerror
    return _header_problem(Path(path))


def _uri(path: Path, immutable: bool) -> str:
    quoted = urllib.parse.quote(os.fspath(path.absolute()))
    return f"file:{quoted}?mode=ro" + ("&immutable=1" if immutable else "")


def _connect(path: Path, immutable: bool) -> sqlite3.Connection:
    conn = sqlite3.connect(
        _uri(path, immutable), uri=True, timeout=BUSY_MS / 1000, isolation_level=None, check_same_thread=False
    )
    try:
        conn.execute("PRAGMA query_only = ON")
    except BaseException:
        conn.close()
        raise
    return conn


def _begin(conn: sqlite3.Connection) -> None:
    """Begin a read transaction and read the schema in it (so a database that cannot be read fails
    here, not half-way through the caller's reads)."""
    conn.execute("BEGIN")
    conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()


def _open(path: Path, immutable: bool) -> sqlite3.Connection:
    """A connection inside a read transaction that has read the schema (:func:`_begin`)."""
    conn = _connect(path, immutable)
    try:
        _begin(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _signature(path: Path) -> tuple[int, int, int]:
    st = os.stat(path)
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _has_wal(path: Path) -> bool:
    try:
        return os.stat(f"{path}-wal").st_size > 0
    except OSError:
        return False


def _reason(exc: sqlite3.Error) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    low = text.lower()
    if "locked" in low or "busy" in low:
        return "the agent holds a lock on it now; read again later"
    if "not a database" in low or "malformed" in low or "corrupt" in low:
        return f"it is damaged ({text})"
    return text


def _cannot_open(exc: sqlite3.Error) -> bool:
    low = str(exc).lower()
    return "unable to open" in low or "readonly" in low or "read-only" in low


def _opened(path: Path) -> tuple[sqlite3.Connection, tuple[int, int, int] | None, os.stat_result]:
    """A new connection to the checked file ``path`` inside a read transaction (:func:`_open`), the
    file's signature when it was opened ``immutable`` (None otherwise: the fallback below), and the
    file's ``lstat`` as it was checked. Raises :class:`StoreUnreadable`."""
    st = _checked(path)
    before = None
    try:
        try:
            conn = _open(path, False)
        except sqlite3.Error as exc:
            problem = _header_problem(path)
            if problem is not None:
                raise StoreUnreadable(path, problem) from None
            if not _cannot_open(exc) or _has_wal(path):
                raise
            # a WAL database in a folder dreamtui cannot write, and no writer's log beside it: read
            # the file as it is, and check afterwards that it did not change meanwhile
            before = _signature(path)
            conn = _open(path, True)
    except sqlite3.Error as exc:
        raise StoreUnreadable(path, _reason(exc)) from None
    except StoreUnreadable:
        raise
    except OSError as exc:
        raise StoreUnreadable(path, f"cannot read it ({error_reason(exc)})") from None
    return conn, before, st


class _Shared:
    """The connections one :func:`sharing` block keeps between reads, by path, the least recently read
    first; each with the ``(st_dev, st_ino)`` of the file it was opened on."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.kept: dict[str, tuple[sqlite3.Connection, tuple[int, int]]] = {}

    def take(self, path: Path) -> tuple[sqlite3.Connection, tuple[int, int]] | None:
        """The kept connection to ``path`` inside a new read transaction, taken out of the keeping
        (so a read nested in another's opens its own); None when there is none, or when the path is
        no longer the regular file it was opened on (that connection is closed)."""
        kept = self.kept.pop(os.fspath(path), None)
        if kept is None:
            return None
        conn, ident = kept
        try:
            st = os.lstat(path)
            same = stat.S_ISREG(st.st_mode) and (st.st_dev, st.st_ino) == ident
        except OSError:
            same = False
        if not same:  # opened anew, with every check, by the caller
            conn.close()
            return None
        try:
            conn.execute("BEGIN")  # its first statement checks the schema and the log, as any reads
        except sqlite3.Error as exc:
            conn.close()
            raise StoreUnreadable(path, _reason(exc)) from None
        return conn, ident

    def keep(self, path: Path, conn: sqlite3.Connection, ident: tuple[int, int]) -> None:
        """Keep ``conn`` (its read transaction ended) for the next read of ``path``; the least recently
        read beyond :attr:`most` is closed."""
        old = self.kept.pop(os.fspath(path), None)
        if old is not None:
            old[0].close()
        self.kept[os.fspath(path)] = (conn, ident)
        while len(self.kept) > self.most:
            self.kept.pop(next(iter(self.kept)))[0].close()

    def close(self) -> None:
        for conn, _ in self.kept.values():
            conn.close()
        self.kept.clear()


MOST_SHARED = 4
"""How many databases' connections one :func:`sharing` block keeps open between reads at most."""

_local = threading.local()


@contextmanager
def sharing(most: int = MOST_SHARED) -> Iterator[None]:
    """Inside this block the reads of one database (:func:`reading`) share one connection: checked and
    opened once, its schema and page cache read once. Each read is still its own read transaction,
    begun when its :func:`reading` block starts and ended when it ends, so between two reads the
    connection holds nothing a writer or a checkpoint waits on (in WAL mode a reader's lock lasts as
    long as its transaction; in rollback-journal mode an idle connection holds no lock); before each
    read the path is checked to be still the regular file the connection was opened on (else it is
    opened anew, every check made again). At most ``most`` connections are kept (the least recently
    read closed first), and all are closed when the block ends: wrap a pass that reads many sessions
    in it, and nothing that waits (a model's call, a person). A block inside another is the outer one;
    a read in another thread opens its own connection, as outside any block. A database read with
    ``immutable=1`` (the read-only folder's fallback) is never kept."""
    if getattr(_local, "shared", None) is not None:
        yield
        return
    shared = _local.shared = _Shared(most)
    try:
        yield
    finally:
        _local.shared = None
        shared.close()


@contextmanager
def reading(path: Path | str) -> Iterator[sqlite3.Connection]:
    """A read-only connection to the agent database ``path`` inside one read transaction, ended (and,
    outside a :func:`sharing` block, the connection closed) when the block ends. Raises
    :class:`StoreUnreadable` (one-line reason) when the file is refused or SQLite cannot read it now;
    a read that saw the file change under an ``immutable`` fallback is refused too."""
    path = path if isinstance(path, Path) else Path(path)
    shared: _Shared | None = getattr(_local, "shared", None)
    taken = shared.take(path) if shared is not None else None
    before = None
    if taken is None:
        conn, before, st = _opened(path)
        ident = (st.st_dev, st.st_ino)
    else:
        conn, ident = taken
    keep = shared is not None and before is None
    try:
        yield conn
    except sqlite3.Error as exc:
        keep = False
        raise StoreUnreadable(path, _reason(exc)) from None
    except BaseException:
        keep = False
        raise
    finally:
        if keep:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                keep = False
        if keep and shared is not None:
            shared.keep(path, conn, ident)
        else:
            conn.close()  # closing ends the read transaction
    if before is not None and before != _signature(path):
        raise StoreUnreadable(
            path, "it changed while it was read without its write-ahead log; read again later"
        )


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    """The columns of ``table`` (none when there is no such table), as a query of it names them: a
    statement prepared and not run (``pragma_table_info`` costs ten times more, a read of a session
    asks twice)."""
    quoted = '"' + table.replace('"', '""') + '"'
    try:
        described = conn.execute(f"SELECT * FROM {quoted} LIMIT 0").description  # noqa: S608 (a quoted name)
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return set()
        raise
    return {str(d[0]) for d in described or ()}


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {str(row[0]) for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def as_bytes(value: Any) -> bytes:
    """A ``data`` column as bytes (read ``CAST(data AS BLOB)``: no decoding to text and back); b'' for
    a NULL, a number, or a value over :data:`MAX_ROW_BYTES`."""
    if type(value) is bytes:
        return value if len(value) <= MAX_ROW_BYTES else b""
    if isinstance(value, str):
        return as_bytes(value.encode("utf-8", "surrogatepass"))
    return b""


# -- OpenCode: session / message / part ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OpenCodeSession:
    """One row of OpenCode's ``session`` table (the columns every version has, and the directory
    when the version keeps it; the project's worktree when the ``project`` table has one)."""

    id: str
    parent_id: str | None
    project_id: str
    directory: str
    title: str
    time_created: int
    time_updated: int
    worktree: str


OpenCodeRow = tuple[Any, Any, Any, Any]
"""One ``message`` or ``part`` row as SQLite gives it: ``(id, message id, time created, data)`` (a
message's own id stands for its message id). The values are the stored ones, of whatever type the
file holds: the format checks each before it uses it (a plain tuple: a session's thousands of rows are
read in one call, without a Python object made per row; no column the format does not read, since
each costs a Python object per row)."""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def opencode_sessions(conn: sqlite3.Connection, session_id: str | None = None) -> list[OpenCodeSession]:
    """Every session of an OpenCode database (or the one ``session_id``), oldest first. A database
    without a ``session`` table has none."""
    tables = _tables(conn)
    if "session" not in tables:
        return []
    cols = _columns(conn, "session")
    directory = "s.directory" if "directory" in cols else "''"
    worktree = "''"
    join = ""
    if "project" in tables and "worktree" in _columns(conn, "project") and "project_id" in cols:
        worktree, join = "p.worktree", " LEFT JOIN project p ON p.id = s.project_id"
    parent = "s.parent_id" if "parent_id" in cols else "NULL"
    project = "s.project_id" if "project_id" in cols else "''"
    title = "s.title" if "title" in cols else "''"
    created = "s.time_created" if "time_created" in cols else "0"
    updated = "s.time_updated" if "time_updated" in cols else "0"
    where, args = ("", ()) if session_id is None else (" WHERE s.id = ?", (session_id,))
    query = (
        f"SELECT s.id, {parent}, {project}, {directory}, {title}, {created}, {updated}, {worktree} "  # noqa: S608
        f"FROM session s{join}{where} ORDER BY {created}, s.id"
    )
    return [
        OpenCodeSession(
            _text(r[0]),
            r[1] if isinstance(r[1], str) and r[1] else None,
            _text(r[2]),
            _text(r[3]),
            _text(r[4]),
            _int(r[5]),
            _int(r[6]),
            _text(r[7]),
        )
        for r in conn.execute(query, args)
        if isinstance(r[0], str)
    ]


def opencode_children(conn: sqlite3.Connection, parent_id: str) -> list[str]:
    """The sessions an OpenCode session started (its sub-agents' sessions), oldest first."""
    if "parent_id" not in _columns(conn, "session"):
        return []
    return [
        str(r[0])
        for r in conn.execute(
            "SELECT id FROM session WHERE parent_id = ? ORDER BY time_created, id", (parent_id,)
        )
    ]


def opencode_messages(conn: sqlite3.Connection, session_id: str) -> list[OpenCodeRow]:
    """A session's ``message`` rows in order (time created, then id)."""
    rows: list[OpenCodeRow] = conn.execute(
        "SELECT id, id, time_created, CAST(data AS BLOB) "
        "FROM message WHERE session_id = ? ORDER BY time_created, id",
        (session_id,),
    ).fetchall()
    return rows


def opencode_parts(conn: sqlite3.Connection, session_id: str) -> list[OpenCodeRow]:
    """A session's ``part`` rows, in no order (the caller sorts them: sorting in SQL copies every
    row's data once more; OpenCode's part ids sort in the order they were made)."""
    rows: list[OpenCodeRow] = conn.execute(
        "SELECT id, message_id, time_created, CAST(data AS BLOB) FROM part WHERE session_id = ?",
        (session_id,),
    ).fetchall()
    return rows


def opencode_first_cwd(conn: sqlite3.Connection, session_id: str) -> str:
    """The working directory an assistant message of the session names (``path.cwd``), or ''."""
    for r in conn.execute(
        "SELECT json_extract(data, '$.path.cwd') FROM message WHERE session_id = ? AND json_valid(data) "
        "ORDER BY time_created, id LIMIT 20",
        (session_id,),
    ):
        if isinstance(r[0], str) and r[0].strip():
            return str(r[0])
    return ""


# -- Cursor CLI: meta / blobs --------------------------------------------------------------------


CursorRow = tuple[Any, Any, Any]
"""One JSON blob of a Cursor CLI ``store.db`` as SQLite gives it: ``(rowid, id, data)``, the stored
values of whatever type the file holds (the format checks each; a plain tuple, as
:data:`OpenCodeRow`)."""


def cursor_meta(conn: sqlite3.Connection) -> bytes:
    """The ``meta`` row ``0`` of a Cursor CLI store (hex-encoded JSON, as stored), or b''."""
    try:
        rows = conn.execute("SELECT value FROM meta WHERE key = '0' LIMIT 1").fetchall()
    except sqlite3.OperationalError as exc:  # asked, not looked up first: one statement fewer
        if "no such table" in str(exc):
            return b""
        raise
    return as_bytes(rows[0][0]) if rows else b""


def cursor_json_blobs(conn: sqlite3.Connection, root_id: str = "") -> tuple[list[CursorRow], bytes | None]:
    """The blobs of a Cursor CLI store that are JSON objects (their first byte ``{``), in the order
    they were written, and the bytes of the blob ``root_id`` (the conversation's root node; None when
    the store has no such blob), read by the same statement. The other binary nodes are not read."""
    try:
        rows: list[CursorRow] = conn.execute(
            "SELECT rowid, id, CAST(data AS BLOB) FROM blobs WHERE substr(CAST(data AS BLOB), 1, 1) = x'7b' "
            "OR id = ? ORDER BY rowid",
            (root_id,),
        ).fetchall()
    except sqlite3.OperationalError as exc:  # asked, not looked up first: one statement fewer
        if "no such table" in str(exc):
            return [], None
        raise
    if not root_id:
        return rows, None
    root = None
    for i, row in enumerate(rows):
        if row[1] == root_id:
            root = as_bytes(row[2])
            if not root.startswith(b"{"):
                del rows[i]
            break
    return rows, root
