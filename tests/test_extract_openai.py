"""The openai extractor end to end: the real ``openai`` SDK over real HTTP against a local fake
OpenAI-compatible chat-completions server (what Ollama, llama-server, LM Studio and vLLM serve)."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

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


def formats(server: FakeOpenAI) -> list[str | None]:
    """The ``response_format`` type of every chat request, in order (None: none sent)."""
    return [(c.body.get("response_format") or {}).get("type") for c in server.calls()]


def test_a_server_refusing_the_schema_is_asked_with_json_object_and_not_again(server: FakeOpenAI) -> None:
    server.refuse_formats = {"json_schema"}
    server.script.extend([ok([GOOD]), ok([OTHER])])
    ex = make(server)
    first = ex.extract(ONE, CTX)
    second = ex.extract(ONE, CTX)
    assert formats(server) == ["json_schema", "json_object", "json_object"]  # refused once, then never sent
    assert [c.claim for c in first.candidates + second.candidates] == [GOOD["claim"], OTHER["claim"]]
    assert any(
        "refused response_format json_schema (400:" in n and "with json_object" in n for n in first.notes
    )
    assert "Answer with one JSON object" in server.calls()[1].body["messages"][1]["content"]


def test_llama_cpp_pythons_http_500_is_a_refusal_not_a_failure_to_retry(server: FakeOpenAI) -> None:
    """llama-cpp-python's server answers json_schema with HTTP 500 "Input should be 'text' or
    'json_object'" (reproduced in the fake from its error handler): recognised by its words, not
    retried as a 5xx, and json_object is asked next."""
    server.llama_cpp_python = True
    server.script.append(ok([GOOD]))
    result = make(server, max_retries=3).extract(ONE, CTX)
    assert formats(server) == ["json_schema", "json_object"]
    assert [c.claim for c in result.candidates] == [GOOD["claim"]]
    assert any(
        "json_schema (500:" in n and "Input should be 'text' or 'json_object'" in n for n in result.notes
    )


def test_a_server_refusing_every_format_gets_plain_instructions(server: FakeOpenAI) -> None:
    server.refuse_formats = {"json_schema", "json_object"}
    server.script.extend([ok([GOOD]), ok([OTHER])])
    ex = make(server)
    ex.extract(ONE, CTX)
    ex.extract(ONE, CTX)
    assert formats(server) == ["json_schema", "json_object", None, None]
    assert ex.mode == "none"


@pytest.mark.parametrize(("setting", "sent"), [("none", None), ("json_object", "json_object")])
def test_structured_output_setting_chooses_the_format(
    server: FakeOpenAI, setting: str, sent: str | None
) -> None:
    server.script.append(ok([GOOD]))
    make(server, structured_output=setting).extract(ONE, CTX)
    assert formats(server) == [sent]


def test_a_refused_format_that_was_asked_for_by_name_is_one_line(server: FakeOpenAI) -> None:
    server.refuse_formats = {"json_object"}
    with pytest.raises(ExtractorError) as info:
        make(server, structured_output="json_object").extract(ONE, CTX)
    message = str(info.value)
    assert message.startswith(f"the model server at {server.url} refused response_format json_object (400:")
    assert 'structured_output = "auto"' in message and len(server.calls()) == 1


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
    assert "openai_timeout" in message and "not sent again" in message
    assert len(server.calls()) == 1  # a timeout is never sent again (the server may still be at it)


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
    assert "longer than the model's context" in message and "max_digest_chars, now 50000" in message
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


# -- what a real server cannot be made to do on cue (the fake stands in) -----------------------------


@pytest.mark.parametrize(
    ("reply", "what"),
    [
        (
            Reply(200, "<html><body>Welcome to nginx!</body></html>", {"content-type": "text/html"}),
            "an HTML page",
        ),
        (
            Reply(200, '{"id": "chatcmpl-1", "choices": [{"index": 0, "message": {"role": "assis'),
            "a body that is not valid JSON",
        ),
        (Reply(200, {"status": "ok"}), "JSON that is not a chat completion"),
    ],
    ids=["html", "cut-body", "other-json"],
)
def test_a_200_that_is_not_a_chat_completion_is_one_line_naming_the_server(
    server: FakeOpenAI, tmp_path, reply: Reply, what: str
) -> None:
    from click.testing import CliRunner

    from dreamtui.cli.main import cli

    server.script.append(reply)
    env = {
        "DREAMTUI_OPENAI_BASE_URL": server.url,
        "DREAMTUI_EXTRACTOR": "openai",
        "DREAMTUI_OPENAI_MODEL": MODEL,
        "DREAMTUI_STATE": str(tmp_path / "state"),
        "DREAMTUI_MEMORY": str(tmp_path / "memory"),
        "HOME": str(tmp_path),
    }
    file = (
        Path(__file__).parent
        / "fixtures/transcripts/-home-kim-shapes/11111111-2222-4333-8444-555555555555.jsonl"
    )
    result = CliRunner().invoke(cli, ["extract", str(file)], env=env)
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and "Traceback" not in result.output, result.output
    assert f"the model server at {server.url} answered 200 with {what}" in lines[0]


LLAMA_PROPS = {"default_generation_settings": {"n_ctx": 4096}, "total_slots": 2}


def test_a_llama_cpp_server_is_asked_its_context_and_slots_and_parts_fit_it() -> None:
    """The fake answers /props (4,096 tokens, 2 slots) and /tokenize (4 characters a token): a digest
    larger than what fits is split so that prompt + answer room stay within 4,096, max_tokens is what
    is left, and two sessions may run at once."""
    turns = [("person", f"turn {i:03d} " + "we deploy on Tuesdays only " * 40) for i in range(8)]
    long = digest(*turns)
    with FakeOpenAI(props=LLAMA_PROPS) as srv:
        srv.responder = lambda body: ok([GOOD])
        ex = make(srv, max_tokens=512)
        assert ex.server().context == 4096 and ex.max_concurrency() == 2 and ex.server().tokenizer
        result = ex.extract(long, CTX)
        calls = srv.calls()
        assert len(calls) >= 2 and srv.calls("/tokenize")
        for call in calls:
            system, user = (m["content"] for m in call.body["messages"])
            prompt = (len(system) + 3) // 4 + (len(user) + 3) // 4 + 48
            assert prompt + call.body["max_tokens"] <= 4096
            assert call.body["max_tokens"] <= 512 and call.body["stream"] is True
    assert any(f"split into {len(calls)} parts" in n and "context of 4,096 tokens" in n for n in result.notes)


def test_a_server_that_reads_fewer_prompt_tokens_than_sent_is_said_to_cut_it() -> None:
    """Ollama cuts a prompt longer than its context without a word: usage.prompt_tokens tells."""
    with FakeOpenAI(props=LLAMA_PROPS) as srv:
        srv.script.append(ok([GOOD], prompt_tokens=300))
        result = make(srv).extract(ONE, CTX)
    assert any("read 300 prompt tokens of the ~" in n and "cut the prompt" in n for n in result.notes)


def test_ollama_says_its_context_through_api_ps_or_num_ctx() -> None:
    show = {"model_info": {"qwen3.context_length": 40960}, "parameters": "num_ctx 8192\ntemperature 0.6"}
    with FakeOpenAI(ollama={"ps": {"models": []}, "show": show}) as srv:
        info = make(srv).server()
    assert (info.kind, info.context, info.context_source) == ("ollama", 8192, "Ollama num_ctx")
    ps = {"models": [{"name": MODEL, "model": MODEL, "context_length": 16384}]}
    with FakeOpenAI(ollama={"ps": ps, "show": {}}) as srv:
        info = make(srv).server()
    assert (info.context, info.slots) == (16384, None)
    with FakeOpenAI(ollama={"ps": {"models": []}, "show": {"parameters": ""}}) as srv:
        ex = make(srv)
        assert ex.server().context == 4096 and ex.max_concurrency() == 1  # Ollama's default, one at a time


def test_a_server_that_says_nothing_gets_the_context_tokens_setting(server: FakeOpenAI) -> None:
    ex = make(server, context_tokens=6000)
    assert (ex.server().kind, ex.server().context, ex.server().tokenizer) == ("unknown", 6000, False)
    assert make(server).server().context is None and make(server).max_concurrency() == 1


@pytest.mark.parametrize(
    "reply",
    [
        Reply(200, "<html><body>Welcome to nginx!</body></html>", {"content-type": "text/html"}),
        Reply(200, '{"id": "chatcmpl-1", "choices": [{"index": 0, "message": {"role": "assis'),
    ],
    ids=["html", "cut-body"],
)
def test_not_streamed_a_200_that_is_not_a_chat_completion_is_one_line_too(
    server: FakeOpenAI, reply: Reply
) -> None:
    server.script.append(reply)
    with pytest.raises(ExtractorError) as info:
        make(server, stream=False).extract(ONE, CTX)
    message = str(info.value)
    assert message.startswith(f"the model server at {server.url} answered 200 with ") and "\n" not in message
