"""Transcript text shown literally: escape codes and control characters made visible, never obeyed.

Transcript text can hold Rich markup, ANSI/OSC escape sequences, bidi overrides, control characters,
invalid UTF-8 (as surrogates), secrets and huge lines. Everything here returns plain strings or
:class:`rich.text.Text` objects, which Rich never parses for markup, with every secret redacted
(:func:`dreamtui.services.display.redact`, before any cut).
"""

from __future__ import annotations

from rich.text import Text

from dreamtui.services.display import redact, visible_controls

DEFAULT_LIMIT = 4000
_SECRET_MARGIN = 20_000  # scanned beyond the cut, so a secret across it is redacted whole (a key block)


def literal(text: str | None, limit: int = DEFAULT_LIMIT, one_line: bool = False) -> str:
    """``text`` with every secret redacted and every control or escape character made visible, cut to
    ``limit`` characters."""
    if not text:
        return ""
    cut = len(text) > limit
    body = redact(text[: limit + _SECRET_MARGIN])[:limit]
    if one_line:
        body = body.replace("\n", " ⏎ ").replace("\t", " ")
    body = visible_controls(body)
    if cut:
        body += f" … (+{len(text) - limit:,} chars)"
    return body


def literal_text(
    text: str | None, style: str = "", limit: int = DEFAULT_LIMIT, one_line: bool = False
) -> Text:
    """A :class:`Text` of ``literal(text)``; markup in ``text`` stays characters on the screen."""
    return Text(literal(text, limit, one_line), style=style, no_wrap=False)


def highlight(text: Text, needle: str, style: str = "black on yellow") -> bool:
    """Style every occurrence of ``literal(needle)`` in ``text``; ``True`` when one was found. Found
    nowhere as it stands, it is looked for in the text read with its erase characters (BACKSPACE and
    DEL, shown as ``␈`` and ``␡``) applied or removed, the readings quote verification accepts
    (``docs/gate.md``): the stretch of ``text`` it was read from is styled, the erased characters and
    the erase characters inside it too."""
    target = literal(needle, limit=len(needle) + 1)
    if not target:
        return False
    plain = text.plain
    found = False
    start = plain.find(target)
    while start != -1:
        text.stylize(style, start, start + len(target))
        found = True
        start = plain.find(target, start + len(target))
    if not found and ("\u2408" in plain or "\u2421" in plain):
        found = _highlight_typed(text, plain, target, style)
    return found


_ERASE_PICTURES = frozenset("\u2408\u2421")  # BACKSPACE and DEL as visible_controls shows them


def _highlight_typed(text: Text, plain: str, target: str, style: str) -> bool:
    """Style where ``target`` lies in ``plain`` read with its erase characters applied (each erases the
    character before it, as ``core.text.as_typed``), else removed; ``True`` when it was found."""
    applied: list[int] = []  # the positions in ``plain`` of each reading's characters
    removed: list[int] = []
    for i, ch in enumerate(plain):
        if ch in _ERASE_PICTURES:
            if applied:
                applied.pop()
        else:
            applied.append(i)
            removed.append(i)
    for kept in (applied, removed):
        reading = "".join(plain[i] for i in kept)
        start = reading.find(target)
        if start == -1:
            continue
        while start != -1:
            end = start + len(target)
            text.stylize(style, kept[start], kept[end - 1] + 1)
            start = reading.find(target, end)
        return True
    return False
