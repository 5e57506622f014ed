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
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted HTTP answer."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (to trip client timeouts)


@dataclass
class Recorded:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any


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


class FakeOpenAI:
    """The fake server. ``script`` holds replies for ``POST /v1/chat/completions`` in order."""

    def __init__(self, *, refuse_schema: bool = False, models: list[str] | None = None) -> None:
        self.requests: list[Recorded] = []
        self.script: deque[Reply] = deque()
        self.refuse_schema = refuse_schema
        self.models = ["qwen3:4b"] if models is None else models
        self.responder: Callable[[Any], Reply] | None = None
        """When set, answers every chat completion from its body instead of ``script``."""
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def root(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def url(self) -> str:
        """The base URL a person would configure (``…/v1``)."""
        return f"{self.root}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def calls(self, path: str = "/v1/chat/completions", method: str = "POST") -> list[Recorded]:
        """The recorded requests to one endpoint."""
        return [r for r in self.requests if r.path == path and r.method == method]

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

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _serve(self, method: str) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                with fake._lock:
                    fake.requests.append(
                        Recorded(method, self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                reply = fake._route(method, self.path, body)
                if reply.delay:
                    time.sleep(reply.delay)
                data = reply.body if isinstance(reply.body, str) else json.dumps(reply.body)
                payload = data.encode("utf-8")
                self.send_response(reply.status)
                headers = {"content-type": "application/json", **reply.headers}
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except OSError:  # the client gave up (a timeout test): nothing to answer
                    self.close_connection = True

            def do_POST(self) -> None:  # noqa: N802
                self._serve("POST")

            def do_GET(self) -> None:  # noqa: N802
                self._serve("GET")

        return Handler
