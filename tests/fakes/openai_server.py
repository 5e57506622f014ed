"""A local fake of an OpenAI-compatible chat-completions server (what Ollama, llama-server, LM Studio
and vLLM serve), for driving the real ``openai`` SDK over real HTTP in tests.

Start it with ``FakeOpenAI()`` as a context manager; point the SDK at ``server.url`` (which ends in
``/v1``). It records every request (``server.requests``), answers ``POST /v1/chat/completions`` from
a script of replies (``server.script``) and ``GET /v1/models`` from ``server.models``. A request with
``"stream": true`` gets its scripted completion as server-sent events, as every real server sends them.

It stands in for what a real server (``tests/test_realserver.py`` runs llama.cpp's) cannot be made to
do on cue: refuse ``response_format`` (``refuse_schema``: a 400; ``refuse_formats``; or
``llama_cpp_python``: the HTTP 500 llama-cpp-python's server answers to ``json_schema``, its words
reproduced from its ``RouteErrorHandler``), answer 200 with HTML or a cut body, fail on cue. With
``props`` it also answers llama.cpp's ``GET /props`` and ``POST /tokenize`` (four characters a token),
with ``ollama`` Ollama's ``/api/version``, ``/api/ps`` and ``/api/show``.
"""

from __future__ import annotations

import itertools
import json
from collections import deque
from collections.abc import Callable
from typing import Any

from fakes.json_http import JsonHTTPFake, Reply

_ids = itertools.count(1)


def completion(
    text: str | Any,
    *,
    model: str = "qwen3:4b",
    prompt_tokens: int = 900,
    completion_tokens: int = 120,
    cached_tokens: int | None = None,
    finish_reason: str = "stop",
) -> dict[str, Any]:
    """A chat completion whose one choice says ``text`` (JSON-encoded unless a str)."""
    content = text if isinstance(text, str) else json.dumps(text)
    usage: dict[str, Any] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }
    if cached_tokens is not None:
        usage["prompt_tokens_details"] = {"cached_tokens": cached_tokens}
    return {
        "id": f"chatcmpl-fake{next(_ids):04d}",
        "object": "chat.completion",
        "created": 1764403200,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
            }
        ],
        "usage": usage,
    }


def says(text: str | Any, **kw: Any) -> Reply:
    """A 200 answer whose message content is ``text``."""
    return Reply(200, completion(text, **kw))


def ok(candidates: list[Any], **kw: Any) -> Reply:
    """A 200 answer carrying ``{"candidates": [...]}``."""
    return says({"candidates": candidates}, **kw)


def error(
    status: int, text: str, kind: str = "invalid_request_error", *, retry_after_ms: int | None = 10
) -> Reply:
    """An OpenAI-style error body, with a short ``retry-after-ms`` so SDK retries stay fast in tests."""
    headers = {"retry-after-ms": str(retry_after_ms)} if retry_after_ms is not None else {}
    return Reply(status, {"error": {"message": text, "type": kind, "code": None}}, headers)


LLAMA_CPP_PYTHON_500 = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': "
    "\"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': "
    "\"'text' or 'json_object'\"}}"
)
"""What llama-cpp-python's server (``llama_cpp.server``) answers to ``response_format`` ``json_schema``:
its request model knows only ``text`` and ``json_object``, and its ``RouteErrorHandler`` wraps the
validation error as ``{"error": {"message": str(error), "type": "internal_server_error"}}``, HTTP 500."""


def sse(completion_body: dict[str, Any]) -> str:
    """A chat completion as the server-sent events of a streamed answer: a role chunk, the content in
    a few pieces, the finish reason, the usage chunk, ``[DONE]``."""
    choice = completion_body["choices"][0]
    content = choice["message"].get("content") or ""
    base = {k: completion_body[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    pieces = [content[i : i + 40] for i in range(0, len(content), 40)] or []
    chunks = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}]
    chunks += [{**base, "choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]})
    chunks.append({**base, "choices": [], "usage": completion_body.get("usage")})
    return "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"


class FakeOpenAI(JsonHTTPFake):
    default_path = "/v1/chat/completions"

    """The fake server. ``script`` holds replies for ``POST /v1/chat/completions`` in order."""

    def __init__(
        self,
        *,
        refuse_schema: bool = False,
        refuse_formats: tuple[str, ...] = (),
        llama_cpp_python: bool = False,
        models: list[str] | None = None,
        props: dict[str, Any] | None = None,
        ollama: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.script: deque[Reply] = deque()
        self.refuse_formats = set(refuse_formats) | ({"json_schema"} if refuse_schema else set())
        self.llama_cpp_python = llama_cpp_python
        self.models = ["qwen3:4b"] if models is None else models
        self.props = props
        """llama.cpp's ``/props`` answer (then ``/tokenize`` answers too); None: both are 404, as elsewhere."""
        self.ollama = ollama
        """``{"ps": …, "show": …}``: Ollama's ``/api/ps`` and ``/api/show`` answers (and ``/api/version``)."""
        self.responder: Callable[[Any], Reply] | None = None
        """When set, answers every chat completion from its body instead of ``script``."""

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL a person would configure (``…/v1``)."""
        return f"{self.root}/v1"

    # -- endpoints -------------------------------------------------------------------------------

    def _chat(self, body: Any) -> Reply:
        fmt = body.get("response_format") if isinstance(body, dict) else None
        kind = fmt.get("type") if isinstance(fmt, dict) else None
        if self.llama_cpp_python and kind == "json_schema":
            return Reply(
                500,
                {
                    "error": {
                        "message": LLAMA_CPP_PYTHON_500,
                        "type": "internal_server_error",
                        "param": None,
                        "code": None,
                    }
                },
            )
        if kind in self.refuse_formats:
            return error(400, f"response_format {kind} is not supported by this server", retry_after_ms=None)
        reply = self._next(body)
        streamed = isinstance(body, dict) and body.get("stream") is True
        if streamed and reply.status == 200 and isinstance(reply.body, dict) and "choices" in reply.body:
            return Reply(200, sse(reply.body), {"content-type": "text/event-stream"}, hold=reply.hold)
        return reply

    def _next(self, body: Any) -> Reply:
        if self.responder is not None:
            return self.responder(body)
        with self._lock:
            if not self.script:
                return error(500, "fake server: no scripted reply left", "server_error", retry_after_ms=None)
            return self.script.popleft()

    def _models(self) -> Reply:
        data = [
            {"id": m, "object": "model", "created": 1764403200, "owned_by": "library"} for m in self.models
        ]
        return Reply(200, {"object": "list", "data": data})

    def _route(self, method: str, path: str, body: Any) -> Reply:
        path = path.split("?", 1)[0]
        if method == "POST" and path == "/v1/chat/completions":
            return self._chat(body)
        if method == "GET" and path == "/v1/models":
            return self._models()
        if self.props is not None and method == "GET" and path == "/props":
            return Reply(200, self.props)
        if self.props is not None and method == "POST" and path == "/tokenize":
            text = body.get("content", "") if isinstance(body, dict) else ""
            return Reply(200, {"tokens": list(range((len(text) + 3) // 4))})
        if self.ollama is not None and path.startswith("/api/"):
            answers = {"/api/version": {"version": "0.13.0"}, **self.ollama}
            if path.removeprefix("/api/") in answers:
                return Reply(200, answers[path.removeprefix("/api/")])
            if path in answers:
                return Reply(200, answers[path])
        return Reply(404, "404 page not found", {"content-type": "text/plain"})
