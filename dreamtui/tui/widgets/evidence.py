"""The raw transcript around a verified quote, drawn: records before and after, with role and time.

The records come from the services (:func:`dreamtui.services.evidence.read_window`: read, decoded,
classified by the transcript format and redacted there); this draws them.
"""

from __future__ import annotations

from datetime import UTC, datetime

from rich.console import Group
from rich.text import Text

from dreamtui.core.models import RawRecord
from dreamtui.tui.widgets.literal import highlight, literal_text

SNIPPET_CHARS = 700
UNFOLDED_CHARS = 20_000  # unfolded (z), a record's text is shown up to this
ROLE_STYLE = {
    "person": "bold green",
    "assistant": "bold cyan",
    "tool": "bold red",
    "meta": "dim",
    "call": "cyan",
}
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
    if rec.folds:
        return True
    return role in ("tool", "call") and ("\n" in body.strip() or len(body) > FOLD_CHARS)


def folded_line(rec: RawRecord, role: str, body: str) -> Text:
    """The one line a folded record or text shows: its first line, cut, and how much is hidden."""
    first = body.strip().split("\n", 1)[0] if body.strip() else ""
    lines = body.strip().count("\n") + 1 if body.strip() else 0
    label = f"{rec.type}{' · ' + rec.kind if rec.kind else ''}" if rec.bookkeeping or not body else ""
    out = Text(style="grey50")
    if label:
        out.append(f"({label}) ", "dim italic")
    if lines > 1 or len(body) > FOLD_CHARS:  # first, so a narrow pane still shows how much is folded
        out.append(f"⋯{lines:,} lines (z) " if lines > 1 else f"⋯{len(body):,} chars (z) ", "dim")
    if first:
        out.append_text(literal_text(first, limit=FOLD_CHARS, one_line=True, style="grey50"))
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
