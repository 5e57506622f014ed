"""The raw transcript around a verified quote: records before and after, with role and time.

Reads only the lines it shows (a bounded window of the raw ``.jsonl``), decodes each record and
classifies its text with :func:`dreamtui.core.ingest.records.pieces`. Secrets in the raw text are redacted
(:func:`dreamtui.core.secrets.redact`) before anything is shown.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

import orjson
from rich.console import Group
from rich.text import Text

from dreamtui.core.files import open_regular
from dreamtui.core.ingest.records import pieces
from dreamtui.core.ingest.tail import decode_line
from dreamtui.core.secrets import redact
from dreamtui.tui.widgets.literal import highlight, literal_text

MAX_LINE_BYTES = 256 * 1024
SNIPPET_CHARS = 700
ROLE_STYLE = {"person": "bold green", "assistant": "bold cyan", "tool": "bold red", "meta": "dim",
              "call": "cyan"}


@dataclass(slots=True)
class RawRecord:
    """One raw line of a transcript: its number, record type, time and classified texts."""

    line: int
    type: str
    timestamp: str
    texts: list[tuple[str, str]]  # (role, text)
    oversized: bool = False
    broken: bool = False


def read_window(path: Path, line: int, before: int = 4, after: int = 4) -> list[RawRecord]:
    """The records on lines ``line-before .. line+after`` (1-based) of ``path``."""
    start = max(1, line - before)
    out: list[RawRecord] = []
    with open_regular(path) as fh:  # never a FIFO or a device: the app must not freeze
        for no, raw in enumerate(itertools.islice(fh, start - 1, line + after), start=start):
            out.append(raw_record(no, raw))
    return out


def raw_record(no: int, raw: bytes) -> RawRecord:
    """Line ``no`` decoded by the one line decoder (:func:`dreamtui.core.ingest.tail.decode_line`, as
    the digest and the verifier read it); a huge, broken or non-object line becomes a short
    placeholder record."""
    if len(raw) > MAX_LINE_BYTES:
        return RawRecord(no, "?", "", [("meta", f"({len(raw):,} bytes: too long to show)")], oversized=True)
    obj, error = decode_line(raw)
    if obj is None:
        if error == "not_object":
            return RawRecord(no, "?", "", [("meta", "(not a record)")], broken=True)
        text = raw.decode("utf-8", errors="replace")
        return RawRecord(no, "?", "", [("meta", redact(f"(not JSON) {text}"))], broken=True)
    texts = [(str(p.role), redact(p.text)) for p in pieces(obj)] or tool_calls(obj)
    return RawRecord(no, str(obj.get("type") or "?"), str(obj.get("timestamp") or ""), texts)


def tool_calls(obj: dict) -> list[tuple[str, str]]:
    """``tool_use`` blocks of an assistant record as ``("call", "Name {input}")`` lines."""
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    out: list[tuple[str, str]] = []
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                args = orjson.dumps(block.get("input") or {}).decode("utf-8", errors="replace")
                out.append(("call", redact(f"{block.get('name') or '?'} {args}")))
    return out


def render_window(records: list[RawRecord], match_line: int | None, quote: str) -> Group:
    """The window as Rich renderables: a gutter with line, role and time; the quote highlighted."""
    parts: list[Text] = []
    for rec in records:
        here = rec.line == match_line
        time = rec.timestamp[11:19] if len(rec.timestamp) >= 19 else rec.timestamp
        texts = rec.texts or [("meta", f"({rec.type} record)")]
        for role, body in texts:
            head = Text.assemble(("▶ " if here else "  ", "bold yellow"), (f"L{rec.line:<5}", "dim"),
                                 (f"{role:<9}", ROLE_STYLE.get(role, "")), (f" {time}  ", "dim"))
            if role == "tool":
                head.append("[untrusted tool output] ", "bold red")
            content = literal_text(body, limit=SNIPPET_CHARS if not here else 4000,
                                   style="" if here else "grey70")
            if here:
                highlight(content, quote)
            head.append_text(content)
            parts.append(head)
    return Group(*parts)
