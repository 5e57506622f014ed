"""A local fake of an OpenAI-compatible chat-completions server (what Ollama, llama-server, LM Studio
and vLLM serve), for driving the real ``openai`` SDK over real HTTP in tests.

Start it with ``FakeOpenAI()`` as a context manager; point the SDK at ``server.url`` (which ends in
``/v1``). It records every request (``server.requests``), answers ``POST /v1/chat/completions`` from
a script of replies (``server.script``) and ``GET /v1/models`` from ``server.models``. With
``refuse_schema`` it answers a request carrying ``response_format`` with a 400, as a server without
structured output does.
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


class FakeOpenAI(JsonHTTPFake):
    default_path = "/v1/chat/completions"

    """The fake server. ``script`` holds replies for ``POST /v1/chat/completions`` in order."""

    def __init__(self, *, refuse_schema: bool = False, models: list[str] | None = None) -> None:
        super().__init__()
        self.script: deque[Reply] = deque()
        self.refuse_schema = refuse_schema
        self.models = ["qwen3:4b"] if models is None else models
        self.responder: Callable[[Any], Reply] | None = None
        """When set, answers every chat completion from its body instead of ``script``."""

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL a person would configure (``…/v1``)."""
        return f"{self.root}/v1"

    # -- endpoints -------------------------------------------------------------------------------

    def _chat(self, body: Any) -> Reply:
        if self.refuse_schema and isinstance(body, dict) and "response_format" in body:
            return error(
                400, "response_format json_schema is not supported by this server", retry_after_ms=None
            )
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
        return Reply(404, "404 page not found", {"content-type": "text/plain"})
