"""Bad configuration and a bare memory repository are one-line errors (issue 12, items 5 and 11)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import git
import pytest
from click.testing import CliRunner

from dreamtui.cli.main import cli
from dreamtui.core.config import KEY_ACTIONS, check_keys, load_config
from dreamtui.core.errors import ConfigError, MemoryRepoError
from dreamtui.core.memory import gitops

REPO = Path(__file__).resolve().parent.parent


def dreamtui(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``dreamtui ARGS`` in a real process, as a person runs it."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-c", "from dreamtui.cli.main import main; main()", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=cwd,
    )


def one_line_exit_2(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 2, out
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    return lines[0]


def test_a_config_file_that_is_not_utf8_is_a_one_line_error(tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_bytes(b'model = "caf\xe9"\n')  # Latin-1, as an old editor saves it
    line = one_line_exit_2(dreamtui("--config", str(toml), "config"))
    assert (
        line == f"dreamtui: config file {toml} is not valid UTF-8 (byte 0xe9 at offset 12): save it as UTF-8"
    )


def test_a_missing_config_path_given_with_config_is_a_one_line_error(tmp_path: Path) -> None:
    missing = tmp_path / "confg.toml"  # mistyped
    line = one_line_exit_2(dreamtui("--config", str(missing), "config"))
    assert line == f"dreamtui: config file {missing} does not exist (see --config)"


def test_the_default_config_file_may_be_absent(tmp_path: Path) -> None:
    cfg = load_config(tmp_path / "nothing-here.toml")  # the default place, not named by the person
    assert cfg.config_file == tmp_path / "nothing-here.toml"


def test_a_config_path_that_is_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "c.toml"
    os.mkfifo(fifo)
    line = one_line_exit_2(dreamtui("--config", str(fifo), "config"))
    assert line == f"dreamtui: config file {fifo} is not a regular file: it is a FIFO, not a regular file"


def test_two_actions_on_one_key_is_a_one_line_error(tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text('[keys]\naccept = "y"\nreject = "y"\n')
    line = one_line_exit_2(dreamtui("--config", str(toml), "config"))
    assert line == (
        "dreamtui: config [keys]: key 'y' is given to two actions, accept and reject; "
        "give each action its own key"
    )


def test_a_remap_onto_a_default_key_of_another_action_is_a_conflict() -> None:
    with pytest.raises(ConfigError, match="key 'r' is given to two actions, accept and reject"):
        check_keys({"accept": "r"})  # reject keeps its default r
    with pytest.raises(ConfigError, match="key 'q' is given to two actions, quit and accept"):
        check_keys({"accept": "q"})  # quit is active on the queue screen too
    # the same key on two screens that are never active together is fine, and so is a swap
    assert check_keys({"memory.revert": "m", "accept": "r", "reject": "a"}) == {
        "memory.revert": "m",
        "accept": "r",
        "reject": "a",
    }


def test_an_unknown_key_remap_action_is_a_one_line_error(tmp_path: Path) -> None:
    toml = tmp_path / "c.toml"
    toml.write_text('[keys]\naccpet = "y"\n')
    line = one_line_exit_2(dreamtui("--config", str(toml), "config"))
    assert line.startswith(
        "dreamtui: config [keys]: unknown action(s) 'accpet'; the actions are screen.queue, "
    )
    with pytest.raises(ConfigError, match="must be a key name"):
        check_keys({"accept": ""})


def test_the_remappable_actions_are_the_apps_binding_ids_with_their_keys() -> None:
    """KEY_ACTIONS (checked in the core, which knows no Textual) says what the app really binds."""
    from dreamtui.tui.app import DreamApp
    from dreamtui.tui.screens.briefings import BriefingsScreen
    from dreamtui.tui.screens.memory import MemoryScreen
    from dreamtui.tui.screens.promotion import PromotionScreen
    from dreamtui.tui.screens.queue import QueueScreen
    from dreamtui.tui.screens.sessions import SessionsScreen

    bound: dict[str, tuple[str, str]] = {}
    for where, owner in (
        ("app", DreamApp),
        ("queue", QueueScreen),
        ("briefings", BriefingsScreen),
        ("memory", MemoryScreen),
        ("promotion", PromotionScreen),
        ("sessions", SessionsScreen),
    ):
        for binding in owner.BINDINGS:
            if binding.id:
                bound[binding.id] = (where, binding.key)
    assert bound == KEY_ACTIONS
    assert check_keys({}) == {}  # the defaults never conflict


def test_a_bare_repository_as_memory_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    bare = tmp_path / "memory.git"
    git.Repo.init(bare, bare=True)
    before = sorted(p.relative_to(bare) for p in bare.rglob("*"))
    transcripts = tmp_path / "t"
    transcripts.mkdir()
    for args in (["review"], ["dream"], ["accept", "abc"]):
        out = dreamtui(
            "--memory", str(bare), "--transcripts", str(transcripts), "--state", str(tmp_path / "s"), *args
        )
        line = one_line_exit_2(out)
        assert line == (
            f"dreamtui: memory repository {bare} is a bare git repository (no work tree for the "
            "memory files); give a clone with a work tree, or an empty folder, as --memory"
        )
    res = CliRunner().invoke(cli, ["review", "--memory", str(bare), "--state", str(tmp_path / "s")])
    assert (
        res.exit_code == 2 and "is a bare git repository" in res.output
    )  # also when given after the command
    assert sorted(p.relative_to(bare) for p in bare.rglob("*")) == before
    with pytest.raises(MemoryRepoError, match="is a bare git repository"):
        gitops.open_repo(bare)
