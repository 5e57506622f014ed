"""The openai extractor end to end: the real ``openai`` SDK over real HTTP against a local fake
OpenAI-compatible chat-completions server (what Ollama, llama-server, LM Studio and vLLM serve)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest
from fakes.anthropic_server import lesson
from fakes.openai_server import FakeOpenAI, Reply, completion, error, ok, says

from dreamtui.core.config import Config
from dreamtui.core.errors import ExtractorError
from dreamtui.core.extract import make_extractor
from dreamtui.core.extract.base import ExtractContext
from dreamtui.core.extract.openai_ext import OpenAIExtractor
from dreamtui.core.extract.prompt import SYSTEM_PROMPT, ExtractionOut
from dreamtui.core.models import Digest, Turn

MODEL = "qwen3:4b"
CORRECTION = "No, don't mock the database in the integration tests, use the docker fixture."
GOOD = lesson("don't mock the database in the integration tests", claim="Use the docker fixture.")
OTHER = lesson("use the docker fixture", claim="The docker fixture backs the tests.", type="project")


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as srv:
        yield srv


def make(server: FakeOpenAI, **kw) -> OpenAIExtractor:
    kw.setdefault("max_retries", 1)
    kw.setdefault("timeout", 10.0)
    kw.setdefault("model", MODEL)
    return OpenAIExtractor(base_url=server.url, **kw)


def digest(*texts: tuple[str, str], session: str = "sess-1") -> Digest:
    turns = [
        Turn(role=r, text=t, file="/t/s.jsonl", line=i + 1, kind="prompt" if r == "person" else "text")
        for i, (r, t) in enumerate(texts)
    ]
    return Digest(session=session, project="-home-kim-shop", files=["/t/s.jsonl"], turns=turns)


CTX = ExtractContext(project="-home-kim-shop", memories=("Run ruff before every commit.",))
ONE = digest(("person", CORRECTION), ("assistant", "Understood, switching to the fixture."))


# -- the request and an honoured schema ------------------------------------------------------------


def test_request_carries_the_shared_prompt_schema_and_delimited_digest(server: FakeOpenAI) -> None:
    server.script.append(ok([GOOD], prompt_tokens=1000, completion_tokens=80, cached_tokens=600))
    result = make(server, api_key="local-key").extract(ONE, CTX)
    [req] = server.calls()
    body = req.body
    assert body["model"] == MODEL and body["max_tokens"] > 0
    system, user = body["messages"]
    assert system == {"role": "system", "content": SYSTEM_PROMPT}
    content = user["content"]
    start, end = content.index("<transcript>"), content.index("</transcript>")
    assert CORRECTION in content[start:end] and "Run ruff before every commit." in content[:start]
    fmt = body["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["strict"] is True
    item = fmt["json_schema"]["schema"]["properties"]["candidates"]["items"]
    assert set(item["required"]) == {"claim", "why", "how_to_apply", "type", "scope", "quote"}
    assert item["additionalProperties"] is False and "$ref" not in json.dumps(fmt)
    assert req.headers["authorization"] == "Bearer local-key"
    [cand] = result.candidates
    assert (cand.claim, cand.extractor, cand.model, cand.scope) == (
        "Use the docker fixture.",
        "openai",
        MODEL,
        "-home-kim-shop",
    )
    u = result.usage
    assert (u.calls, u.input_tokens, u.output_tokens, u.cached_tokens) == (1, 400, 80, 600)
    assert result.malformed == 0 and not any("refused" in n for n in result.notes)


def test_a_server_refusing_the_schema_is_asked_again_without_it(server: FakeOpenAI) -> None:
    server.refuse_schema = True
    server.script.extend([ok([GOOD]), ok([OTHER])])
    ex = make(server)
    first = ex.extract(ONE, CTX)
    second = ex.extract(ONE, CTX)
    calls = server.calls()
    assert ["response_format" in c.body for c in calls] == [
        True,
        False,
        False,
    ]  # refused once, then never sent
    assert [c.claim for c in first.candidates + second.candidates] == [GOOD["claim"], OTHER["claim"]]
    assert any("refused response_format" in n and "400" in n for n in first.notes)
    assert "Answer with one JSON object" in calls[1].body["messages"][1]["content"]


def test_no_api_key_sends_a_placeholder_and_the_served_model_is_found(server: FakeOpenAI) -> None:
    server.script.append(ok([GOOD]))
    ex = make(server, model=None)
    result = ex.extract(ONE, CTX)
    assert server.calls("/v1/models", "GET") and server.calls()[0].body["model"] == MODEL
    assert result.candidates[0].model == MODEL == ex.model
    assert server.calls()[0].headers["authorization"] == "Bearer not-needed"


def test_several_served_models_and_none_configured_is_a_clear_error() -> None:
    with FakeOpenAI(models=["llama3.2:3b", "qwen3:4b"]) as srv, pytest.raises(ExtractorError) as info:
        make(srv, model=None).extract(ONE, CTX)
    assert "serves 2 model(s) (llama3.2:3b, qwen3:4b): set openai_model" in str(info.value)


# -- broken JSON from small models -----------------------------------------------------------------

BROKEN = {
    "code fence": "```json\n" + json.dumps({"candidates": [GOOD]}, indent=2) + "\n```",
    "prose around": "Here are the lessons I found:\n"
    + json.dumps({"candidates": [GOOD]})
    + "\nHope this helps!",
    "thinking first": "<think>The person said {not json}.</think>\n" + json.dumps({"candidates": [GOOD]}),
    "single quotes": str({"candidates": [GOOD]}),  # Python's repr: 'claim': 'Use the docker fixture.'
    "trailing commas": json.dumps({"candidates": [GOOD]}, indent=1)
    .replace('"\n', '",\n')
    .replace("}\n", "},\n"),
    "a bare list": json.dumps([GOOD]),
    "another key": json.dumps({"lessons": [GOOD]}),
    "a single lesson": json.dumps(GOOD),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_broken_json_is_read_leniently(server: FakeOpenAI, name: str) -> None:
    server.script.append(says(BROKEN[name]))
    result = make(server).extract(ONE, CTX)
    assert [c.claim for c in result.candidates] == [GOOD["claim"]], name
    assert result.malformed == 0


def test_quotes_with_apostrophes_survive_single_quoted_json(server: FakeOpenAI) -> None:
    text = "{'candidates': [{'claim': 'Do not mock the DB.', 'why': 'The person said so.', 'how_to_apply': 'Always.', 'type': 'feedback', 'scope': 'project', 'quote': 'No, don't mock the database in the integration tests',},]}"
    server.script.append(says(text))
    [cand] = make(server).extract(ONE, CTX).candidates
    assert cand.quote == "No, don't mock the database in the integration tests"


def test_one_bad_item_among_good_ones_keeps_the_good_ones(server: FakeOpenAI) -> None:
    good, other = json.dumps(GOOD), json.dumps(OTHER)
    broken_syntax = '{"claim": "x" "quote": "y"}'
    wrong_shape = json.dumps({**GOOD, "type": "opinion"})
    server.script.append(
        says(f'{{"candidates": [{good}, {broken_syntax}, {wrong_shape}, "just text", {other}]}}')
    )
    result = make(server).extract(ONE, CTX)
    assert [c.claim for c in result.candidates] == [GOOD["claim"], OTHER["claim"]]
    assert result.malformed == 3
    assert any("3 malformed" in n for n in result.notes)


def test_an_answer_cut_off_keeps_its_complete_items(server: FakeOpenAI) -> None:
    text = json.dumps({"candidates": [GOOD, OTHER]})
    server.script.append(says(text[: text.index(OTHER["claim"]) + 10], finish_reason="length"))
    result = make(server).extract(ONE, CTX)
    assert [c.claim for c in result.candidates] == [GOOD["claim"]]
    assert result.malformed == 1
    assert any("cut off at max_tokens" in n for n in result.notes)


def test_an_answer_with_no_json_is_one_clear_error(server: FakeOpenAI) -> None:
    server.script.append(says("I could not find any lessons in this session, sorry."))
    with pytest.raises(ExtractorError) as info:
        make(server).extract(ONE, CTX)
    message = str(info.value)
    assert "not JSON" in message and server.url in message and "\n" not in message


def test_one_unreadable_part_of_a_long_session_does_not_lose_the_others(server: FakeOpenAI) -> None:
    turns = [("person", f"turn {i:03d} " + "words and more words " * 20) for i in range(12)]
    long = digest(*turns)
    server.responder = lambda body: (
        says("nothing useful") if '<transcript part="1/' in body["messages"][1]["content"] else ok([GOOD])
    )
    result = make(server).extract(long, ExtractContext(project="p", max_chars=2500))
    calls = server.calls()
    assert len(calls) > 2 and result.usage.calls == len(calls)
    assert len(result.candidates) == len(calls) - 1
    assert any(n.startswith("part 1 of") and "not JSON" in n for n in result.notes)


def test_ask_is_the_structured_model_interface(server: FakeOpenAI) -> None:
    server.script.append(says("```\n" + json.dumps([GOOD]) + "\n```"))
    ex = make(server)
    assert ex.structured() is ex and ex.capabilities.batches is False
    out, usage = ex.ask("system words", "user words", ExtractionOut, max_tokens=99)
    assert isinstance(out, ExtractionOut) and out.candidates[0].claim == GOOD["claim"]
    assert usage.calls == 1 and server.calls()[0].body["max_tokens"] == 99


# -- errors: one line naming the server and what to do ---------------------------------------------


def test_server_not_running() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ex = OpenAIExtractor(base_url=f"http://127.0.0.1:{port}/v1", model=MODEL, max_retries=0, timeout=2)
    with pytest.raises(ExtractorError) as info:
        ex.extract(ONE, CTX)
    message = str(info.value)
    assert message.startswith(f"cannot reach the model server at http://127.0.0.1:{port}/v1")
    assert "ollama serve" in message and "\n" not in message


def test_model_not_found(server: FakeOpenAI) -> None:
    server.script.append(error(404, "model 'qwen9:1b' not found, try pulling it first", "api_error"))
    with pytest.raises(ExtractorError) as info:
        make(server, model="qwen9:1b").extract(ONE, CTX)
    message = str(info.value)
    assert f"the model server at {server.url} answered 404 for model 'qwen9:1b'" in message
    assert "ollama pull qwen9:1b" in message and "openai_model" in message


def test_a_base_url_without_v1_is_pointed_out(server: FakeOpenAI) -> None:
    ex = OpenAIExtractor(base_url=server.root, model=MODEL, max_retries=0)
    with pytest.raises(ExtractorError, match="ending in /v1"):
        ex.extract(ONE, CTX)


def test_timeout(server: FakeOpenAI) -> None:
    server.script.append(Reply(200, completion({"candidates": []}), hold=True))
    with pytest.raises(ExtractorError) as info:
        make(server, timeout=0.3, max_retries=0).extract(ONE, CTX)
    message = str(info.value)
    assert f"the model server at {server.url} did not answer within 0.3s" in message
    assert "api_timeout" in message


@pytest.mark.parametrize(
    "text",
    [
        "the request exceeds the available context size, try increasing it",  # llama-server
        "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens.",  # vLLM
    ],
)
def test_context_too_long_is_not_taken_for_a_schema_refusal(server: FakeOpenAI, text: str) -> None:
    server.script.append(error(400, text))
    with pytest.raises(ExtractorError) as info:
        make(server, max_chars=50_000).extract(ONE, CTX)
    message = str(info.value)
    assert "longer than the model's context" in message and "max_digest_chars (now 50000)" in message
    assert len(server.calls()) == 1  # not asked again without the schema


def test_a_rejected_key(server: FakeOpenAI) -> None:
    server.script.append(error(401, "invalid api key", "authentication_error"))
    with pytest.raises(ExtractorError, match="refused the key .*openai_api_key"):
        make(server).extract(ONE, CTX)


def test_server_failure_after_retries(server: FakeOpenAI) -> None:
    server.script.extend([error(500, "llama runner process has terminated", "server_error")] * 2)
    with pytest.raises(ExtractorError) as info:
        make(server, max_retries=1).extract(ONE, CTX)
    assert str(info.value) == (
        f"the model server at {server.url} failed (500) after 1 retry: llama runner process has terminated"
    )
    assert len(server.calls()) == 2


# -- from the configuration ------------------------------------------------------------------------


def test_make_extractor_from_config(server: FakeOpenAI, tmp_path) -> None:
    server.script.append(ok([GOOD]))
    cfg = Config(state=tmp_path, extractor="openai", openai_base_url=server.url, openai_model=MODEL)
    ex = make_extractor(cfg)
    assert isinstance(ex, OpenAIExtractor) and ex.model == MODEL
    assert ex.extract(ONE, CTX).candidates


def test_openai_without_a_server_is_a_clear_error(tmp_path) -> None:
    with pytest.raises(ExtractorError, match="set openai_base_url .*11434/v1"):
        make_extractor(Config(state=tmp_path, extractor="openai"))


def test_dreamtui_extract_with_a_local_model_runs_the_gate(server: FakeOpenAI, tmp_path) -> None:
    """The whole path from the CLI: the fake model's one real quote is verified and kept, the one it
    invented is dropped as unverified, and the output names the extractor and the served model."""
    from pathlib import Path

    from click.testing import CliRunner

    from dreamtui.cli.main import cli

    real = lesson("Please add a --dry-run flag to the deploy script.", claim="Deploy has a --dry-run flag.")
    invented = lesson("Always deploy on Fridays after lunch, never before.", claim="Deploy on Fridays.")
    server.script.append(says("```json\n" + json.dumps([real, invented]) + "\n```"))
    fixture = Path(__file__).parent / "fixtures" / "transcripts" / "-home-kim-shapes"
    env = {
        "DREAMTUI_OPENAI_BASE_URL": server.url,
        "DREAMTUI_STATE": str(tmp_path / "state"),
        "DREAMTUI_MEMORY": str(tmp_path / "memory"),
        "DREAMTUI_MAX_RETRIES": "0",
        "HOME": str(tmp_path),  # no Claude Code login: auto picks the local server
    }
    file = fixture / "11111111-2222-4333-8444-555555555555.jsonl"
    result = CliRunner().invoke(cli, ["extract", str(file)], env=env)
    assert result.exit_code == 0, result.output
    assert f"extractor openai ({MODEL})" in result.output
    assert "claim: Deploy has a --dry-run flag." in result.output and "Fridays" not in result.output
    assert "1 kept; 1 dropped (unverified 1)" in result.output
    server.script.clear()
    result = CliRunner().invoke(cli, ["extract", str(file)], env=env)  # the fake has nothing left: 500
    assert result.exit_code == 2 and f"the model server at {server.url} failed (500)" in result.output
