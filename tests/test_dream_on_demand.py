"""Dreaming on demand (issue 14): after a date's full cycle, a person's explicit dream runs a short
pass over just the new content (no REM), recorded as such; the scheduler and a goodnight never do."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
from pathlib import Path

import git
import pytest
from click.testing import CliRunner
from fakes.cli_world import folder_args

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.dream.banners import yield_floor_active
from dreamtui.core.dream.plan import CycleAlreadyDone, NothingNew, plan_dream
from dreamtui.core.dream.run import run_cycle
from dreamtui.core.dream.waking import waking_message
from dreamtui.core.ledger import Ledger, cycles
from dreamtui.core.memory import briefing

FIXTURES = Path(__file__).parent / "fixtures" / "cycle"
ACME = "-home-kim-acme"
B2 = "33333333-3333-4333-8333-333333333333"
DAY = "2026-03-10"
WRITTEN = 1773180000.0  # an hour before NOW: past the quiet period
NEW_LESSON = "Never deploy on a Friday afternoon, because nobody is around to roll it back when it breaks."


@pytest.fixture
def config(config: Config) -> Config:
    return config.changed(extractor="command", command=(sys.executable, str(FIXTURES / "rules_extractor.py")))


@pytest.fixture(autouse=True)
def _now(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-10T23:00:00Z")
    for var in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(var, "Kim")
    for var in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(var, "kim@example.com")


def install(config: Config) -> None:
    shutil.copytree(FIXTURES / "busy", config.transcripts, dirs_exist_ok=True)
    for p in config.transcripts.rglob("*.jsonl"):
        os.utime(p, (WRITTEN, WRITTEN))


def say(config: Config, text: str = NEW_LESSON, n: int = 1) -> None:
    """The person writes in session B2 after the day's cycle."""
    path = config.transcripts / ACME / f"{B2}.jsonl"
    rec = {
        "type": "user",
        "sessionId": B2,
        "uuid": f"extra-{n}",
        "isSidechain": False,
        "timestamp": f"2026-03-10T22:{n:02d}:00.000Z",
        "message": {"role": "user", "content": text},
    }
    with path.open("a") as fh:
        fh.write(json.dumps(rec) + "\n")
    os.utime(path, (WRITTEN, WRITTEN))


def commits(config: Config) -> int:
    return len(list(git.Repo(config.memory).iter_commits()))


@pytest.mark.parametrize("project", [None, ACME])
def test_new_content_after_the_full_cycle_gets_an_on_demand_pass(
    config: Config, ledger: Ledger, project: str | None
) -> None:
    install(config)
    full = run_cycle(config, ledger)  # the date's one full cycle, for every project
    review = config.memory / "reviews" / f"review-{DAY}.md"
    review_text, before = review.read_text(), commits(config)
    proposals = len(briefing.list_proposals(ledger))
    say(config)
    assert plan_dream(config, ledger, project).kind == "on-demand"
    extra = run_cycle(config, ledger, project=project)  # one rule with and without --project
    assert (extra.kind, extra.status, extra.depth, extra.date) == ("on-demand", "completed", "deep", DAY)
    assert [p["name"] for p in extra.phases] == ["light", "deep", "branch", "wake"]  # never a second REM
    assert extra.stats.sessions_new == 1 and extra.stats.kept == 1
    assert [c.quote for c in ledger.list_candidates(status="pending") if c.cycle_id == extra.id] == [
        NEW_LESSON
    ]
    assert review.read_text() == review_text and commits(config) == before  # no review, no briefing
    assert len(briefing.list_proposals(ledger)) == proposals
    message = waking_message(extra)
    assert message.startswith(f"On-demand dream pass #{extra.id} for ")
    assert f"after cycle #{full.id}" in message and "No REM on demand" in message
    kinds = ledger.query("SELECT kind FROM dream_cycles WHERE date = ? ORDER BY id", (DAY,))
    assert [r["kind"] for r in kinds] == ["full", "on-demand"]
    # and again once more is written: each pass is its own row
    say(config, "Always pin the base image digest in the Dockerfile so rebuilds are reproducible.", 2)
    third = run_cycle(config, ledger, project=project)
    assert third.kind == "on-demand" and third.id not in (full.id, extra.id)


@pytest.mark.parametrize("project", [None, ACME])
def test_nothing_new_after_the_full_cycle_says_so_and_records_nothing(
    config: Config, ledger: Ledger, project: str | None
) -> None:
    install(config)
    full = run_cycle(config, ledger)
    plan = plan_dream(config, ledger, project)
    assert plan.kind == "nothing" and plan.covering == full
    with pytest.raises(
        NothingNew,
        match=rf"nothing new in .* since cycle #{full.id} \(the full cycle of {DAY}\): nothing to dream",
    ):
        run_cycle(config, ledger, project=project)
    assert len(ledger.query("SELECT * FROM dream_cycles")) == 1


@pytest.mark.parametrize("trigger", ["schedule", "goodnight"])
def test_the_scheduler_and_a_goodnight_never_run_an_on_demand_pass(
    config: Config, ledger: Ledger, trigger: str
) -> None:
    install(config)
    run_cycle(config, ledger)
    say(config)
    with pytest.raises(CycleAlreadyDone, match="one cycle per project per date"):
        run_cycle(config, ledger, trigger=trigger)
    assert len(ledger.query("SELECT * FROM dream_cycles")) == 1


def test_a_goodnight_after_the_cycle_of_every_project_is_no_second_full_cycle(
    config: Config, ledger: Ledger
) -> None:
    install(config)
    full = run_cycle(config, ledger, trigger="schedule")
    say(config)
    with pytest.raises(
        CycleAlreadyDone, match=f"already dreamed {ACME} on {DAY} \\(cycle #{full.id}, every project\\)"
    ):
        run_cycle(config, ledger, project=ACME, trigger="goodnight")
    assert len(ledger.query("SELECT * FROM dream_cycles")) == 1
    assert run_cycle(config, ledger, project=ACME).kind == "on-demand"  # the person may still ask


def test_the_first_cycle_of_a_scope_stays_full(config: Config, ledger: Ledger) -> None:
    install(config)
    assert plan_dream(config, ledger).kind == "full"
    project_cycle = run_cycle(config, ledger, project=ACME)
    assert project_cycle.kind == "full" and "rem" in [p["name"] for p in project_cycle.phases]
    say(config)
    assert plan_dream(config, ledger, ACME).kind == "on-demand"  # covered by its own full cycle
    assert plan_dream(config, ledger).kind == "full"  # every project has not had its full cycle yet


def test_on_demand_passes_do_not_count_for_the_yield_floor(config: Config, ledger: Ledger) -> None:
    with ledger.write() as c:
        for day in ("2026-03-07", "2026-03-08", "2026-03-09"):
            c.execute(
                "INSERT INTO dream_cycles (chat_id, date, status, started_at, depth, stats, kind) "
                "VALUES ('*', ?, 'completed', ?, 'deep', ?, 'on-demand')",
                (day, f"{day}T10:00:00Z", json.dumps({"kept": 0})),
            )
    assert not yield_floor_active(ledger)


def test_a_ledger_from_before_kinds_is_rebuilt_with_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"
    old = sqlite3.connect(path)
    old.execute("""CREATE TABLE dream_cycles (id INTEGER PRIMARY KEY, chat_id TEXT NOT NULL, date TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed')), started_at TEXT NOT NULL,
        completed_at TEXT, error_message TEXT, trigger TEXT NOT NULL DEFAULT 'manual', depth TEXT,
        phases TEXT NOT NULL DEFAULT '[]', stats TEXT NOT NULL DEFAULT '{}', UNIQUE (chat_id, date))""")
    old.execute(
        "INSERT INTO dream_cycles (id, chat_id, date, status, started_at, depth) "
        "VALUES (7, '*', '2026-03-10', 'completed', '2026-03-10T03:00:00Z', 'deep')"
    )
    old.commit()
    old.close()
    ledger = Ledger(path)
    try:
        rec = cycles.get(ledger, 7)
        assert rec is not None and (rec.kind, rec.chat_id, rec.status) == ("full", "*", "completed")
        with ledger.write() as c:  # an on-demand pass beside it is allowed now…
            c.execute(
                "INSERT INTO dream_cycles (chat_id, date, status, started_at, kind) "
                "VALUES ('*', '2026-03-10', 'completed', 'x', 'on-demand')"
            )
        with pytest.raises(sqlite3.IntegrityError), ledger.write() as c:  # …a second full cycle is not
            c.execute(
                "INSERT INTO dream_cycles (chat_id, date, status, started_at) "
                "VALUES ('*', '2026-03-10', 'running', 'x')"
            )
    finally:
        ledger.close()
    Ledger(path).close()  # opening it again changes nothing


def test_the_cli_dreams_on_demand_then_says_nothing_new(config: Config) -> None:
    install(config)
    empty = config.transcripts.parent / "empty.toml"
    empty.write_text("")
    base = [
        *folder_args(config),
        "--config",
        str(empty),
    ]
    runner = CliRunner()
    cmd = ["--extractor", "heuristic"]
    first = runner.invoke(cli, [*base, "dream", *cmd])
    assert first.exit_code == 0 and "Dream cycle #1" in first.output
    say(config)
    extra = runner.invoke(cli, [*base, "dream", "--json", *cmd])
    assert extra.exit_code == 0, extra.output
    data = json.loads(extra.output)
    assert data["kind"] == "on-demand" and [p["name"] for p in data["phases"]][-1] == "wake"
    again = runner.invoke(cli, [*base, "dream", "--project", ACME, *cmd])
    assert again.exit_code == 0
    assert again.output.startswith(
        f"Nothing new in {ACME} since cycle #1 (the full cycle of {DAY}): nothing to dream."
    )
    as_json = runner.invoke(cli, [*base, "dream", "--json", *cmd])
    assert as_json.exit_code == 0 and json.loads(as_json.output)["nothing_new"] is True
