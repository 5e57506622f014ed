"""End-to-end: ``dreamtui promote`` and ``dreamtui normalize`` through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from dreamtui.cli.main import cli
from dreamtui.core import gitops
from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger


def run(config: Config, *args: str, input: str | None = None):
    runner = CliRunner()
    return runner.invoke(cli, ["--memory", str(config.memory), "--state", str(config.state),
                               "--transcripts", str(config.transcripts), *args], input=input)


def seed_memory(config: Config) -> None:
    repo = gitops.open_repo(config.memory)
    files = {"MEMORY.md": "# Memory\n", "feedback_style.md": "# Style\n\nShort subjects.\n"}
    for rel, text in files.items():
        (Path(config.memory) / rel).write_text(text)
    gitops.commit_paths(repo, list(files), "seed", {})


def test_normalize_shows_the_plan_and_writes_nothing_without_yes(config: Config) -> None:
    seed_memory(config)
    result = run(config, "normalize")
    assert result.exit_code == 0, result.output
    assert "feedback_style.md: no frontmatter" in result.output
    assert "+type: feedback" in result.output
    assert "Nothing written" in result.output
    assert (Path(config.memory) / "feedback_style.md").read_text() == "# Style\n\nShort subjects.\n"


def test_normalize_yes_rewrites_as_one_commit(config: Config) -> None:
    seed_memory(config)
    repo = gitops.open_repo(config.memory)
    head = gitops.head_sha(repo)
    result = run(config, "normalize", "--yes")
    assert result.exit_code == 0, result.output
    assert "Rewrote 1 file(s) in commit" in result.output
    assert repo.head.commit.parents[0].hexsha == head
    assert (Path(config.memory) / "feedback_style.md").read_text().startswith("---\nname: Style\n")
    again = run(config, "normalize", "--json")
    assert json.loads(again.output) == {"changes": [], "applied": False, "commit": None}


def test_promote_json_shows_every_gate_and_approve_names_the_failing_ones(config: Config) -> None:
    seed_memory(config)
    Ledger.open(config.state).close()
    result = run(config, "promote", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert [g["name"] for g in data["gates"]] == ["one_schema", "stable_ledger", "evidence"]
    assert all(set(g) >= {"name", "passed", "evidence"} for g in data["gates"])
    assert data["promoted"] is False
    assert data["gates"][0]["evidence"]["offenders"][0]["path"] == "feedback_style.md"
    refused = run(config, "promote", "--approve")
    assert refused.exit_code == 2
    assert "failing gates: one schema" in refused.output and "evidence (" in refused.output
    assert "Traceback" not in refused.output
    assert not (Path(config.memory) / "promotion.md").exists()


def test_promote_refuses_two_actions_at_once(config: Config) -> None:
    result = run(config, "promote", "--approve", "--revoke")
    assert result.exit_code == 2 and "choose one of" in result.output


def test_revoke_without_a_promotion_is_a_clear_error(config: Config) -> None:
    result = run(config, "promote", "--revoke")
    assert result.exit_code == 2
    assert "nothing to revoke" in result.output
