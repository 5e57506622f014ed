"""``dreamtui link`` adds the import lines only with consent, once, keeping the file's content."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from dreamtui.cli.main import cli


def test_link_asks_and_keeps_content(tmp_path: Path) -> None:
    claude_md = tmp_path / "CLAUDE.md"
    claude_md.write_text("# my rules\nBe terse.", encoding="utf-8")
    mem = tmp_path / "mem"
    runner = CliRunner()
    args = ["--memory", str(mem), "--state", str(tmp_path / "s"), "link", "--claude-md", str(claude_md)]
    refused = runner.invoke(cli, args, input="n\n")
    assert refused.exit_code == 0 and "Nothing changed" in refused.output
    assert claude_md.read_text(encoding="utf-8") == "# my rules\nBe terse."
    agreed = runner.invoke(cli, args, input="y\n")
    assert agreed.exit_code == 0, agreed.output
    text = claude_md.read_text(encoding="utf-8")
    assert text.startswith("# my rules\nBe terse.\n")
    assert f"@{(mem / 'MEMORY.md').resolve().as_posix()}" in text
    again = runner.invoke(cli, [*args, "--yes"])
    assert "already imports" in again.output
    assert claude_md.read_text(encoding="utf-8") == text


@pytest.mark.usefixtures("git_home")
def test_link_edits_a_symlinked_claude_md_where_it_points(tmp_path: Path) -> None:
    from dreamtui.core.memory.link import apply_link, plan_link

    dotfiles = tmp_path / "dotfiles" / "CLAUDE.md"
    dotfiles.parent.mkdir()
    dotfiles.write_text("# my rules\n")
    dotfiles.chmod(0o600)
    link = tmp_path / "claude" / "CLAUDE.md"
    link.parent.mkdir()
    link.symlink_to(dotfiles)
    apply_link(plan_link(tmp_path / "memory", link))
    assert link.is_symlink() and link.resolve() == dotfiles.resolve()
    text = dotfiles.read_text()
    assert text.startswith("# my rules\n") and "MEMORY.md" in text
    assert stat.S_IMODE(dotfiles.stat().st_mode) == 0o600
    assert not plan_link(tmp_path / "memory", link).needed


@pytest.mark.usefixtures("git_home")
def test_link_keeps_bytes_that_are_not_utf8_and_refuses_a_folder(tmp_path: Path) -> None:
    odd = tmp_path / "CLAUDE.md"
    odd.write_bytes(b"\xff\xfe latin-1 caf\xe9\n")
    runner = CliRunner()
    result = runner.invoke(cli, ["link", "--memory", str(tmp_path / "m"), "--claude-md", str(odd), "--yes"])
    assert result.exit_code == 0, result.output
    assert odd.read_bytes().startswith(b"\xff\xfe latin-1 caf\xe9\n")
    folder = tmp_path / "folder"
    folder.mkdir()
    result = runner.invoke(
        cli, ["link", "--memory", str(tmp_path / "m"), "--claude-md", str(folder), "--yes"]
    )
    assert result.exit_code == 2
    assert "cannot read" in result.output and "Traceback" not in result.output
