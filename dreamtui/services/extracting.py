"""Extraction outside a dream cycle, for the CLI: one session now, the exact requests a model would be
sent, Message Batches (submit, collect), and which extractor and dedup judge are in use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from dreamtui.core.config import Config
from dreamtui.core.dream.adhoc import BatchOutcome, SessionExtraction, extract_session
from dreamtui.core.dream.adhoc import collect_batches as collect_ended_batches
from dreamtui.core.dream.lock import CycleLock
from dreamtui.core.extract.anthropic_ext import AnthropicExtractor
from dreamtui.core.extract.batch import BatchRunner, SessionRanges
from dreamtui.core.extract.choose import THIN_QUEUE_SHORT, Choice, choose
from dreamtui.core.extract.consolidate_prompt import ConsolidationOut
from dreamtui.core.extract.openai_ext import OpenAIExtractor
from dreamtui.core.extract.prompt import sendable
from dreamtui.core.gate.context import context_maker
from dreamtui.core.gate.dedup import DedupIndex
from dreamtui.core.gate.judge import JudgeError, judge_for
from dreamtui.core.models import Digest
from dreamtui.services.workspace import Workspace

__all__ = [
    "THIN_QUEUE_SHORT",
    "BatchOutcome",
    "Choice",
    "SessionExtraction",
    "SessionRanges",
    "collect_batches",
    "consolidation_schema",
    "extract_session",
    "extractor_choice",
    "judging",
    "request_bodies",
    "shown_requests",
    "sendable",
    "submit_batch",
]


def extractor_choice(config: Config) -> Choice:
    """The extractor a dream cycle would run with ``config`` and, in one line, why (it looks for Claude
    Code on disk)."""
    return choose(config)


def judging(config: Config) -> str:
    """Whether the gate's dedup judge is on, in words: the extractor in use declares a model it may ask."""
    try:
        judge = judge_for(config)
    except JudgeError as exc:
        return f"off: {exc}"
    if judge is None:
        return "off"
    return f"on: the {judge.structured.name} model judges duplicates"


def request_bodies(ws: Workspace, digest: Digest) -> list[dict[str, Any]]:
    """The bodies the anthropic extractor would POST to ``/v1/messages`` for ``digest``: no network, no
    API key, nothing stored."""
    context = context_maker(ws.config, DedupIndex.build(ws.config.memory, ws.ledger))(digest)
    extractor = AnthropicExtractor(
        model=ws.config.model, max_chars=ws.config.max_digest_chars, client=object()
    )
    return extractor.request_bodies(digest, context)


def shown_requests(ws: Workspace, digest: Digest) -> tuple[str, list[dict[str, Any]]]:
    """What the extractor in use would send for ``digest``, nothing stored: its name and one entry per
    request (``endpoint``, ``body``, ``prompt_tokens``, ``tokens_exact``). ``openai`` asks the server
    its context and tokenizer (and sizes the parts by them); ``anthropic`` and ``claude-code`` send the
    same Messages request (claude-code through the Claude Code CLI), sized by an estimate; any other
    extractor is shown the ``anthropic`` request (no network, no key)."""
    kind = choose(ws.config).kind
    if kind == "openai":
        context = context_maker(ws.config, DedupIndex.build(ws.config.memory, ws.ledger))(digest)
        extractor = OpenAIExtractor.from_config(ws.config)
        shown = extractor.request_bodies(digest, context)
        endpoint = f"POST {extractor.base_url}/chat/completions"
        return kind, [{"endpoint": endpoint, **entry} for entry in shown]
    bodies = request_bodies(ws, digest)
    endpoint = "claude (the Claude Code CLI), same request" if kind == "claude-code" else "POST /v1/messages"
    out = []
    for body in bodies:
        text = "".join(b.get("text", "") for b in body.get("system", [])) + "".join(
            m["content"] if isinstance(m["content"], str) else str(m["content"])
            for m in body.get("messages", [])
        )
        out.append(
            {
                "endpoint": endpoint,
                "body": body,
                "prompt_tokens": round(len(text) / 3.5),
                "tokens_exact": False,
            }
        )
    return ("claude-code" if kind == "claude-code" else "anthropic"), out


def consolidation_schema() -> dict[str, Any]:
    """The JSON schema of what the consolidation model answers."""
    return ConsolidationOut.model_json_schema()


def _batch_runner(ws: Workspace) -> BatchRunner:
    """A batch runner over the configured model (key from ANTHROPIC_API_KEY)."""
    return BatchRunner(AnthropicExtractor.from_config(ws.config), ws.ledger)


def submit_batch(ws: Workspace, sessions: Sequence[list[Path]]) -> tuple[str, list[SessionRanges]]:
    """Submit ``sessions`` (each its files, main first) as one batch; the part of each no dream cycle
    has dreamed yet is reserved for it. Returns the batch id and each session's reserved ranges."""
    runner = _batch_runner(ws)
    index = DedupIndex.build(ws.config.memory, ws.ledger)
    with CycleLock(ws.config.lock_path):  # no cycle reads these sessions while their ranges are reserved
        return runner.submit_files(sessions, context_maker(ws.config, index))


def collect_batches(
    ws: Workspace, *, wait_seconds: float, interval: float, on_left: Callable[[int], None] | None = None
) -> list[BatchOutcome]:
    """Collect every ended batch ``dreamtui batch submit`` sent (also after a restart) and gate its
    candidates; ``on_left`` hears how many batches a dream cycle sent are left to the next cycle."""
    return collect_ended_batches(
        ws.config, ws.ledger, _batch_runner(ws), wait_seconds=wait_seconds, interval=interval, on_left=on_left
    )
