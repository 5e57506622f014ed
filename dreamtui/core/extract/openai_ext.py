"""The ``openai`` extractor: a local model behind any OpenAI-compatible server, through the ``openai`` SDK.

Ollama, llama.cpp's ``llama-server``, LM Studio and vLLM all serve ``POST /v1/chat/completions``. The
request carries the same system prompt, user message and schema as the ``anthropic`` path
(``prompt.py``). What differs is that the server is small and slow, so the extractor first asks it what
it can do (:mod:`~dreamtui.core.extract.local_server`: its context, its slots, its tokenizer) and fits
every request to it: the digest is cut into parts whose prompt, counted in the server's own tokens
(or estimated on the safe side), leaves room for the answer, and ``max_tokens`` is what is left. The
output is held to JSON as far as the server allows (``json_schema``, else ``json_object``, else plain
instructions: a refusal is recognised by what the server says, whatever its status), streamed so a
person sees the tokens arrive, and read leniently (:mod:`~dreamtui.core.extract.lenient_json`).

A request is sent once: a timeout or a stall cancels it (its connection is closed, which a local
server takes as a cancel) and is never sent again while the server may still be working on it; only
a refused connection, a 429 or a 5xx is tried again. Every failure is one line naming the server.
"""

from __future__ import annotations

import functools
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, get_args, get_origin

import pydantic
from pydantic import BaseModel

from dreamtui.core.config import Config
from dreamtui.core.errors import ExtractorError
from dreamtui.core.extract import local_server
from dreamtui.core.extract.base import Capabilities, ExtractContext, StructuredModel
from dreamtui.core.extract.lenient_json import NoJson, loads_lenient, snippet
from dreamtui.core.extract.local_server import ServerInfo, estimate_tokens, server_root
from dreamtui.core.extract.prompt import (
    SYSTEM_PROMPT,
    ExtractionOut,
    Part,
    lessons_of,
    parts_for,
    render_turn,
    session_context,
    split_digest,
    user_message,
)
from dreamtui.core.models import Digest, ExtractionResult, RawCandidate, Usage

MAX_TOKENS = 4096
NO_KEY = "not-needed"
"""Sent as the key when none is configured: local servers ignore it, the SDK insists on one."""
TEMPLATE_TOKENS = 48
"""Tokens the chat template adds around the two messages (role markers), with a margin."""
MIN_ANSWER_TOKENS = 256
"""The least room kept for an answer (a quarter of the context, up to ``openai_max_tokens``, above this)."""
MIN_PART_TOKENS = 200
"""A context that leaves less than this for the transcript, after the prompt and the answer, is too small."""
PROGRESS_EVERY = 1.0
"""Seconds between two progress messages of one streamed answer."""
CUT_RATIO = 0.9
"""The server read fewer than this share of the prompt tokens counted with its own tokenizer: it cut it."""

ANSWER_FORMAT = (
    '\n\nAnswer with one JSON object and nothing else (no code fence, no prose): {"candidates": [{"claim": '
    '"…", "why": "…", "how_to_apply": "…", "type": "user|feedback|project|reference", "scope": '
    '"global|project", "quote": "…"}]}; {"candidates": []} when there is no lesson.'
)
"""Appended to the user message: a server that ignores the schema still shows the model its shape."""

STRUCTURED = ("json_schema", "json_object", "none")
"""The ways to hold the model to JSON, best first; ``auto`` goes down this list as the server refuses."""

_CONTEXT = re.compile(
    r"context (length|size|window)|maximum context|exceeds? (the )?(available )?context|too many tokens"
    r"|prompt is too long|input is too long|too long for",
    re.IGNORECASE,
)
_FORMAT = re.compile(
    r"response_format|response format|json_schema|json_object|structured output|grammar|\bschema\b",
    re.IGNORECASE,
)
"""What a server says when it refuses the structured-output request (llama-cpp-python: HTTP 500
"Input should be 'text' or 'json_object'"; others 400 or 422)."""


def _first_line(text: str, limit: int = 200) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def server_message(exc: Any) -> str:
    """The error text a server sent (``{"error": {"message": …}}``, ``{"error": "…"}``, ``{"message": …}``)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return _first_line(inner["message"])
        if isinstance(inner, str):
            return _first_line(inner)
        if isinstance(body.get("message"), str):
            return _first_line(body["message"])
    if isinstance(body, str) and body.strip():
        return _first_line(body)
    return _first_line(getattr(exc, "message", None) or str(exc))


def explain_openai_error(
    exc: Exception, *, base_url: str, model: str | None, retries: int, timeout: float, max_chars: int
) -> ExtractorError:
    """A one-line ExtractorError for an ``openai`` SDK exception: the server, what happened, what to do."""
    import openai

    tries = f"after {retries} retr{'y' if retries == 1 else 'ies'}"
    if isinstance(exc, openai.APITimeoutError):
        return ExtractorError(
            f"the model server at {base_url} did not answer within {timeout:g}s; the request was cancelled "
            "and is not sent again: a local model can be slow, so raise openai_timeout, set a smaller "
            "context_tokens or use a smaller model"
        )
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        reason = _first_line(str(cause)) if cause else "connection failed"
        if cause is not None and ("RemoteProtocol" in type(cause).__name__ or "disconnected" in reason):
            return ExtractorError(
                f"the model server at {base_url} closed the connection without answering ({tries}: "
                f"{reason}): did it stop or crash? Start it again; the session is tried next dream"
            )
        return ExtractorError(
            f"cannot reach the model server at {base_url} ({tries}: {reason}): start it (`ollama serve`, "
            "`llama-server -m model.gguf --port 8080`) or set openai_base_url to where it listens"
        )
    if not isinstance(exc, openai.APIStatusError):
        return ExtractorError(f"openai SDK error talking to {base_url}: {_first_line(str(exc))}")
    status, text = exc.status_code, server_message(exc)
    if _CONTEXT.search(text):
        return ExtractorError(
            f"the request is longer than the model's context at {base_url} ({status}: {text}): set "
            f"context_tokens to the server's context (or lower max_digest_chars, now {max_chars}), or start "
            "the server with a larger one (Ollama: OLLAMA_CONTEXT_LENGTH or num_ctx; llama-server: -c)"
        )
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return ExtractorError(
            f"the model server at {base_url} refused the key ({status}: {text}): set openai_api_key "
            "(or DREAMTUI_OPENAI_API_KEY / OPENAI_API_KEY)"
        )
    if isinstance(exc, openai.NotFoundError):
        hint = "" if base_url.rstrip("/").endswith("/v1") else "; most servers want a base URL ending in /v1"
        pull = f"`ollama pull {model}` " if model else ""
        return ExtractorError(
            f"the model server at {base_url} answered 404 for model {model!r} ({text}): pull it "
            f"({pull}for Ollama) or set openai_model to one in {base_url}/models{hint}"
        )
    if isinstance(exc, openai.RateLimitError):
        return ExtractorError(f"the model server at {base_url} is busy (429) {tries}: lower concurrency")
    if status >= 500:
        return ExtractorError(f"the model server at {base_url} failed ({status}) {tries}: {text}")
    return ExtractorError(f"the model server at {base_url} refused the request ({status}): {text}")


def usage_of(completion: Any) -> Usage:
    """Usage of one chat completion: input counts the prompt tokens not read from the server's cache."""
    u = getattr(completion, "usage", None)
    if u is None:
        return Usage(calls=1)
    prompt = int(getattr(u, "prompt_tokens", 0) or 0)
    details = getattr(u, "prompt_tokens_details", None)
    cached = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    return Usage(
        calls=1,
        input_tokens=max(0, prompt - cached),
        output_tokens=int(getattr(u, "completion_tokens", 0) or 0),
        cached_tokens=cached,
    )


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    """A JSON schema with its ``$ref``s replaced by their definitions and every object closed
    (``additionalProperties: false``): the form every server's grammar converter reads."""
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return _inline(defs[ref.rsplit("/", 1)[1]], defs)
    out = {k: _inline(v, defs) for k, v in node.items() if k not in ("$defs", "title")}
    if out.get("type") == "object":
        out.setdefault("additionalProperties", False)
        out.setdefault("required", list(out.get("properties", {})))
    return out


def json_schema(schema: type[BaseModel]) -> dict[str, Any]:
    """The schema of ``schema`` as sent in ``response_format``: inlined, closed, every field required."""
    raw = schema.model_json_schema()
    inlined: dict[str, Any] = _inline(raw, raw.get("$defs", {}))
    return inlined


def _list_field(schema: type[BaseModel]) -> str | None:
    """The name of the one list field of ``schema`` (``candidates``), if it has exactly one."""
    names = [
        name
        for name, info in schema.model_fields.items()
        if get_origin(info.annotation) is list or info.annotation is list
    ]
    return names[0] if len(names) == 1 else None


def _item_fields(schema: type[BaseModel], field: str) -> set[str]:
    args = get_args(schema.model_fields[field].annotation)
    item = args[0] if args else None
    return set(item.model_fields) if isinstance(item, type) and issubclass(item, BaseModel) else set()


def _shaped(value: Any, schema: type[BaseModel]) -> Any:
    """A lenient answer put into the shape of ``schema``: a bare list becomes its one list field, a
    list under another name (``lessons``) is taken for it, a single item becomes a list of one."""
    field = _list_field(schema)
    if field is None:
        return value
    if isinstance(value, list):
        return {field: value}
    if isinstance(value, dict) and field not in value:
        lists = [v for v in value.values() if isinstance(v, list)]
        if len(lists) == 1:
            return {field: lists[0]}
        if value and set(value) & _item_fields(schema, field):
            return {field: [value]}
    return value


@dataclass(slots=True)
class Answer:
    """One call's outcome: the parsed answer (None: not readable), usage, and what to tell the person."""

    parsed: BaseModel | None
    usage: Usage
    given_up: int = 0
    problem: str | None = None
    finish_reason: str | None = None
    cut: str | None = None
    """The server read fewer prompt tokens than were sent (it cut the prompt), in words."""


@dataclass(slots=True)
class _Reply:
    """A chat completion's text, finish reason and usage, streamed or not."""

    text: str
    finish: str | None
    usage: Usage
    prompt_tokens: int | None = None


def _prefixed(tell: Callable[[str], None], where: str, message: str) -> None:
    tell(where + message)


def _worked(exc: ExtractorError) -> ExtractorError:
    """``exc`` of a request the server took (it counts as a call, with no tokens known)."""
    exc.usage = Usage(calls=1)
    return exc


class _Refused(Exception):
    """The server refused the ``response_format`` asked (any status; its words say so)."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(f"{status}: {text}")
        self.status, self.text = status, text


@dataclass(slots=True)
class _Sent:
    """How far a streamed answer got: for the words of a timeout."""

    started: float = field(default_factory=time.monotonic)
    received: int = 0
    read_prompt: int | None = None
    last_told: float = 0.0

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def got(self) -> str:
        if self.received:
            return f"{self.received} token(s) received in {self.elapsed:.0f}s"
        if self.read_prompt:
            return f"{self.read_prompt} prompt token(s) read in {self.elapsed:.0f}s, no answer yet"
        return f"nothing received in {self.elapsed:.0f}s"


class OpenAIExtractor:
    """A local model through ``client.chat.completions.create`` of the ``openai`` SDK."""

    name = "openai"
    capabilities = Capabilities(model_backed=True)

    def __init__(
        self,
        *,
        base_url: str,
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = 600.0,
        stall_timeout: float = 300.0,
        max_retries: int = 3,
        max_chars: int = 120_000,
        max_tokens: int = MAX_TOKENS,
        context_tokens: int | None = None,
        structured_output: str = "auto",
        stream: bool = True,
    ) -> None:
        import openai

        self.base_url = base_url.rstrip("/")
        self.root = server_root(self.base_url)
        self._model = model
        self.timeout = timeout
        self.stall_timeout = min(stall_timeout, timeout)
        self.max_retries = max_retries
        self.max_chars = max_chars
        self.max_tokens = max_tokens
        self.context_tokens = context_tokens
        if structured_output not in ("auto", *STRUCTURED):
            raise ExtractorError(
                f"structured_output must be auto, json_schema, json_object or none, not {structured_output!r}"
            )
        self.structured_output = structured_output
        self.mode = "json_schema" if structured_output == "auto" else structured_output
        """How the model is held to JSON now (``auto`` steps down as the server refuses)."""
        self.refusals: list[str] = []
        """What the server refused, in words (``json_schema (500: …)``), for the result's notes."""
        self.stream = stream
        self._lock = threading.Lock()
        self._probe_lock = threading.Lock()
        self._info: ServerInfo | None = None
        self._counts: dict[str, int] = {}
        key = api_key or os.environ.get("OPENAI_API_KEY")
        # retries are ours (_send): a timed-out request is never sent again while the server may still work
        self.client: Any = openai.OpenAI(
            api_key=key or NO_KEY, base_url=self.base_url, timeout=timeout, max_retries=0
        )

    @classmethod
    def from_config(cls, config: Config, *, base_url: str | None = None) -> OpenAIExtractor:
        """Build from the config: ``openai_base_url``, ``openai_model``, ``openai_api_key``, the local
        server's timeouts, retries, answer and context sizes, structured output. No server configured
        is a one-line error."""
        url = base_url or config.openai_base_url
        if not url:
            raise ExtractorError(
                "the openai extractor needs a server: set openai_base_url (Ollama: http://localhost:11434/v1, "
                "llama-server: http://localhost:8080/v1; see docs/extractors.md)"
            )
        return cls(
            base_url=url,
            model=config.openai_model,
            api_key=config.openai_api_key,
            timeout=config.openai_timeout,
            stall_timeout=config.openai_stall_timeout,
            max_retries=config.max_retries,
            max_chars=config.max_digest_chars,
            max_tokens=config.openai_max_tokens,
            context_tokens=config.context_tokens,
            structured_output=config.structured_output,
        )

    # -- capabilities ----------------------------------------------------------------------------

    @property
    def model(self) -> str | None:
        """The model asked: the configured one, else the one the server serves (once known)."""
        return self._model

    @property
    def schema_refused(self) -> str | None:
        """What the server refused (None: nothing), as the notes say it."""
        return "; ".join(self.refusals) or None

    def structured(self) -> StructuredModel | None:
        """This extractor answers structured questions (the dedup judge's) with the same model."""
        return self

    def max_concurrency(self) -> int:
        """Requests to send at once: the server's slots when it says (llama.cpp), else one — a local
        server given more than it runs at once only queues them, and each waits past its timeout."""
        return max(1, self.server().slots or 1)

    def _explain(self, exc: Exception) -> ExtractorError:
        return explain_openai_error(
            exc,
            base_url=self.base_url,
            model=self._model,
            retries=self.max_retries,
            timeout=self.timeout,
            max_chars=self.max_chars,
        )

    def resolve_model(self) -> str:
        """The configured model, else the only one the server lists (``GET /models``)."""
        import openai

        with self._lock:
            if self._model:
                return self._model
            try:
                ids = [m.id for m in self.client.models.list(timeout=local_server.PROBE_TIMEOUT)]
            except openai.APIError as exc:
                raise self._explain(exc) from None
            if len(ids) != 1:
                listed = ", ".join(ids[:5]) + (", …" if len(ids) > 5 else "") if ids else "none"
                raise ExtractorError(
                    f"the model server at {self.base_url} serves {len(ids)} model(s) ({listed}): "
                    "set openai_model to the one to use"
                )
            self._model = ids[0]
            return self._model

    # -- what the server can do ------------------------------------------------------------------

    def _get(self, url: str) -> Any:
        return self.client.get(url, cast_to=object, options={"timeout": local_server.PROBE_TIMEOUT})

    def _post(self, url: str, body: dict[str, Any]) -> Any:
        return self.client.post(
            url, body=body, cast_to=object, options={"timeout": local_server.PROBE_TIMEOUT}
        )

    def server(self) -> ServerInfo:
        """What the server says it can do (asked once; a server that says nothing is ``unknown``), with
        the ``context_tokens`` setting applied."""
        with self._probe_lock:
            if self._info is None:
                self._info = local_server.with_setting(self._probe(), self.context_tokens)
            return self._info

    def _probe(self) -> ServerInfo:
        """llama.cpp's ``/props``, LM Studio's ``/api/v0/models``, Ollama's ``/api/ps`` and ``/api/show``,
        vLLM's ``/v1/models``: the first that says a context wins. A server that cannot be reached
        is ``unknown`` (the request itself then says it cannot be reached)."""
        import openai

        def ask(how: Callable[[], Any]) -> Any:
            try:
                return how()
            except openai.APIConnectionError:
                raise
            except (openai.APIError, ValueError, TypeError):
                return None

        try:
            info = local_server.from_llama_props(ask(lambda: self._get(f"{self.root}/props")))
            if info:
                return info
            info = local_server.from_lm_studio(
                ask(lambda: self._get(f"{self.root}/api/v0/models")), self._model
            )
            if info:
                return info
            version = ask(lambda: self._get(f"{self.root}/api/version"))
            if isinstance(version, dict) and "version" in version:
                ps = ask(lambda: self._get(f"{self.root}/api/ps"))
                show = ask(lambda: self._post(f"{self.root}/api/show", {"model": self.resolve_model()}))
                return local_server.from_ollama(ps, show, self._model) or ServerInfo(
                    "ollama", local_server.OLLAMA_DEFAULT_CONTEXT, "Ollama's default (no num_ctx set)"
                )
            info = local_server.from_models_list(
                ask(lambda: self._get(f"{self.base_url}/models")), self._model
            )
            return info or ServerInfo()
        except (openai.APIConnectionError, ExtractorError):
            return ServerInfo()

    def count(self, text: str) -> tuple[int, bool]:
        """Tokens of ``text`` in the server's tokenizer (``/tokenize``) and True, else a safe estimate
        and False."""
        if not text:
            return 0, self.server().tokenizer
        if self.server().tokenizer:
            cached = self._counts.get(text)
            if cached is not None:
                return cached, True
            try:
                got = self._post(f"{self.root}/tokenize", {"content": text, "add_special": False})
                tokens = got.get("tokens") if isinstance(got, dict) else None
                if isinstance(tokens, list):
                    if len(text) < 20_000:
                        self._counts[text] = len(tokens)
                    return len(tokens), True
            except Exception:  # noqa: BLE001 - a tokenizer that fails is replaced by the estimate
                pass
        return estimate_tokens(text), False

    def prompt_tokens(self, system: str, user: str) -> tuple[int, bool]:
        """The tokens a request with these two messages takes before the answer, and whether counted exactly."""
        s, exact_s = self.count(system)
        u, exact_u = self.count(user)
        return s + u + TEMPLATE_TOKENS, exact_s and exact_u

    def answer_room(self, context: int) -> int:
        """Tokens kept for the answer in a context of ``context``: a quarter, within
        [``MIN_ANSWER_TOKENS``, ``max_tokens``]."""
        return max(min(MIN_ANSWER_TOKENS, self.max_tokens), min(self.max_tokens, context // 4))

    # -- fitting a digest to the context -----------------------------------------------------------

    def plan(self, digest: Digest, context: ExtractContext) -> tuple[list[Part], list[str]]:
        """The digest's parts, each small enough that the system prompt, the user message with that
        part and room for the answer fit the server's context (when it is known; else by characters,
        ``max_digest_chars``), and the note a split leaves."""
        info = self.server()
        if info.context is None:
            return parts_for(digest, context, self.max_chars)
        ctx, room = info.context, self.answer_room(info.context)
        empty = user_message(digest, context, Part(1, 2, "", session_context(digest))) + ANSWER_FORMAT
        fixed, _ = self.prompt_tokens(SYSTEM_PROMPT, empty)
        left = ctx - fixed - room
        if left < MIN_PART_TOKENS:
            raise ExtractorError(
                f"the model at {self.base_url} has a context of {ctx:,} tokens ({info.context_source}): too "
                f"small for the system prompt and instructions ({fixed:,} tokens), some transcript and an "
                f"answer ({room:,}); start the server with a larger context (llama-server -c 8192; Ollama: "
                "OLLAMA_CONTEXT_LENGTH=8192 or num_ctx) or lower openai_max_tokens"
            )
        rendered = "\n".join(render_turn(t) for t in digest.turns)
        tokens, _ = self.count(rendered)
        per_token = len(rendered) / max(1, tokens)
        budget = min(self.max_chars, context.max_chars or self.max_chars, max(1000, int(left * per_token)))
        for _ in range(8):
            parts = split_digest(digest, budget)
            sizes = [self.prompt_tokens(SYSTEM_PROMPT, self.user_for(digest, context, p))[0] for p in parts]
            worst = max(sizes)
            if worst + room <= ctx:
                break
            if budget <= 1000:
                raise ExtractorError(
                    f"the model at {self.base_url} has a context of {ctx:,} tokens ({info.context_source}): "
                    f"a part of 1,000 characters still takes {worst:,} tokens with the prompt; start the server "
                    "with a larger context or lower openai_max_tokens"
                )
            budget = max(1000, int(budget * min(0.9, (ctx - room - fixed) / max(1, worst - fixed))))
        notes: list[str] = []
        if len(parts) > 1:
            total = sum(len(p.text) for p in parts)
            notes.append(
                f"digest of {total:,} characters (~{tokens:,} tokens) was split into {len(parts)} parts of "
                f"at most {budget:,} characters to fit the model's context of {ctx:,} tokens "
                f"({info.context_source}; {fixed:,} for the prompt, {room:,} kept for the answer), one "
                "model call each; nothing was truncated"
            )
        return parts, notes

    @staticmethod
    def user_for(digest: Digest, context: ExtractContext, part: Part) -> str:
        """The user message of one part, with the answer's JSON shape after it."""
        return user_message(digest, context, part) + ANSWER_FORMAT

    def request_bodies(self, digest: Digest, context: ExtractContext) -> list[dict[str, Any]]:
        """The chat-completion bodies :meth:`extract` would send for ``digest`` (the server is asked
        its context and tokenizer, nothing else), each with its size: ``prompt_tokens`` and whether
        counted by the server's tokenizer (``tokens_exact``)."""
        parts, _ = self.plan(digest, context)
        model = self._model or "(the one model the server serves)"
        try:
            model = self.resolve_model()
        except ExtractorError:
            pass
        bodies = []
        for part in parts:
            user = self.user_for(digest, context, part)
            tokens, exact = self.prompt_tokens(SYSTEM_PROMPT, user)
            body = self._params(model, SYSTEM_PROMPT, user, self._max_tokens_for(tokens))
            fmt = self._format(self.mode, ExtractionOut)
            if fmt is not None:
                body["response_format"] = fmt
            if self.stream:
                body.update(stream=True, stream_options={"include_usage": True})
            bodies.append({"body": body, "prompt_tokens": tokens, "tokens_exact": exact})
        return bodies

    def _max_tokens_for(self, prompt: int) -> int:
        """``max_tokens`` for a prompt of ``prompt`` tokens: what the context leaves, at most ``max_tokens``."""
        ctx = self.server().context
        if ctx is None:
            return self.max_tokens
        return max(16, min(self.max_tokens, ctx - prompt))

    # -- one call ----------------------------------------------------------------------------------

    @staticmethod
    def _params(model: str, system: str, user: str, max_tokens: int) -> dict[str, Any]:
        return {
            "model": model,
            "max_tokens": max_tokens,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        }

    @staticmethod
    def _format(mode: str, schema: type[BaseModel]) -> dict[str, Any] | None:
        if mode == "json_schema":
            return {
                "type": "json_schema",
                "json_schema": {"name": schema.__name__, "strict": True, "schema": json_schema(schema)},
            }
        if mode == "json_object":
            return {"type": "json_object"}
        return None

    def _send(
        self, params: dict[str, Any], fmt: dict[str, Any] | None, tell: Callable[[str], None]
    ) -> _Reply:
        """One request (streamed when the server streams), tried again only on a refused connection, a
        429 or a 5xx that is not a refusal of ``fmt``; a timeout or a stall is never sent again."""
        import openai

        body = dict(params)
        if fmt is not None:
            body["response_format"] = fmt
        attempt = 0
        while True:
            try:
                return self._stream_call(body, tell) if self.stream else self._plain_call(body)
            except openai.APIStatusError as exc:
                text = server_message(exc)
                if _CONTEXT.search(text):
                    raise self._explain(exc) from None
                if fmt is not None and exc.status_code >= 400 and _FORMAT.search(text):
                    raise _Refused(exc.status_code, text) from None
                if self.stream and exc.status_code in (400, 422) and "stream" in text.lower():
                    self.stream = False  # a server that does not stream: every later call waits whole
                    continue
                retry = exc.status_code == 429 or exc.status_code >= 500
                if not retry or attempt >= self.max_retries:
                    raise self._explain(exc) from None
            except openai.APITimeoutError as exc:
                raise _worked(self._explain(exc)) from None
            except openai.APIConnectionError as exc:
                if attempt >= self.max_retries:
                    error = self._explain(exc)
                    raise (error if error.args[0].startswith("cannot reach") else _worked(error)) from None
            except ExtractorError as exc:  # a stall, a deadline, a broken-off or unreadable answer
                raise _worked(exc) from None
            except openai.APIError as exc:  # an error event inside the stream (no status)
                raise _worked(self._explain(exc)) from None
            attempt += 1
            time.sleep(min(8.0, 0.5 * 2 ** (attempt - 1)))

    def _plain_call(self, body: dict[str, Any]) -> _Reply:
        """A whole (not streamed) chat completion."""
        from openai.types.chat import ChatCompletion

        try:
            completion = self.client.chat.completions.create(**body)
        except ValueError as exc:  # a 200 whose JSON body is cut or broken
            raise self._not_an_answer("a body that is not valid JSON", str(exc)) from None
        if not isinstance(completion, ChatCompletion):
            raise self._not_an_answer("something other than a chat completion", str(completion))
        choices = completion.choices or []
        message = choices[0].message if choices else None
        finish: str | None = choices[0].finish_reason if choices else None
        text = (message.content if message is not None else None) or ""
        if not text.strip() and message is not None and getattr(message, "refusal", None):
            text = ""
            finish = f"refused: {_first_line(str(message.refusal))}"
        usage = usage_of(completion)
        prompt = completion.usage.prompt_tokens if completion.usage is not None else None
        return _Reply(text, finish, usage, prompt)

    def _not_an_answer(self, what: str, seen: str) -> ExtractorError:
        return ExtractorError(
            f"the model server at {self.base_url} answered 200 with {what} ({snippet(seen)!r}): not an "
            "OpenAI chat completion; is openai_base_url the server's /v1 address?"
        )

    def _stream_call(self, body: dict[str, Any], tell: Callable[[str], None]) -> _Reply:
        """A streamed chat completion: progress told as tokens arrive; a deadline or a stall closes the
        connection (the server's cue to stop working on it)."""
        import openai

        extra = {"return_progress": True} if self.server().kind == "llama.cpp" else None
        sent = _Sent()
        try:
            stream = self.client.chat.completions.create(
                **body,
                stream=True,
                stream_options={"include_usage": True},
                extra_body=extra,
                timeout=openai.Timeout(
                    self.timeout, connect=min(10.0, self.timeout), read=self.stall_timeout
                ),
            )
        except openai.APITimeoutError:
            if sent.elapsed < self.timeout - 0.5:  # the stall limit, shorter than the whole one
                raise ExtractorError(self._stalled(sent)) from None
            raise
        try:
            ctype = stream.response.headers.get("content-type", "")
            if "event-stream" not in ctype:
                return self._unstreamed(stream.response.read(), ctype)
            texts: list[str] = []
            finish: str | None = None
            usage: Any = None
            for chunk in stream:
                extra_fields = chunk.model_extra or {}
                progress = extra_fields.get("prompt_progress")
                if isinstance(progress, dict) and isinstance(progress.get("processed"), int):
                    sent.read_prompt = progress["processed"]
                    tell(
                        f"reading the prompt: {progress['processed']:,}/{progress.get('total', '?'):,} tokens"
                    )
                for choice in chunk.choices or []:
                    if choice.delta is not None and choice.delta.content:
                        texts.append(choice.delta.content)
                        sent.received += 1
                    if choice.finish_reason:
                        finish = choice.finish_reason
                if chunk.usage is not None:
                    usage = chunk.usage
                now = time.monotonic()
                if now - sent.started > self.timeout:
                    raise ExtractorError(self._deadline(sent))
                if sent.received and now - sent.last_told >= PROGRESS_EVERY:
                    sent.last_told = now
                    tell(f"{sent.received} token(s) received, {sent.elapsed:.0f}s")
        except (openai.APIError, ExtractorError):
            raise
        except Exception as exc:  # the transport's own errors, raised while the stream is read
            kind = type(exc).__name__
            if "Timeout" in kind:
                if sent.elapsed >= self.timeout - 0.5:
                    raise ExtractorError(self._deadline(sent)) from None
                raise ExtractorError(self._stalled(sent)) from None
            raise ExtractorError(
                f"the model server at {self.base_url} broke off its answer ({sent.got()}; {kind}: "
                f"{_first_line(str(exc), 120)}): did it stop or crash?"
            ) from None
        finally:
            stream.close()  # the server takes the closed connection as a cancel
        text = "".join(texts)
        if usage is not None:
            prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
            details = getattr(usage, "prompt_tokens_details", None)
            cached = int(getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
            got = Usage(1, max(0, prompt - cached), int(getattr(usage, "completion_tokens", 0) or 0), cached)
            return _Reply(text, finish, got, prompt)
        return _Reply(text, finish, Usage(calls=1, output_tokens=sent.received), None)

    def _stalled(self, sent: _Sent) -> str:
        return (
            f"the model server at {self.base_url} sent nothing for {self.stall_timeout:g}s ({sent.got()}): "
            "it looks stuck, not slow; the request was cancelled and is not sent again: check the server, "
            "or raise openai_stall_timeout"
        )

    def _deadline(self, sent: _Sent) -> str:
        return (
            f"the model server at {self.base_url} was still answering after {self.timeout:g}s ({sent.got()}: "
            "slow, not stuck); the request was cancelled and is not sent again: raise openai_timeout, "
            "lower openai_max_tokens or use a smaller model"
        )

    def _unstreamed(self, raw: bytes, ctype: str) -> _Reply:
        """A 200 to a streamed request that is not a stream: a whole chat completion is taken as one
        (some servers ignore ``stream``); anything else (HTML, a cut body) is one line naming the server."""
        import json

        from openai.types.chat import ChatCompletion

        text = raw.decode("utf-8", "replace")
        try:
            data = json.loads(text)
        except ValueError:
            what = (
                "an HTML page"
                if "html" in ctype or text.lstrip()[:1] == "<"
                else "a body that is not valid JSON"
            )
            raise self._not_an_answer(f"{what} ({ctype or 'no content-type'})", text) from None
        try:
            completion = ChatCompletion.model_validate(data)
        except pydantic.ValidationError:
            raise self._not_an_answer("JSON that is not a chat completion", text) from None
        choices = completion.choices or []
        content = (choices[0].message.content if choices else None) or ""
        prompt = completion.usage.prompt_tokens if completion.usage is not None else None
        return _Reply(content, choices[0].finish_reason if choices else None, usage_of(completion), prompt)

    def answer(
        self,
        system: str,
        user: str,
        schema: type[BaseModel],
        *,
        max_tokens: int = MAX_TOKENS,
        progress: Callable[[str], None] | None = None,
        counted: tuple[int, bool] | None = None,
    ) -> Answer:
        """Ask once (stepping down the structured-output ladder as the server refuses) and read the
        answer leniently into ``schema``; transport errors raise one-line ExtractorErrors."""
        model = self.resolve_model()
        params = self._params(model, system, user, max_tokens)
        tell = progress or (lambda _message: None)
        while True:
            mode = self.mode
            try:
                reply = self._send(params, self._format(mode, schema), tell)
                break
            except _Refused as refused:
                with self._lock:
                    if self.mode == mode:
                        self.refusals.append(f"{mode} ({refused.status}: {refused.text})")
                        if self.structured_output != "auto":
                            raise ExtractorError(
                                f"the model server at {self.base_url} refused response_format {mode} "
                                f'({refused.status}: {refused.text}): set structured_output = "auto" (or '
                                "another of json_schema, json_object, none)"
                            ) from None
                        self.mode = STRUCTURED[STRUCTURED.index(mode) + 1]
        cut = self._cut(reply, counted)
        finish = reply.finish
        if not reply.text.strip():
            why = finish if finish and finish.startswith("refused") else f"finish reason: {finish or 'none'}"
            return Answer(
                None,
                reply.usage,
                problem=f"the model returned no text ({why})",
                finish_reason=finish,
                cut=cut,
            )
        field_name = _list_field(schema) or "candidates"
        try:
            value, given_up = loads_lenient(reply.text, list_key=field_name)
        except NoJson:
            return Answer(
                None,
                reply.usage,
                problem=f"the model's answer is not JSON ({snippet(reply.text)!r})",
                finish_reason=finish,
                cut=cut,
            )
        try:
            parsed = schema.model_validate(_shaped(value, schema))
        except pydantic.ValidationError as exc:
            return Answer(
                None,
                reply.usage,
                problem=f"the model's JSON does not fit the schema ({exc.error_count()} error(s))",
                finish_reason=finish,
                cut=cut,
            )
        return Answer(parsed, reply.usage, given_up=given_up, finish_reason=finish, cut=cut)

    def _cut(self, reply: _Reply, counted: tuple[int, bool] | None) -> str | None:
        """Whether the server read fewer prompt tokens than were sent (Ollama cuts a long prompt to its
        context without a word), in words."""
        if counted is None or not reply.prompt_tokens:
            return None
        sent, exact = counted
        read = reply.prompt_tokens
        floor = (sent - TEMPLATE_TOKENS) * CUT_RATIO if exact else sent * 0.5
        if read >= floor:
            return None
        how = "counted" if exact else "estimated"
        return (
            f"the model server at {self.base_url} read {read:,} prompt tokens of the ~{sent:,} sent ({how}): it "
            "cut the prompt, so the model did not see all of it; set context_tokens to the server's real "
            "context (Ollama: OLLAMA_CONTEXT_LENGTH for the service, or num_ctx in a Modelfile)"
        )

    def ask(
        self, system: str, user: str, schema: type[BaseModel], *, max_tokens: int = MAX_TOKENS
    ) -> tuple[BaseModel | None, Usage]:
        """The ``StructuredModel`` call: the answer as ``schema`` (None when unreadable) and its usage."""
        counted = self.prompt_tokens(system, user) if self.server().context else None
        if counted is not None:
            max_tokens = min(max_tokens, self._max_tokens_for(counted[0]))
        got = self.answer(system, user, schema, max_tokens=max_tokens, counted=counted)
        return got.parsed, got.usage

    # -- extraction --------------------------------------------------------------------------------

    def candidates_from(
        self, out: ExtractionOut, digest: Digest, context: ExtractContext
    ) -> list[RawCandidate]:
        """RawCandidates from a validated answer."""
        return lessons_of(out, digest, context, extractor=self.name, model=self.model)

    def extract(self, digest: Digest, context: ExtractContext) -> ExtractionResult:
        """One call per digest part, each fitted to the server's context. A part whose answer cannot be
        read is a note (and the whole an ExtractorError when no part could be read); transport errors
        raise one-line ExtractorErrors."""
        self.resolve_model()
        parts, notes = self.plan(digest, context)
        result = ExtractionResult(session=digest.session, notes=notes)
        try:
            return self._extract_parts(digest, context, parts, result)
        except ExtractorError as exc:
            done = exc.usage if isinstance(exc.usage, Usage) else Usage()
            exc.usage = result.usage + done
            raise

    def _extract_parts(
        self, digest: Digest, context: ExtractContext, parts: list[Part], result: ExtractionResult
    ) -> ExtractionResult:
        malformed, problems, read = 0, [], 0
        for part in parts:
            where = f"part {part.index}/{part.total}: " if part.total > 1 else ""
            user = self.user_for(digest, context, part)
            counted = self.prompt_tokens(SYSTEM_PROMPT, user)
            max_tokens = self._max_tokens_for(counted[0])
            context.tell(f"{where}sending ~{counted[0]:,} prompt tokens, answer up to {max_tokens:,}")
            got = self.answer(
                SYSTEM_PROMPT,
                user,
                ExtractionOut,
                max_tokens=max_tokens,
                progress=functools.partial(_prefixed, context.tell, where),
                counted=counted,
            )
            result.usage = result.usage + got.usage
            if got.cut:
                result.notes.append(where + got.cut)
            if got.finish_reason == "length":
                result.notes.append(
                    f"{where}the model's answer was cut off at max_tokens={max_tokens}; its complete items were kept"
                )
            if not isinstance(got.parsed, ExtractionOut):
                label = f"part {part.index} of {part.total}: " if part.total > 1 else ""
                problems.append(label + (got.problem or "no answer"))
                continue
            read += 1
            malformed += got.parsed.malformed + got.given_up
            result.candidates.extend(self.candidates_from(got.parsed, digest, context))
        if self.refusals:
            result.notes.append(
                f"the server refused response_format {self.schema_refused}; asked "
                + ("with plain JSON instructions" if self.mode == "none" else f"with {self.mode}")
                + " and read the answer leniently"
            )
        if not read:
            raise ExtractorError(
                f"{problems[0]} (model {self.model} at {self.base_url}); nothing was kept from it"
            )
        result.notes.extend(problems)
        result.malformed = malformed
        if malformed:
            result.notes.append(f"{malformed} malformed candidate(s) in the model's output were dropped")
        return result
