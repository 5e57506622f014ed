"""The ``openai`` extractor: a local model behind any OpenAI-compatible server, through the ``openai`` SDK.

Ollama, llama.cpp's ``llama-server``, LM Studio and vLLM all serve ``POST /v1/chat/completions``. The
request carries the same system prompt, user message and schema as the ``anthropic`` path
(``prompt.py``): the schema goes as ``response_format={"type": "json_schema", ...}``; a server that
refuses it (400) is asked again without it, and every answer is read leniently
(:mod:`~dreamtui.core.extract.lenient_json`), because small models bend JSON. Malformed items are
dropped and counted; the gate checks the rest as it checks Claude's. Every failure is one line that
names the server and what to do.
"""

from __future__ import annotations

import os
import re
import threading
from dataclasses import dataclass
from typing import Any, get_args, get_origin

import pydantic
from pydantic import BaseModel

from dreamtui.core.config import Config
from dreamtui.core.errors import ExtractorError
from dreamtui.core.extract.base import Capabilities, ExtractContext, StructuredModel
from dreamtui.core.extract.lenient_json import NoJson, loads_lenient, snippet
from dreamtui.core.extract.prompt import SYSTEM_PROMPT, ExtractionOut, lessons_of, parts_for, user_message
from dreamtui.core.models import Digest, ExtractionResult, RawCandidate, Usage

MAX_TOKENS = 4096
NO_KEY = "not-needed"
"""Sent as the key when none is configured: local servers ignore it, the SDK insists on one."""

ANSWER_FORMAT = (
    '\n\nAnswer with one JSON object and nothing else (no code fence, no prose): {"candidates": [{"claim": '
    '"…", "why": "…", "how_to_apply": "…", "type": "user|feedback|project|reference", "scope": '
    '"global|project", "quote": "…"}]}; {"candidates": []} when there is no lesson.'
)
"""Appended to the user message: a server that ignores the schema still shows the model its shape."""

_CONTEXT = re.compile(
    r"context (length|size|window)|maximum context|exceeds? (the )?(available )?context|too many tokens"
    r"|prompt is too long|input is too long|too long for",
    re.IGNORECASE,
)


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
            f"the model server at {base_url} did not answer within {timeout:g}s ({tries}): a local model "
            f"can be slow, so raise api_timeout, lower max_digest_chars (now {max_chars}) or use a smaller model"
        )
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc.__context__
        reason = _first_line(str(cause)) if cause else "connection failed"
        return ExtractorError(
            f"cannot reach the model server at {base_url} ({tries}: {reason}): start it (`ollama serve`, "
            "`llama-server -m model.gguf --port 8080`) or set openai_base_url to where it listens"
        )
    if not isinstance(exc, openai.APIStatusError):
        return ExtractorError(f"openai SDK error talking to {base_url}: {_first_line(str(exc))}")
    status, text = exc.status_code, server_message(exc)
    if _CONTEXT.search(text):
        return ExtractorError(
            f"the request is longer than the model's context at {base_url} ({status}: {text}): lower "
            f"max_digest_chars (now {max_chars}) or start the server with a larger context "
            "(Ollama: OLLAMA_CONTEXT_LENGTH; llama-server: -c)"
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
        timeout: float = 120.0,
        max_retries: int = 3,
        max_chars: int = 120_000,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        import openai

        self.base_url = base_url.rstrip("/")
        self._model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_chars = max_chars
        self.max_tokens = max_tokens
        self.schema_refused: str | None = None
        """Why the server refused ``response_format`` (then every later call goes without it)."""
        self._lock = threading.Lock()
        key = api_key or os.environ.get("OPENAI_API_KEY")
        self.client: Any = openai.OpenAI(
            api_key=key or NO_KEY, base_url=self.base_url, timeout=timeout, max_retries=max_retries
        )

    @classmethod
    def from_config(cls, config: Config, *, base_url: str | None = None) -> OpenAIExtractor:
        """Build from the config: ``openai_base_url``, ``openai_model``, ``openai_api_key``, timeout,
        retries, digest budget. No server configured is a one-line error."""
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
            timeout=config.api_timeout,
            max_retries=config.max_retries,
            max_chars=config.max_digest_chars,
        )

    # -- capabilities ----------------------------------------------------------------------------

    @property
    def model(self) -> str | None:
        """The model asked: the configured one, else the one the server serves (once known)."""
        return self._model

    def structured(self) -> StructuredModel | None:
        """This extractor answers structured questions (the dedup judge's) with the same model."""
        return self

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
                ids = [m.id for m in self.client.models.list()]
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

    # -- one call ----------------------------------------------------------------------------------

    def _create(self, params: dict[str, Any], with_schema: dict[str, Any] | None) -> Any:
        """One chat completion; a 400/422 on ``response_format`` is asked again once without it."""
        import openai

        if with_schema is not None and self.schema_refused is None:
            try:
                return self.client.chat.completions.create(**params, response_format=with_schema)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                text = server_message(exc)
                if _CONTEXT.search(text):
                    raise self._explain(exc) from None
                self.schema_refused = f"{exc.status_code}: {text}"
            except openai.APIError as exc:
                raise self._explain(exc) from None
        try:
            return self.client.chat.completions.create(**params)
        except openai.APIError as exc:
            raise self._explain(exc) from None

    def answer(
        self, system: str, user: str, schema: type[BaseModel], *, max_tokens: int = MAX_TOKENS
    ) -> Answer:
        """Ask once and read the answer leniently into ``schema``; transport errors raise ExtractorError."""
        model = self.resolve_model()
        params: dict[str, Any] = {
            "model": model,
            "max_tokens": max_tokens,
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        }
        fmt = {
            "type": "json_schema",
            "json_schema": {"name": schema.__name__, "strict": True, "schema": json_schema(schema)},
        }
        completion = self._create(params, fmt)
        usage = usage_of(completion)
        choices = getattr(completion, "choices", None) or []
        message = getattr(choices[0], "message", None) if choices else None
        finish = getattr(choices[0], "finish_reason", None) if choices else None
        text = getattr(message, "content", None) or ""
        if not text.strip():
            refusal = getattr(message, "refusal", None)
            why = f"refused: {_first_line(refusal)}" if refusal else f"finish reason: {finish or 'none'}"
            return Answer(None, usage, problem=f"the model returned no text ({why})", finish_reason=finish)
        field = _list_field(schema) or "candidates"
        try:
            value, given_up = loads_lenient(text, list_key=field)
        except NoJson:
            return Answer(
                None,
                usage,
                problem=f"the model's answer is not JSON ({snippet(text)!r})",
                finish_reason=finish,
            )
        try:
            parsed = schema.model_validate(_shaped(value, schema))
        except pydantic.ValidationError as exc:
            return Answer(
                None,
                usage,
                problem=f"the model's JSON does not fit the schema ({exc.error_count()} error(s))",
                finish_reason=finish,
            )
        return Answer(parsed, usage, given_up=given_up, finish_reason=finish)

    def ask(
        self, system: str, user: str, schema: type[BaseModel], *, max_tokens: int = MAX_TOKENS
    ) -> tuple[BaseModel | None, Usage]:
        """The ``StructuredModel`` call: the answer as ``schema`` (None when unreadable) and its usage."""
        got = self.answer(system, user, schema, max_tokens=max_tokens)
        return got.parsed, got.usage

    # -- extraction --------------------------------------------------------------------------------

    def candidates_from(
        self, out: ExtractionOut, digest: Digest, context: ExtractContext
    ) -> list[RawCandidate]:
        """RawCandidates from a validated answer."""
        return lessons_of(out, digest, context, extractor=self.name, model=self.model)

    def extract(self, digest: Digest, context: ExtractContext) -> ExtractionResult:
        """One call per digest part. A part whose answer cannot be read is a note (and the whole an
        ExtractorError when no part could be read); transport errors raise one-line ExtractorErrors."""
        parts, notes = parts_for(digest, context, self.max_chars)
        result = ExtractionResult(session=digest.session, notes=notes)
        malformed, problems, read = 0, [], 0
        for part in parts:
            user = user_message(digest, context, part) + ANSWER_FORMAT
            got = self.answer(SYSTEM_PROMPT, user, ExtractionOut, max_tokens=self.max_tokens)
            result.usage = result.usage + got.usage
            if got.finish_reason == "length":
                result.notes.append(
                    f"the model's answer was cut off at max_tokens={self.max_tokens}; its complete items were kept"
                )
            if not isinstance(got.parsed, ExtractionOut):
                where = f"part {part.index} of {part.total}: " if part.total > 1 else ""
                problems.append(where + (got.problem or "no answer"))
                continue
            read += 1
            malformed += got.parsed.malformed + got.given_up
            result.candidates.extend(self.candidates_from(got.parsed, digest, context))
        if self.schema_refused:
            result.notes.append(
                f"the server refused response_format json_schema ({self.schema_refused}); asked without "
                "it and read the answer leniently"
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
