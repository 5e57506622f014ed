"""Reading another agent's SQLite database safely (``core/ledger/agent_stores.py``): read only, never a
lock the agent waits on, right while the agent writes in WAL mode, and a one-line notice for a locked,
damaged or hostile file."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import threading
from pathlib import Path

import pytest
from fakes.agent_dbs import SESSION, build_opencode_db, start_writer

from dreamtui.core.errors import TranscriptError
from dreamtui.core.ingest.formats import opencode
from dreamtui.core.ledger import agent_stores

ASSISTANT_MESSAGE = "msg_11dc0b885001JwsqYzBEsi74Ue"


def part_keys(db: Path) -> list[str]:
    return [r.key for r in opencode.records(db, SESSION)]


def test_a_reader_never_makes_the_writing_agent_wait(tmp_path: Path) -> None:
    """A real writer process inserts rows in WAL mode with no busy wait at all (any lock it meets is an
    error it counts) while dreamtui reads the session over and over: the writer meets none, and every
    read sees a consistent prefix of what was written (never a half-written row, never fewer rows than
    a read before)."""
    db = build_opencode_db(tmp_path)
    before = len(part_keys(db))
    writer = start_writer(db, SESSION, ASSISTANT_MESSAGE, 400)
    assert writer.stdin is not None and writer.stdout is not None
    writer.stdin.write("go\n")
    writer.stdin.flush()
    seen: list[int] = []
    while writer.poll() is None:
        keys = part_keys(db)
        live = [k for k in keys if k.startswith("prt_live")]
        assert live == [f"prt_live{i:06d}" for i in range(len(live))]  # a prefix, in order
        seen.append(len(keys))
    out, err = writer.communicate()
    assert json.loads(out.strip().splitlines()[-1]) == {"busy": 0}, err
    assert seen == sorted(seen)
    assert len(seen) > 1  # the reads overlapped the writes
    assert len(part_keys(db)) == before + 400


def test_the_connection_is_read_only_and_closed_after_the_read(tmp_path: Path) -> None:
    db = build_opencode_db(tmp_path)
    with agent_stores.reading(db) as conn, pytest.raises(sqlite3.OperationalError):
        conn.execute("DELETE FROM part")
    with pytest.raises(sqlite3.ProgrammingError):
        conn.execute("SELECT 1")
    # the database was not changed, and a writer can take its write lock at once
    writer = sqlite3.connect(db, timeout=0)
    writer.execute("BEGIN EXCLUSIVE")
    writer.execute("ROLLBACK")
    writer.close()
    assert len(part_keys(db)) == 12


def test_a_database_locked_by_its_writer_gives_a_one_line_notice_soon(tmp_path: Path) -> None:
    """In rollback-journal mode a writer holding an exclusive lock keeps readers out: the read waits
    at most BUSY_MS, then says so in one line (and the writer was never blocked by dreamtui)."""
    db = build_opencode_db(tmp_path, wal=False)
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(TranscriptError) as info:
            part_keys(db)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "lock" in str(info.value)
    assert "\n" not in str(info.value)
    assert len(part_keys(db)) == 12


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\x07" * 4000), "damaged"),
        (lambda p: p.write_bytes(b"not a database at all"), "not an SQLite database"),
        (lambda p: p.write_bytes(b""), "empty"),
        (lambda p: os.mkfifo(p), "FIFO"),
        (lambda p: p.mkdir(), "folder"),
    ],
    ids=["corrupt", "not-sqlite", "empty", "fifo", "folder"],
)
def test_a_hostile_database_file_gives_a_one_line_notice(tmp_path: Path, make, reason: str) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "opencode.db"
    make(db)
    with pytest.raises(TranscriptError) as info:
        part_keys(db)
    assert reason in str(info.value)
    assert "\n" not in str(info.value)


def test_a_symlinked_database_is_refused(tmp_path: Path) -> None:
    real = build_opencode_db(tmp_path / "real")
    link = tmp_path / "opencode.db"
    link.symlink_to(real)
    with pytest.raises(TranscriptError) as info:
        part_keys(link)
    assert "symlink" in str(info.value)


def test_discover_reports_a_bad_database_and_goes_on(tmp_path: Path) -> None:
    (tmp_path / "opencode.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    storage = tmp_path / "storage" / "session" / "global"
    storage.mkdir(parents=True)
    (storage / "ses_old.json").write_text(json.dumps({"id": "ses_old", "directory": "/x"}))
    skipped: list = []
    found = opencode.discover(tmp_path, skipped)
    assert [f.session for f in found] == ["ses_old"]
    assert len(skipped) == 1 and "opencode.db" in skipped[0].path


def _read_only(folder: Path) -> None:
    folder.chmod(stat.S_IRUSR | stat.S_IXUSR)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_wal_database_in_a_read_only_folder_is_read(tmp_path: Path) -> None:
    """No ``-wal``/``-shm`` beside it and no right to make them: read as it is, unchanged."""
    db = build_opencode_db(tmp_path / "ro")
    assert not Path(f"{db}-wal").exists()
    _read_only(db.parent)
    try:
        assert len(part_keys(db)) == 12
    finally:
        db.parent.chmod(0o755)


def test_a_wal_database_in_a_read_only_folder_is_read_as_root_too(tmp_path: Path) -> None:
    """The same fallback, forced: SQLite refuses to open, and no writer's log is there."""
    db = build_opencode_db(tmp_path)
    real = agent_stores._connect
    calls: list[bool] = []

    def refuse_writable(path: Path, immutable: bool) -> sqlite3.Connection:
        calls.append(immutable)
        if not immutable:
            raise sqlite3.OperationalError("unable to open database file")
        return real(path, immutable)

    agent_stores._connect = refuse_writable  # type: ignore[assignment]
    try:
        assert len(part_keys(db)) == 12
    finally:
        agent_stores._connect = real  # type: ignore[assignment]
    assert calls == [False, True]


def test_the_fallback_is_refused_while_a_writer_has_a_log(tmp_path: Path) -> None:
    """``immutable=1`` would ignore the writer's log: with a ``-wal`` beside the database, no fallback."""
    db = build_opencode_db(tmp_path)
    keeper = sqlite3.connect(db)
    keeper.execute("PRAGMA wal_autocheckpoint=0")
    keeper.execute("INSERT INTO todo VALUES ('s', 'c', 'pending', 'high', 1, 1, 1)")
    keeper.commit()
    assert Path(f"{db}-wal").stat().st_size > 0
    real = agent_stores._connect

    def refuse_writable(path: Path, immutable: bool) -> sqlite3.Connection:
        if not immutable:
            raise sqlite3.OperationalError("unable to open database file")
        return real(path, immutable)

    agent_stores._connect = refuse_writable  # type: ignore[assignment]
    try:
        with pytest.raises(TranscriptError) as info:
            part_keys(db)
    finally:
        agent_stores._connect = real  # type: ignore[assignment]
        keeper.close()
    assert "unable to open" in str(info.value)


def test_a_read_holds_nothing_between_calls(tmp_path: Path) -> None:
    """Iterating the records slowly holds no transaction: a checkpoint that needs every reader gone
    (TRUNCATE) completes while a reader is half-way through a session's records."""
    db = build_opencode_db(tmp_path)
    writer = sqlite3.connect(db, isolation_level=None, timeout=0)
    writer.execute("INSERT INTO todo VALUES ('s', 'c', 'pending', 'high', 1, 1, 1)")
    it = opencode.records(db, SESSION)
    next(it)
    busy, log, done = writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    assert busy == 0 and log == done
    assert len(list(it)) == 11
    writer.close()


def test_reads_from_threads_at_once(tmp_path: Path) -> None:
    db = build_opencode_db(tmp_path)
    results: list[int] = []

    def read() -> None:
        results.append(len(part_keys(db)))

    threads = [threading.Thread(target=read) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [12] * 4


def test_a_copy_without_its_log_is_still_a_database(tmp_path: Path) -> None:
    db = build_opencode_db(tmp_path / "a")
    copy = tmp_path / "b" / "opencode.db"
    copy.parent.mkdir()
    shutil.copy(db, copy)
    assert part_keys(copy) == part_keys(db)


# -- a pass that reads many sessions: one connection per database, each read its own transaction ---


def _counting_connects(monkeypatch: pytest.MonkeyPatch) -> list[sqlite3.Connection]:
    made: list[sqlite3.Connection] = []
    real = agent_stores._connect

    def counting(path: Path, immutable: bool) -> sqlite3.Connection:
        made.append(real(path, immutable))
        return made[-1]

    monkeypatch.setattr(agent_stores, "_connect", counting)
    return made


def test_a_pass_reads_every_session_through_one_connection_closed_at_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = build_opencode_db(tmp_path)
    made = _counting_connects(monkeypatch)
    with agent_stores.sharing():
        with agent_stores.sharing():  # a pass inside a pass is the outer one
            keys = [part_keys(db) for _ in range(5)]
            assert [f.session for f in opencode.discover(tmp_path)] == [SESSION, SESSION]
        assert len(made) == 1
        made[0].execute("SELECT 1")  # still open inside the outer pass
        with agent_stores.reading(db) as conn, pytest.raises(sqlite3.OperationalError):
            conn.execute("DELETE FROM part")  # read-only as ever
    assert keys == [keys[0]] * 5 and len(keys[0]) == 12
    with pytest.raises(sqlite3.ProgrammingError):
        made[0].execute("SELECT 1")  # closed when the pass ended
    part_keys(db)
    assert len(made) == 2  # outside a pass every read opens and closes its own


def test_between_two_reads_of_a_pass_nothing_is_held(tmp_path: Path) -> None:
    """WAL mode: a checkpoint that needs every reader gone (TRUNCATE) completes between two reads of a
    pass. Rollback-journal mode: a writer takes its exclusive lock at once, without waiting."""
    db = build_opencode_db(tmp_path / "wal")
    writer = sqlite3.connect(db, isolation_level=None, timeout=0)
    with agent_stores.sharing():
        part_keys(db)
        writer.execute("INSERT INTO todo VALUES ('s', 'c', 'pending', 'high', 1, 1, 1)")
        busy, log, done = writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        assert busy == 0 and log == done
        assert len(part_keys(db)) == 12
    writer.close()
    db = build_opencode_db(tmp_path / "rollback", wal=False)
    writer = sqlite3.connect(db, isolation_level=None, timeout=0)
    with agent_stores.sharing():
        part_keys(db)
        writer.execute("BEGIN EXCLUSIVE")
        writer.execute("INSERT INTO todo VALUES ('s', 'c', 'pending', 'high', 1, 1, 1)")
        writer.execute("COMMIT")
        assert len(part_keys(db)) == 12
    writer.close()


def test_a_lock_in_the_middle_of_a_pass_is_one_line_and_the_next_read_goes_on(tmp_path: Path) -> None:
    db = build_opencode_db(tmp_path, wal=False)
    with agent_stores.sharing():
        assert len(part_keys(db)) == 12
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            with pytest.raises(TranscriptError) as info:
                part_keys(db)
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert "lock" in str(info.value) and "\n" not in str(info.value)
        assert len(part_keys(db)) == 12


def test_a_database_swapped_in_the_middle_of_a_pass_is_checked_again(tmp_path: Path) -> None:
    """The path made a symlink, a FIFO, or another file: the kept connection (to the file it was opened
    on) is closed, and the path is checked as any path is."""
    db = build_opencode_db(tmp_path / "a")
    other = build_opencode_db(tmp_path / "b")
    with agent_stores.sharing():
        assert len(part_keys(db)) == 12
        moved = tmp_path / "a" / "moved.db"
        db.rename(moved)
        db.symlink_to(other)
        with pytest.raises(TranscriptError, match="symlink"):
            part_keys(db)
        db.unlink()
        os.mkfifo(db)
        with pytest.raises(TranscriptError, match="FIFO"):
            part_keys(db)
        db.unlink()
        shutil.copy(other, db)
        assert len(part_keys(db)) == 12


def test_a_pass_keeps_a_few_connections_and_threads_open_their_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dbs = [build_opencode_db(tmp_path / str(i)) for i in range(agent_stores.MOST_SHARED + 2)]
    made = _counting_connects(monkeypatch)
    with agent_stores.sharing():
        for db in dbs:
            part_keys(db)
        open_now = []
        for conn in made:
            try:
                conn.execute("SELECT 1")
                open_now.append(conn)
            except sqlite3.ProgrammingError:
                pass
        assert len(open_now) == agent_stores.MOST_SHARED  # the least recently read were closed
        part_keys(dbs[-1])
        assert len(made) == len(dbs)  # the last one read is still kept
        other: list[int] = []
        thread = threading.Thread(target=lambda: other.append(len(part_keys(dbs[-1]))))
        thread.start()
        thread.join()
        assert other == [12] and len(made) == len(dbs) + 1  # its own connection, not this thread's


def test_a_database_read_without_its_log_is_never_kept_by_a_pass(tmp_path: Path) -> None:
    """The read-only folder's fallback (``immutable=1``, its size and times checked after the read) is
    made again for every read of a pass: a connection that ignores locks is never kept."""
    db = build_opencode_db(tmp_path)
    real = agent_stores._connect
    calls: list[bool] = []

    def refuse_writable(path: Path, immutable: bool) -> sqlite3.Connection:
        calls.append(immutable)
        if not immutable:
            raise sqlite3.OperationalError("unable to open database file")
        return real(path, immutable)

    agent_stores._connect = refuse_writable  # type: ignore[assignment]
    try:
        with agent_stores.sharing():
            assert [len(part_keys(db)) for _ in range(2)] == [12, 12]
    finally:
        agent_stores._connect = real  # type: ignore[assignment]
    assert calls == [False, True, False, True]
