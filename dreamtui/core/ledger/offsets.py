"""The ``files`` and ``seen_blocks`` tables: how far each transcript file was read and dreamed, how it is
known (a rewrite or replacement is noticed), and the assistant blocks already digested."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dreamtui.core.ledger.rows import from_row

if TYPE_CHECKING:
    from dreamtui.core.ledger.db import Ledger

_COLUMNS = (
    "path, project, session, dev, ino, size, head_hash, tail_hash, offset, lines, dreamed_offset, "
    "dreamed_lines, skipped, resets, mtime, COALESCE(updated_at, '') AS updated_at"
)
"""Every column of ``files`` as :class:`FileState` reads it."""

Seen = tuple[int, int | None, str | None, str | None]
"""What a reader saw of a file's row: (offset, inode, head hash, tail hash); another reader that
committed since changes it."""


@dataclass(slots=True)
class FileState:
    """One row of ``files``: how far a transcript file was read and dreamed, and how it is known.

    The one type of that row: the tailer reads it (:func:`file_state`), the Sessions screen lists
    every one (:func:`file_rows`)."""

    path: str
    project: str
    session: str
    dev: int | None = None
    ino: int | None = None
    size: int | None = None
    head_hash: str | None = None
    tail_hash: str | None = None
    offset: int = 0
    lines: int = 0
    dreamed_offset: int = 0
    dreamed_lines: int = 0
    skipped: int = 0
    resets: int = 0
    mtime: float | None = None
    updated_at: str = ""
    """When a read last stored the row (``""`` for a row that never said)."""

    @property
    def seen(self) -> Seen:
        """(offset, inode, head hash, tail hash): see :data:`Seen`."""
        return (self.offset, self.ino, self.head_hash, self.tail_hash)


def file_state(ledger: Ledger, path: str) -> FileState | None:
    """The stored row of ``path`` (a :func:`~dreamtui.core.ingest.tail.file_key`), None when never read."""
    row = ledger.one(f"SELECT {_COLUMNS} FROM files WHERE path = ?", (path,))
    return from_row(FileState, row) if row else None


def seen(ledger: Ledger, path: str) -> Seen | None:
    """What is stored of ``path`` now (see :data:`Seen`), None when never read."""
    row = ledger.one("SELECT offset, ino, head_hash, tail_hash FROM files WHERE path = ?", (path,))
    return None if row is None else (row[0], row[1], row[2], row[3])


def store_read(
    ledger: Ledger,
    *,
    path: str,
    project: str,
    session: str,
    dev: int,
    ino: int,
    size: int,
    head_hash: str,
    tail_hash: str | None,
    offset: int,
    lines: int,
    skipped: int,
    reset: bool,
    mtime: float,
    now: str,
) -> None:
    """Store where a read of ``path`` stopped; a reset (the file was truncated or replaced) counts and
    sends what was dreamed of it back to 0."""
    ledger.run(
        """INSERT INTO files (path, project, session, dev, ino, size, head_hash, tail_hash,
               offset, lines, skipped, resets, mtime, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT(path) DO UPDATE SET
               project = excluded.project, session = excluded.session,
               dev = excluded.dev, ino = excluded.ino, size = excluded.size,
               head_hash = excluded.head_hash, tail_hash = excluded.tail_hash,
               offset = excluded.offset, lines = excluded.lines,
               skipped = files.skipped + excluded.skipped,
               resets = files.resets + excluded.resets,
               dreamed_offset = CASE WHEN excluded.resets > 0 THEN 0 ELSE files.dreamed_offset END,
               dreamed_lines = CASE WHEN excluded.resets > 0 THEN 0 ELSE files.dreamed_lines END,
               mtime = excluded.mtime, updated_at = excluded.updated_at""",
        (
            path,
            project,
            session,
            dev,
            ino,
            size,
            head_hash,
            tail_hash,
            offset,
            lines,
            skipped,
            1 if reset else 0,
            mtime,
            now,
        ),
    )


def file_rows(ledger: Ledger) -> list[FileState]:
    """Every transcript file the tailer has read, with its offsets (a row without a ``size`` counts the
    bytes read)."""
    return [
        from_row(FileState, r)
        for r in ledger.query(
            "SELECT path, project, session, COALESCE(size, offset) AS size, offset, lines, dreamed_offset, "
            "dreamed_lines, mtime, COALESCE(updated_at, '') AS updated_at FROM files"
        )
    ]


# -- what was dreamed -------------------------------------------------------------------------------


def dreamed_point(ledger: Ledger, path: str) -> tuple[int, int] | None:
    """(dreamed_offset, dreamed_lines) of ``path``, None when never read."""
    row = ledger.one("SELECT dreamed_offset, dreamed_lines FROM files WHERE path = ?", (path,))
    return None if row is None else (int(row[0]), int(row[1]))


def dreamed_offsets(ledger: Ledger) -> dict[str, int]:
    """``dreamed_offset`` of every file read."""
    return {
        r["path"]: int(r["dreamed_offset"]) for r in ledger.query("SELECT path, dreamed_offset FROM files")
    }


def set_quiet(
    ledger: Ledger,
    path: str,
    offset: int,
    cycle_id: int | None,
    now: str,
    stat: tuple[int, float] | None = None,
) -> None:
    """A cycle found ``path``'s content up to ``offset`` too quiet to dream (too few of a person's
    words); ``stat``: a whole-file source's ``(size, mtime)`` as it was read (its offsets count records'
    bytes, so only the file's own size and time say it is unchanged since)."""
    size, mtime = stat if stat is not None else (None, None)
    ledger.run(
        "INSERT INTO quiet_files (path, offset, cycle_id, found_at, size, mtime) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(path) DO UPDATE SET offset = excluded.offset, cycle_id = excluded.cycle_id, "
        "found_at = excluded.found_at, size = excluded.size, mtime = excluded.mtime",
        (path, offset, cycle_id, now, size, mtime),
    )


def quiet_stats(ledger: Ledger) -> dict[str, tuple[int, float]]:
    """Every whole-file source a cycle found too quiet, with its ``(size, mtime)`` as it was read then."""
    return {
        r["path"]: (int(r["size"]), float(r["mtime"]))
        for r in ledger.query(
            "SELECT path, size, mtime FROM quiet_files WHERE size IS NOT NULL AND mtime IS NOT NULL"
        )
    }


def quiet_offsets(ledger: Ledger) -> dict[str, int]:
    """Every file a cycle found too quiet, with the offset up to which it looked."""
    return {r["path"]: int(r["offset"]) for r in ledger.query("SELECT path, offset FROM quiet_files")}


def set_dreamed(ledger: Ledger, path: str, offset: int, line: int) -> None:
    """Everything of ``path`` up to ``offset`` (line ``line``) is dreamed."""
    ledger.run("UPDATE files SET dreamed_offset = ?, dreamed_lines = ? WHERE path = ?", (offset, line, path))


def advance_dreamed(ledger: Ledger, path: str, offset: int, line: int) -> None:
    """As :func:`set_dreamed`, never backwards."""
    ledger.run(
        "UPDATE files SET dreamed_offset = ?, dreamed_lines = ? WHERE path = ? AND dreamed_offset < ?",
        (offset, line, path, offset),
    )


def give_back(ledger: Ledger, path: str, offset: int, line: int) -> None:
    """What was dreamed of ``path`` past ``offset`` is undreamed again (never forwards)."""
    ledger.run(
        "UPDATE files SET dreamed_offset = ?, dreamed_lines = ? WHERE path = ? AND dreamed_offset > ?",
        (offset, line, path, offset),
    )


def reset_paths(ledger: Ledger) -> set[str]:
    """Files that were truncated or replaced at least once."""
    return {r["path"] for r in ledger.query("SELECT path FROM files WHERE resets > 0")}


# -- seen_blocks ----------------------------------------------------------------------------------


def block_seen(ledger: Ledger, path: str, key: str) -> bool:
    """The assistant block ``key`` of ``path`` was already digested."""
    return ledger.one("SELECT 1 FROM seen_blocks WHERE path = ? AND key = ?", (path, key)) is not None


def add_blocks(ledger: Ledger, path: str, keys: list[str] | set[str]) -> None:
    """Remember the blocks ``keys`` of ``path`` as digested."""
    ledger.run_many("INSERT OR IGNORE INTO seen_blocks(path, key) VALUES (?, ?)", [(path, k) for k in keys])


def remove_blocks(ledger: Ledger, path: str, keys: list[str] | set[str]) -> None:
    """Forget the blocks ``keys`` of ``path``."""
    ledger.run_many("DELETE FROM seen_blocks WHERE path = ? AND key = ?", [(path, k) for k in keys])
