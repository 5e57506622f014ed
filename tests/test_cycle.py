"""Dream cycles end to end on hand-written transcripts, with real SQLite, real git, real files."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import git
import pytest

from dreamtui.core.config import Config
from dreamtui.core.dream import promotion, sessions
from dreamtui.core.dream.banners import YIELD_FLOOR_MESSAGE, banner_lines, yield_floor_active
from dreamtui.core.dream.lock import CycleLock
from dreamtui.core.dream.plan import CycleAlreadyDone
from dreamtui.core.dream.run import CycleFailed, run_cycle
from dreamtui.core.dream.waking import waking_message
from dreamtui.core.errors import ConfigError, CycleBusy
from dreamtui.core.ledger import Ledger, cycles
from dreamtui.core.ledger.cycle_stats import CycleStats
from dreamtui.core.memory import briefing
from tests.fakes.anthropic_server import FakeAnthropic, Reply, lesson, message, ok
from tests.fakes.cycle_world import ACME, DAY, FIXTURES, NOW, QUIET, RULES, WRITTEN, install


@pytest.fixture
def config(config: Config) -> Config:
    """The deterministic ``command`` extractor of the fixtures (the heuristic one is tuned elsewhere)."""
    return config.changed(extractor="command", command=(sys.executable, str(RULES)))


@pytest.fixture(autouse=True)
def _now(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", NOW)
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Kim")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "kim@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Kim")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "kim@example.com")


# -- the lock ---------------------------------------------------------------------------------------


def test_a_second_lock_is_busy_and_names_the_holder(config: Config) -> None:
    busy = rf"another dream cycle is running \(pid {os.getpid()}"
    with CycleLock(config.lock_path), pytest.raises(CycleBusy, match=busy):
        CycleLock(config.lock_path).acquire()
    with CycleLock(config.lock_path) as again:  # released on exit
        assert again.held


def test_a_killed_holder_releases_the_lock(config: Config) -> None:
    code = textwrap.dedent(f"""
        import sys
        from dreamtui.core.dream.lock import CycleLock
        lock = CycleLock({str(config.lock_path)!r})  # held while referenced, until the process dies
        lock.acquire()
        print("held", flush=True)
        sys.stdin.read()  # holds the lock until the test lets go (or kills it)
    """)
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        with pytest.raises(CycleBusy):
            CycleLock(config.lock_path).acquire()
    finally:
        proc.kill()
        proc.wait(10)
    with CycleLock(config.lock_path) as lock:
        assert lock.held


# -- the quiet day ----------------------------------------------------------------------------------


def test_a_quiet_day_ends_at_light_sleep(config: Config, ledger: Ledger) -> None:
    install(config, "quiet")
    events: list[tuple[str, str, float | None]] = []
    record = run_cycle(config, ledger, progress=lambda *e: events.append(e))
    assert (record.status, record.depth, record.date, record.chat_id) == ("completed", "shallow", DAY, "*")
    assert [p["name"] for p in record.phases] == ["light", "wake"]
    assert record.phases[0]["counts"]["signal"] == "wake"
    assert record.stats.sessions_new == 1 and record.stats.sessions_quiet == 1
    assert record.stats.branches == 0 and not any(p["name"] == "branch" for p in record.phases)
    assert not (config.memory / "briefing.md").exists()
    assert {e[0] for e in events} == {"light", "wake"}
    # nothing was marked dreamed: the few words wait for the next cycle
    assert ledger.query("SELECT * FROM files WHERE dreamed_offset > 0 OR offset > 0") == []
    assert "shallow sleep" in waking_message(record)


def test_sessions_still_being_written_are_deferred(config: Config, ledger: Ledger) -> None:
    install(config, "busy")
    recent = WRITTEN + 3500  # 200 s before NOW: inside the five-minute quiet period
    for p in config.transcripts.rglob("*.jsonl"):
        os.utime(p, (recent, recent))
    record = run_cycle(config, ledger, project=ACME)
    assert record.depth == "shallow"
    assert record.stats.sessions_deferred == 2
    assert record.stats.sessions_digested == 0


def test_an_unknown_project_is_a_clear_error_and_records_nothing(config: Config, ledger: Ledger) -> None:
    with pytest.raises(ConfigError, match="no project 'nope'"):
        run_cycle(config, ledger, project="nope")
    assert ledger.query("SELECT * FROM dream_cycles") == []


def test_a_bad_date_is_a_clear_error(config: Config, ledger: Ledger) -> None:
    with pytest.raises(ConfigError, match="YYYY-MM-DD"):
        run_cycle(config, ledger, date="10/03/2026")


@pytest.mark.parametrize("trigger", ["schedule", "goodnight"])
def test_a_second_automatic_attempt_the_same_date_does_no_work(
    config: Config, ledger: Ledger, trigger: str
) -> None:
    install(config, "quiet")
    first = run_cycle(config, ledger)
    with pytest.raises(CycleAlreadyDone, match=f"already dreamed every project on {DAY}"):
        run_cycle(config, ledger, trigger=trigger)
    assert cycles.find_full(ledger, "*", DAY) == first
    assert len(ledger.query("SELECT * FROM dream_cycles")) == 1


def test_a_cycle_waits_for_nobody_while_another_holds_the_lock(config: Config, ledger: Ledger) -> None:
    install(config, "quiet")
    with CycleLock(config.lock_path), pytest.raises(CycleBusy, match="another dream cycle is running"):
        run_cycle(config, ledger)
    assert ledger.query("SELECT * FROM dream_cycles") == []


# -- the yield floor --------------------------------------------------------------------------------


def _fake_cycle(ledger: Ledger, day: str, depth: str, kept: int, status: str = "completed") -> None:
    with ledger.write() as c:
        c.execute(
            "INSERT INTO dream_cycles (chat_id, date, status, started_at, depth, stats) "
            "VALUES ('*', ?, ?, ?, ?, ?)",
            (day, status, f"{day}T23:00:00Z", depth, json.dumps({"kept": kept})),
        )


def test_yield_floor_needs_three_zero_yield_deep_cycles_in_a_row(config: Config, ledger: Ledger) -> None:
    _fake_cycle(ledger, "2026-03-01", "deep", 4)
    _fake_cycle(ledger, "2026-03-02", "deep", 0)
    _fake_cycle(ledger, "2026-03-03", "deep", 0)
    assert not yield_floor_active(ledger)
    _fake_cycle(ledger, "2026-03-04", "shallow", 0)  # a quiet day neither counts nor breaks the run
    _fake_cycle(ledger, "2026-03-05", "deep", 0, status="failed")  # nor does a failure
    assert not yield_floor_active(ledger)
    assert banner_lines(config, ledger) == []
    _fake_cycle(ledger, "2026-03-06", "deep", 0)
    assert yield_floor_active(ledger)
    assert banner_lines(config, ledger) == [YIELD_FLOOR_MESSAGE]
    _fake_cycle(ledger, "2026-03-07", "deep", 1)  # one new candidate lowers it again
    assert not yield_floor_active(ledger)


# -- a busy day -------------------------------------------------------------------------------------

B1 = "22222222-2222-4222-8222-222222222222"
B2 = "33333333-3333-4333-8333-333333333333"
UV = "Always use uv instead of pip in this repo, because pip ignores the lockfile and breaks the pinned versions."


def session_file(config: Config, session: str, project: str = ACME) -> Path:
    return config.transcripts / project / f"{session}.jsonl"


def person_line(session: str, text: str, n: int) -> bytes:
    rec = {
        "type": "user",
        "sessionId": session,
        "uuid": f"{session[:8]}-extra-{n}",
        "isSidechain": False,
        "timestamp": f"2026-03-11T09:{n:02d}:00.000Z",
        "message": {"role": "user", "content": text},
    }
    return (json.dumps(rec, ensure_ascii=False) + "\n").encode()


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as fh:
        fh.write(data)
    os.utime(path, (WRITTEN, WRITTEN))


def test_a_busy_day_runs_every_phase(config: Config, ledger: Ledger) -> None:
    install(config, "busy")
    events: list[tuple[str, str, float | None]] = []
    record = run_cycle(config, ledger, project=ACME, progress=lambda *e: events.append(e))
    s = record.stats
    assert (record.status, record.depth, record.chat_id) == ("completed", "deep", ACME)
    assert [p["name"] for p in record.phases] == ["light", "deep", "branch", "rem", "wake"]
    assert (s.sessions_new, s.sparks, s.branches, s.extraction_errors) == (2, 2, 2, 0)
    assert (s.surfaced, s.verified, s.kept, s.duplicates) == (5, 3, 2, 1)
    assert s.dropped == {"duplicate-pending": 1, "unverified": 2}
    # the same lesson in two sessions: one candidate, corroborated by the other session
    uv = [c for c in ledger.list_candidates(status="pending") if c.quote == UV]
    assert len(uv) == 1 and uv[0].corroborated == 1 and s.corroborated == 1
    assert {c.cycle_id for c in ledger.list_candidates()} == {record.id}
    assert s.model_calls == 0 and s.extractor == "command"

    review = config.memory / "reviews" / f"review-{DAY}.md"
    assert s.review_path == str(review) and UV[:40] in review.read_text()
    # the briefing waits for a person: built, stored as pending, not written into memory
    assert s.briefing_status == "pending" and s.briefing_commit is None
    assert not (config.memory / "briefing.md").exists()
    proposal = briefing.get_proposal(ledger, s.briefing_proposal)
    assert proposal is not None and proposal.status == "pending" and proposal.cycle_id == record.id
    assert "invoice exporter" in proposal.text and len(proposal.text.splitlines()) <= 80

    message_text = waking_message(record)
    for expected in (
        "deep sleep",
        "Light sleep → Deep sleep → Branching → REM → Wake",
        "2 sparks",
        "Branches: 2 (0 failed)",
        "0 calls; tokens 0 in, 0 out, 0 cached",
        "5 surfaced, 3 verified, 3 dropped (duplicate-pending 1, unverified 2), 1 duplicates, "
        "2 new for review",
        "Corroborated: 1 lesson recurs",
        str(review),
        f"Briefing: a new version (#{proposal.id}) waits for your review",
    ):
        assert expected in message_text
    phases_seen = [e[0] for e in events]
    assert phases_seen == sorted(phases_seen, key=["light", "deep", "branch", "rem", "wake"].index)
    assert all(f is None or 0.0 <= f <= 1.0 for _, _, f in events)
    # every byte of both sessions (and the sub-agent file) is dreamed, each range recorded once
    files = ledger.query("SELECT path, size, offset, dreamed_offset FROM files")
    assert len(files) == 3 and all(r["dreamed_offset"] == r["size"] == r["offset"] for r in files)
    assert len(ledger.query("SELECT * FROM extractions WHERE cycle_id = ?", (record.id,))) == 3


def test_a_busy_day_with_the_offline_heuristic_extractor(config: Config, ledger: Ledger) -> None:
    install(config, "busy")
    record = run_cycle(config.changed(extractor="heuristic"), ledger, project=ACME)
    s = record.stats
    assert [p["name"] for p in record.phases] == ["light", "deep", "branch", "rem", "wake"]
    assert s.extractor == "heuristic" and s.branches == 2 and s.kept >= 1
    assert s.surfaced == s.kept + sum(s.dropped.values())
    assert s.kept == len(ledger.list_candidates(status="pending"))
    assert (config.memory / "reviews" / f"review-{DAY}.md").exists() and s.briefing_status == "pending"


def test_projects_with_new_content(config: Config, ledger: Ledger) -> None:
    install(config, "busy")
    install(config, "quiet")
    assert sessions.projects_with_new_content(config, ledger) == [ACME, QUIET]
    run_cycle(config, ledger, project=ACME)
    assert sessions.projects_with_new_content(config, ledger) == [QUIET]  # its few words still wait


def test_content_is_extracted_once_across_cycles(
    config: Config, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(config, "busy")
    run_cycle(config, ledger, project=ACME)
    before = len(ledger.list_candidates())
    path = session_file(config, B1)
    size = path.stat().st_size
    append(
        path,
        person_line(
            B1,
            "Never commit generated files to the repository, regenerate them in the CI pipeline instead.",
            1,
        ),
    )
    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-11T23:00:00Z")
    second = run_cycle(config, ledger, project=ACME)
    assert second.date == "2026-03-11" and second.depth == "deep"
    assert (second.stats.sessions_new, second.stats.branches, second.stats.kept) == (1, 1, 1)
    assert second.stats.dropped == {"unverified": 1}
    new = [c for c in ledger.list_candidates(status="pending") if c.cycle_id == second.id]
    assert len(ledger.list_candidates()) == before + 1 and ["generated files" in c.quote for c in new] == [
        True
    ]
    ranges = ledger.query("SELECT start_offset, end_offset FROM extractions WHERE cycle_id = ?", (second.id,))
    assert [(r["start_offset"], r["end_offset"]) for r in ranges] == [(size, path.stat().st_size)]
    assert promotion.overlapping_extractions(ledger) == []
    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-12T23:00:00Z")
    third = run_cycle(config, ledger, project=ACME)  # nothing new: wakes at light sleep
    assert third.depth == "shallow" and third.stats.sessions_new == 0


def test_a_quiet_days_words_wait_for_the_next_cycle(
    config: Config, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(config, "quiet")
    assert run_cycle(config, ledger).depth == "shallow"
    path = session_file(config, "11111111-1111-4111-8111-111111111111", QUIET)
    words = "Please rename the config loader module and update every import that uses it."
    append(path, person_line("11111111-1111-4111-8111-111111111111", words, 1))
    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-11T23:00:00Z")
    record = run_cycle(config, ledger)
    assert record.depth == "deep"
    assert record.stats.person_chars == len("ok") + len("thanks") + len(words)
    rows = ledger.query("SELECT start_offset, end_offset FROM extractions")
    assert [(r["start_offset"], r["end_offset"]) for r in rows] == [(0, path.stat().st_size)]


def test_a_session_memory_already_covers_is_no_spark(config: Config, ledger: Ledger) -> None:
    install(config, "busy")
    shutil.rmtree(config.transcripts / ACME / B1)
    session_file(config, B1).unlink()
    text = (
        "The deploy script failed again on the new server. Check the logs and tell me what went wrong "
        "with the release."
    )
    config.memory.mkdir()
    (config.memory / "deploys.md").write_text(
        "---\nname: deploys\ndescription: deploy failures\ntype: project\n---\n" + text + "\n\n" + UV + "\n"
    )
    record = run_cycle(config, ledger, project=ACME)
    assert record.depth == "deep"
    assert (record.stats.sparks, record.stats.covered, record.stats.branches) == (0, 1, 0)
    assert [p["name"] for p in record.phases] == ["light", "deep", "branch", "rem", "wake"]
    assert ledger.query("SELECT * FROM extractions") == []
    assert ledger.query("SELECT dreamed_offset, size FROM files")[0]["dreamed_offset"] > 0
    assert record.stats.briefing_status == "pending"  # the memory file is its "Decided" line
    assert "deploy failures — source: `deploys.md`" in briefing.waiting_proposal(ledger).text  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("folder", "covered"), [("projects/home-kim-acme", True), ("projects/home-kim-shop", False)]
)
def test_only_this_projects_or_global_memories_cover_a_session(
    config: Config, ledger: Ledger, folder: str, covered: bool
) -> None:
    install(config, "busy")
    shutil.rmtree(config.transcripts / ACME / B1)
    session_file(config, B1).unlink()
    text = (
        "The deploy script failed again on the new server. Check the logs and tell me what went wrong "
        "with the release."
    )
    (config.memory / folder).mkdir(parents=True)
    (config.memory / folder / "deploys.md").write_text(
        "---\nname: deploys\ndescription: deploy failures\ntype: project\n---\n" + text + "\n\n" + UV + "\n"
    )
    record = run_cycle(config, ledger, project=ACME)
    # another project's memory says nothing about whether this project already knows the lesson
    assert (record.stats.covered, record.stats.sparks) == ((1, 0) if covered else (0, 1))


def test_a_failed_cycle_can_be_retried_the_same_date(config: Config, ledger: Ledger, tmp_path: Path) -> None:
    install(config, "busy")
    failing = config.changed(command=(sys.executable, "-c", "import sys; sys.exit(4)"))
    with pytest.raises(CycleFailed, match="failed in Branching: every extraction failed") as info:
        run_cycle(failing, ledger, project=ACME)
    failed = cycles.find_full(ledger, ACME, DAY)
    assert failed is not None and failed.status == "failed" and info.value.record == failed
    assert "every extraction failed" in (failed.error_message or "")
    assert ledger.query("SELECT * FROM files WHERE dreamed_offset > 0") == []  # nothing marked dreamed
    retried = run_cycle(config, ledger, project=ACME)
    assert (retried.id, retried.status, retried.stats.attempt) == (failed.id, "completed", 2)
    assert retried.stats.kept == 2
    assert len(ledger.query("SELECT * FROM dream_cycles")) == 1


def test_a_cycle_that_failed_in_rem_finishes_rem_on_retry(config: Config, ledger: Ledger) -> None:
    install(config, "busy")
    repo = git.Repo.init(config.memory, initial_branch="main")
    merge_head = Path(repo.git_dir) / "MERGE_HEAD"
    merge_head.write_text("0" * 40 + "\n")
    with pytest.raises(CycleFailed, match="REM: .*merge is in progress"):
        run_cycle(config, ledger, project=ACME)
    assert cycles.find_full(ledger, ACME, DAY).status == "failed"  # type: ignore[union-attr]
    merge_head.unlink()
    extractions = len(ledger.query("SELECT * FROM extractions"))
    retried = run_cycle(config, ledger, project=ACME)
    assert retried.status == "completed" and retried.depth == "deep"
    assert retried.stats.kept == 2 and retried.stats.branches == 2  # the first attempt's work counts
    assert len(ledger.query("SELECT * FROM extractions")) == extractions  # nothing extracted twice
    assert (config.memory / "reviews" / f"review-{DAY}.md").exists()
    assert retried.stats.briefing_status == "pending"


def test_a_goodnight_skips_the_quiet_period(
    config: Config, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = config.transcripts / ACME
    folder.mkdir(parents=True)
    source = FIXTURES / "goodnight" / ACME
    session = "44444444-4444-4444-8444-444444444444"
    path = folder / f"{session}.jsonl"
    shutil.copy(source / f"{session}-part1.jsonl", path)  # written a minute ago: still being written
    recent = WRITTEN + 3540
    os.utime(path, (recent, recent))
    first = run_cycle(config, ledger, project=ACME)
    assert first.depth == "shallow" and first.stats.sessions_deferred == 1
    with path.open("ab") as fh:
        fh.write((source / f"{session}-part2.jsonl").read_bytes())
    os.utime(path, (recent, recent))
    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-11T00:00:00Z")
    record = run_cycle(config, ledger, project=ACME)  # 2 minutes after the last write, but good night
    assert record.depth == "deep" and record.stats.goodnight is True
    assert record.stats.sessions_deferred == 0 and record.stats.branches == 1


def test_a_busy_day_with_the_messages_api(
    config: Config, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(config, "busy")
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        for _ in range(2):  # one extraction per session: the uv lesson (said in both) and an invented one
            server.script.append(
                ok(
                    [
                        lesson(UV, "Use uv, never pip, in this repo."),
                        lesson("We agreed to rewrite everything in Rust.", "Rewrite in Rust."),
                    ],
                    input_tokens=1000,
                    output_tokens=100,
                    cache_read=800,
                )
            )
        record = run_cycle(config.changed(extractor="anthropic"), ledger, project=ACME)
        calls = server.calls()
    s = record.stats
    # the briefing is built from its sources by code: no model call writes it
    assert len(calls) == 2 and s.extractor == "anthropic" and s.model == config.model
    assert (s.model_calls, s.input_tokens, s.output_tokens, s.cached_tokens) == (2, 2000, 200, 1600)
    assert (s.surfaced, s.verified, s.kept, s.duplicates) == (4, 2, 1, 1)
    assert s.dropped == {"unverified": 2, "duplicate-pending": 1}
    assert s.corroborated == 1 and s.briefing_status == "pending"
    assert "2 calls; tokens 2000 in, 200 out, 1600 cached" in waking_message(record)
    assert "4 surfaced, 2 verified, 3 dropped (duplicate-pending 1, unverified 2)" in waking_message(record)


def one_session_beside_a_reworded_uv_memory(config: Config) -> None:
    """One busy session that says the uv lesson, and a memory that says it in other words."""
    install(config, "busy")
    shutil.rmtree(config.transcripts / ACME / B1)
    session_file(config, B1).unlink()
    config.memory.mkdir()
    (config.memory / "tools.md").write_text(
        "---\nname: uv\ndescription: Dependencies are installed with uv "
        "here; pip ignores our lockfile.\ntype: feedback\n---\n"
    )


def test_the_model_dedup_judge_is_in_the_waking_message(
    config: Config, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    one_session_beside_a_reworded_uv_memory(config)
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        server.script.append(ok([lesson(UV, "Use uv, never pip, in this repo.")]))
        server.script.append(
            Reply(
                200,
                message(
                    {
                        "verdicts": [
                            {"item": 1, "same_as": 1, "reason": "Both say to install with uv, not pip."}
                        ]
                    }
                ),
            )
        )
        server.script.append(Reply(200, message("## Working on\n- uv\n")))
        record = run_cycle(config.changed(extractor="anthropic"), ledger, project=ACME)
        judge_request = json.dumps(server.requests[1].body)
    assert "Dependencies are installed with uv" in judge_request
    (cand,) = ledger.list_candidates(status="pending")
    assert (cand.duplicate_of, cand.duplicate_judged) == ("tools.md", "same")
    assert (record.stats.judged, record.stats.judged_same, record.stats.suspected) == (1, 1, 1)
    assert "Dedup judge (model): 1 judged, 1 the same lesson" in waking_message(record)


def test_the_write_lock_is_never_held_while_the_judge_asks_the_model(
    config: Config, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The judge is a network call (up to minutes with retries): the app must be able to accept or
    reject meanwhile, so the cycle's write transaction opens only after the judge answered."""
    import sqlite3

    from dreamtui.core.gate import judge as dedup_judge

    one_session_beside_a_reworded_uv_memory(config)
    writable: list[bool] = []
    real_judge = dedup_judge.ModelJudge.judge

    def judge_and_probe(self, items):  # another writer (the app) tries to write while the model thinks
        probe = sqlite3.connect(str(ledger.path), timeout=0, isolation_level=None)
        try:
            probe.execute("BEGIN IMMEDIATE")
            probe.execute("ROLLBACK")
            writable.append(True)
        except sqlite3.OperationalError:
            writable.append(False)
        finally:
            probe.close()
        return real_judge(self, items)

    monkeypatch.setattr(dedup_judge.ModelJudge, "judge", judge_and_probe)
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        server.script.append(ok([lesson(UV, "Use uv, never pip, in this repo.")]))
        server.script.append(Reply(200, message({"verdicts": [{"item": 1, "same_as": 0, "reason": "new"}]})))
        server.script.append(Reply(200, message("## Working on\n- uv\n")))
        record = run_cycle(config.changed(extractor="anthropic"), ledger, project=ACME)
    assert record.status == "completed" and record.stats.judged == 1
    assert writable == [True]


def test_hostile_transcripts_never_crash_a_cycle(config: Config, ledger: Ledger) -> None:
    folder = config.transcripts / ACME
    folder.mkdir(parents=True)
    path = folder / "88888888-8888-4888-8888-888888888888.jsonl"
    text = (
        "[bold red]Never[/] \x1b[31mpaste\x1b[0m \x1b]8;;http://evil\x07links\x1b]8;;\x07 into the prompt, "
        "always use the file picker instead of pasting huge logs."
    )
    path.write_bytes(
        b'{"type":"user","sessionId":"88888888-8888-4888-8888-888888888888","uuid":"a","message":'
        + json.dumps({"role": "user", "content": text}).encode()
        + b"}\n"
        + b"\xff\xfe not utf-8 at all \xc3\x28\n"
        + b'{"type":"user","message":{"role":"user","content":"'
        + b"x" * 200_000
        + b'"}}\n'
        + b"[1, 2, 3]\n{broken json\n"
        + b'{"type":"user","message":{"role":"user","content":"a partial last line wit'
    )
    os.utime(path, (WRITTEN, WRITTEN))
    record = run_cycle(config, ledger)
    assert record.status == "completed" and record.depth == "deep"
    text_out = briefing.waiting_proposal(ledger).text  # type: ignore[union-attr]
    assert "[bold red]" in text_out  # shown as written (the briefing is Markdown, not Rich markup)
    assert "\x1b" not in text_out and "\x07" not in text_out
    row = ledger.query("SELECT offset, dreamed_offset, size FROM files")[0]
    assert row["dreamed_offset"] == row["offset"] < row["size"]  # the partial line waits for its newline


def test_a_cycle_over_the_real_corpus(
    config: Config, ledger: Ledger, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a day after the newest file was written: a fresh copy of the corpus (as on CI) is not
    # mistaken for sessions still being written, whatever the machine's clock says
    newest = max(p.stat().st_mtime for p in corpus.rglob("*.jsonl"))
    when = datetime.fromtimestamp(newest + 86_400, tz=UTC).isoformat().replace("+00:00", "Z")
    monkeypatch.setenv("DREAMTUI_NOW", when)
    cfg = config.changed(transcripts=corpus)
    record = run_cycle(cfg, ledger)
    assert record.status == "completed" and record.depth == "deep"
    assert record.stats.sessions_new >= 6 and record.stats.branches >= 1
    assert record.stats.kept == len(ledger.list_candidates(status="pending"))
    assert promotion.overlapping_extractions(ledger) == []
    assert len(briefing.waiting_proposal(ledger).text.splitlines()) <= 80  # type: ignore[union-attr]
    with pytest.raises(CycleAlreadyDone):
        run_cycle(cfg, ledger, trigger="schedule")


def test_a_quiet_session_finished_long_ago_is_settled(
    config: Config, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(config, "quiet")
    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-12T23:00:00Z")  # two days after its last write
    record = run_cycle(config, ledger)
    assert record.depth == "shallow"
    assert (record.stats.sessions_quiet, record.stats.sessions_settled) == (1, 1)
    assert "1 too quiet (1 of them settled)" in waking_message(record)
    assert ledger.query("SELECT * FROM extractions") == []  # settled, not extracted
    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-13T23:00:00Z")
    assert run_cycle(config, ledger).stats.sessions_new == 0


def test_a_cycle_left_running_by_a_killed_process_is_retried(config: Config, ledger: Ledger) -> None:
    install(config, "busy")
    with ledger.write() as c:  # what `kill -9` during a cycle leaves behind (the OS drops the flock)
        c.execute(
            "INSERT INTO dream_cycles (chat_id, date, status, started_at, depth, stats) "
            "VALUES (?, ?, 'running', ?, NULL, '{}')",
            (ACME, DAY, "2026-03-10T22:30:00Z"),
        )
    record = run_cycle(config, ledger, project=ACME)
    assert (record.id, record.status, record.stats.attempt) == (1, "completed", 2)
    assert record.stats.kept == 2


def test_a_rewritten_transcript_is_dreamed_again_from_the_start(
    config: Config, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(config, "busy")
    run_cycle(config, ledger, project=ACME)
    path = session_file(config, B2)
    path.write_bytes(
        person_line(
            B2,
            "Never deploy on a Friday afternoon, because nobody is around to fix "
            "whatever breaks over the weekend.",
            1,
        )
    )
    os.utime(path, (WRITTEN + 86_400, WRITTEN + 86_400))
    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-11T23:00:00Z")
    record = run_cycle(config, ledger, project=ACME)
    assert (record.depth, record.stats.branches, record.stats.kept) == ("deep", 1, 1)
    row = ledger.query("SELECT offset, dreamed_offset, resets FROM files WHERE path = ?", (str(path),))[0]
    assert row["dreamed_offset"] == row["offset"] == path.stat().st_size and row["resets"] == 1


def test_a_day_that_only_deferred_sessions_may_dream_again(tmp_path, monkeypatch) -> None:
    """Sessions still being written are deferred; that shallow sleep does not use up the date."""
    src = Path(__file__).parent / "fixtures" / "cycle" / "busy"
    cfg = Config(
        transcripts=tmp_path / "t",
        memory=tmp_path / "m",
        state=tmp_path / "s",
        extractor="heuristic",
        quiet_minutes=5.0,
    )
    shutil.copytree(src, cfg.transcripts)
    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-10T12:00:00Z")
    fresh = 1773144000.0 - 60  # written a minute before DREAMTUI_NOW
    for f in cfg.transcripts.rglob("*.jsonl"):
        os.utime(f, (fresh, fresh))
    led = Ledger.open(cfg.state)
    first = run_cycle(cfg, led)
    assert first.depth == "shallow" and first.stats.sessions_deferred > 0
    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-10T13:00:00Z")
    second = run_cycle(cfg, led)
    assert second.id == first.id
    assert second.depth == "deep" and second.stats.kept > 0
    led.close()


def test_batch_mode_submits_today_and_a_later_cycle_collects(
    config: Config, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--batch``: sparks go out as one Message Batch; their ranges count as dreamed at once (no
    later cycle extracts them again); the next cycle collects, gates and records them."""
    install(config, "busy")
    briefing_md = "## Working on\n- Invoice exporter\n"
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        server.polls_until_ended = 1
        server.batch_answer = lambda req: {
            "type": "succeeded",
            "message": message(
                {
                    "candidates": [
                        lesson(UV, "Use uv, never pip, in this repo."),
                        lesson("We agreed to rewrite everything in Rust.", "Rewrite in Rust."),
                    ]
                }
            ),
        }
        for _ in range(3):
            server.script.append(
                Reply(200, message(briefing_md, input_tokens=10, output_tokens=5, cache_read=0))
            )
        cfg = config.changed(extractor="anthropic", batch=True)

        first = run_cycle(cfg, ledger, project=ACME, date=DAY)
        s1 = first.stats
        assert s1.batch_submitted.startswith("msgbatch_") and s1.batch_sessions_submitted == 2
        assert s1.kept == 0 and ledger.list_candidates() == []
        assert len(server.calls("/v1/messages/batches")) == 1
        waiting = ledger.query("SELECT path, size, dreamed_offset FROM files WHERE project = ?", (ACME,))
        assert waiting and all(r["dreamed_offset"] == r["size"] for r in waiting)  # reserved at submit
        assert "collected by a later cycle" in waking_message(first)

        monkeypatch.setenv("DREAMTUI_NOW", "2026-03-11T23:00:00Z")
        second = run_cycle(cfg, ledger, project=ACME, date="2026-03-11")  # nothing new: collects only
        s2 = second.stats
        assert s2.batch_sessions_collected == 2 and s2.batch_submitted is None
        assert (s2.surfaced, s2.kept) == (4, 1)
        assert s2.dropped["unverified"] == 2
        kept = ledger.list_candidates(status="pending")
        assert [c.quote for c in kept] == [UV] and kept[0].extractor == "anthropic"
        rows = ledger.query("SELECT candidates, error FROM extractions WHERE project = ?", (ACME,))
        assert rows and all(r["error"] is None for r in rows) and sum(r["candidates"] for r in rows) == 4
        assert ledger.query("SELECT status FROM batches")[0]["status"] == "collected"

        monkeypatch.setenv("DREAMTUI_NOW", "2026-03-12T23:00:00Z")
        third = run_cycle(cfg, ledger, project=ACME, date="2026-03-12")
        assert third.depth == "shallow" and len(server.calls("/v1/messages/batches")) == 1


def test_a_failed_batch_request_gives_its_session_back(
    config: Config, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    install(config, "busy")
    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        server.batch_answer = lambda req: {
            "type": "errored",
            "error": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        }
        for _ in range(3):
            server.script.append(
                Reply(200, message("## Working on\n- x\n", input_tokens=1, output_tokens=1, cache_read=0))
            )
        cfg = config.changed(extractor="anthropic", batch=True)
        run_cycle(cfg, ledger, project=ACME, date=DAY)
        monkeypatch.setenv("DREAMTUI_NOW", "2026-03-11T23:00:00Z")
        second = run_cycle(cfg, ledger, project=ACME, date="2026-03-11")
        assert second.stats.extraction_errors == 2 and second.stats.batch_sessions_collected == 0
        rows = ledger.query("SELECT dreamed_offset FROM files WHERE project = ?", (ACME,))
        assert rows and all(r["dreamed_offset"] == 0 for r in rows)  # given back, not lost
        monkeypatch.setenv("DREAMTUI_NOW", "2026-03-12T23:00:00Z")
        third = run_cycle(cfg, ledger, project=ACME, date="2026-03-12")
        assert third.stats.batch_sessions_submitted == 2  # the next cycle submits them again
        assert len(server.calls("/v1/messages/batches")) == 2


def test_an_unreadable_transcript_is_named_in_the_waking_message(config: Config, ledger: Ledger) -> None:
    """A file discovery saw but that cannot be read (here a folder in its place) is named, not ignored."""
    blocked = config.transcripts / ACME / "44444444-4444-4444-8444-444444444444.jsonl"
    blocked.mkdir(parents=True)
    unreadable: list[str] = []
    assert sessions.new_content(ledger, ACME, blocked.stem, [blocked], unreadable) is None
    assert unreadable == [str(blocked)]
    record = cycles.CycleRecord(
        id=1,
        chat_id=ACME,
        date=DAY,
        status="completed",
        started_at=NOW,
        completed_at=NOW,
        error_message=None,
        trigger="manual",
        depth="shallow",
        phases=[],
        stats=CycleStats(unreadable_files=unreadable),
    )
    assert "Could not read 1 transcript file(s)" in waking_message(record)


def test_the_offline_extractor_names_the_project_by_its_working_directory(
    config: Config, ledger: Ledger
) -> None:
    session = "c0ffee00-0000-4000-8000-000000000001"
    path = session_file(config, session)
    path.parent.mkdir(parents=True, exist_ok=True)
    texts = [
        "Never push to the release branch without a green CI run, it deploys straight to customers.",
        "From now on always run the migrations against the throwaway container before touching them.",
    ]
    for n, text in enumerate(texts):
        rec = {
            "type": "user",
            "sessionId": session,
            "uuid": f"{session[:8]}-cwd-{n}",
            "isSidechain": False,
            "cwd": "/home/kim/src/acme-web",
            "timestamp": f"2026-03-10T09:{n:02d}:00.000Z",
            "message": {"role": "user", "content": text},
        }
        append(path, (json.dumps(rec) + "\n").encode())
    run_cycle(config.changed(extractor="heuristic"), ledger, project=ACME)
    pending = ledger.list_candidates(status="pending")
    assert pending
    assert all("acme-web" in c.how_to_apply and ACME not in c.how_to_apply for c in pending)


def test_cycle_stats_read_typed_and_stored_without_losing_keys() -> None:
    stored = {
        "attempt": 2,
        "kept": 3,
        "dropped": {"unverified": 1},
        "written_by_a_newer_version": [1],
        "review_path": None,
    }
    stats = CycleStats.from_json(stored)
    assert (stats.attempt, stats.kept, stats.dropped, stats.surfaced, stats.review_path) == (
        2,
        3,
        {"unverified": 1},
        0,
        None,
    )
    out = stats.to_json()
    assert out["written_by_a_newer_version"] == [1] and out["kept"] == 3
    assert "review_path" not in out and "pid" not in out  # a partial update never erases a stored key
