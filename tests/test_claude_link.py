"""``dreamtui link`` adds the import lines only with consent, once, keeping the file's content."""

from __future__ import annotations

from pathlib import Path

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
