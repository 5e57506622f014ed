"""A dream that spares the person's quota: the daily token budget stops a cycle cleanly and the next
day goes on; a killed dream resumes without re-sending a session already answered. The real
anthropic SDK over real HTTP against the local fake Messages API (``fakes/anthropic_server.py``)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from fakes.anthropic_server import FakeAnthropic, counted_input_tokens, lesson, ok
from fakes.json_http import Reply
from fakes.kills import exits_within, others_in
from fakes.transcript import write_session
from fakes.waiting import MIN_TIMEOUT, wait_for

from dreamtui.core import clock
from dreamtui.core.clock import parse_timestamp
from dreamtui.core.config import Config
from dreamtui.core.dream.budget import BudgetSpent, spent_today
from dreamtui.core.dream.run import run_cycle
from dreamtui.core.dream.waking import waking_message
from dreamtui.core.ledger import Ledger

DAY1 = "2026-03-10T12:00:00Z"
DAY2 = "2026-03-11T12:00:00Z"
PROJECT = "-home-kim-shop"
ROOT = Path(__file__).resolve().parents[1]


def marker(i: int) -> str:
    return f"marker-{i:02d}"


def said(i: int) -> str:
    return (
        f"Never run the migrations against production by hand ({marker(i)}); always go through the "
        "release pipeline so the schema history stays complete."
    )


def sessions(config: Config, n: int) -> list[str]:
    """``n`` sessions of one project, each with a person's correction worth a lesson, written an hour
    before DAY1 (past the quiet period, inside the recent window)."""
    ids = []
    written = parse_timestamp(DAY1).timestamp() - 3600
    for i in range(n):
        sid = f"5e55a0a0-1111-4222-8333-{i:012d}"
        path = write_session(
            config.transcripts,
            [("person", said(i)), ("assistant", "Understood: migrations go through the pipeline.")],
            project=PROJECT,
            session=sid,
        )
        os.utime(path, (written, written))
        ids.append(sid)
    return ids


def session_of(body: Any) -> int | None:
    """Which session (its marker number) an extraction request is for; None for other calls."""
    text = json.dumps(body)
    if "extraction step" not in text:
        return None
    for i in range(100):
        if marker(i) in text:
            return i
    return None


def answer(body: Any) -> Reply:
    i = session_of(body)
    if i is None:
        return ok([], input_tokens=10, output_tokens=10, cache_read=0)
    return ok(
        [lesson(said(i), f"Run migrations through the pipeline ({i}).")],
        input_tokens=1000,
        output_tokens=100,
        cache_read=0,
    )


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    with FakeAnthropic() as srv:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.url)
        yield srv


def sent(server: FakeAnthropic) -> list[int]:
    return [i for r in server.calls() if (i := session_of(r.body)) is not None]


def test_the_daily_budget_stops_cleanly_and_the_next_day_sends_only_what_waited(
    config: Config, ledger: Ledger, server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions(config, 6)
    server.responder = answer
    # 1,100 tokens an answer; at 2,500 a day: three sessions fit (sent while below the budget)
    budgeted = config.changed(extractor="anthropic", concurrency=1, daily_token_budget=2500)
    monkeypatch.setenv("DREAMTUI_NOW", DAY1)
    record = run_cycle(budgeted, ledger)
    day1 = sent(server)
    assert len(day1) == 3 and len(set(day1)) == 3
    s = record.stats
    assert record.status == "completed" and s.sessions_waiting == 3 and s.kept == 3
    assert s.budget_stop is not None and "3,300 of 2,500 tokens" in s.budget_stop
    assert "Budget: today's token budget is spent (3,300 of 2,500 tokens" in waking_message(record)
    assert "goes on tomorrow (2026-03-11)" in waking_message(record)
    assert spent_today(ledger) == 3300

    # asked again the same day: one line, nothing sent, nothing recorded
    with pytest.raises(BudgetSpent, match="3,300 of 2,500 tokens"):
        run_cycle(budgeted, ledger)
    assert sent(server) == day1

    # the next day: the three that waited, and never one already answered
    monkeypatch.setenv("DREAMTUI_NOW", DAY2)
    assert clock.today().isoformat() == "2026-03-11"
    record2 = run_cycle(budgeted, ledger)
    day2 = sent(server)[len(day1) :]
    assert sorted(day1 + day2) == list(range(6))
    assert record2.stats.sessions_waiting == 0 and record2.stats.budget_stop is None
    quotes = {c.quote for c in ledger.list_candidates(status="pending")}
    assert quotes == {said(i) for i in range(6)}  # nothing lost


MAIN = "from dreamtui.cli.main import cli; cli()"


def child_env(config: Config, server: FakeAnthropic) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DREAMTUI_")}
    env.update(
        {
            "PYTHONPATH": str(ROOT),
            "DREAMTUI_TRANSCRIPTS": str(config.transcripts),
            "DREAMTUI_MEMORY": str(config.memory),
            "DREAMTUI_STATE": str(config.state),
            "DREAMTUI_NOW": DAY1,
            "DREAMTUI_EXTRACTOR": "anthropic",
            "DREAMTUI_CONCURRENCY": "2",
            "ANTHROPIC_API_KEY": "sk-ant-test-key",
            "ANTHROPIC_BASE_URL": server.url,
            "GIT_AUTHOR_NAME": "Kim",
            "GIT_AUTHOR_EMAIL": "kim@example.com",
            "GIT_COMMITTER_NAME": "Kim",
            "GIT_COMMITTER_EMAIL": "kim@example.com",
        }
    )
    return env


def answered_sessions(config: Config) -> set[str]:
    db = config.state / "ledger.sqlite3"
    if not db.exists():
        return set()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return {r[0] for r in conn.execute("SELECT session FROM extractions WHERE error IS NULL")}
    except sqlite3.OperationalError:
        return set()
    finally:
        conn.close()


def test_a_dream_killed_mid_cycle_resumes_without_resending_an_answered_session_and_loses_none(
    config: Config, server: FakeAnthropic
) -> None:
    ids = sessions(config, 6)
    first_three: list[int] = []
    release = threading.Event()
    lock = threading.Lock()

    def answer_three_then_hold(body: Any) -> Reply:
        i = session_of(body)
        if i is not None:
            with lock:
                if i not in first_three and len(first_three) < 3:
                    first_three.append(i)
                mine = i in first_three
            if not mine:  # in flight when the process is killed: never answered
                release.wait(MIN_TIMEOUT)
        return answer(body)

    server.responder = answer_three_then_hold
    env = child_env(config, server)
    proc = subprocess.Popen(
        [sys.executable, "-c", MAIN, "dream", "--yes"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        # three answers stored (each gated and recorded as it came), two more calls held in flight
        assert wait_for(lambda: len(answered_sessions(config)) == 3 or proc.poll() is not None)
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert wait_for(lambda: len(sent(server)) == 5)
        os.killpg(proc.pid, signal.SIGKILL)
        assert exits_within(proc.pid, MIN_TIMEOUT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        release.set()
    assert wait_for(lambda: not others_in(config.memory))
    stored = answered_sessions(config)
    assert stored == {ids[i] for i in first_three}
    before = len(server.calls())

    server.responder = answer
    done = subprocess.run(
        [sys.executable, "-c", MAIN, "dream", "--yes"], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    resent = [i for r in server.calls()[before:] if (i := session_of(r.body)) is not None]
    assert not set(resent) & set(first_three), "an answered session was sent again"
    assert sorted(resent) == sorted(set(range(6)) - set(first_three))  # each waiting one, once
    assert answered_sessions(config) == set(ids)  # none lost
    conn = sqlite3.connect(config.state / "ledger.sqlite3")
    try:
        quotes = {r[0] for r in conn.execute("SELECT quote FROM candidates")}
    finally:
        conn.close()
    assert quotes == {said(i) for i in range(6)}


def test_the_first_dream_with_a_model_shows_the_estimate_and_without_a_terminal_refuses_in_one_line(
    config: Config, server: FakeAnthropic
) -> None:
    ids = sessions(config, 4)
    old = parse_timestamp(DAY1).timestamp() - 30 * 86_400  # a month ago: outside the 14-day window
    for sid in ids[:1]:
        os.utime(config.transcripts / PROJECT / f"{sid}.jsonl", (old, old))
    server.responder = answer
    env = child_env(config, server)
    refused = subprocess.run(
        [sys.executable, "-c", MAIN, "dream"], env=env, capture_output=True, text=True, timeout=300
    )
    assert refused.returncode == 2 and refused.stdout == ""
    lines = refused.stderr.splitlines()
    assert lines[0].startswith("This dream would read 3 session(s) written since 2026-02-24")
    assert "input tokens" in lines[0] and "Estimated cost: about $" in refused.stderr
    assert "1 older session(s)" in refused.stderr and "--since YYYY-MM-DD` or `--all`" in refused.stderr
    assert lines[-1].startswith("dreamtui: a dream with a model asks first") and "--yes" in lines[-1]
    assert server.calls() == [] and not answered_sessions(config)

    shown = subprocess.run(
        [sys.executable, "-c", MAIN, "dream", "--estimate", "--json", "--all"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert shown.returncode == 0, shown.stderr
    est = json.loads(shown.stdout)
    assert (est["sessions"], est["older_sessions"], est["since"], est["first"]) == (4, 0, None, True)
    assert est["tokens"] > 0 and server.calls() == []

    done = subprocess.run(
        [sys.executable, "-c", MAIN, "dream", "--yes"], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert sorted(sent(server)) == [1, 2, 3]  # the window's sessions; the old one waits
    assert "Older: 1 session(s) written before 2026-02-24 wait for a back-fill" in done.stdout
    backfill = subprocess.run(
        [sys.executable, "-c", MAIN, "dream", "--all"], env=env, capture_output=True, text=True, timeout=300
    )
    assert backfill.returncode == 0, backfill.stderr  # small and not the first: no question
    assert sorted(sent(server)) == [0, 1, 2, 3]  # the back-fill sent the old one, and only it


def test_count_tokens_refines_the_estimate_with_the_apis_count_and_sends_nothing_to_the_model(
    config: Config, server: FakeAnthropic
) -> None:
    sessions(config, 4)
    env = child_env(config, server)

    def estimate(*flags: str) -> dict[str, Any]:
        out = subprocess.run(
            [sys.executable, "-c", MAIN, "dream", "--estimate", "--json", *flags],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert out.returncode == 0, out.stderr
        return json.loads(out.stdout)

    plain = estimate()
    assert plain["counted"] is None and server.calls("/v1/messages/count_tokens") == []
    # an API whose tokenizer counts twice what four characters a token gives
    server.count_rule = lambda body: 2 * counted_input_tokens(body)
    refined = estimate("--count-tokens")
    counts = server.calls("/v1/messages/count_tokens")
    assert counts and refined["counted_requests"] == len(counts)
    assert all(c.body["model"] == config.model and "output_config" in c.body for c in counts)
    assert refined["counted"] == pytest.approx(2.0, rel=0.02)
    assert refined["tokens"] == pytest.approx(2 * plain["tokens"], rel=0.02)
    assert refined["cost_usd"] > plain["cost_usd"]
    assert server.calls() == []  # nothing was sent to the model itself
