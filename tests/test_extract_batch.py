"""Batch mode through the Message Batches API, against the local fake server, incl. resume after restart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.anthropic_server import FakeAnthropic, lesson, message

from dreamtui.core.extract.anthropic_ext import AnthropicExtractor
from dreamtui.core.extract.base import ExtractContext
from dreamtui.core.extract.batch import BatchRunner
from dreamtui.core.ledger import Ledger
from dreamtui.core.models import Digest, Turn

MODEL = "claude-sonnet-5-5"


@pytest.fixture
def server() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as srv:
        yield srv


def digests(n: int) -> list[Digest]:
    return [
        Digest(
            session=f"sess-{i}",
            project="-home-kim-shop",
            files=[f"/t/sess-{i}.jsonl"],
            turns=[
                Turn(
                    "person",
                    f"Never force-push to the shared branch number {i}, rebase locally.",
                    f"/t/sess-{i}.jsonl",
                    2,
                )
            ],
        )
        for i in range(n)
    ]


def runner(server: FakeAnthropic, state: Path) -> BatchRunner:
    """A fresh runner, as a new process would build it: new SDK client, ledger opened from disk."""
    ex = AnthropicExtractor(
        model=MODEL, api_key="sk-ant-test", base_url=server.url, timeout=10, max_retries=1
    )
    return BatchRunner(ex, Ledger.open(state))


def answer(req: dict) -> dict:
    text = req["params"]["messages"][0]["content"]
    number = text.split("shared branch number ")[1].split(",")[0]
    if number == "1":
        return {
            "type": "errored",
            "error": {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        }
    if number == "2":
        return {"type": "succeeded", "message": message("{not json")}
    return {
        "type": "succeeded",
        "message": message(
            {
                "candidates": [
                    lesson(
                        f"Never force-push to the shared branch number {number}",
                        claim="Never force-push shared branches.",
                    ),
                    {"claim": "broken"},
                ]
            }
        ),
    }


def test_submit_then_resume_after_restart_collects_every_session(
    server: FakeAnthropic, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    server.polls_until_ended = 2
    server.batch_answer = answer
    first = runner(server, state)
    batch_id = first.submit(digests(4), lambda d: ExtractContext(project=d.project))
    assert first.poll(batch_id).status == "in_progress"

    # The request map was written before submit returned: a new process finds the batch.
    first.ledger.close()
    second = runner(server, state)
    assert second.unfinished() == [batch_id]
    collected = second.resume(interval=0.01, timeout=10)
    by_session = {c.session: c for c in collected}
    assert sorted(by_session) == ["sess-0", "sess-1", "sess-2", "sess-3"]
    ok0 = by_session["sess-0"].result
    assert [c.quote for c in ok0.candidates] == ["Never force-push to the shared branch number 0"]
    assert ok0.candidates[0].model == MODEL and ok0.candidates[0].extractor == "anthropic"
    assert ok0.malformed == 1 and ok0.usage.calls == 1 and ok0.usage.cached_tokens > 0
    assert (
        by_session["sess-0"].files == ["/t/sess-0.jsonl"] and by_session["sess-0"].project == "-home-kim-shop"
    )
    assert by_session["sess-1"].result.error == "batch request for part 1 errored: Overloaded"
    assert "not valid JSON" in (by_session["sess-2"].result.error or "")
    assert by_session["sess-3"].result.candidates

    # Collected once: the ledger says so, and a third process neither polls nor collects again.
    assert (
        second.ledger.query("SELECT status FROM batches WHERE id = ?", (batch_id,))[0]["status"]
        == "collected"
    )
    before = len(server.requests)
    assert runner(server, state).resume(interval=0.01, timeout=1) == []
    assert len(server.requests) == before


def test_batch_request_carries_model_cached_prompt_schema_and_custom_ids(
    server: FakeAnthropic, tmp_path: Path
) -> None:
    r = runner(server, tmp_path / "state")
    batch_id = r.submit(digests(2), lambda d: ExtractContext(project=d.project))
    [create] = server.calls("/v1/messages/batches")
    reqs = create.body["requests"]
    assert len(reqs) == 2 and len({q["custom_id"] for q in reqs}) == 2
    params = reqs[0]["params"]
    assert params["model"] == MODEL
    assert params["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert params["output_config"]["format"]["type"] == "json_schema"
    assert "tools" not in params
    assert "<transcript>" in params["messages"][0]["content"]
    row = r.ledger.query("SELECT * FROM batches WHERE id = ?", (batch_id,))[0]
    assert row["model"] == MODEL and row["status"] == "in_progress"


def test_a_batch_still_running_stays_resumable(server: FakeAnthropic, tmp_path: Path) -> None:
    server.polls_until_ended = 1000
    r = runner(server, tmp_path / "state")
    batch_id = r.submit(digests(1), lambda d: ExtractContext(project=d.project))
    assert r.resume(interval=0.01, timeout=0.05) == []
    assert r.unfinished() == [batch_id]


def test_batch_cli_submit_then_collect_in_a_later_run_gates_the_candidates(
    server: FakeAnthropic, config
) -> None:
    import json

    from click.testing import CliRunner
    from fakes.transcript import write_session

    from dreamtui.cli.main import cli

    said = {
        "1": (
            "Never deploy the billing service on Fridays, the on-call rota is thin.",
            "Never deploy the billing service on Fridays",
            "No Friday deploys of billing.",
        ),
        "2": (
            "Run the migration dry-run before every release, it caught a table lock last time.",
            "Run the migration dry-run before every release",
            "Dry-run migrations before releases.",
        ),
    }
    paths = [
        write_session(
            config.transcripts, [("person", said[n][0])], session=f"5e55a0a0-1111-4222-8333-00000000000{n}"
        )
        for n in said
    ]
    server.polls_until_ended = 2

    def answer_cli(req: dict) -> dict:
        text = req["params"]["messages"][0]["content"]
        n = "1" if "billing" in text else "2"
        return {
            "type": "succeeded",
            "message": message(
                {
                    "candidates": [
                        lesson(said[n][1], claim=said[n][2]),
                        lesson(
                            "Deploys on Fridays are fine if the tests pass.",
                            claim=f"Invented lesson number {n}.",
                        ),
                    ]
                }
            ),
        }

    server.batch_answer = answer_cli
    env = {"ANTHROPIC_API_KEY": "sk-ant-test", "ANTHROPIC_BASE_URL": server.url}
    base = ["--state", str(config.state), "--memory", str(config.memory), "batch"]
    res = CliRunner().invoke(cli, [*base, "submit", *map(str, paths)], env=env)
    assert res.exit_code == 0, res.output
    assert res.output.startswith("submitted batch msgbatch_")

    res = CliRunner().invoke(cli, [*base, "collect", "--json"], env=env)
    first = json.loads(res.stdout)["batches"]
    assert [b["status"] for b in first] == ["in_progress"]

    res = CliRunner().invoke(cli, [*base, "collect", "--json"], env=env)
    rows = json.loads(res.stdout)["batches"]
    assert sorted(r["kept"][0]["claim"] for r in rows) == [
        "Dry-run migrations before releases.",
        "No Friday deploys of billing.",
    ]
    assert all(r["dropped"] == {"unverified": 1} for r in rows)
    assert all(r["kept"][0]["provenance"] == "person" for r in rows)

    res = CliRunner().invoke(cli, [*base, "collect"], env=env)
    assert res.output.strip() == "no unfinished batch in the ledger"
