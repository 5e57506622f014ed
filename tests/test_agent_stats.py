"""Issue 31 item 5: statistics per agent — accept rate per agent and per extractor within it, in
``dreamtui stats`` (text and ``--json``) and the app's Stats screen; the promotion gates stay as they
are (every agent together) with the per-agent figures beside them; the waking message counts the new
proposals per agent. The real CLI and the real app on a ledger dreamed from a Claude Code session and a
Codex CLI rollout of one repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.agents_world import CLAUDE_SESSION, NOW, two_agents
from fakes.cli_world import folder_args
from fakes.tui import lines, show, wait_loaded

from dreamtui.cli.main import cli
from dreamtui.tui.app import DreamApp


@pytest.fixture
def world(tmp_path: Path, config, ledger, git_home, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("DREAMTUI_NOW", NOW)
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    monkeypatch.setenv("TZ", "UTC")
    return config, ledger


def run(config, *args: str) -> str:
    result = CliRunner().invoke(cli, [*folder_args(config), *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def decide(config, ledger) -> None:
    """Accept both of Claude Code's proposals, then reject Codex CLI's."""
    pending = sorted(ledger.list_candidates(status="pending"), key=lambda c: c.session != CLAUDE_SESSION)
    for cand in pending:
        if cand.session == CLAUDE_SESSION:
            run(config, "accept", cand.id)
        else:
            run(config, "reject", cand.id, "--reason", "not ours", "--category", "wrong")


def test_the_waking_message_counts_the_new_proposals_per_agent(world, tmp_path: Path) -> None:
    config, _ledger = world
    message = two_agents(config, tmp_path, as_json=False)
    assert "3 new proposals: Claude Code 2, Codex CLI 1." in message.splitlines()


def test_stats_give_the_accept_rate_per_agent_and_per_extractor_within_it(world, tmp_path: Path) -> None:
    config, ledger = world
    two_agents(config, tmp_path)
    decide(config, ledger)
    data = json.loads(run(config, "stats", "--json"))
    assert data["accept_rate"] == pytest.approx(2 / 3, abs=1e-3)  # overall, as before
    claude, codex = data["by_agent"]["Claude Code"], data["by_agent"]["Codex CLI"]
    assert list(data["by_agent"]) == ["Claude Code", "Codex CLI"]  # the most decided first
    assert (claude["accepted"], claude["rejected"], claude["accept_rate"]) == (2, 0, 1.0)
    assert (codex["accepted"], codex["rejected"], codex["accept_rate"]) == (0, 1, 0.0)
    assert claude["by_extractor"] == {
        "heuristic": {"accepted": 2, "rejected": 0, "decisions": 2, "accept_rate": 1.0}
    }
    text = run(config, "stats").splitlines()
    at = text.index("by agent:")
    assert text[at + 1 : at + 5] == [
        "  Claude Code: 2/2 accepted (100%)",
        "    heuristic: 2/2 accepted (100%)",
        "  Codex CLI: 0/1 accepted (0%)",
        "    heuristic: 0/1 accepted (0%)",
    ]
    run(config, "undo")  # the reject of Codex's proposal, the latest decision: it no longer counts
    after = json.loads(run(config, "stats", "--json"))["by_agent"]
    assert list(after) == ["Claude Code"]


def test_promotion_keeps_one_gate_and_shows_the_agents_beside_it(world, tmp_path: Path) -> None:
    config, ledger = world
    two_agents(config, tmp_path)
    decide(config, ledger)
    data = json.loads(run(config, "promote", "--json"))
    evidence = next(g for g in data["gates"] if g["name"] == "evidence")["evidence"]
    assert (evidence["decisions"], evidence["accepted"]) == (3, 2)  # every agent together, as before
    assert {a: b["decisions"] for a, b in evidence["by_agent"].items()} == {"Claude Code": 2, "Codex CLI": 1}
    text = run(config, "promote")
    assert "per agent (the gate counts them together): Claude Code 100% of 2, Codex CLI 0% of 1" in text


async def test_the_apps_stats_and_promotion_show_the_agents(world, tmp_path: Path) -> None:
    config, ledger = world
    two_agents(config, tmp_path)
    decide(config, ledger)
    app = DreamApp(config, ledger, watch=False)
    async with app.run_test(size=(120, 60)) as pilot:
        await wait_loaded(pilot)
        await show(pilot, "5")
        page = [" ".join(line.split()) for line in lines(app.screen.query_one("#stats"))]
        at = next(n for n, line in enumerate(page) if line.startswith("Per agent"))
        assert page[at + 1].startswith("Claude Code ") and "100% 2 accepted / 0 rejected" in page[at + 1]
        assert page[at + 2].startswith("Claude Code · heuristic")
        assert page[at + 3].startswith("Codex CLI ") and "0% 0 accepted / 1 rejected" in page[at + 3]
        await show(pilot, "7")
        promo = " ".join(" ".join(lines(app.screen.query_one("#promotion"))).split())
        assert "per agent (the gate counts them together): Claude Code 100% of 2 · Codex CLI 0% of 1" in promo
