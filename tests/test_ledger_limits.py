"""The ledger at its limits: a ledger of a newer schema is refused before a byte is written; a full disk
(a real tiny tmpfs where the test may mount one, SQLite's ``max_page_count`` elsewhere) is a one-line
error in accept, undo and reject, with nothing half-done."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.candidates import make_pending
from fakes.gitrepo import git

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.errors import DreamError, LedgerError
from dreamtui.core.ledger import Ledger
from dreamtui.core.ledger.db import LedgerStorageError
from dreamtui.core.ledger.schema import SCHEMA_VERSION
from dreamtui.core.memory import decisions


@pytest.fixture(autouse=True)
def _home(git_home: Path) -> None:
    """Commits in the memory repository need an identity (and nothing of the user's)."""


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


# -- a ledger of a newer schema ------------------------------------------------------------------


def newer_ledger(state: Path, journal: str) -> Path:
    """A ledger as a newer dreamtui would leave it: schema version above this code's."""
    led = Ledger.open(state)
    led.run("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    led.close()
    path = state / "ledger.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute(f"PRAGMA journal_mode={journal}")
    conn.close()
    return path


@pytest.mark.parametrize("journal", ["WAL", "DELETE"])
def test_a_ledger_of_a_newer_schema_is_refused_and_nothing_is_written(config: Config, journal: str) -> None:
    path = newer_ledger(config.state, journal)
    before = files_of(config.state)
    with pytest.raises(LedgerError) as caught:
        Ledger.open(config.state)
    assert str(caught.value) == (
        f"this ledger was written by a newer dreamtui (schema {SCHEMA_VERSION + 1}); upgrade (ledger {path})"
    )
    assert files_of(config.state) == before  # not even the journal mode, no -wal made


def test_the_cli_on_a_newer_ledger_is_one_line_exit_2(config: Config) -> None:
    newer_ledger(config.state, "WAL")
    before = files_of(config.state)
    result = CliRunner().invoke(
        cli, ["--state", str(config.state), "--memory", str(config.memory), "candidates"]
    )
    assert result.exit_code == 2, result.output
    (line,) = result.output.strip().splitlines()
    assert "written by a newer dreamtui (schema 2); upgrade" in line
    assert files_of(config.state) == before


def test_an_older_or_equal_schema_still_opens(config: Config) -> None:
    Ledger.open(config.state).close()
    led = Ledger.open(config.state)
    assert led.one("SELECT value FROM meta WHERE key = 'schema_version'")["value"] == str(SCHEMA_VERSION)
    led.close()


# -- a full disk -------------------------------------------------------------------------------------


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 2 MB tmpfs (needs root and mount); skips where it cannot be mounted."""
    where = tmp_path / f"tiny-{uuid.uuid4().hex[:6]}"
    where.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(disk: Path) -> Path:
    """Fill ``disk`` to the last byte; the filler file (remove it to free the space)."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as fh:  # unbuffered: nothing left to flush at close
        for size in (65536, 1):
            try:
                while fh.write(b"\0" * size):
                    pass
            except OSError:
                pass
    return filler


def one_line(error: DreamError) -> str:
    text = str(error)
    assert "\n" not in text and text
    return text


def test_reject_accept_and_undo_on_a_full_ledger_disk_are_one_line_and_change_nothing(
    config: Config, tiny_disk: Path
) -> None:
    cfg = config.changed(state=tiny_disk / "state")
    led = Ledger.open(cfg.state)
    done = make_pending(led, 1)
    decisions.accept(cfg, led, done.id)  # something to undo
    cand = make_pending(led, 2)
    led.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every new write needs new space on the disk
    head = git(cfg.memory, "rev-parse", "HEAD")
    fill(tiny_disk)
    for write in (
        lambda: decisions.reject(led, cand.id, "wrong", "not what was said"),
        lambda: decisions.accept(cfg, led, cand.id),
        lambda: decisions.undo_last(cfg, led),
    ):
        with pytest.raises(LedgerStorageError) as caught:
            write()
        assert "database or disk is full" in one_line(caught.value)
        assert "free some space" in str(caught.value)
    (tiny_disk / "filler").unlink()
    assert led.get_candidate(cand.id).status == "pending"
    assert led.get_candidate(done.id).status == "accepted"
    assert [r["action"] for r in led.query("SELECT action FROM decisions")] == ["accept"]
    assert git(cfg.memory, "rev-parse", "HEAD") == head
    assert git(cfg.memory, "status", "--porcelain", "--untracked-files=all") == ""
    assert led.integrity_ok()
    decisions.reject(led, cand.id, "wrong", "now there is room")  # and it works again once there is room
    assert led.get_candidate(cand.id).status == "rejected"
    led.close()


def test_accept_onto_a_full_memory_disk_is_one_line_and_leaves_the_proposal_pending(
    config: Config, ledger: Ledger, tiny_disk: Path
) -> None:
    cfg = config.changed(memory=tiny_disk / "memory")
    seed = make_pending(ledger, 1)
    decisions.accept(cfg, ledger, seed.id)
    cand = make_pending(ledger, 2)
    head = git(cfg.memory, "rev-parse", "HEAD")
    index = (cfg.memory / "MEMORY.md").read_bytes()
    fill(tiny_disk)
    with pytest.raises(DreamError) as caught:
        decisions.accept(cfg, ledger, cand.id)
    assert "No space left on device" in one_line(caught.value)
    (tiny_disk / "filler").unlink()
    assert ledger.get_candidate(cand.id).status == "pending"
    assert git(cfg.memory, "rev-parse", "HEAD") == head and (cfg.memory / "MEMORY.md").read_bytes() == index
    assert git(cfg.memory, "status", "--porcelain", "--untracked-files=all") == ""
    assert ledger.query("SELECT COUNT(*) AS n FROM memory_intents")[0]["n"] == 0
    assert decisions.accept(cfg, ledger, cand.id).commit_sha  # once there is room, it is accepted


def test_a_full_database_is_a_one_line_error_even_without_a_tiny_disk(config: Config, ledger: Ledger) -> None:
    """SQLite's own limit on the ledger's size (``max_page_count``) stands in for a full disk."""
    cand = make_pending(ledger, 1)
    pages = ledger.one("PRAGMA page_count")[0]
    ledger.conn.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(LedgerStorageError) as caught:
        decisions.reject(ledger, cand.id, "wrong", "x" * 20_000)  # needs pages the ledger may not have
    assert one_line(caught.value).startswith(
        f"cannot write the ledger {config.ledger_path}: database or disk is full"
    )
    assert isinstance(caught.value, sqlite3.OperationalError)  # code that handles those still does
    assert ledger.get_candidate(cand.id).status == "pending"
    assert ledger.query("SELECT COUNT(*) AS n FROM decisions")[0]["n"] == 0


def test_a_ledger_disk_that_fills_right_after_the_commit_says_the_accept_stands_and_reconcile_records_it(
    config: Config, tiny_disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fills between the commit and the ledger's record of it: the error says the accept is
    in git and will be recorded; once there is room, reconcile records it (no second commit)."""
    cfg = config.changed(state=tiny_disk / "state")
    led = Ledger.open(cfg.state)
    cand = make_pending(led, 1)
    led.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    real = decisions._insert_decision

    def disk_fills_first(*args: object, **kwargs: object) -> None:
        fill(tiny_disk)  # a real full disk at exactly this step
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(decisions, "_insert_decision", disk_fills_first)
    with pytest.raises(LedgerStorageError) as caught:
        decisions.accept(cfg, led, cand.id)
    line = one_line(caught.value)
    head = git(cfg.memory, "rev-parse", "HEAD").strip()
    assert line.startswith(
        f"accepted {cand.id} in git (commit {head[:10]}), but the ledger could not record it"
    )
    assert "recorded from git at the next start" in line
    monkeypatch.setattr(decisions, "_insert_decision", real)
    (tiny_disk / "filler").unlink()
    assert led.get_candidate(cand.id).status == "pending"  # the ledger's transaction rolled back whole
    report = decisions.reconcile(cfg, led)
    assert report.recorded == [cand.id] and led.get_candidate(cand.id).status == "accepted"
    assert git(cfg.memory, "rev-list", "--count", "HEAD").strip() == "1"  # one commit, never two
    led.close()
