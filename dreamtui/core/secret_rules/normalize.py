"""The text the scanner reads: Unicode-normalised, with a map back to the original offsets.

A secret written in fullwidth letters (``ｇｈｐ＿…``), or split by a zero-width space, a soft hyphen or
another invisible format character, is still a secret to whoever reads it. The scanner therefore
reads the text after NFKC (fullwidth and other compatibility forms become their plain letters) with
every format character (Unicode category ``Cf``: zero-width space and joiners, soft hyphen, word
joiner, bidi controls, BOM…) removed, and also the JSON escapes of the invisible ones (``\\u200b``).

Redaction must still cut the original text: :class:`Normalized` maps a span of the scanned text back
to the span of the original that produced it. Plain ASCII text without ``\\u`` escapes (most text)
is scanned as it is, without a copy.
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

import re2


@functools.cache
def format_chars() -> frozenset[str]:
    """Every format character (Unicode category ``Cf``): invisible, removed before scanning. They live
    in the BMP, plane 1 and plane 14 (tags): only those are looked through (once, on first use)."""
    return frozenset(
        chr(c)
        for c in itertools.chain(range(0x80, 0x20000), range(0xE0000, 0xE1000))
        if unicodedata.category(chr(c)) == "Cf"
    )


# The JSON escape of an invisible format character (soft hyphen, zero-width space/joiners, word
# joiner, BOM): a transcript line may hold one in this form.
_ESCAPE = r"\\u(?:00[aA][dD]|200[b-fB-F]|206[0-4]|[fF][eE][fF][fF])"
_ESCAPES = re.compile(_ESCAPE)
# A run of non-ASCII characters, or such an escape.
_RUNS = re.compile(r"[^\x00-\x7f]+|" + _ESCAPE)


def _needs_work(text: str) -> bool:
    """Whether scanning ``text`` as it is could miss something: an escape, a format character, or a
    character that NFKC changes."""
    if "\\u" in text and _ESCAPES.search(text):
        return True
    if text.isascii():
        return False
    if not unicodedata.is_normalized("NFKC", text):
        return True
    return _format_finder().search(text.encode("utf-8", "surrogatepass")) is not None


@functools.cache
def _format_finder() -> Any:
    """An RE2 search for any format character in UTF-8 bytes (RE2's DFA is many times faster at a
    class of 160 scattered characters than Python's ``re`` or a set)."""
    opts = re2.Options()
    opts.log_errors = False
    return re2.compile(
        ("[" + "".join(f"\\x{{{ord(c):x}}}" for c in sorted(format_chars())) + "]").encode(), opts
    )


@functools.cache
def _removal_table() -> dict[int, None]:
    return dict.fromkeys(map(ord, format_chars()))


def _removals(run: str, at: int, n: int, fmt: frozenset[str], marks: list[int], origins: list[int]) -> int:
    """Breakpoints for the format characters of ``run`` (at original offset ``at``, scanned offset
    ``n``), which are removed; its other characters are kept as they are. Returns the scanned length
    after the run."""
    removed = 0
    prev = -2
    for j in [j for j, c in enumerate(run) if c in fmt]:
        mark = n + j - removed  # where the next kept character lands in the scanned text
        if j == prev + 1 or (marks and marks[-1] == mark):
            origins[-1] = at + j + 1  # one more in a row: the same breakpoint moves on
        else:
            marks.append(mark)
            origins.append(at + j + 1)
        removed += 1
        prev = j
    return n + len(run) - removed


@functools.lru_cache(maxsize=4096)
def _char(c: str) -> str:
    """What one character reads as: nothing for a format character, else its NFKC form."""
    if len(c) > 1 or unicodedata.category(c) == "Cf":
        return ""
    return unicodedata.normalize("NFKC", c)


@dataclass(frozen=True, slots=True)
class Normalized:
    """The scanned text, and where each of its characters came from."""

    text: str
    # Breakpoints: scanned offset ``marks[k]`` and on come from original offset ``origins[k]`` and on.
    marks: tuple[int, ...] = ()
    origins: tuple[int, ...] = ()

    def original(self, pos: int) -> int:
        """The original offset of scanned offset ``pos``."""
        if not self.marks:
            return pos
        k = bisect.bisect_right(self.marks, pos) - 1
        return pos if k < 0 else self.origins[k] + (pos - self.marks[k])

    def span(self, start: int, stop: int) -> tuple[int, int]:
        """The original span that the scanned span ``[start, stop)`` was read from."""
        if not self.marks or stop <= start:
            return start, stop
        return self.original(start), self.original(stop - 1) + 1


def normalize(text: str) -> Normalized:
    """``text`` as the scanner reads it (NFKC, format characters and their escapes removed)."""
    if not _needs_work(text):
        return Normalized(text)
    fmt = format_chars()
    out: list[str] = []
    # breakpoints only where the offset between scanned and original text changes (a character
    # removed, or expanded to more than one): a one-for-one replacement (fullwidth) needs none
    marks: list[int] = []
    origins: list[int] = []
    n = 0  # length of the scanned text so far
    pos = 0
    for m in _RUNS.finditer(text):
        i, run = m.start(), m.group()
        if run[0] != "\\" and fmt.isdisjoint(run) and unicodedata.is_normalized("NFKC", run):
            continue
        out.append(text[pos:i])
        n += i - pos
        if run[0] != "\\":
            kept = run.translate(_removal_table())
            if unicodedata.is_normalized("NFKC", kept):  # only removals in this run: no loop per character
                n = _removals(run, i, n, fmt, marks, origins)
                out.append(kept)
                pos = m.end()
                continue
        if run[0] == "\\":  # the escape of an invisible character: removed
            run = "\x00"  # one step of the loop below, as a removal
        for j, c in enumerate(run):
            read = "" if c == "\x00" else _char(c)
            if len(read) == 1:
                out.append(read)
                n += 1
                continue
            where = m.end() if run == "\x00" else i + j + 1
            if read:  # an expansion: each of its characters comes from this one
                for ch in read:
                    marks.append(n)
                    origins.append(i + j)
                    out.append(ch)
                    n += 1
            if marks and marks[-1] == n:
                origins[-1] = where
            else:
                marks.append(n)
                origins.append(where)
        pos = m.end()
    out.append(text[pos:])
    return Normalized("".join(out), tuple(marks), tuple(origins))
