"""A ledger file with damaged pages (issue 34, item 4) is one line on every command, saying how to go on,
never a ``sqlite3.DatabaseError`` traceback. Real SQLite files, damaged byte by byte."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.cli_world import folder_args

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger

TABLES = ("candidates", "consolidations", "dream_cycles", "outside_items", "decisions")


def damage(path: Path, tables: tuple[str, ...] = TABLES) -> None:
    """Overwrite the first page of each of ``tables`` with random bytes (the schema page stays whole, so
    the file still opens: the damage is met only when those rows are read)."""
    with sqlite3.connect(path) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        roots = dict(con.execute("SELECT name, rootpage FROM sqlite_master WHERE type = 'table'").fetchall())
        size = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    data = bytearray(path.read_bytes())
    rng = random.Random(34)
    for name in tables:
        start = (roots[name] - 1) * size
        data[start : start + size] = rng.randbytes(size)
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("command", [["candidates"], ["stats"], ["dream"], ["consolidate", "--all"]])
def test_a_ledger_with_damaged_pages_is_one_line_with_how_to_go_on(
    config: Config, git_home: Path, command: list[str]
) -> None:
    Ledger.open(config.state).close()
    path = config.state / "ledger.sqlite3"
    damage(path)
    result = CliRunner().invoke(cli, [*folder_args(config), *command])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert lines[0].startswith(f"dreamtui: the ledger {path} is damaged (database disk image is malformed)")
    assert f"mv {path} {path}.damaged" in lines[0] and "Dreamtui-* trailers" in lines[0]
    path.rename(path.with_name("ledger.sqlite3.damaged"))  # what the line says to do: then it works again
    again = CliRunner().invoke(cli, [*folder_args(config), "candidates"])
    assert again.exit_code == 0, again.output
