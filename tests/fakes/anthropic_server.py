"""A local fake of the Anthropic Messages API, for driving the real SDK over real HTTP in tests.

Start it with ``FakeAnthropic()`` as a context manager; point the SDK at ``server.url``. It records
every request (``server.requests``) and answers ``POST /v1/messages`` from a script of replies
(``server.script``), and implements the Message Batches endpoints (create, retrieve, results as JSONL).
"""

from __future__ import annotations

import itertools
import json
from collections import deque
from collections.abc import Callable
from typing import Any

from fakes.json_http import JsonHTTPFake, Reply

_ids = itertools.count(1)


def message(
    payload: Any,
    *,
    model: str = "claude-sonnet-5-5",
    input_tokens: int = 1200,
    output_tokens: int = 150,
    cache_read: int = 900,
    cache_write: int = 0,
    stop_reason: str = "end_turn",
) -> dict[str, Any]:
    """A Messages API response whose one text block is ``payload`` (JSON-encoded unless a str)."""
    text = payload if isinstance(payload, str) else json.dumps(payload)
    return {
        "id": f"msg_fake{next(_ids):04d}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": stop_reason,
        "stop_sequence": None,
        "usage": {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_read_input_tokens": cache_read,
            "cache_creation_input_tokens": cache_write,
        },
    }


def ok(candidates: list[dict[str, Any]], **kw: Any) -> Reply:
    """A 200 answer carrying ``{"candidates": [...]}``."""
    return Reply(200, message({"candidates": candidates}, **kw))


def error(status: int, kind: str, text: str, *, retry_after_ms: int | None = 10) -> Reply:
    """An API error body, with a short ``retry-after-ms`` so SDK retries stay fast in tests."""
    headers = {"retry-after-ms": str(retry_after_ms)} if retry_after_ms is not None else {}
    return Reply(status, {"type": "error", "error": {"type": kind, "message": text}}, headers)


def lesson(
    quote: str,
    claim: str = "Follow the person's correction.",
    *,
    type: str = "feedback",
    scope: str = "project",
    why: str = "The person said so.",
    how_to_apply: str = "Apply it next time.",
) -> dict[str, Any]:
    """One candidate object as the model would return it."""
    return {
        "claim": claim,
        "why": why,
        "how_to_apply": how_to_apply,
        "type": type,
        "scope": scope,
        "quote": quote,
    }


class FakeAnthropic(JsonHTTPFake):
    default_path = "/v1/messages"

    """The fake server. ``script`` holds replies for ``POST /v1/messages`` in order."""

    def __init__(self) -> None:
        super().__init__()
        self.script: deque[Reply] = deque()
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_inputs: dict[str, list[dict[str, Any]]] = {}
        self.polls_until_ended = 1
        self.responder: Callable[[Any], Reply] | None = None
        """When set, answers every ``POST /v1/messages`` from its body (e.g. recorded answers) instead of ``script``."""
        self.count_rule: Callable[[Any], int] = lambda body: counted_input_tokens(body)
        """How ``POST /v1/messages/count_tokens`` counts a request (the counting rule by default)."""
        self.batch_answer: Callable[[dict[str, Any]], dict[str, Any]] = lambda req: {
            "type": "succeeded",
            "message": message({"candidates": []}),
        }

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL the SDK is given."""
        return self.root

    # -- endpoints -------------------------------------------------------------------------------

    def _messages(self, body: Any) -> Reply:
        if self.responder is not None:
            return self.responder(body)
        with self._lock:
            if not self.script:
                return error(500, "api_error", "fake server: no scripted reply left", retry_after_ms=None)
            return self.script.popleft()

    def _create_batch(self, body: Any) -> Reply:
        with self._lock:
            bid = f"msgbatch_fake{next(_ids):04d}"
            reqs = list(body.get("requests", []))
            self.batch_inputs[bid] = reqs
            self.batches[bid] = {"polls": 0}
            return Reply(200, self._batch_json(bid))

    def _batch_json(self, bid: str) -> dict[str, Any]:
        state = self.batches[bid]
        ended = state["polls"] >= self.polls_until_ended
        n = len(self.batch_inputs[bid])
        return {
            "id": bid,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": {
                "processing": 0 if ended else n,
                "succeeded": n if ended else 0,
                "errored": 0,
                "canceled": 0,
                "expired": 0,
            },
            "created_at": "2026-11-29T10:00:00Z",
            "expires_at": "2026-11-30T10:00:00Z",
            "ended_at": "2026-11-29T10:05:00Z" if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{self.url}/v1/messages/batches/{bid}/results" if ended else None,
        }

    def _retrieve_batch(self, bid: str) -> Reply:
        with self._lock:
            if bid not in self.batches:
                return error(404, "not_found_error", f"batch {bid} not found", retry_after_ms=None)
            self.batches[bid]["polls"] += 1
            return Reply(200, self._batch_json(bid))

    def _results(self, bid: str) -> Reply:
        if bid not in self.batches:
            return error(404, "not_found_error", f"batch {bid} not found", retry_after_ms=None)
        lines = [
            json.dumps({"custom_id": req["custom_id"], "result": self.batch_answer(req)})
            for req in self.batch_inputs[bid]
        ]
        return Reply(200, "\n".join(lines) + "\n", {"content-type": "application/binary"})

    def _route(self, method: str, path: str, body: Any) -> Reply:
        path = path.split("?", 1)[0]
        parts = [p for p in path.split("/") if p]
        if method == "POST" and path == "/v1/messages":
            return self._messages(body)
        if method == "POST" and path == "/v1/messages/count_tokens":
            return Reply(200, {"input_tokens": self.count_rule(body)})
        if method == "POST" and path == "/v1/messages/batches":
            return self._create_batch(body)
        if method == "GET" and len(parts) == 4 and parts[:3] == ["v1", "messages", "batches"]:
            return self._retrieve_batch(parts[3])
        if method == "GET" and len(parts) == 5 and parts[4] == "results":
            return self._results(parts[3])
        return error(404, "not_found_error", f"fake server: no route {method} {path}", retry_after_ms=None)


COUNT_CHARS_PER_TOKEN = 4
"""The stand-in's counting rule: one token per 4 characters of what a request carries to the model."""


def counted_input_tokens(body: Any) -> int:
    """The input tokens the stand-in model reports for a ``POST /v1/messages`` body, by a counting rule
    (not a tokenizer): the characters of the system prompt's texts, of the messages' texts and of the
    output schema (JSON), over :data:`COUNT_CHARS_PER_TOKEN`, rounded up."""
    if not isinstance(body, dict):
        return 0
    chars = 0
    system = body.get("system")
    if isinstance(system, str):
        chars += len(system)
    elif isinstance(system, list):
        chars += sum(len(b.get("text", "")) for b in system if isinstance(b, dict))
    for msg in body.get("messages") or []:
        content = msg.get("content") if isinstance(msg, dict) else None
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            chars += sum(len(b.get("text", "")) for b in content if isinstance(b, dict))
    schema = ((body.get("output_config") or {}).get("format") or {}).get("schema")
    if schema is not None:
        chars += len(json.dumps(schema))
    return -(-chars // COUNT_CHARS_PER_TOKEN)


def counting(payload: Any = None, output_tokens: int = 100) -> Callable[[Any], Reply]:
    """A responder answering every request with ``payload`` (no lessons by default) and the usage the
    counting rule gives its body (:func:`counted_input_tokens`): a recording stand-in model."""
    answer = {"candidates": []} if payload is None else payload

    def respond(body: Any) -> Reply:
        return Reply(
            200,
            message(
                answer, input_tokens=counted_input_tokens(body), output_tokens=output_tokens, cache_read=0
            ),
        )

    return respond
