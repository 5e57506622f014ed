"""End-to-end: ``dreamtui promote`` and ``dreamtui normalize`` through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import gitops


def run(config: Config, *args: str, input: str | None = None):
    runner = CliRunner()
    return runner.invoke(
        cli,
        [
            *folder_args(config),
            *args,
        ],
        input=input,
    )


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
    assert json.loads(again.stdout) == {"changes": [], "applied": False, "commit": None}


def test_promote_json_shows_every_gate_and_approve_names_the_failing_ones(config: Config) -> None:
    seed_memory(config)
    Ledger.open(config.state).close()
    result = run(config, "promote", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
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


# -- with 31 days of real decisions (shared with test_promotion) ---------------------------------

from fakes.cli_world import folder_args  # noqa: E402
from fakes.promotion import (  # noqa: E402
    APPROVE_AT,
    build_history,
    claim_of,
    copy_history,
    iso,
    make_candidate,
)


@pytest.fixture
def world(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Config:
    cfg = copy_history(build_history(tmp_path_factory), tmp_path / "world")
    monkeypatch.setenv("DREAMTUI_NOW", iso(APPROVE_AT))
    return cfg


def test_promote_shows_passing_gates_then_approve_turns_auto_write_on(world: Config) -> None:
    shown = run(world, "promote")
    assert shown.exit_code == 0, shown.output
    assert "Auto-write gates for heuristic:" in shown.output
    assert shown.output.count("[pass]") == 3
    assert "Every gate passes: `dreamtui promote --approve` turns auto-write on." in shown.output
    approved = run(world, "promote", "--approve")
    assert approved.exit_code == 0, approved.output
    assert "Auto-write approved for heuristic; recorded in promotion.md" in approved.output
    data = json.loads(run(world, "promote", "--json").stdout)
    assert data["promoted"] is True and data["pair"] == {"extractor": "heuristic", "model": None}
    assert all(g["passed"] for g in data["gates"])
    assert data["status"]["promotion"]["approved_at"] == iso(APPROVE_AT)
    assert "Auto-write is ON for heuristic since 2026-10-11." in run(world, "promote").output


def test_approve_for_a_pair_without_evidence_fails_naming_the_gate(world: Config) -> None:
    result = run(world, "promote", "--approve", "--json", "--extractor", "anthropic", "--model", "claude-x")
    assert result.exit_code == 2
    assert "cannot approve auto-write for anthropic/claude-x: failing gates: evidence (" in result.output
    data = json.loads(result.output[: result.output.rindex("}") + 1])
    assert data["promoted"] is False
    assert [g["name"] for g in data["gates"] if not g["passed"]] == ["evidence"]


def test_review_after_the_fact_from_the_cli(world: Config) -> None:
    from dreamtui.core.dream import promotion

    assert run(world, "promote", "--approve").exit_code == 0
    led = Ledger.open(world.state)
    cands = [make_candidate(900 + i, claim=claim_of(900 + i), created=APPROVE_AT) for i in range(2)]
    for cand in cands:
        led.put_candidate(cand)
    assert all(r.written for r in promotion.auto_write(world, led, cands))
    led.close()
    listed = run(world, "promote")
    assert "2 auto-written memories await review" in listed.output
    assert cands[0].id in listed.output and cands[1].id in listed.output
    rejected = run(world, "promote", "--reject", cands[0].id, "--reason", "wrong")
    assert rejected.exit_code == 0, rejected.output
    assert f"{cands[0].id}: rejected; its commit was reverted." in rejected.output
    kept = run(world, "promote", "--keep", cands[1].id, "--json")
    assert json.loads(kept.stdout)["status"]["active"] is True
    again = run(world, "promote", "--keep", cands[1].id)
    assert again.exit_code == 2 and "already reviewed" in again.output
    led = Ledger.open(world.state)
    assert led.get_candidate(cands[0].id).status == "rejected"
    led.close()


def test_every_command_of_mine_says_why_auto_write_stopped(world: Config) -> None:
    from fakes.promotion import seed_cycles

    assert run(world, "promote", "--approve").exit_code == 0
    led = Ledger.open(world.state)
    seed_cycles(led, ["failed"], start=APPROVE_AT)
    led.close()
    result = run(world, "normalize")
    assert result.exit_code == 0, result.output
    assert "Auto-write for heuristic stopped: gate stable ledger stopped holding" in result.output
    shown = run(world, "promote")
    assert (
        "Auto-write is off: auto-write stopped on 2026-10-11: gate stable ledger stopped holding"
        in shown.output
    )
    assert "[FAIL] stable ledger: 1 of the last 7 cycles failed" in shown.output
