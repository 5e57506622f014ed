"""The folder flags (issue 24 point 6): every command takes ``--transcripts/--memory/--state`` before or
after its name, and a ledger serves one pair of folders, so no command shows another folder's data."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from fakes.tui import make_config

from dreamtui.cli.main import cli
from dreamtui.core.config import load_config


@pytest.fixture(autouse=True)
def _clock(git_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", "2026-11-28T18:30:00Z")


def run(*args: object) -> click.testing.Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_stats_with_another_memory_shows_that_repositorys_figures(tmp_path: Path) -> None:
    cfg = make_config(tmp_path / "a")
    other = make_config(tmp_path / "b").memory
    folders = ("--transcripts", cfg.transcripts, "--memory", cfg.memory)  # no --state: the default one
    assert run(*folders, "dream", "--extractor", "heuristic").exit_code == 0
    cid = json.loads(run(*folders, "candidates", "--json").stdout)[0]["id"]
    assert run(*folders, "accept", cid).exit_code == 0
    mine = json.loads(run(*folders, "stats", "--json").stdout)
    assert mine["accepted"] == 1
    for args in (
        ("--transcripts", cfg.transcripts, "stats", "--json", "--memory", other),  # after the command
        ("--transcripts", cfg.transcripts, "--memory", other, "stats", "--json"),  # before it
    ):
        result = run(*args)
        assert result.exit_code == 0, result.output
        theirs = json.loads(result.stdout)
        assert theirs["accepted"] == 0 and theirs["candidates"]["pending"] == 0, theirs  # none of cfg's
    assert json.loads(run(*folders, "candidates", "--json").stdout)  # cfg's queue is still there


def test_a_state_folder_kept_for_one_repository_refuses_another(tmp_path: Path) -> None:
    cfg = make_config(tmp_path / "a")
    other = make_config(tmp_path / "b").memory
    state = tmp_path / "state"
    base = ("--transcripts", cfg.transcripts, "--state", state)
    assert run(*base, "--memory", cfg.memory, "dream", "--extractor", "heuristic").exit_code == 0
    for args in ((*base, "stats", "--memory", other), (*base, "--memory", other, "candidates")):
        result = run(*args)
        assert result.exit_code == 2
        [line] = result.stderr.splitlines()
        assert "Traceback" not in result.output
        assert str(cfg.memory.resolve()) in line and str(other.resolve()) in line and "--state" in line
    elsewhere = tmp_path / "other-transcripts"
    elsewhere.mkdir()
    result = run("--transcripts", elsewhere, "--state", state, "--memory", cfg.memory, "candidates")
    assert result.exit_code == 2 and "transcripts folder" in result.stderr, result.output


def test_the_default_state_follows_the_folders(tmp_path: Path) -> None:
    """Claude Code's own folders keep the user state directory; any other pair has a folder of its own."""
    home = load_config()
    other = load_config(memory=tmp_path / "m")
    assert other.state != home.state and other.state.is_relative_to(home.state)
    assert load_config(memory=tmp_path / "m").state == other.state  # the same folders, the same state
    assert load_config(memory=tmp_path / "m", state=tmp_path / "s").state == tmp_path / "s"


def _commands(group: click.Group, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    out = []
    for name, command in sorted(group.commands.items()):
        out.append(((*path, name), command))
        if isinstance(command, click.Group):
            out.extend(_commands(command, (*path, name)))
    return out


COMMANDS = _commands(cli)


def test_the_walk_finds_every_command() -> None:
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"outside", "outside accept", "batch", "batch collect", "stats", "dream", "digest"} <= names


@pytest.mark.parametrize("path", [path for path, _ in COMMANDS], ids=lambda p: "-".join(p))
def test_every_command_takes_the_folder_flags_before_or_after_its_name(tmp_path: Path, path) -> None:
    flags = ("--transcripts", tmp_path / "t", "--memory", tmp_path / "m", "--state", tmp_path / "s")
    for args in ((*flags, *path), (*path, *flags), (*path[:1], *flags, *path[1:])):
        result = run(*args, "--help")
        assert result.exit_code == 0, (args, result.output)
        assert "Usage:" in result.stdout


def test_outside_and_batch_use_the_folders_given_after_their_name(tmp_path: Path) -> None:
    cfg = make_config(tmp_path / "a")
    (cfg.memory / "typed-by-hand.md").write_text("a note of my own\n")
    other = make_config(tmp_path / "b")
    state = tmp_path / "state"
    result = run(
        "outside", "--json", "--transcripts", cfg.transcripts, "--memory", cfg.memory, "--state", state
    )
    assert result.exit_code == 0, result.output
    assert [i["path"] for i in json.loads(result.stdout)["items"]] == ["typed-by-hand.md"]
    result = run("outside", "--memory", other.memory, "--transcripts", other.transcripts, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["items"] == []  # the other repository's, not the state's of the first
    result = run(
        "batch", "--transcripts", cfg.transcripts, "--memory", other.memory, "--state", state, "collect"
    )
    assert result.exit_code == 2 and str(other.memory.resolve()) in result.stderr  # that state is cfg's


def test_the_app_refuses_a_missing_transcripts_folder_in_one_line(tmp_path: Path) -> None:
    cfg = make_config(tmp_path / "a")
    state = tmp_path / "state"
    base = ("--memory", cfg.memory, "--state", state)
    assert run(*base, "--transcripts", cfg.transcripts, "dream", "--extractor", "heuristic").exit_code == 0
    missing = tmp_path / "gone"
    for folders in (("--transcripts", missing), ("--transcripts", missing, "--state", tmp_path / "fresh")):
        result = run("--memory", cfg.memory, "--state", state, *folders)
        assert result.exit_code == 2
        [line] = result.stderr.splitlines()
        assert f"the transcripts folder {missing} does not exist" in line, line
        assert "--transcripts" in line and "--demo" in line
