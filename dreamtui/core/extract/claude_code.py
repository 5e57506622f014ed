"""The ``claude-code`` extractor: the person's Claude Code login, through the official Claude Agent SDK.

Most people who use Claude Code are logged in to it (a subscription) and have no API key. This
extractor asks the model they already pay for: one ``claude`` process per digest part (the CLI the
``claude-agent-sdk`` wheel bundles, or one on PATH), with the same system prompt, user message and
JSON schema as the ``anthropic`` extractor (``prompt.py``), as structured output (``--json-schema``),
no tools (``--tools ""``), one turn, no settings, hooks, MCP servers or CLAUDE.md of the person's
(``--setting-sources=``, ``--strict-mcp-config``), and no transcript: ``--no-session-persistence``,
in a dedicated working directory under dreamtui's state folder whose project folder discovery skips
(:data:`~dreamtui.core.ingest.formats.protocol.EXTRACTOR_WORKDIR`) should one appear anyway.

Every failure is one line: Claude Code missing, not logged in, a usage limit, a refused model (an
:class:`ExtractorAuthError`, so no further session is tried this cycle), a timeout, a crash. The
session stays undreamed for the next cycle.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import json
import logging
import os
import platform
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pydantic

from dreamtui.core.config import Config
from dreamtui.core.errors import ExtractorAuthError, ExtractorError, UsageLimitError
from dreamtui.core.extract.base import Capabilities, ExtractContext
from dreamtui.core.extract.limits import describe_reset, is_usage_limit, reset_time
from dreamtui.core.extract.prompt import SYSTEM_PROMPT, ExtractionOut, lessons_of, parts_for, user_message
from dreamtui.core.ingest.formats.protocol import EXTRACTOR_WORKDIR
from dreamtui.core.models import Digest, ExtractionResult, Usage

if TYPE_CHECKING:
    from claude_agent_sdk import ClaudeAgentOptions

MAX_TOKENS = 4096
CLI_ENV = "DREAMTUI_CLAUDE_CLI"
"""Set to the path of a ``claude`` executable to use that one (default: the SDK's bundled CLI, then PATH)."""
MODEL_ALIASES: dict[str, str | None] = {"": None, "default": None}
"""Model names that mean "Claude Code's own default"; anything else (``sonnet``, ``opus``, ``haiku``,
a full model id) is passed to ``--model`` as given, and the CLI says whether it accepts it."""
STDERR_LINES = 20
LOGIN_HINT = "run `claude` and log in with /login (or set CLAUDE_CODE_OAUTH_TOKEN), then dream again"
"""The hint when the ``claude`` on PATH is the CLI dreamtui runs (:func:`login_hint` says which)."""


def login_hint(cli: Path | None = None) -> str:
    """How to log in: run the CLI dreamtui uses (``claude`` when that is the one on PATH, else its full
    path, e.g. the SDK's bundled CLI where no ``claude`` is installed), ``/login``, then dream again."""
    cli = cli or find_cli()
    on_path = shutil.which("claude")
    if cli is None or (on_path is not None and Path(on_path).resolve() == Path(cli).resolve()):
        return LOGIN_HINT
    return LOGIN_HINT.replace("run `claude`", f"run `{cli}`")


# the SDK logs a CLI that exited badly as an error; dreamtui reports it as one line of its own
logging.getLogger("claude_agent_sdk").addHandler(logging.NullHandler())

__all__ = ["ClaudeCodeExtractor", "ClaudeCodeModel", "claude_code_status", "cli_model", "find_cli"]


def _first_line(text: Any, limit: int = 200) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def cli_model(model: str | None) -> str | None:
    """What ``--model`` gets: None (Claude Code's default) for an empty name or ``default``, else the name."""
    name = (model or "").strip()
    return MODEL_ALIASES.get(name.lower(), name)


def _sdk_locations() -> Iterable[Path]:
    """Where the SDK itself looks for a CLI (its bundled binary first, then the usual install places)."""
    windows = platform.system() == "Windows"
    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is not None and spec.origin:
        yield Path(spec.origin).parent / "_bundled" / ("claude.exe" if windows else "claude")
    found = shutil.which("claude")
    if found:
        yield Path(found)
    home = Path.home()
    for rel in (
        ".npm-global/bin/claude",
        ".local/bin/claude",
        "node_modules/.bin/claude",
        ".claude/local/claude",
    ):
        yield home / rel
    yield Path("/usr/local/bin/claude")


def find_cli(explicit: str | Path | None = None) -> Path | None:
    """The Claude Code CLI to run: ``explicit``, else ``$DREAMTUI_CLAUDE_CLI``, else the SDK's bundled
    one, then ``claude`` on PATH and the usual install places; None when there is none."""
    wanted = explicit or os.environ.get(CLI_ENV)
    if wanted:
        path = Path(wanted).expanduser()
        return path if path.is_file() else None
    for path in _sdk_locations():
        if path.is_file():
            return path
    return None


def _config_dir() -> Path:
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude").expanduser()


def _has_oauth_account(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and bool(data.get("oauthAccount"))


def _in_keychain() -> bool:
    """macOS: Claude Code keeps its login in the keychain (presence checked, the secret never read)."""
    if sys.platform != "darwin" or not shutil.which("security"):
        return False
    try:
        done = subprocess.run(
            ["security", "find-generic-password", "-s", "Claude Code-credentials"],
            capture_output=True,
            timeout=2,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def claude_code_status() -> str | None:
    """None when a Claude Code CLI is found and a login is likely present, else a one-line reason.

    Cheap checks only (no network, no ``claude`` process): ``CLAUDE_CODE_OAUTH_TOKEN``, the
    credentials file (``~/.claude/.credentials.json`` or under ``CLAUDE_CONFIG_DIR``), and on macOS
    the login recorded in ``~/.claude.json`` or the keychain entry."""
    if find_cli() is None:
        where = os.environ.get(CLI_ENV)
        if where:
            return f"Claude Code not found at {where} (${CLI_ENV})"
        return "Claude Code not found: install claude-agent-sdk (it bundles the CLI) or Claude Code itself"
    if os.environ.get("CLAUDE_CODE_OAUTH_TOKEN"):
        return None
    config_dir = _config_dir()
    if (config_dir / ".credentials.json").is_file():
        return None
    if sys.platform == "darwin" and (
        _has_oauth_account(config_dir / ".claude.json")
        or _has_oauth_account(Path.home() / ".claude.json")
        or _in_keychain()
    ):
        return None
    return f"Claude Code is not logged in: {login_hint()}"


def _usage(result: Any) -> Usage:
    """Usage of one ``ResultMessage``, counted as the API path counts it (cache writes are input)."""
    u = getattr(result, "usage", None) or {}
    if not isinstance(u, dict):
        u = {}

    def n(key: str) -> int:
        value = u.get(key)
        return int(value) if isinstance(value, int | float) else 0

    cost = getattr(result, "total_cost_usd", None)
    return Usage(
        calls=1,
        input_tokens=n("input_tokens") + n("cache_creation_input_tokens"),
        output_tokens=n("output_tokens"),
        cached_tokens=n("cache_read_input_tokens"),
        cost_usd=float(cost) if isinstance(cost, int | float) else 0.0,
    )


_FENCE = re.compile(r"```(?:json)?\s*(\{.*\})\s*```", re.DOTALL)


def _json_in(text: str | None) -> Any:
    """The JSON object in a text answer (bare, or in a code fence), else None (tolerant fallback)."""
    if not text:
        return None
    text = text.strip()
    fenced = _FENCE.search(text)
    candidates = [fenced.group(1)] if fenced else []
    start, end = text.find("{"), text.rfind("}")
    if start >= 0 and end > start:
        candidates.append(text[start : end + 1])
    for chunk in candidates:
        try:
            return json.loads(chunk)
        except ValueError:
            continue
    return None


class _Run:
    """What one ``claude`` process said: the result, the assistant's error kind and text, stderr."""

    def __init__(self) -> None:
        self.result: Any = None
        self.error_kind: str | None = None
        self.texts: list[str] = []
        self.stderr: list[str] = []

    def on_stderr(self, line: str) -> None:
        self.stderr = [*self.stderr[-(STDERR_LINES - 1) :], line]

    def stderr_tail(self) -> str:
        lines = [ln for ln in self.stderr if ln.strip()]
        return f" (stderr: {_first_line(lines[-1], 160)})" if lines else ""


class ClaudeCodeModel:
    """The claude-code extractor's :class:`~dreamtui.core.extract.base.StructuredModel`: one
    ``claude`` run per call, through ``claude_agent_sdk.query``."""

    name = "claude-code"

    def __init__(
        self,
        *,
        model: str | None,
        workdir: Path,
        timeout: float = 300.0,
        cli_path: str | Path | None = None,
    ) -> None:
        self.model = model
        self.workdir = Path(workdir)
        self.timeout = timeout
        self.cli_path = cli_path

    def options(
        self, system: str, schema: type[pydantic.BaseModel], max_tokens: int, run: _Run
    ) -> ClaudeAgentOptions:
        """The SDK options of one call: no tools, one turn, no settings, no transcript, the schema."""
        import anthropic
        from claude_agent_sdk import ClaudeAgentOptions

        cli = find_cli(self.cli_path)
        if cli is None:
            where = self.cli_path or os.environ.get(CLI_ENV)
            raise ExtractorAuthError(
                f"Claude Code not found at {where}"
                if where
                else "Claude Code not found: install claude-agent-sdk (it bundles the CLI) or Claude Code"
            )
        return ClaudeAgentOptions(
            system_prompt=system,
            tools=[],
            allowed_tools=[],
            max_turns=1,
            model=cli_model(self.model),
            cwd=str(self.workdir),
            cli_path=str(cli),
            setting_sources=[],
            strict_mcp_config=True,
            output_format={"type": "json_schema", "schema": anthropic.transform_schema(schema)},
            extra_args={"no-session-persistence": None},
            # no auto-update, telemetry or error reports from dreamtui's own calls
            env={
                "CLAUDE_CODE_MAX_OUTPUT_TOKENS": str(max_tokens),
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            },
            stderr=run.on_stderr,
        )

    async def _run(self, system: str, user: str, schema: type[pydantic.BaseModel], max_tokens: int) -> _Run:
        from claude_agent_sdk import (
            AssistantMessage,
            ClaudeSDKError,
            CLINotFoundError,
            ResultMessage,
            TextBlock,
            query,
        )

        run = _Run()
        options = self.options(system, schema, max_tokens, run)
        self.workdir.mkdir(parents=True, exist_ok=True)
        try:
            # an anyio deadline, not asyncio's: the SDK's shielded close then still ends the process
            with anyio.fail_after(self.timeout):
                async for message in query(prompt=user, options=options):
                    if isinstance(message, AssistantMessage):
                        run.error_kind = run.error_kind or message.error
                        run.texts.extend(b.text for b in message.content if isinstance(b, TextBlock))
                    elif isinstance(message, ResultMessage):
                        run.result = message
        except TimeoutError:
            raise ExtractorError(
                f"Claude Code did not answer within {self.timeout:g}s; the session is tried again next cycle"
            ) from None
        except CLINotFoundError as exc:
            raise ExtractorAuthError(f"Claude Code not found: {_first_line(exc)}") from None
        except ClaudeSDKError as exc:
            # an error result is followed by a non-zero exit: the result says why, not the exit code
            if run.result is None or not getattr(run.result, "is_error", False):
                code = getattr(exc, "exit_code", None)
                what = f"exited with code {code}" if code is not None else f"failed: {_first_line(exc)}"
                raise ExtractorError(f"Claude Code {what}{run.stderr_tail()}") from None
        return run

    def _refusal(self, run: _Run) -> ExtractorError:
        """The one-line error for a result with ``is_error`` (or no result at all)."""
        result = run.result
        if result is None:
            return ExtractorError(f"Claude Code ended without a result{run.stderr_tail()}")
        errors = [e for e in (getattr(result, "errors", None) or []) if isinstance(e, str) and e.strip()]
        text = _first_line(
            (errors[0] if errors else None) or result.result or " ".join(run.texts) or result.subtype
        )
        low = text.lower()
        status = getattr(result, "api_error_status", None)
        kind = run.error_kind
        if kind == "authentication_failed" or status == 401 or "not logged in" in low or "/login" in low:
            return ExtractorAuthError(
                f"Claude Code is not logged in ({text}): {login_hint(find_cli(self.cli_path))}"
            )
        if kind == "billing_error" or status == 402:
            return ExtractorAuthError(f"Claude Code's account cannot be billed ({text})")
        if kind == "rate_limit" or status == 429 or is_usage_limit(text):
            at = reset_time(text)
            return UsageLimitError(
                f"Claude Code's usage limit is reached ({text}); it resets {describe_reset(at)}", at
            )
        if "model" in low and (kind == "invalid_request" or status in (400, 404) or "not exist" in low):
            return ExtractorAuthError(
                f"Claude Code refused model {self.model!r} ({text}): choose another with --model "
                "(sonnet, opus, haiku or a full model id)"
            )
        if result.subtype == "error_max_structured_output_retries":
            return ExtractorError("the model's answer did not fit the schema after Claude Code's retries")
        if result.subtype == "error_max_turns":
            return ExtractorError("Claude Code stopped after one turn without a structured answer")
        return ExtractorError(f"Claude Code failed: {text}")

    def ask(
        self, system: str, user: str, schema: type[pydantic.BaseModel], *, max_tokens: int = MAX_TOKENS
    ) -> tuple[pydantic.BaseModel | None, Usage]:
        """One ``claude`` run; the answer validated against ``schema`` (None when it gave none) and usage."""
        call = functools.partial(anyio.run, self._run, system, user, schema, max_tokens)
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            run = call()
        else:  # called from inside an event loop (the app): run the call on a thread of its own
            with ThreadPoolExecutor(max_workers=1, thread_name_prefix="dreamtui-claude-code") as pool:
                run = pool.submit(call).result()
        result = run.result
        if result is None or result.is_error:
            raise self._refusal(run)
        usage = _usage(result)
        data = result.structured_output
        if data is None:
            data = _json_in(result.result)
        if data is None:
            return None, usage
        try:
            return schema.model_validate(data), usage
        except pydantic.ValidationError as exc:
            raise ExtractorError(
                f"the model's answer is not valid JSON for the schema ({exc.error_count()} error(s))"
            ) from None


class ClaudeCodeExtractor:
    """Claude through the person's Claude Code login (the Claude Agent SDK), with structured output."""

    name = "claude-code"
    capabilities = Capabilities(model_backed=True)
    """Claude Code has no Message Batches; its model judges and consolidates."""

    def __init__(
        self,
        *,
        model: str | None,
        workdir: Path,
        timeout: float = 300.0,
        max_chars: int = 120_000,
        cli_path: str | Path | None = None,
    ) -> None:
        self.model = model
        self.max_chars = max_chars
        self._model = ClaudeCodeModel(model=model, workdir=workdir, timeout=timeout, cli_path=cli_path)

    @classmethod
    def from_config(cls, config: Config) -> ClaudeCodeExtractor:
        """Model, timeout and digest budget from the config; the working directory under the state folder."""
        return cls(
            model=config.model,
            workdir=config.state / EXTRACTOR_WORKDIR,
            timeout=config.api_timeout,
            max_chars=config.max_digest_chars,
        )

    def structured(self) -> ClaudeCodeModel:
        """The same Claude Code model, for the dedup judge."""
        return self._model

    def extract(self, digest: Digest, context: ExtractContext) -> ExtractionResult:
        """One ``claude`` run per digest part; raises a one-line ExtractorError on any failure, so
        nothing of a half-answered session is kept."""
        parts, notes = parts_for(digest, context, self.max_chars)
        result = ExtractionResult(session=digest.session, notes=notes)
        for part in parts:
            out, usage = self._model.ask(
                SYSTEM_PROMPT, user_message(digest, context, part), ExtractionOut, max_tokens=MAX_TOKENS
            )
            result.usage = result.usage + usage
            if not isinstance(out, ExtractionOut):
                result.notes.append("the model returned no structured answer")
                continue
            result.malformed += out.malformed
            result.candidates.extend(lessons_of(out, digest, context, extractor=self.name, model=self.model))
        if result.malformed:
            result.notes.append(
                f"{result.malformed} malformed candidate(s) in the model's output were dropped"
            )
        return result
