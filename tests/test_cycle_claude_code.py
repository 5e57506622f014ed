"""Dream cycles with the claude-code extractor: the real cycle, the real Claude Agent SDK, and the
stand-in Claude Code CLI (``tests/fakes/claude_cli.py``) scripted per test."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import anthropic
import pytest
from fakes.claude_code import FakeClaudeCode, lesson, ok, verdicts
from fakes.cycle_world import ACME, DAY, NOW, install

from dreamtui.core.config import Config
from dreamtui.core.dream.daemon import DreamDaemon
from dreamtui.core.dream.run import CycleFailed, CycleLimited, run_cycle
from dreamtui.core.dream.waking import waking_message
from dreamtui.core.extract import consolidate_prompt
from dreamtui.core.extract.claude_code import CLI_ENV
from dreamtui.core.extract.limits import describe_reset
from dreamtui.core.gate import judge
from dreamtui.core.ledger import Ledger, cycles

B1 = "22222222-2222-4222-8222-222222222222"
UV = "Always use uv instead of pip in this repo, because pip ignores the lockfile and breaks the pinned versions."
INVENTED = "We agreed to rewrite everything in Rust."


@pytest.fixture(autouse=True)
def _now(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", NOW)
    for role in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{role}_NAME", "Kim")
        monkeypatch.setenv(f"GIT_{role}_EMAIL", "kim@example.com")


@pytest.fixture
def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeClaudeCode:
    stand_in = FakeClaudeCode(tmp_path / "fake-claude")
    monkeypatch.setenv(CLI_ENV, str(stand_in.cli))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    return stand_in


@pytest.fixture
def cc(config: Config) -> Config:
    """A person dreaming with their Claude Code login, one session at a time (the calls in order)."""
    return config.changed(extractor="claude-code", concurrency=1, api_timeout=60.0)


def test_a_cycle_extracts_with_claude_code_and_reports_usage_and_cost(
    cc: Config, ledger: Ledger, fake: FakeClaudeCode
) -> None:
    install(cc, "busy")
    fake.answer(ok([lesson(UV, "Use uv, never pip, in this repo."), lesson(INVENTED, "Rewrite in Rust.")]))
    record = run_cycle(cc, ledger, project=ACME)
    s = record.stats
    extractions = [c for c in fake.calls() if "extraction step" in c["flags"]["--system-prompt"]]
    assert len(extractions) == 2 and all(c["problems"] == [] for c in fake.calls())
    assert (s.extractor, s.model) == ("claude-code", cc.model)
    assert (s.surfaced, s.verified, s.kept) == (4, 2, 1)  # the invented quote is dropped by the gate
    assert s.model_calls >= 2 and s.cost_usd == pytest.approx(0.0123 * s.model_calls)
    assert f"cost ${s.cost_usd:.4f} as Claude Code reports it" in waking_message(record)
    (cand,) = ledger.list_candidates(status="pending")
    assert cand.extractor == "claude-code" and cand.quote == UV


@pytest.mark.parametrize(
    ("answer", "line", "stops"),
    [
        ({"kind": "not_logged_in"}, "Claude Code is not logged in", True),
        ({"kind": "bad_model"}, "Claude Code refused model", True),
        ({"kind": "hang"}, "Claude Code did not answer within 1s", False),
        (None, "Claude Code not found at", True),
    ],
    ids=["not-logged-in", "bad-model", "timeout", "no-cli"],
)
def test_a_failing_claude_code_fails_the_cycle_in_one_line_loses_nothing_and_the_retry_dreams(
    cc: Config,
    ledger: Ledger,
    fake: FakeClaudeCode,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    answer: dict | None,
    line: str,
    stops: bool,
) -> None:
    install(cc, "busy")
    if answer is None:
        monkeypatch.setenv(CLI_ENV, str(tmp_path / "no-claude-here"))
    else:
        fake.answer(answer)
    failing = cc.changed(api_timeout=1.0)
    with pytest.raises(CycleFailed, match="failed in Branching: every extraction failed") as info:
        run_cycle(failing, ledger, project=ACME)
    assert line in str(info.value) and "\n" not in str(info.value)
    failed = cycles.find_full(ledger, ACME, DAY)
    assert failed is not None and failed.status == "failed"
    # nothing half-stored: no session marked dreamed, no candidate, each failure recorded with its line
    assert ledger.query("SELECT * FROM files WHERE dreamed_offset > 0") == []
    assert ledger.query("SELECT * FROM candidates") == []
    errors = [r["error"] for r in ledger.query("SELECT error FROM extractions")]
    assert errors and all(line in (e or "") for e in errors)
    # not logged in, a refused model, no CLI: the second session is not even tried
    assert len(fake.calls()) == (0 if answer is None else 1 if stops else 2)

    monkeypatch.setenv(CLI_ENV, str(fake.cli))
    fake.answer(ok([lesson(UV, "Use uv, never pip, in this repo.")]))
    retried = run_cycle(cc, ledger, project=ACME)  # the next cycle dreams the same sessions
    assert (retried.id, retried.status, retried.stats.attempt) == (failed.id, "completed", 2)
    assert retried.stats.kept == 1 and len(ledger.list_candidates(status="pending")) == 1


def test_the_dedup_judge_runs_on_claude_code(cc: Config, ledger: Ledger, fake: FakeClaudeCode) -> None:
    install(cc, "busy")
    shutil.rmtree(cc.transcripts / ACME / B1)
    (cc.transcripts / ACME / f"{B1}.jsonl").unlink()
    cc.memory.mkdir()
    (cc.memory / "tools.md").write_text(
        "---\nname: uv\ndescription: Dependencies are installed with uv "
        "here; pip ignores our lockfile.\ntype: feedback\n---\n"
    )
    fake.answer(
        ok([lesson(UV, "Use uv, never pip, in this repo.")]),
        verdicts((1, 1, "Both say to install with uv, not pip.")),
    )
    record = run_cycle(cc, ledger, project=ACME)
    extraction, judging, consolidating = fake.calls()  # REM then asks whether memories still hold
    assert consolidating["flags"]["--system-prompt"] == consolidate_prompt.SYSTEM_PROMPT
    assert judging["problems"] == [] and judging["flags"]["--system-prompt"] == judge.SYSTEM_PROMPT
    assert json.loads(judging["flags"]["--json-schema"]) == anthropic.transform_schema(judge.JudgeOut)
    assert judging["flags"]["--tools"] == "" and judging["flags"]["--max-turns"] == "1"
    assert "Dependencies are installed with uv" in fake.prompts()[1]
    (cand,) = ledger.list_candidates(status="pending")
    assert (cand.duplicate_of, cand.duplicate_judged) == ("tools.md", "same")
    assert (record.stats.judged, record.stats.judged_same) == (1, 1)
    assert "Dedup judge (model): 1 judged, 1 the same lesson" in waking_message(record)


def extraction_prompts(fake: FakeClaudeCode) -> list[str]:
    """The user message of every extraction call (not the judge's, not consolidation's)."""
    out = []
    for call in fake.calls():
        if "extraction step" not in call["flags"].get("--system-prompt", ""):
            continue
        out.extend(m["message"]["content"] for m in call["stdin"] if m.get("type") == "user")
    return out


def test_a_usage_limit_mid_cycle_stops_in_one_line_with_the_reset_time_and_the_retry_resends_nothing(
    cc: Config, ledger: Ledger, fake: FakeClaudeCode
) -> None:
    install(cc, "busy")
    # the first session is answered, the second meets the limit ("resets 3am (UTC)")
    fake.answer(ok([lesson(UV, "Use uv, never pip, in this repo.")]), {"kind": "usage_limit"})
    with pytest.raises(CycleLimited) as info:
        run_cycle(cc, ledger, project=ACME)
    line = str(info.value)
    assert "\n" not in line and "usage limit is reached" in line
    assert (
        info.value.resets_at is not None and info.value.resets_at.isoformat() == "2026-03-11T03:00:00+00:00"
    )
    assert f"it resets {describe_reset(info.value.resets_at)}" in line
    assert "1 session(s) answered and kept, 1 wait" in line
    first = extraction_prompts(fake)
    assert len(first) == 2
    # the answer given before the limit is stored: its offsets advanced, its candidate waits for review
    assert len(ledger.list_candidates(status="pending")) == 1
    stored = ledger.query("SELECT session FROM extractions WHERE error IS NULL")
    assert len({r["session"] for r in stored}) == 1
    failed = cycles.find_full(ledger, ACME, DAY)
    assert failed is not None and failed.status == "failed"
    assert failed.stats.limit_resets_at == "2026-03-11T03:00:00+00:00" and failed.stats.sessions_waiting == 1

    # after the reset: the cycle goes on with the session that waited, and never re-sends the answered one
    fake.answer(ok())
    retried = run_cycle(cc, ledger, project=ACME)
    assert (retried.id, retried.status, retried.stats.attempt) == (failed.id, "completed", 2)
    again = extraction_prompts(fake)[len(first) :]
    assert again == [first[1]]  # only the session the limit refused
    assert len(ledger.list_candidates(status="pending")) == 1


def test_watch_waits_for_the_usage_limit_to_reset_then_goes_on_without_resending(
    cc: Config, ledger: Ledger, fake: FakeClaudeCode, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(cc, "busy")
    fake.answer(ok([lesson(UV, "Use uv, never pip, in this repo.")]), {"kind": "usage_limit"})
    said: list[str] = []
    woke: list[cycles.CycleRecord] = []
    daemon = DreamDaemon(
        cc, ledger, poll=True, schedule=None, debounce=0.1, say=said.append, on_wake=woke.append
    )
    before = time.monotonic()
    daemon.dream_now(ACME, "goodnight")
    (line,) = [s for s in said if "usage limit is reached" in s]
    assert "it resets" in line and "watching goes on and dreams again then" in line and "\n" not in line
    # it comes back a minute after the reset (03:00 UTC; the clock says 23:00): four hours and a minute
    when, _tries, trigger = daemon.retries[ACME]
    assert trigger == "goodnight" and 4 * 3600 + 60 - 5 <= when - before <= 4 * 3600 + 60 + 5
    first = extraction_prompts(fake)

    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-11T03:01:00Z")  # the reset has passed
    fake.answer(ok())
    daemon.dream_now(ACME, trigger)
    (record,) = woke
    # past midnight: the new date's full cycle, which finds only the session the limit held back
    assert (record.status, record.date, record.stats.sparks) == ("completed", "2026-03-11", 1)
    assert extraction_prompts(fake)[len(first) :] == [first[1]]  # only the session that waited
