"""A --memory folder that holds files and is not a git repository is refused unless --init says to
adopt it; ``dreamtui --demo`` removes its temporary folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from dreamtui.cli.main import cli


def run(tmp_path: Path, memory: Path, *args: str):
    (tmp_path / "none.toml").touch()  # an empty config (a missing one named is an error)
    env = {"DREAMTUI_CONFIG": str(tmp_path / "none.toml")}
    return CliRunner().invoke(
        cli,
        [
            "--memory",
            str(memory),
            "--state",
            str(tmp_path / "state" / memory.name),  # a ledger serves one memory repository
            "--transcripts",
            str(tmp_path / "t"),
            *args,
            "stats",
        ],
        env=env,
    )


def test_a_folder_with_files_is_not_made_a_repository_without_init(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "diary.md").write_text("mine\n")
    out = run(tmp_path, notes)
    assert out.exit_code == 2, out.output
    assert "holds files (diary.md) and is not a git repository" in out.output and "--init" in out.output
    assert sorted(p.name for p in notes.iterdir()) == ["diary.md"]  # nothing written, no .git
    out = run(tmp_path, notes, "--init")
    assert out.exit_code == 0, out.output
    assert (notes / ".git").is_dir() and (notes / "diary.md").read_text() == "mine\n"


def test_an_empty_or_missing_folder_and_a_repository_need_no_init(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert run(tmp_path, empty).exit_code == 0
    assert run(tmp_path, tmp_path / "new").exit_code == 0
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "a.md").write_text("x\n")
    assert run(tmp_path, repo).exit_code == 0


def test_the_demo_removes_its_temporary_folder(tmp_path: Path) -> None:
    """run_app with the demo and no DREAMTUI_DEMO_DIR: the folder it made is gone when it returns."""
    code = (
        "import sys, tempfile, pathlib\n"
        "import dreamtui.cli.app_cmd as m\n"
        "import dreamtui.tui.app as a\n"
        "made = []\n"
        "real = tempfile.mkdtemp\n"
        "def mk(**kw):\n"
        "    p = real(**kw); made.append(p); return p\n"
        "m.tempfile.mkdtemp = mk\n"
        "sys.stdin.isatty = sys.stdout.isatty = lambda: True\n"
        "a.DreamApp.run = lambda self, **kw: print('APP RAN', pathlib.Path(made[0]).is_dir())\n"
        "from dreamtui.core.config import Config\n"
        "m.run_app(Config(), demo=True)\n"
        "print('LEFT', pathlib.Path(made[0]).exists())\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("DREAMTUI_")}
    env["TMPDIR"] = str(tmp_path)
    out = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).parent.parent,
    )
    assert out.returncode == 0, out.stderr
    assert "APP RAN True" in out.stdout and "LEFT False" in out.stdout
    assert "removed its temporary folder" in out.stdout
    assert not list(tmp_path.glob("dreamtui-demo-*"))


def test_a_yes_at_the_terminal_adopts_the_folder_and_a_no_refuses(tmp_path: Path) -> None:
    import pytest

    from dreamtui.cli.main import adopt_memory
    from dreamtui.core.config import Config
    from dreamtui.core.errors import ConfigError

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "diary.md").write_text("mine\n")
    asked: list[str] = []
    with pytest.raises(ConfigError, match="not a git repository"):
        adopt_memory(Config(memory=notes), False, lambda q: asked.append(q) or False)
    assert asked and "Make it a git repository now?" in asked[0] and not (notes / ".git").exists()
    adopt_memory(Config(memory=notes), False, lambda q: True)
    assert (notes / ".git").is_dir()
