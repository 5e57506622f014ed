"""The raw transcript around a verified quote: records before and after, with role and time.

Reads only the lines it shows (a bounded window of the raw ``.jsonl``), decodes each record and
classifies its text with :func:`dreamtui.core.ingest.records.pieces`. Secrets in the raw text are redacted
(:func:`dreamtui.core.secrets.redact`) before anything is shown.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime
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
UNFOLDED_CHARS = 20_000  # unfolded (z), a record's text is shown up to this
ROLE_STYLE = {
    "person": "bold green",
    "assistant": "bold cyan",
    "tool": "bold red",
    "meta": "dim",
    "call": "cyan",
}


@dataclass(slots=True)
class RawRecord:
    """One raw line of a transcript: its number, record type, time and classified texts."""

    line: int
    type: str
    timestamp: str
    texts: list[tuple[str, str]]  # (role, text)
    oversized: bool = False
    broken: bool = False
    kind: str = ""  # a progress or attachment record's own type (hook_progress, hook_success, …)


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
    return RawRecord(
        no, str(obj.get("type") or "?"), str(obj.get("timestamp") or ""), texts, kind=record_kind(obj)
    )


def record_kind(obj: dict) -> str:
    """What a bookkeeping record is about: a progress record's ``data.type``, an attachment's
    ``attachment.type``, a system record's ``subtype`` ('' otherwise)."""
    for holder in ("data", "attachment"):
        inner = obj.get(holder)
        if isinstance(inner, dict) and isinstance(inner.get("type"), str):
            return str(inner["type"])[:40]
    subtype = obj.get("subtype")
    return subtype[:40] if isinstance(subtype, str) else ""


FOLDED_TYPES = {
    "progress",
    "attachment",
    "file-history-snapshot",
    "permission-mode",
    "last-prompt",
    "queue-operation",
}
"""Records that are bookkeeping, not conversation: one dim line each in the evidence window."""
FOLD_CHARS = 100  # tool output and tool calls longer than this (or over one line) fold to one line


def local_time(stamp: str, fmt: str = "%H:%M:%S") -> str:
    """An ISO timestamp in the person's local time zone, ``HH:MM:SS`` unless ``fmt`` says otherwise
    (the time part as written when unparseable)."""
    try:
        moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp[11:19] if len(stamp) >= 19 and fmt == "%H:%M:%S" else stamp
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone().strftime(fmt)


def is_folded(rec: RawRecord, role: str, body: str) -> bool:
    """Whether a line of the window folds to one line: bookkeeping records (progress, hook output) and
    tool output or calls longer than one short line."""
    if rec.type in FOLDED_TYPES or "hook" in rec.kind:
        return True
    return role in ("tool", "call") and ("\n" in body.strip() or len(body) > FOLD_CHARS)


def folded_line(rec: RawRecord, role: str, body: str) -> Text:
    """The one line a folded record or text shows: its first line, cut, and how much is hidden."""
    first = body.strip().split("\n", 1)[0] if body.strip() else ""
    lines = body.strip().count("\n") + 1 if body.strip() else 0
    label = (
        f"{rec.type}{' · ' + rec.kind if rec.kind else ''}" if rec.type in FOLDED_TYPES or not body else ""
    )
    out = Text(style="grey50")
    if label:
        out.append(f"({label}) ", "dim italic")
    if lines > 1 or len(body) > FOLD_CHARS:  # first, so a narrow pane still shows how much is folded
        out.append(f"⋯{lines:,} lines (z) " if lines > 1 else f"⋯{len(body):,} chars (z) ", "dim")
    if first:
        out.append_text(literal_text(first, limit=FOLD_CHARS, one_line=True, style="grey50"))
    return out


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


def render_window(
    records: list[RawRecord], match_line: int | None, quote: str, *, fold: bool = True
) -> Group:
    """The window as Rich renderables: a gutter with line, role and local time; the quote highlighted
    on a marked line; with ``fold``, progress and hook records and long tool output one line each."""
    return Group(*render_records(records, match_line, quote, fold=fold))


def render_records(
    records: list[RawRecord], match_line: int | None, quote: str, *, fold: bool = True, compact: bool = False
) -> list[Text]:
    """One Text per shown text of each record (see :func:`render_window`); ``compact`` (a narrow
    pane): a short gutter of line number and role, without the time."""
    parts: list[Text] = []
    for rec in records:
        here = rec.line == match_line
        time = local_time(rec.timestamp) if rec.timestamp else ""
        texts = rec.texts or [("meta", "" if fold else f"({rec.type} record)")]
        for role, body in texts:
            if compact:
                head = Text.assemble(
                    ("▶" if here else " ", "bold yellow"),
                    (f"{rec.line:<4}", "dim"),
                    (f"{role[:6]:<7}", ROLE_STYLE.get(role, "")),
                )
            else:
                head = Text.assemble(
                    ("▶ " if here else "  ", "bold yellow"),
                    (f"L{rec.line:<5}", "dim"),
                    (f"{role:<9}", ROLE_STYLE.get(role, "")),
                    (f" {time:<8}  ", "dim"),
                )
            folded = fold and not here and is_folded(rec, role, body)
            if role == "tool":
                head.append("[untrusted] " if folded else "[untrusted tool output] ", "bold red")
            if folded:
                head.append_text(folded_line(rec, role, body))
                head.no_wrap, head.overflow = True, "ellipsis"
                parts.append(head)
                continue
            content = literal_text(
                body,
                limit=4000 if here else SNIPPET_CHARS if fold else UNFOLDED_CHARS,
                style="bold" if here else "grey70",
            )
            if here:
                highlight(content, quote)
            head.append_text(content)
            parts.append(head)
    return parts
