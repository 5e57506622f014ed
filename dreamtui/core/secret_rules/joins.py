"""A token split in two: read the text again with the break taken out, around each such break.

A key wrapped over two lines (``AKIAQ3EGRT`` / ``7ZKLPX2M4N``, also as a JSON ``\\n`` escape and with
the next line indented), or with a no-break space put inside it, no longer matches any rule. Taking
every line break and space out of all text would glue words together everywhere, so only a *split
point* is taken out: a line break (with the next line's indentation) or a non-ASCII space between a
letter or digit and a letter or digit, whose runs of token characters either side are together 16
characters or more and hold letters and digits. The scanner reads a window of up to :data:`REACH` characters either side
of the split points with them taken out (:func:`windows`) and keeps only what crosses a split point
(:meth:`Window.crossing`): whatever lies on one side was already read in the text as it is.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

REACH = 256
"""How far before and after a split point the window reaches (a context word, a long token)."""
MIN_JOINED = 16
"""The token runs either side of a split point, together, at least this long."""
_TOKEN_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-+/="
# A line break before a letter or digit: a newline (CRLF too) or its JSON escape, then the next
# line's indentation (the character before it is checked by _split_at).
_LINE_BREAK = re.compile(r"(?:\\r\\n|\\n|\r\n|\n)[ \t]{0,40}(?=[A-Za-z0-9])")


def _split_at(text: str, start: int, stop: int) -> bool:
    """Whether the break ``[start, stop)`` has token runs either side that may be one token."""
    if not (text[start - 1 : start].isalnum() and text[stop : stop + 1].isalnum()):
        return False
    left = text[max(0, start - 128) : start]
    right = text[stop : stop + 128]
    joined = left[len(left.rstrip(_TOKEN_CHARS)) :] + right[: len(right) - len(right.lstrip(_TOKEN_CHARS))]
    return len(joined) >= MIN_JOINED and any(c.isdigit() for c in joined) and any(c.isalpha() for c in joined)


def split_points(text: str, spaces: tuple[int, ...] = ()) -> list[tuple[int, int]]:
    """The breaks of ``text`` that may split a token: line breaks, and the non-ASCII spaces at
    ``spaces`` (offsets of ``text``), as ``(start, stop)`` spans, in order."""
    found = [(p, p + 1) for p in spaces if _split_at(text, p, p + 1)]
    if "\n" in text or "\\n" in text:
        found += [m.span() for m in _LINE_BREAK.finditer(text) if _split_at(text, *m.span())]
    return sorted(found)


@dataclass(frozen=True, slots=True)
class Window:
    """A stretch of the text with its split points taken out."""

    text: str
    joined_at: tuple[int, ...]  # offsets of ``text`` where a split point was taken out
    starts: tuple[int, ...]  # offsets of ``text`` where a piece of the original begins
    origins: tuple[int, ...]  # and where that piece begins in the scanned text

    def original(self, pos: int) -> int:
        """The offset in the scanned text of this window's offset ``pos``."""
        k = bisect.bisect_right(self.starts, pos) - 1
        return self.origins[k] + (pos - self.starts[k])

    def crossing(self, start: int, stop: int) -> tuple[int, int, int] | None:
        """The span of the scanned text of this window's finding ``[start, stop)``, and where in the
        scanned text the text after the first split point it crosses begins, when it crosses one
        (reads characters on both sides of it); else None."""
        k = bisect.bisect_right(self.joined_at, start)
        if k == len(self.joined_at) or self.joined_at[k] >= stop:
            return None
        return self.original(start), self.original(stop - 1) + 1, self.original(self.joined_at[k])


def windows(text: str, points: list[tuple[int, int]]) -> list[Window]:
    """The windows of ``text`` around ``points`` (from :func:`split_points`), each with the points it
    holds taken out; points closer than two reaches share a window."""
    groups: list[list[tuple[int, int]]] = []
    for point in points:
        if groups and point[0] - groups[-1][-1][1] <= 2 * REACH:
            groups[-1].append(point)
        else:
            groups.append([point])
    out: list[Window] = []
    for group in groups:
        pos = max(0, group[0][0] - REACH)
        hi = min(len(text), group[-1][1] + REACH)
        pieces: list[str] = []
        joined_at: list[int] = []
        starts: list[int] = []
        origins: list[int] = []
        n = 0
        for start, stop in group + [(hi, hi)]:
            starts.append(n)
            origins.append(pos)
            pieces.append(text[pos:start])
            n += start - pos
            joined_at.append(n)
            pos = stop
        out.append(Window("".join(pieces), tuple(joined_at[:-1]), tuple(starts), tuple(origins)))
    return out
