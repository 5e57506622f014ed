"""Toasts kept short: a message cut to two lines of a toast as Textual wraps it (a toast of ten lines
covered the evidence and the dialogs)."""

from __future__ import annotations

import io

from rich.console import Console
from rich.text import Text

TOAST_LINES = 2
"""A toast's text is cut to this many lines (a toast of ten lines covered the evidence and dialogs)."""
TOAST_WIDTH = 76  # cells (app.tcss: Toast), at most 70% of the terminal's width


def toast_lines(text: str, width: int) -> int:
    """How many lines ``text`` takes in a toast ``width`` cells wide (words wrapped as Textual does)."""
    console = Console(file=io.StringIO(), width=max(width, 1), color_system=None)
    return len(Text(text).wrap(console, max(width, 1)))


PATH_CELLS = 28


def short_path(word: str) -> str:
    """A long path cut to ``…/`` and its end (``…/-home-kim-src-payments-api:``); other words as they are."""
    if len(word) <= PATH_CELLS or word.count("/") < 2 or "[" in word or "]" in word:
        return word  # short, not a path, or a folder name that only looks like one ("[/reverse]")
    tail = word.rstrip("/").rsplit("/", 1)[-1]
    return "…/" + (tail if len(tail) <= PATH_CELLS else "…" + tail[-(PATH_CELLS - 1) :])


def shorter_quote(text: str, inside: int) -> str | None:
    """``text`` with its quoted part (``“…”``, a proposal's claim) cut until the whole fits
    :data:`TOAST_LINES` lines ``inside`` cells wide (the file and commit after it stay whole); None
    when there is no quote or even a quote of a few characters does not fit."""
    start, end = text.find("“"), text.rfind("”")
    if start < 0 or end <= start:
        return None
    head, claim, tail = text[: start + 1], text[start + 1 : end].rstrip("…"), text[end:]

    def cut(n: int) -> str:
        return f"{head}{claim[:n].rstrip()}…{tail}"

    if toast_lines(cut(8), inside) > TOAST_LINES:
        return None
    low, high = 8, len(claim)  # the longest claim that fits
    while low < high:
        mid = (low + high + 1) // 2
        if toast_lines(cut(mid), inside) <= TOAST_LINES:
            low = mid
        else:
            high = mid - 1
    return cut(low)


def toast_text(message: str, width: int) -> str:
    """``message`` on one line, cut to fit :data:`TOAST_LINES` lines of a toast in a ``width``-cell
    terminal (words wrapped): long paths keep their end first, then a quoted claim is cut (the path
    and commit after it stay), then a trailing ``(…)`` aside goes, then the end (``…``)."""
    text = " ".join(message.split())
    # its text width: the toast less its border and padding (3 cells) and 2 more to spare (Textual
    # wraps a line that just fits)
    inside = max(20, min(TOAST_WIDTH, width * 7 // 10 if width else TOAST_WIDTH) - 5)
    if toast_lines(text, inside) <= TOAST_LINES:
        return text
    text = " ".join(short_path(word) for word in text.split(" "))  # a folder's end says which one
    if toast_lines(text, inside) <= TOAST_LINES:
        return text
    quoted = shorter_quote(text, inside)  # a claim in “…” gives way before the path after it
    if quoted is not None:
        return quoted
    if text.endswith(")") and "(" in text:
        bare = text[: text.rindex("(")].rstrip()
        if bare and toast_lines(bare, inside) <= TOAST_LINES:
            return bare
    low, high = 1, len(text)  # the longest cut that fits
    while low < high:
        mid = (low + high + 1) // 2
        if toast_lines(text[:mid].rstrip() + "…", inside) <= TOAST_LINES:
            low = mid
        else:
            high = mid - 1
    return text[:low].rstrip() + "…"
