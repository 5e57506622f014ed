"""Ad-hoc batches (`dreamtui batch submit/collect`) mark what they extract, so no dream cycle extracts it again.

End to end: the real CLI, the real anthropic SDK over real HTTP against the local fake Messages API,
a real SQLite ledger, real transcripts on disk, then real dream cycles (offline extractor).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.anthropic_server import FakeAnthropic, Reply, lesson, message
from fakes.transcript import write_session

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.dream.run import run_cycle
from dreamtui.core.extract.anthropic_ext import AnthropicExtractor
from dreamtui.core.extract.base import ExtractContext
from dreamtui.core.extract.batch import BatchRunner
from dreamtui.core.ingest.tail import file_key
from dreamtui.core.ledger import Ledger

SHOP = "-home-kim-shop"
S1 = "5e55a0a0-1111-4222-8333-000000000001"
S2 = "5e55a0a0-1111-4222-8333-000000000002"
SAID_1 = "Never deploy the billing service on Fridays, the on-call rota is thin at the weekend."
QUOTE_1 = "Never deploy the billing service on Fridays"
SAID_2 = "Never run the database migrations by hand on production, always go through the deploy pipeline."
LATER = "No, don't install packages with pip in this repo, always use uv so the lockfile stays in sync."
WRITTEN = 1773180000.0  # 2026-03-10T22:00:00Z, an hour before the clock below: past the quiet period


@pytest.fixture(autouse=True)
def _world(git_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-10T23:00:00Z")


@pytest.fixture
def server() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as srv:
        yield srv


def sessions(config: Config) -> tuple[Path, Path]:
    one = write_session(
        config.transcripts,
        [("person", SAID_1), ("assistant", "Noted, no Friday deploys.")],
        project=SHOP,
        session=S1,
    )
    two = write_session(
        config.transcripts, [("person", SAID_2), ("assistant", "Understood.")], project=SHOP, session=S2
    )
    for p in (one, two):
        os.utime(p, (WRITTEN, WRITTEN))
    return one, two


def append_person(path: Path, text: str) -> None:
    rec = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/kim/shop",
        "sessionId": path.stem,
        "version": "2.0.14",
        "gitBranch": "main",
        "uuid": "00000000-0000-4000-8000-00000000abcd",
        "timestamp": "2026-03-10T21:00:00.000Z",
        "type": "user",
        "message": {"role": "user", "content": text},
    }
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(rec) + "\n")
    os.utime(path, (WRITTEN, WRITTEN))


def files_row(ledger: Ledger, path: Path) -> dict:
    rows = ledger.query("SELECT * FROM files WHERE path = ?", (file_key(path),))
    return dict(rows[0]) if rows else {}


def extractions(ledger: Ledger, path: Path) -> list[dict]:
    return [
        dict(r)
        for r in ledger.query(
            "SELECT * FROM extractions WHERE path = ? ORDER BY start_offset, id", (file_key(path),)
        )
    ]


def cli_run(config: Config, server: FakeAnthropic, *args: str) -> str:
    env = {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": server.url}
    base = [
        "--state",
        str(config.state),
        "--memory",
        str(config.memory),
        "--transcripts",
        str(config.transcripts),
    ]
    res = CliRunner().invoke(cli, [*base, *args], env=env)
    assert res.exit_code == 0, res.output
    return res.stdout


def answer(req: dict) -> dict:
    """Session 1 succeeds with one real lesson; session 2's request fails."""
    text = req["params"]["messages"][0]["content"]
    if "billing" in text:
        return {
            "type": "succeeded",
            "message": message({"candidates": [lesson(QUOTE_1, claim="No billing deploys on Fridays.")]}),
        }
    return {
        "type": "errored",
        "error": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    }


def test_collected_content_is_not_extracted_again_and_a_failed_request_gives_its_back(
    config: Config, ledger: Ledger, server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    one, two = sessions(config)
    size_1, size_2 = one.stat().st_size, two.stat().st_size
    server.batch_answer = answer

    out = cli_run(config, server, "batch", "submit", str(one), str(two))
    assert out.startswith("submitted batch msgbatch_") and "2 session(s)" in out
    # reserved at submit: both sessions count as dreamed up to what their digests held
    assert files_row(ledger, one)["dreamed_offset"] == size_1
    assert files_row(ledger, two)["dreamed_offset"] == size_2

    # a dream cycle while the batch runs does not extract the submitted content
    first = run_cycle(config, ledger, project=SHOP, date="2026-03-10")
    assert first.stats.sessions_new == 0 and ledger.list_candidates() == []

    # the person goes on in session 1 after the submit: that part was never in the batch
    append_person(one, LATER)

    rows = json.loads(cli_run(config, server, "batch", "collect", "--json"))["batches"]
    by_session = {r["session"]: r for r in rows}
    assert [c["quote"] for c in by_session[S1]["kept"]] == [QUOTE_1]
    assert by_session[S1]["ranges_recorded"] == 1 and by_session[S1]["error"] is None
    assert by_session[S2]["error"] == "batch request for part 1 errored: Overloaded"
    assert by_session[S2]["given_back"] is True

    (done,) = extractions(ledger, one)  # what the batch extracted, with its usage
    assert (done["start_offset"], done["end_offset"], done["error"]) == (0, size_1, None)
    assert done["candidates"] == 1 and done["extractor"] == "anthropic" and done["calls"] == 1
    assert files_row(ledger, one)["dreamed_offset"] == size_1  # not the appended line
    (failed,) = extractions(ledger, two)
    assert failed["error"] == "batch request for part 1 errored: Overloaded"
    assert files_row(ledger, two)["dreamed_offset"] == 0  # given back

    # the next cycle extracts only what the batch did not: session 1's new line, all of session 2
    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-11T23:00:00Z")
    second = run_cycle(config, ledger, project=SHOP, date="2026-03-11")
    assert second.stats.sessions_new == 2 and second.stats.branches == 2
    ranges_1 = extractions(ledger, one)
    assert [(r["start_offset"], r["end_offset"]) for r in ranges_1] == [
        (0, size_1),
        (size_1, one.stat().st_size),
    ]
    assert ranges_1[1]["extractor"] == "heuristic"
    assert any(
        r["start_offset"] == 0 and r["error"] is None and r["extractor"] == "heuristic"
        for r in extractions(ledger, two)
    )
    from_cycle = [c for c in ledger.list_candidates() if c.extractor == "heuristic"]
    quotes = " | ".join(c.quote for c in from_cycle)
    assert "billing" not in quotes  # the collected content was not extracted again
    assert "pip" in quotes and "migrations" in quotes
    assert [c.quote for c in ledger.list_candidates() if c.extractor == "anthropic"] == [QUOTE_1]

    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-12T23:00:00Z")
    third = run_cycle(config, ledger, project=SHOP, date="2026-03-12")
    assert third.stats.sessions_new == 0


def test_only_the_undreamed_part_is_reserved_and_given_back(
    config: Config, ledger: Ledger, server: FakeAnthropic
) -> None:
    one, _two = sessions(config)
    first = run_cycle(config, ledger, project=SHOP, date="2026-03-10")  # dreams both sessions offline
    assert first.stats.sessions_new == 2
    dreamed = one.stat().st_size
    append_person(one, LATER)

    server.batch_answer = lambda req: {"type": "expired"}
    cli_run(config, server, "batch", "submit", str(one))
    [create] = server.calls("/v1/messages/batches")
    assert "billing" in create.body["requests"][0]["params"]["messages"][0]["content"]  # the whole session
    assert files_row(ledger, one)["dreamed_offset"] == one.stat().st_size

    rows = json.loads(cli_run(config, server, "batch", "collect", "--json"))["batches"]
    assert rows[0]["error"] == "batch request for part 1 expired" and rows[0]["given_back"]
    # back to where the first cycle had dreamed, not to the start of the file
    assert files_row(ledger, one)["dreamed_offset"] == dreamed
    failed = [r for r in extractions(ledger, one) if r["error"]]
    assert [(r["start_offset"], r["end_offset"]) for r in failed] == [(dreamed, one.stat().st_size)]


def test_a_dream_cycle_that_collects_an_ad_hoc_batch_records_it_without_extracting_again(
    config: Config, ledger: Ledger, server: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An anthropic cycle collects every open batch, ad-hoc ones included, the same way as its own."""
    one, two = sessions(config)
    server.batch_answer = lambda req: {
        "type": "succeeded",
        "message": message(
            {
                "candidates": [lesson(QUOTE_1, claim="No billing deploys on Fridays.")]
                if "billing" in req["params"]["messages"][0]["content"]
                else []
            }
        ),
    }
    ex = AnthropicExtractor(
        model="claude-sonnet-5-5", api_key="sk-ant-test", base_url=server.url, timeout=10, max_retries=0
    )
    runner = BatchRunner(ex, ledger)
    batch_id, reserved = runner.submit_files([[one], [two]], lambda d: ExtractContext(project=d.project))
    assert [len(r.ranges) for r in reserved] == [1, 1] and not runner.from_cycle(batch_id)

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    cfg = config.changed(extractor="anthropic")
    server.script.append(
        Reply(200, message("## Working on\n- billing\n", input_tokens=1, output_tokens=1, cache_read=0))
    )  # the briefing
    record = run_cycle(cfg, ledger, project=SHOP, date="2026-03-10")
    assert record.stats.batch_sessions_collected == 2 and record.stats.sessions_new == 0
    assert [c.quote for c in ledger.list_candidates(status="pending")] == [QUOTE_1]
    assert sorted(
        (r["start_offset"], r["end_offset"]) for r in extractions(ledger, one) + extractions(ledger, two)
    ) == sorted([(0, one.stat().st_size), (0, two.stat().st_size)])
    assert ledger.query("SELECT status FROM batches WHERE id = ?", (batch_id,))[0]["status"] == "collected"


def test_submit_while_a_dream_cycle_runs_is_refused_and_reserves_nothing(
    config: Config, ledger: Ledger, server: FakeAnthropic
) -> None:
    from dreamtui.core.dream.lock import CycleLock

    one, _two = sessions(config)
    env = {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": server.url}
    with CycleLock(config.lock_path):
        res = CliRunner().invoke(
            cli,
            ["--state", str(config.state), "--memory", str(config.memory), "batch", "submit", str(one)],
            env=env,
        )
    assert res.exit_code == 2 and "another dream cycle is running" in res.stderr
    assert "Traceback" not in res.output
    assert server.calls("/v1/messages/batches") == [] and files_row(ledger, one) == {}


def gemini_chat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Gemini CLI chat (a whole JSON document: a ``records`` format) run in the shop's folder."""
    from fakes.agent_chats import write_gemini_chat

    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gemini-home"))
    return write_gemini_chat(
        tmp_path / "gemini-home",
        "/home/kim/shop",
        [("person", SAID_2), ("assistant", "Understood.")],
        WRITTEN,
    )


def test_a_failed_request_offers_a_whole_file_sessions_records_again(
    config: Config,
    ledger: Ledger,
    server: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """Issue 31 left-over: a records source has no byte offset to rewind — its records were remembered
    as seen when the batch reserved them, so a failed request's session was never read again."""
    chat = gemini_chat(tmp_path, monkeypatch)
    server.batch_answer = answer  # the migrations session's request fails
    cli_run(config, server, "batch", "submit", str(chat))
    rows = json.loads(cli_run(config, server, "batch", "collect", "--json"))["batches"]
    assert [r["given_back"] for r in rows] == [True]

    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-11T23:00:00Z")
    cycle = run_cycle(config, ledger, date="2026-03-11")  # the offline rules read it again
    assert cycle.stats.sessions_new == 1
    (cand,) = ledger.list_candidates(status="pending")
    assert "migrations" in cand.quote and cand.transcript == str(chat)
    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-12T23:00:00Z")
    assert run_cycle(config, ledger, date="2026-03-12").stats.sessions_new == 0  # and only once


def test_a_dream_cycles_failed_request_offers_a_whole_file_sessions_records_again(
    config: Config,
    ledger: Ledger,
    server: FakeAnthropic,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    chat = gemini_chat(tmp_path, monkeypatch)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    server.batch_answer = answer
    for _ in range(3):
        server.script.append(Reply(200, message("## Working on\n- x\n", input_tokens=1, output_tokens=1)))
    cfg = config.changed(extractor="anthropic", batch=True)
    first = run_cycle(cfg, ledger, date="2026-03-10")
    assert first.stats.batch_sessions_submitted == 1
    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-11T23:00:00Z")
    second = run_cycle(cfg, ledger, date="2026-03-11")  # collects the failure: the records go back
    assert second.stats.extraction_errors == 1
    monkeypatch.setenv("DREAMTUI_NOW", "2026-03-12T23:00:00Z")
    third = run_cycle(config, ledger, date="2026-03-12")  # offline: reads the chat's records again
    assert third.stats.sessions_new == 1
    assert any("migrations" in c.quote and c.transcript == str(chat) for c in ledger.list_candidates())
