"""The text the scanner reads: Unicode-folded, with a map back to the original offsets.

A secret written so that it no longer looks like one to a regular expression is still a secret to
whoever reads it. The scanner therefore reads each character as it looks (:func:`read_char`):

- compatibility forms become their plain letters (NFKC: fullwidth ``ｇｈｐ＿…``, ligatures, circled
  digits);
- invisible characters are removed: every format character (Unicode category ``Cf``: zero-width space
  and joiners, soft hyphen, word joiner, bidi controls, BOM…), every combining mark (``Mn``/``Me``,
  which takes in the variation selectors such as U+FE0F and a combining acute put inside a token), and
  the blank "letters" (the Hangul fillers U+3164, U+115F, U+1160, U+FFA0 and the braille blank U+2800);
- a letter with a mark reads as its base letter (``é`` as ``e``), and a letter of another script
  that looks like a Latin letter or digit reads as that letter (Cyrillic ``А`` as ``A``, Greek ``Ο``
  as ``O``, Armenian ``օ`` as ``o``: :data:`CONFUSABLES`), as do the dash look-alikes (``‐ – −``
  as ``-``);
- a space other than the ASCII one (no-break space, narrow and ideographic spaces…) reads as a space,
  and its scanned position is kept (:attr:`Normalized.spaces`) so the scanner can also read the text
  with it taken out (a no-break space put inside a token);
- the JSON escape of any such character (``\\u200b``, ``\\u0410``, ``\\u00a0``) reads as the
  character does.

Redaction must still cut the original text: :class:`Normalized` maps a span of the scanned text back
to the span of the original that produced it. ASCII text without ``\\u`` escapes (most text) is
scanned as it is, without a copy.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from dataclasses import dataclass

# Letters of other scripts that look like a Latin letter or digit (from Unicode's confusables data,
# the single-character ones that matter for tokens), and the dash look-alikes.
_CONFUSABLE_PAIRS = (
    # Cyrillic
    "АA ВB СC ЕE НH ІI ЈJ КK МM ОO РP ЅS ТT ХX УY ҮY ԚQ ԜW ӀI З3 "
    "аa вb сc еe іi јj оo рp ѕs хx уy үy ԁd ԛq ԝw һh ӏl ьb "
    # Greek
    "ΑA ΒB ΕE ΖZ ΗH ΙI ΚK ΜM ΝN ΟO ΡP ΤT ΥY ΧX ϹC ϿC ͿJ "
    "αa οo ρp υu νv χx ιi κk ϲc ϳj γy "
    # Armenian
    "ՕO ՍU ՏS ԼL օo սu ցg հh ոn զq "
    # Cherokee
    "ᎪA ᏴB ᏟC ᎬE ᎻH ᏆI ᎫJ ᏦK ᏞL ᎷM ᏃZ ᏢP ᏚS ᎢT ᏙV ᎳW "
    # Latin letters without a decomposition
    "ıi ȷj ɡg ɑa ɩi øo ØO đd Đd ħh łl ŁL ƅb "
    # dashes and minus signs
    "‐- ‑- ‒- –- —- ―- −- ﹣- "
)
CONFUSABLES: dict[str, str] = {pair[0]: pair[1] for pair in _CONFUSABLE_PAIRS.split()}
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
"""Letters and symbols that draw nothing (Hangul fillers, the braille blank)."""


@functools.lru_cache(maxsize=8192)
def read_char(c: str) -> str:
    """What one character reads as to the scanner: nothing for an invisible one (format character,
    combining mark, blank letter), a space for any space, else its NFKC form with marks taken off and
    look-alike letters folded to Latin (see the module's docstring)."""
    category = unicodedata.category(c)
    if category in ("Cf", "Mn", "Me") or c in _BLANK_LETTERS:
        return ""
    if category == "Zs":
        return " "
    if c in CONFUSABLES:
        return CONFUSABLES[c]
    read = unicodedata.normalize("NFKC", c)
    if not read.isascii():
        decomposed = unicodedata.normalize("NFKD", read)
        if any(unicodedata.combining(d) for d in decomposed):
            read = "".join(d for d in decomposed if not unicodedata.combining(d))
        read = "".join(CONFUSABLES.get(d, d) for d in read)
    return read


class _Reads(dict[int, str]):
    """``str.translate`` table: each code point to what it reads as, filled on first sight."""

    def __missing__(self, key: int) -> str:
        value = self[key] = read_char(chr(key))
        return value


_READS = _Reads()
# The JSON escape of a character (``\u200b``); read as the character reads.
_ESCAPE = r"\\u[0-9a-fA-F]{4}"
# A run of non-ASCII characters, or such an escape.
_RUNS = re.compile(r"[^\x00-\x7f]+|" + _ESCAPE)


def _escape_read(escape: str) -> str | None:
    """What a ``\\uXXXX`` escape reads as, or None when it is read as written (its character reads
    as itself, or is an ASCII character other than a letter, digit, ``_`` or ``-``)."""
    c = chr(int(escape[2:], 16))
    if c.isascii():
        return c if c.isalnum() or c in "_-" else None
    read = _READS[ord(c)]
    return None if read == c else read


@dataclass(frozen=True, slots=True)
class Normalized:
    """The scanned text, and where each of its characters came from."""

    text: str
    # Breakpoints: scanned offset ``marks[k]`` and on come from original offset ``origins[k]`` and on.
    marks: tuple[int, ...] = ()
    origins: tuple[int, ...] = ()
    spaces: tuple[int, ...] = ()  # scanned offsets of the spaces that were not ASCII spaces

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


class _Map:
    """The breakpoints being built: a scanned offset and the original offset it comes from."""

    def __init__(self) -> None:
        self.marks: list[int] = []
        self.origins: list[int] = []

    def point(self, pos: int, origin: int) -> None:
        """From scanned ``pos`` on, the text comes from original ``origin`` on."""
        marks, origins = self.marks, self.origins
        if marks and marks[-1] == pos:
            origins[-1] = origin
            if len(marks) > 1 and origins[-2] + (pos - marks[-2]) == origin:
                marks.pop()
                origins.pop()
            return
        current = origins[-1] + (pos - marks[-1]) if marks else pos
        if current != origin:
            marks.append(pos)
            origins.append(origin)


def normalize(text: str) -> Normalized:
    """``text`` as the scanner reads it (see the module's docstring)."""
    if text.isascii() and "\\u" not in text:
        return Normalized(text)
    out: list[str] = []
    spaces: list[int] = []
    where = _Map()
    n = 0  # length of the scanned text so far
    pos = 0
    for m in _RUNS.finditer(text):
        i, run = m.start(), m.group()
        if run[0] == "\\":
            read = _escape_read(run)
            if read is None:
                continue
            units = [(i, m.end(), read)]
        else:
            reads = run.translate(_READS)
            if reads == run:
                continue
            if len(reads) == len(run) and all(len(_READS[ord(c)]) == 1 for c in run):
                # one for one (look-alikes, spaces): no breakpoint needed
                units = [(i + j, i + j + 1, r) for j, r in enumerate(reads) if r == " "]
                out.append(text[pos:i])
                n += i - pos
                out.append(reads)
                spaces.extend(n + u[0] - i for u in units)
                n += len(reads)
                pos = m.end()
                continue
            units = [(i + j, i + j + 1, _READS[ord(c)]) for j, c in enumerate(run)]
        out.append(text[pos:i])
        n += i - pos
        for start, stop, read in units:
            if read == " " and stop - start == 1 and text[start] != " ":
                spaces.append(n)
            where.point(n, start)
            for k in range(1, len(read)):  # each character of an expansion comes from this one
                where.point(n + k, start)
            out.append(read)
            n += len(read)
            where.point(n, stop)
        pos = m.end()
    if not out:
        return Normalized(text)
    out.append(text[pos:])
    return Normalized("".join(out), tuple(where.marks), tuple(where.origins), tuple(spaces))
