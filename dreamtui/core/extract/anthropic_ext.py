"""The ``anthropic`` extractor: Claude through the official SDK with structured output.

One ``messages.parse`` call per digest part (a long digest is split within ``max_digest_chars``;
the result's ``notes`` say so). The fixed system prompt is cached (``cache_control``), no tools are
offered, and the digest travels as delimited, redacted data. SDK failures become one-line
:class:`ExtractorError` messages; the SDK's own ``timeout``/``max_retries`` handle waiting.
"""

from __future__ import annotations

import json
import os
from typing import Any

import pydantic

from dreamtui.core.config import Config
from dreamtui.core.errors import ExtractorAuthError, ExtractorError
from dreamtui.core.extract.base import Capabilities, ExtractContext
from dreamtui.core.extract.prompt import ExtractionOut, lessons_of, parts_for, system_blocks, user_message
from dreamtui.core.models import Digest, ExtractionResult, RawCandidate, Usage

MAX_TOKENS = 4096

__all__ = ["AnthropicExtractor", "AnthropicModel", "ExtractorAuthError", "explain_api_error", "usage_of"]


def _first_line(text: str, limit: int = 200) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _api_message(exc: Any) -> str:
    """The ``error.message`` of an API error body, else the exception text."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return _first_line(err["message"])
    return _first_line(str(exc))


def explain_api_error(
    exc: Exception, *, model: str, retries: int, timeout: float, base_url: str | None = None
) -> ExtractorError:
    """A one-line ExtractorError for an anthropic SDK exception."""
    import anthropic

    tries = f"after {retries} retr{'y' if retries == 1 else 'ies'}"
    if isinstance(exc, anthropic.AuthenticationError):
        return ExtractorAuthError("the Anthropic API rejected the API key (401): check ANTHROPIC_API_KEY")
    if isinstance(exc, anthropic.PermissionDeniedError):
        return ExtractorAuthError(f"the API key may not use this (403): {_api_message(exc)}")
    if isinstance(exc, anthropic.RateLimitError):
        return ExtractorError(
            f"rate limited by the Anthropic API (429) {tries}: wait a while or lower the concurrency"
        )
    if isinstance(exc, anthropic.NotFoundError):
        return ExtractorError(f"model {model!r} not found (404): set a current model with --model")
    if isinstance(exc, anthropic.APIStatusError):
        status = exc.status_code
        if status == 529 or "overloaded" in _api_message(exc).lower():
            return ExtractorError(f"the Anthropic API is overloaded (529) {tries}: try again later")
        if status >= 500:
            return ExtractorError(f"the Anthropic API failed ({status}) {tries}: {_api_message(exc)}")
        return ExtractorError(f"the Anthropic API refused the request ({status}): {_api_message(exc)}")
    if isinstance(exc, anthropic.APITimeoutError):
        return ExtractorError(f"the Anthropic API did not answer within {timeout:g}s ({tries})")
    if isinstance(exc, anthropic.APIConnectionError):
        where = f" at {base_url}" if base_url else ""
        cause = exc.__cause__ or exc.__context__
        reason = _first_line(str(cause)) if cause else "connection failed"
        return ExtractorError(f"cannot reach the Anthropic API{where} ({tries}): {reason}")
    return ExtractorError(f"Anthropic SDK error: {_first_line(str(exc))}")


def usage_of(message: Any) -> Usage:
    """Usage of one response: input counts everything not read from cache (incl. cache writes)."""
    u = getattr(message, "usage", None)
    if u is None:
        return Usage(calls=1)
    return Usage(
        calls=1,
        input_tokens=int(getattr(u, "input_tokens", 0) or 0)
        + int(getattr(u, "cache_creation_input_tokens", 0) or 0),
        output_tokens=int(getattr(u, "output_tokens", 0) or 0),
        cached_tokens=int(getattr(u, "cache_read_input_tokens", 0) or 0),
    )


def text_of(message: Any) -> str:
    """The concatenated text blocks of a response."""
    return "".join(
        getattr(b, "text", "")
        for b in getattr(message, "content", []) or []
        if getattr(b, "type", None) == "text"
    )


class AnthropicModel:
    """The anthropic extractor's :class:`~dreamtui.core.extract.base.StructuredModel`: one
    ``messages.parse`` call with the system prompt as one cached block and a pydantic output format."""

    name = "anthropic"

    def __init__(
        self, client: Any, *, model: str, retries: int, timeout: float, base_url: str | None = None
    ) -> None:
        self.client = client
        self.model: str | None = model
        self.retries, self.timeout, self.base_url = retries, timeout, base_url

    def ask(
        self, system: str, user: str, schema: type[pydantic.BaseModel], *, max_tokens: int = MAX_TOKENS
    ) -> tuple[pydantic.BaseModel | None, Usage]:
        """The validated answer (None when the model gave no structured answer) and its usage."""
        import anthropic

        model = self.model or ""
        try:
            message = self.client.messages.parse(
                model=model,
                max_tokens=max_tokens,
                system=[{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}],
                messages=[{"role": "user", "content": user}],
                output_format=schema,
            )
        except anthropic.APIError as exc:
            raise explain_api_error(
                exc, model=model, retries=self.retries, timeout=self.timeout, base_url=self.base_url
            ) from None
        except pydantic.ValidationError as exc:
            raise ExtractorError(
                f"the model's answer is not valid JSON for the schema ({exc.error_count()} error(s))"
            ) from None
        out = getattr(message, "parsed_output", None)
        if not isinstance(out, schema):
            if getattr(message, "stop_reason", None) == "max_tokens":
                raise ExtractorError(f"the model's answer was cut off at max_tokens={max_tokens}")
            return None, usage_of(message)
        return out, usage_of(message)


class AnthropicExtractor:
    """Claude via ``client.messages.parse`` with a pydantic output format."""

    name = "anthropic"
    capabilities = Capabilities(batches=True, model_backed=True)
    """Its sessions may go through the Message Batches API (``batch.py``); its model judges and consolidates."""

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 3,
        max_chars: int = 120_000,
        max_tokens: int = MAX_TOKENS,
        client: Any | None = None,
    ) -> None:
        self.model = model
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_chars = max_chars
        self.max_tokens = max_tokens
        self.base_url = base_url or os.environ.get("ANTHROPIC_BASE_URL") or None
        if client is None:
            key = api_key or os.environ.get("ANTHROPIC_API_KEY")
            if not key:
                raise ExtractorAuthError("the anthropic extractor needs ANTHROPIC_API_KEY in the environment")
            import anthropic

            client = anthropic.Anthropic(
                api_key=key, base_url=self.base_url, timeout=timeout, max_retries=max_retries
            )
        self.client = client

    @classmethod
    def from_config(cls, config: Config, *, base_url: str | None = None) -> AnthropicExtractor:
        """Build from the config: model, timeout, retries, digest budget; key from ANTHROPIC_API_KEY."""
        return cls(
            model=config.model,
            base_url=base_url,
            timeout=config.api_timeout,
            max_retries=config.max_retries,
            max_chars=config.max_digest_chars,
        )

    def structured(self) -> AnthropicModel:
        """The same client and model, for the dedup judge."""
        return AnthropicModel(
            self.client,
            model=self.model,
            retries=self.max_retries,
            timeout=self.timeout,
            base_url=self.base_url,
        )

    # -- requests ------------------------------------------------------------------------------

    def requests(self, digest: Digest, context: ExtractContext) -> tuple[list[dict[str, Any]], list[str]]:
        """The ``messages`` params of every call this digest needs, and notes about splitting."""
        parts, notes = parts_for(digest, context, self.max_chars)
        params = [
            {
                "model": self.model,
                "max_tokens": self.max_tokens,
                "system": system_blocks(),
                "messages": [{"role": "user", "content": user_message(digest, context, part)}],
            }
            for part in parts
        ]
        return params, notes

    def request_bodies(self, digest: Digest, context: ExtractContext) -> list[dict[str, Any]]:
        """The exact JSON bodies the SDK would send for this digest, one per call; nothing leaves the machine.

        The real SDK builds each request (``messages.parse`` with the output schema) and an in-process
        transport records it and answers with an empty result, so what is shown is what would be sent.
        """
        import anthropic
        import httpx2

        bodies: list[dict[str, Any]] = []

        def record(request: httpx2.Request) -> httpx2.Response:
            bodies.append(json.loads(request.content))
            empty = {
                "id": "msg_show_request",
                "type": "message",
                "role": "assistant",
                "model": self.model,
                "content": [{"type": "text", "text": '{"candidates": []}'}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            }
            return httpx2.Response(200, json=empty)

        client = anthropic.Anthropic(
            api_key="show-request",
            base_url="http://show-request.invalid",
            max_retries=0,
            http_client=httpx2.Client(transport=httpx2.MockTransport(record)),
        )
        params, _notes = self.requests(digest, context)
        for call in params:
            client.messages.parse(output_format=ExtractionOut, **call)
        return bodies

    # -- results -------------------------------------------------------------------------------

    def candidates_from(
        self, out: ExtractionOut, digest: Digest, context: ExtractContext, model: str | None = None
    ) -> list[RawCandidate]:
        """RawCandidates from a validated answer."""
        return lessons_of(out, digest, context, extractor=self.name, model=model or self.model)

    def extract(self, digest: Digest, context: ExtractContext) -> ExtractionResult:
        """One call per digest part; raises ExtractorError with a one-line message on failure."""
        import anthropic

        params, notes = self.requests(digest, context)
        result = ExtractionResult(session=digest.session, notes=notes)
        malformed = 0
        for call in params:
            try:
                message = self.client.messages.parse(output_format=ExtractionOut, **call)
            except anthropic.APIError as exc:
                raise explain_api_error(
                    exc,
                    model=self.model,
                    retries=self.max_retries,
                    timeout=self.timeout,
                    base_url=self.base_url,
                ) from None
            except pydantic.ValidationError as exc:
                raise ExtractorError(
                    f"the model's output is not valid JSON for the schema "
                    f"({exc.error_count()} error(s)); nothing was kept from it"
                ) from None
            result.usage = result.usage + usage_of(message)
            out = getattr(message, "parsed_output", None)
            if out is None:
                reason = getattr(message, "stop_reason", None) or "no text"
                if reason == "max_tokens":
                    raise ExtractorError(f"the model's answer was cut off at max_tokens={self.max_tokens}")
                result.notes.append(f"the model returned no structured answer (stop reason: {reason})")
                continue
            malformed += out.malformed
            result.candidates.extend(self.candidates_from(out, digest, context))
        result.malformed = malformed
        if malformed:
            result.notes.append(f"{malformed} malformed candidate(s) in the model's output were dropped")
        return result
