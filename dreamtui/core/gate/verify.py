"""Quote verification: is a candidate's quote really inside one string of one transcript record?

How it works (see ``transcript-format.md``, "Encoding"):

1. Refuse what cannot be verified honestly: quotes under :data:`MIN_WORDS` words, and quotes holding
   zero-width, bidi-control or Unicode tag characters (they can hide a different text).
2. Normalise the quote: Unicode NFC, curly quotes to ASCII, dashes to ``-``, whitespace runs to one
   space. The same normalisation is applied to the transcript strings; none of these steps can turn
   a false quote into a true one.
3. Prefilter on bytes: the longest run of the quote that normalisation never changes (no spaces,
   quotes, dashes) is JSON-escaped and searched in the raw file with ``bytes.find``; only the
   lines that hold it are decoded.
   Many quotes at once (:func:`verify_quotes`, what the gate uses) read each file once: with
   :data:`INDEX_FROM` quotes or more, into an index of the keys each line holds, keys that work
   for any script: the quote's inner pieces between two spaces, held whole (:func:`safe_pieces`:
   words with their punctuation, paths, Vietnamese syllables...), and for text written without
   spaces its characters beyond ASCII (:func:`safe_chars`). Only the lines holding all of a quote's
   keys (or with something that could hide one: a ``\\u`` escape, text not in NFC) are searched
   for its needles; the batch never misses a place the one-quote search finds, so the answers are
   the same.
4. Confirm: walk every string value of the decoded record; the normalised quote must lie inside one
   normalised string. Each place is reported with its provenance (the format's ``provenance``) and
   whether the record is a copy (the format's ``is_copy``: a sub-agent's words copied into the main
   file, or a repeat of a string already matched). Originals come before copies, then person > assistant > meta > tool.
5. Erase characters: a terminal agent may store a person's keystrokes with BACKSPACE (``\\x08``) or DEL
   (``\\x7f``) after the character each erased, and the digest shows such text as it was on the
   screen (:func:`dreamtui.core.text.as_typed`). A quote found nowhere by steps 3-4 is looked for
   once more, in the strings holding an erase character: it verifies when it lies inside one such
   string read with the erase characters applied or removed (both honest readings of what was typed;
   never a mix of the two). Only the lines holding one, raw or JSON-escaped (``\\b``, ``\\u0008``,
   ``\\u007f``), are decoded, at most :data:`TYPED_BYTES` of them per file, and which lines hold one
   is remembered per file version, so a file without any costs one ``stat`` per call (a whole-file
   source's records holding one are kept from its one read). The match
   carries the record's provenance as usual (a tool's output is still the tool's).

Which record a string is in and whose words it is are the transcript format's to say — the format of
each file, looked up from the file (:func:`dreamtui.core.ingest.formats.format_for`). For a ``lines``
format the byte search above finds the lines; a whole-file source (a ``records`` format: a JSON
document, a SQLite row, a markdown block) is read as its records (the format's ``records``), and
each record's strings are searched the same way (step 4), the match naming the record's ``locator``
as its line.
"""

from __future__ import annotations

import mmap
import os
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate
from json.encoder import encode_basestring, encode_basestring_ascii  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

from dreamtui.core.errors import DreamError
from dreamtui.core.files import open_regular
from dreamtui.core.ingest import formats
from dreamtui.core.ingest.formats.protocol import TranscriptFormat, split_address
from dreamtui.core.ingest.tail import decode_line
from dreamtui.core.models import Match, Provenance, Verification
from dreamtui.core.text import SURROGATE, as_typed, without_erase, word_count

MIN_WORDS = 6
"""Quotes with fewer words are refused as unverifiable: too easy to find by chance..."""
MIN_DISTINCTIVE_CHARS = 40
"""...unless they hold at least this many non-space characters in two words or more: a quote made of a
long path or a list of links ("1、文档链接：https://…") is not found by chance either."""

PROVENANCE_RANK = {"person": 0, "assistant": 1, "meta": 2, "tool": 3}

_QUOTE_MAP = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u02bc", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
}
_FANCY = re.compile("[" + "".join(_QUOTE_MAP) + "]")
# Zero-width, bidi controls, Unicode tags, word joiner, BOM, soft hyphen, Mongolian vowel separator.
_HIDDEN = re.compile(
    "[\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\u00ad\u180e\u061c\U000e0000-\U000e007f]"
)
# Characters the normalisation may produce from something else: never part of a prefilter needle.
_UNSTABLE = re.compile(r"[\s'\"\-\ufffd]+")
_SURROGATE = SURROGATE  # the one definition, in core/text.py


def normalize(text: str) -> str:
    """NFC, curly quotes and dashes to ASCII, whitespace runs to one space, stripped."""
    if not text.isascii():
        text = _SURROGATE.sub("\ufffd", text)  # a lone surrogate is the U+FFFD the digest shows
        text = unicodedata.normalize("NFC", text)
        for fancy in set(_FANCY.findall(text)):
            text = text.replace(fancy, _QUOTE_MAP[fancy])
    return " ".join(text.split())  # str.split splits at the characters \s matches


def refusal(quote: str) -> str | None:
    """Why ``quote`` cannot be verified at all, or None when it may be searched."""
    return _refusal(quote, normalize(quote))


def _refusal(quote: str, norm_quote: str) -> str | None:
    """:func:`refusal`, the quote already normalised."""
    if _HIDDEN.search(quote):
        return "refused: the quote holds zero-width, bidi-control or tag characters"
    if not _UNSTABLE.sub("", norm_quote):  # nothing to search for: no needle, no key
        return "unverifiable: the quote holds only spaces, quotes and dashes"
    words = word_count(norm_quote)
    chars = len(norm_quote) - norm_quote.count(" ")
    if words < MIN_WORDS and (words < 2 or chars < MIN_DISTINCTIVE_CHARS):
        shown = f"{words:g}" if words == int(words) else f"{words:.1f}"
        return (
            f"unverifiable: too short ({shown} words, {chars} characters; at least {MIN_WORDS} words "
            f"or {MIN_DISTINCTIVE_CHARS} characters needed)"
        )
    return None


def _json_escaped(text: str) -> bytes:
    """``text`` as JSON writes it inside a string (UTF-8, escapes only where JSON needs them)."""
    if text.isprintable() and "\\" not in text and '"' not in text:
        return text.encode("utf-8", "surrogatepass")  # nothing JSON escapes: no control character
    return encode_basestring(text)[1:-1].encode("utf-8", "surrogatepass")


def needles(norm_quote: str) -> list[list[bytes]]:
    """What a raw line holding the quote must contain: for every run of the normalised quote that
    normalisation cannot have produced (no spaces, quotes, dashes), its JSON-escaped bytes in NFC
    or (when different) NFD form. Longest run first; at least one form of every run must occur."""
    return [utf8 + escaped for utf8, escaped in _needle_forms(norm_quote)]


def _needle_forms(norm_quote: str) -> list[tuple[list[bytes], list[bytes]]]:
    """:func:`needles` with each run's forms in two lists: as UTF-8, and as ``\\uXXXX`` escapes
    (what a writer with ``ensure_ascii`` makes of text beyond ASCII; empty for ASCII runs)."""
    return [_forms_of(run, nfd) for run, nfd in _runs(norm_quote)]


def _runs(norm_quote: str) -> list[tuple[str, str]]:
    """The runs of the normalised quote that normalisation cannot have produced (no spaces, quotes,
    dashes), each with its NFD form; longest (in UTF-8) first, the one a line most rarely holds."""
    runs = {r for r in _UNSTABLE.split(norm_quote) if r}
    out = [(r, r if r.isascii() else unicodedata.normalize("NFD", r)) for r in runs]
    out.sort(key=lambda pair: -len(pair[0].encode("utf-8")))
    return out


def _forms_of(run: str, nfd: str) -> tuple[list[bytes], list[bytes]]:
    if run.isascii() and run.isprintable() and "\\" not in run:
        return [run.encode("ascii")], []  # JSON writes it as it is, in every form
    forms = [run] if nfd == run else [run, nfd]
    utf8 = [_json_escaped(f) for f in forms]
    escaped = [
        e
        for e in dict.fromkeys(encode_basestring_ascii(f)[1:-1].encode("ascii") for f in forms)
        if e not in utf8
    ]
    return utf8, escaped


_NON_ASCII = re.compile("[^\\x00-\\x7f]")
_ESCAPE = re.compile(rb"\\(?:u[0-9a-fA-F]{4}|.)")
# the escapes every writer makes: blanked first, so a line rarely has a backslash left
_PLAIN_ESCAPE = re.compile(rb'\\[nt"\\rbf]')
# a \u escape of a printable ASCII character, or an escaped slash (no ordinary writer makes either):
# the index blanks it, so its line is always searched for quotes with ASCII keys (an escaped backslash
# before "/" or "u00.." looks the same: that line is searched too, which changes nothing but time)
_ASCII_ESCAPE = re.compile(rb"\\u00[2-7][0-9a-fA-F]|\\/")
# a \u escape of a character beyond ASCII (an ensure_ascii writer; a lone surrogate): for quotes
# with keys beyond ASCII, its line is always searched, and for their escaped needles
_WIDE_ESCAPE = re.compile(rb"\\u(?!00[0-7])[0-9a-fA-F]{4}")
# every whitespace character beyond ASCII, as UTF-8 (NEL, no-break space, Ogham space, the spaces
# U+2000-U+200A, line and paragraph separators, narrow no-break, medium mathematical, ideographic)
_WIDE_SPACE = re.compile(
    rb"\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2(?:\x80[\x80-\x8a\xa8\xa9\xaf]|\x81\x9f)|\xe3\x80\x80"
)
# what the index splits a line into pieces at: ASCII whitespace and control characters (the line
# break kept: it ends a line); for a batch without keys beyond ASCII, every byte beyond ASCII too
_PIECE_BREAKS = bytes(32 if (c < 33 or c == 127) and c != 10 else c for c in range(256))
_ASCII_PIECE_BREAKS = bytes(32 if (c < 33 or c >= 127) and c != 10 else c for c in range(256))
_ASCII_BUT_BREAK = bytes(c for c in range(128) if c != 10)
_WIDE_BYTES = bytes(range(128, 256))
# ASCII characters a key never holds: what normalisation makes of other characters (quotes, dashes;
# ";", "`" and "K" from U+037E, U+1FEF and the Kelvin sign), the backslash, and the space
_NOT_IN_KEYS = frozenset("\"'\\-;`K ")
_PUNCTUATION = b"!#$%&()*+,./:<=>?@[]^_{|}~"  # stripped from a piece before it is compared with _COMMON
# characters of no canonical class that NFC may join to the character before them (Indic vowel
# signs, Hangul vowel and final jamo...): with the combining marks and the characters NFC replaces,
# what makes a line's text other than its NFC form (:func:`_unstable`)
_JOINS_BEFORE = frozenset(
    [
        chr(c)
        for c in (
            0x9BE,
            0x9D7,
            0xB3E,
            0xB56,
            0xB57,
            0xBBE,
            0xBD7,
            0xCC2,
            0xCD5,
            0xCD6,
            0xD3E,
            0xD57,
            0xDCF,
            0xDDF,
            0xFB5,
            0xFB7,
            0x102E,
            0x1B35,
            0x11127,
            0x1133E,
            0x11357,
            0x114B0,
            0x114BA,
            0x114BD,
            0x115AF,
            0x11930,
        )
    ]
    + [chr(c) for c in range(0x1161, 0x1176)]
    + [chr(c) for c in range(0x11A8, 0x11C3)]
)
INDEX_FROM = 20
"""A batch of at least this many quotes reads each file into an index (the quotes' pieces and
characters per line) instead of searching the file once per quote: about where the two cost the
same on real sessions (the index costs about as much as 16 to 24 one-quote searches, whatever the
number of quotes; see ``docs/gate.md``)."""
_CHARS_BELOW = 3
"""A quote with fewer rare pieces than this is indexed by its characters beyond ASCII too (Chinese
and Japanese, written without spaces); one with more needs no more keys."""
_INDEX_SLICE = 8 * 1024 * 1024  # the index reads a file in slices of whole lines of about this size
_COMMON = frozenset(
    b"a an and are as at be but by can do for from has have i if in is it its not of on or so that the "
    b"then this to was we will with you".split()
)
"""Words on nearly every long line: a quote is indexed by its other pieces when it has some."""


def safe_pieces(norm_quote: str) -> frozenset[bytes]:
    """Pieces of the normalised quote that any line holding it holds whole, as UTF-8 (NFC).

    A piece is what lies between two spaces of the quote (never its first or last: a quote may begin
    or end mid-word) when it holds no ASCII character normalisation may have made or a JSON writer
    escapes (quotes, dashes, ``;``, `````, ``K``, the backslash) and no U+FFFD. In the record's string,
    the piece lies between two whitespace characters, exactly as written when the line's text is in
    NFC (:func:`_unstable` tells which lines may not be); in the line, once JSON escapes are blanked
    and whitespace and control characters read as spaces (:class:`_LineIndex`), it is one whole
    piece. Words, paths, numbers with their punctuation, Vietnamese syllables, Russian words..."""
    if not norm_quote.isascii() and "\ufffd" in norm_quote:
        inner = [p for p in norm_quote.split(" ")[1:-1] if "\ufffd" not in p]
    else:
        inner = norm_quote.split(" ")[1:-1]
    return frozenset(p.encode("utf-8") for p in inner if p and _NOT_IN_KEYS.isdisjoint(p) and p.isprintable())


def safe_chars(norm_quote: str) -> frozenset[str]:
    """Characters beyond ASCII of the normalised quote (U+FFFD aside): any line holding the quote
    holds each of them as UTF-8 when the line's text is in NFC (:func:`_unstable`) and has no ``\\u``
    escape of such a character. The keys of text written without spaces (Chinese, Japanese)."""
    if norm_quote.isascii():
        return frozenset()
    return frozenset(_NON_ASCII.findall(norm_quote)) - {"\ufffd"}


_STABLE = {"\n"}  # characters seen that :func:`_unstable` found stable


def _unstable(char: str) -> bool:
    """Whether a line holding ``char`` beyond ASCII may hold text whose NFC form differs from it (a
    combining mark, a character NFC replaces or joins to the one before): for quotes with keys
    beyond ASCII, such a line is searched whatever its keys."""
    return (
        bool(unicodedata.combining(char))
        or char in _JOINS_BEFORE
        or unicodedata.normalize("NFC", char) != char
    )


def _stable(char: str) -> bool:
    """Not :func:`_unstable` (every ASCII character is stable)."""
    if char.isascii() or char in _STABLE:
        return True
    if _unstable(char):
        return False
    _STABLE.add(char)
    return True


def _index_keys(norm_quote: str) -> frozenset[bytes | str]:
    """What the index looks up for a quote: keys a line holding it must all hold. The quote's safe
    pieces (:func:`safe_pieces`) that are beyond ASCII or of three characters or more and not a
    common word (all of them when it has no such piece) and, when it has fewer than
    :data:`_CHARS_BELOW` such pieces, its characters beyond ASCII (:func:`safe_chars`). None at all:
    the quote is searched through each file instead."""
    pieces = safe_pieces(norm_quote)
    rare = frozenset(
        p for p in pieces if not p.isascii() or (len(p) >= 3 and p.strip(_PUNCTUATION).lower() not in _COMMON)
    )
    keys: frozenset[bytes | str] = rare or pieces
    if len(rare) < _CHARS_BELOW:
        keys = keys.union(safe_chars(norm_quote))
    return keys


class _Wanted:
    """The keys of a batch: its pieces, its characters beyond ASCII, whether a key lies beyond
    ASCII, and whether a quote does (then the lines with ``\\u`` escapes of such text are noted)."""

    __slots__ = ("pieces", "chars", "wide_keys", "wide_quotes")

    def __init__(self, batch: list[_Quote]) -> None:
        keys = frozenset().union(*(q.keys for q in batch))
        self.pieces = frozenset(k for k in keys if isinstance(k, bytes))
        self.chars = frozenset(k for k in keys if isinstance(k, str))
        self.wide_keys = any(q.wide_keys for q in batch)
        self.wide_quotes = not all(q.nq.isascii() for q in batch)


class _LineIndex:
    """The lines of one file that hold each wanted key: a piece (see :func:`safe_pieces`) or a
    character beyond ASCII (see :func:`safe_chars`), and the lines searched whatever their keys."""

    def __init__(self, data: bytes | mmap.mmap, wanted: _Wanted) -> None:
        self.starts: list[int] = [0]  # line i is data[starts[i]:starts[i + 1] - 1]
        self.lines: dict[bytes | str, set[int]] = {}
        self.keys_present = self.lines.keys()
        self.always_ascii: set[int] = set()  # \\u escapes of ASCII, escaped slashes
        self.escaped: set[int] = set()  # \\u escapes of characters beyond ASCII
        self.always_wide: set[int] = set()  # those, and lines whose text may not be NFC
        size, start = len(data), 0
        while start < size:  # slices of whole lines: memory stays bounded however large the file
            cut = data.find(b"\n", min(start + _INDEX_SLICE, size))
            stop = size if cut < 0 else cut + 1
            self._add(data[start:stop], wanted)
            start = stop

    def _add(self, part: bytes, wanted: _Wanted) -> None:
        """Index the whole lines ``part`` (the file's bytes from ``self.starts[-1]``)."""
        first, base = len(self.starts) - 1, self.starts[-1]
        body = part[:-1] if part.endswith(b"\n") else part
        self.starts += accumulate(map((1).__add__, map(len, body.split(b"\n"))), initial=self.starts.pop())
        blanked = body
        if b"\\" in body:
            blanked = _PLAIN_ESCAPE.sub(b"  ", body)  # as long as the escapes: offsets stay
            if b"\\" in blanked:  # \u escapes, escaped slashes: the lines holding them, then blanked
                self.always_ascii.update(self._lines_of(blanked, base, _ASCII_ESCAPE))
                if wanted.wide_quotes:
                    self.escaped.update(self._lines_of(blanked, base, _WIDE_ESCAPE))
                    self.always_wide |= self.escaped
                blanked = _ESCAPE.sub(b" ", blanked)
        breaks = _ASCII_PIECE_BREAKS
        if wanted.wide_keys and not body.isascii():
            breaks = _PIECE_BREAKS
            wide_bytes = body.translate(None, _ASCII_BUT_BREAK)  # ASCII bytes never sit inside a character
            if _WIDE_SPACE.search(wide_bytes):
                blanked = _WIDE_SPACE.sub(b" ", blanked)
            self._add_chars(wide_bytes.decode("utf-8", "replace"), wanted.chars, first)
        lines = self.lines
        if wanted.pieces:
            pieces = map(bytes.split, blanked.translate(breaks).split(b"\n"))
            for i, found in enumerate(map(wanted.pieces.intersection, pieces), first):
                if found:
                    _note(lines, found, i)

    def _add_chars(self, wide_text: str, chars: frozenset[str], first: int) -> None:
        """Note the lines holding each wanted character, and those whose text may not be NFC, from
        ``wide_text``: the characters beyond ASCII of the lines from ``first``, line by line."""
        unstable = set()
        for char in set(wide_text) - _STABLE:  # each character looked at once per process
            if not _stable(char):
                unstable.add(char)
        if not chars and not unstable:
            return
        lines = self.lines
        for i, text in enumerate(wide_text.split("\n"), first):
            if text:
                if chars:
                    held = chars.intersection(text)
                    if held:
                        _note(lines, held, i)
                if unstable and not unstable.isdisjoint(text):
                    self.always_wide.add(i)

    def _lines_of(self, body: bytes, base: int, pattern: re.Pattern[bytes]) -> set[int]:
        """The lines where ``pattern`` matches in ``body`` (the file's bytes from ``base``, indexed)."""
        starts = self.starts
        return {bisect_right(starts, base + m.start()) - 1 for m in pattern.finditer(body)}

    def always(self, q: _Quote) -> set[int]:
        """The lines searched for quote ``q`` whatever keys they hold."""
        if q.ascii_keys and self.always_ascii:
            return self.always_ascii | self.always_wide if q.wide_keys else self.always_ascii
        return self.always_wide if q.wide_keys else set()

    def candidates(self, q: _Quote) -> list[int]:
        """The lines that may hold quote ``q`` (all of its keys, or a line searched whatever its
        keys), in file order."""
        always = self.always(q)
        if not self.keys_present >= q.keys:  # the usual answer: the quote is not in this file
            return sorted(always)
        sets = sorted((self.lines[k] for k in q.keys), key=len)
        found = sets[0].intersection(*sets[1:])
        if always:
            found |= always
        return sorted(found)


def _note(lines: dict[Any, set[int]], keys: frozenset[Any], line: int) -> None:
    """Note that ``line`` holds each of ``keys``."""
    for key in keys:
        got = lines.get(key)
        if got is None:
            lines[key] = {line}
        else:
            got.add(line)


def _holds_near(
    data: bytes | mmap.mmap, start: int, end: int, at: int, reach: int, groups: list[list[bytes]]
) -> bool:
    """Whether the line ``start:end`` holds a form of every needle group, looking first within
    ``reach`` bytes of ``at`` (where the first needle is): a long line is scanned whole only for a
    needle not found there."""
    lo, hi = max(start, at - reach), min(end, at + reach)
    for group in groups:
        if any(data.find(k, lo, hi) >= 0 for k in group):
            continue
        if (lo == start and hi == end) or not any(data.find(k, start, end) >= 0 for k in group):
            return False
    return True


def _candidate_lines(data: bytes | mmap.mmap, groups: list[list[bytes]]) -> list[tuple[int, int]]:
    """Start/end offsets of the lines holding a form of every needle group, in file order.

    The first (longest) group is searched with ``find``; every other group is checked in the line.
    """
    spans: set[tuple[int, int]] = set()
    first, rest = groups[0], groups[1:]
    for key in first:
        pos = data.find(key)
        while pos >= 0:
            start = data.rfind(b"\n", 0, pos) + 1
            end = data.find(b"\n", pos)
            if end < 0:
                end = len(data)
            if (start, end) not in spans and all(
                any(data.find(k, start, end) >= 0 for k in group) for group in rest
            ):
                spans.add((start, end))
            pos = data.find(key, end)
    return sorted(spans)


def _decode(raw: bytes) -> Any:
    """The record on one line, decoded exactly as the digest decodes it (a BOM removed, bad bytes as
    U+FFFD), so a quote the digest showed from a repaired record verifies."""
    return decode_line(raw)[0]


def _open(path: Path) -> tuple[bytes | mmap.mmap, Any]:
    fh = open_regular(path)  # a FIFO or a device is refused at once, never read
    try:
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ), fh
    except ValueError:  # empty file
        fh.close()
        return b"", None


class _Quote:
    """One quote being verified: its needles and what was found so far."""

    __slots__ = (
        "nq",
        "groups",
        "utf8_groups",
        "exact",
        "reach",
        "text_groups",
        "keys",
        "ascii_keys",
        "wide_keys",
        "found",
        "seen_strings",
    )

    def __init__(self, nq: str) -> None:
        self.nq = nq
        self.groups: list[list[bytes]] = []  # the needles, made when first needed (:meth:`all_groups`)
        self.utf8_groups: list[list[bytes]] = []  # enough for a line without \\u escapes (:meth:`ready`)
        self.exact = b""
        self.text_groups: list[list[str]] = []
        self.reach = 8 * len(nq) + 64  # bytes around one needle where the others usually are
        self.keys = _index_keys(nq)  # every key a line holding the quote holds
        # keys an escaped ASCII character may hide; keys beyond ASCII (a line not in NFC, or with
        # \u escapes of such text, may hide them)
        self.ascii_keys = any(isinstance(k, bytes) and k.translate(None, _WIDE_BYTES) for k in self.keys)
        self.wide_keys = not nq.isascii() and any(not k.isascii() for k in self.keys)
        self.found: list[tuple[tuple[int, int, int, int], Match]] = []
        self.seen_strings: set[tuple[str, str]] = set()

    def ready(self) -> _Quote:
        """The quote with its needles as UTF-8 made (most quotes of a batch need none in most files)."""
        if not self.utf8_groups:
            nq = self.nq
            self.exact = _json_escaped(nq)  # the whole quote as most transcripts write it
            if nq.isascii() and nq.isprintable() and "\\" not in nq:  # every run as it is, in every form
                plain = sorted({r for r in _UNSTABLE.split(nq) if r}, key=len, reverse=True)
                self.groups = self.utf8_groups = [[r.encode("ascii")] for r in plain]
                self.text_groups = [[r] for r in plain]
                return self
            runs = _runs(nq)
            self.utf8_groups = [
                [_json_escaped(f) for f in ((run,) if nfd == run else (run, nfd))] for run, nfd in runs
            ]
            self.text_groups = [[run, nfd] if nfd != run else [run] for run, nfd in runs]
        return self

    def all_groups(self) -> list[list[bytes]]:
        """Every needle form, ``\\uXXXX`` escapes included (:func:`needles`): for a line that has such
        escapes, or a search through the whole file."""
        if not self.groups:
            self.groups = needles(self.nq)
        return self.groups

    def result(self, unreadable: list[str]) -> Verification:
        if self.found:
            self.found.sort(key=lambda item: item[0])
            return Verification(True, list(dict.fromkeys(m for _, m in self.found)), None)
        reason = "not found: the quote is not inside any one string of the session's records"
        if unreadable:
            reason += f" (unreadable: {', '.join(unreadable)})"
        return Verification(False, [], reason)


class _Record:
    """One decoded line, shared by every quote that may lie in it: its strings are listed and
    normalised once, however many quotes look at them."""

    __slots__ = ("obj", "strings", "norms", "copy")

    def __init__(self, obj: dict[str, Any], fmt: TranscriptFormat) -> None:
        self.obj = obj
        self.strings = _leaves(obj)
        self.norms: dict[int, str] = {}
        self.copy = fmt.is_copy(obj)

    def norm(self, index: int) -> str:
        value = self.norms.get(index)
        if value is None:
            value = self.norms[index] = normalize(self.strings[index][2])
        return value


def _leaves(obj: dict[str, Any]) -> list[tuple[tuple[str | int, ...], str | int, str]]:
    """Every string value inside ``obj`` as (the path of its container, its key, the string): the
    same strings as :func:`_strings`, without a path tuple for each (iterative: deep nesting is fine)."""
    out: list[tuple[tuple[str | int, ...], str | int, str]] = []
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), obj)]
    while stack:
        path, value = stack.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(item, str):
                out.append((path, key, item))
            elif isinstance(item, (dict, list)):
                stack.append(((*path, key), item))
    return out


def verify_quote(quote: str, files: Sequence[Path | str]) -> Verification:
    """Search ``quote`` in the raw transcript ``files`` (a session's main file and its sub-agents).

    Verified when the normalised quote lies inside one string value of a record; every place is
    reported, originals before copies, then person > assistant > meta > tool, then file order.
    Unreadable files are skipped (the reason says so when nothing is found). One quote of
    :func:`verify_quotes`.
    """
    return verify_quotes([quote], files)[0]


def verify_quotes(quotes: Sequence[str], files: Sequence[Path | str]) -> list[Verification]:
    """:func:`verify_quote` for many quotes in one pass: each file is opened once, each candidate
    line decoded once and each of its strings normalised once, whatever the number of quotes.

    Returns one Verification per quote, in order, each exactly what :func:`verify_quote` gives.
    """
    results: list[Verification | None] = [None] * len(quotes)
    active: dict[str, _Quote] = {}
    owner: list[tuple[int, str]] = []
    seen: dict[str, str | Verification] = {}  # a repeated quote is normalised once
    for i, quote in enumerate(quotes):
        got = seen.get(quote)
        if got is None:
            got = seen[quote] = _prepare(quote)
        if isinstance(got, Verification):
            results[i] = Verification(False, [], got.reason)
            continue
        if got not in active:
            active[got] = _Quote(got)
        owner.append((i, got))
    unreadable: list[str] = []
    if active:
        batch = list(active.values())
        wanted = _Wanted(batch) if len(batch) >= INDEX_FROM else None
        fmts = [formats.format_for(fpath) for fpath in files]
        typed: dict[int, list[tuple[int, _Record]]] = {}  # records of whole-file sources with erase chars
        for file_no, (fpath, fmt) in enumerate(zip(files, fmts, strict=True)):
            if fmt.layout == "records":
                _verify_records(str(fpath), file_no, batch, unreadable, fmt, typed.setdefault(file_no, []))
            else:
                _verify_file(Path(fpath), file_no, batch, wanted, unreadable, fmt)
        missing = [q for q in batch if not q.found]
        if missing:  # found nowhere as written: perhaps as the person saw it (step 5)
            for file_no, (fpath, fmt) in enumerate(zip(files, fmts, strict=True)):
                if fmt.layout == "records":
                    for locator, record in typed.get(file_no, ()):
                        _match_typed(missing, record, str(fpath), file_no, locator, fmt)
                else:
                    _verify_typed_file(Path(fpath), file_no, missing, fmt)
    done = {nq: q.result(unreadable) for nq, q in active.items()}
    for i, nq in owner:
        v = done[nq]
        results[i] = Verification(v.verified, list(v.matches), v.reason)
    return results  # type: ignore[return-value]


def _prepare(quote: str) -> str | Verification:
    """The normalised quote, or the refusal (as :func:`refusal` words it) when it cannot be searched."""
    norm_quote = normalize(quote)
    why = _refusal(quote, norm_quote)
    return Verification(False, [], why) if why else norm_quote


def _verify_file(
    fpath: Path,
    file_no: int,
    batch: list[_Quote],
    wanted: _Wanted | None,
    unreadable: list[str],
    fmt: TranscriptFormat,
) -> None:
    """Look for every quote of ``batch`` in one file, adding what is found to each quote (through an
    index of the file's lines when ``wanted``, the words and characters of the batch, is given)."""
    try:
        data, fh = _open(fpath)
    except OSError as exc:
        unreadable.append(f"{fpath.name}: {exc.strerror}")
        return
    try:
        hits: dict[int, _Hit] = {}
        if wanted is not None and len(data):
            _index_search(data, batch, wanted, hits)
        else:
            for q in batch:
                _scan_search(data, q, hits)
        line_no, counted_to = 1, 0
        path_str = str(fpath)
        for start in sorted(hits):
            hit = hits[start]
            if hit.line:
                line_no, counted_to = hit.line, start
            else:
                line_no += data[counted_to:start].count(b"\n")
                counted_to = start
            obj = _decode(bytes(data[start : hit.end]))
            if not isinstance(obj, dict):
                continue
            rec = _Record(obj, fmt)
            for q in hit.quotes:
                _match_record(q, rec, path_str, file_no, line_no, fmt)
    finally:
        if fh is not None:
            data.close()  # type: ignore[union-attr]
            fh.close()


def _verify_records(
    address: str,
    file_no: int,
    batch: list[_Quote],
    unreadable: list[str],
    fmt: TranscriptFormat,
    typed: list[tuple[int, _Record]],
) -> None:
    """Look for every quote of ``batch`` in the records of a whole-file source (``address``: its path,
    ``#member`` for one session of a source holding many); a match names the record's locator. The
    records holding an erase character are added to ``typed`` (with their locators, up to
    :data:`TYPED_BYTES` of their strings), for the quotes found nowhere as written."""
    path, member = split_address(address)
    budget = TYPED_BYTES
    try:
        for rec in fmt.records(path, member):
            if not isinstance(rec.obj, dict):
                continue
            record = _Record(rec.obj, fmt)
            for q in batch:
                _match_record(q.ready(), record, address, file_no, rec.locator, fmt)
            if budget > 0:
                size = sum(len(v) for _, _, v in record.strings if "\x08" in v or "\x7f" in v)
                if size:
                    typed.append((rec.locator, record))
                    budget -= size
    except (OSError, DreamError) as exc:
        unreadable.append(f"{path.name}: {getattr(exc, 'strerror', None) or exc}")


class _Hit:
    """A line some quotes may lie in: where it ends, its number (0 until counted) and the quotes."""

    __slots__ = ("end", "line", "quotes")

    def __init__(self, end: int, line: int) -> None:
        self.end, self.line = end, line
        self.quotes: list[_Quote] = []


def _index_search(
    data: bytes | mmap.mmap, batch: list[_Quote], wanted: _Wanted, hits: dict[int, _Hit]
) -> None:
    """Fill ``hits`` through one index of the file (``wanted``: the keys of the batch): only the
    lines holding all of a quote's keys are searched for its needles (a quote without keys is
    searched through the file)."""
    index = _LineIndex(data, wanted)
    starts, wide = index.starts, index.escaped
    present = index.keys_present
    if not (
        index.always_ascii or index.always_wide
    ):  # the usual answer, found at once: a key is nowhere here
        batch = [q for q in batch if present >= q.keys]
    for q in batch:
        if not q.keys:
            _scan_search(data, q, hits)
            continue
        lines = index.candidates(q)
        if not lines:
            continue
        q.ready()
        for i in lines:
            start, end = starts[i], starts[i + 1] - 1
            # a line without \\u escapes of text beyond ASCII cannot hold their escaped forms
            groups = q.all_groups() if i in wide else q.utf8_groups
            at = -1
            for key in groups[0]:
                at = data.find(key, start, end)
                if at >= 0:
                    break
            if at < 0:
                continue
            if len(groups) > 1:
                size = len(q.exact)  # the quote written as it is around there holds every needle
                if data.find(q.exact, max(start, at - size), min(end, at + size)) < 0 and not _holds_near(
                    data, start, end, at, q.reach, groups[1:]
                ):
                    continue
            hit = hits.get(start)
            if hit is None:
                hit = hits[start] = _Hit(end, i + 1)
            elif not hit.line:
                hit.line = i + 1
            hit.quotes.append(q)


def _scan_search(data: bytes | mmap.mmap, q: _Quote, hits: dict[int, _Hit]) -> None:
    """Fill ``hits`` for one quote by searching its longest needle through the whole file."""
    for start, end in _candidate_lines(data, q.ready().all_groups()):
        hit = hits.get(start)
        if hit is None:
            hit = hits[start] = _Hit(end, 0)
        hit.quotes.append(q)


def _match_record(
    q: _Quote, rec: _Record, path_str: str, file_no: int, line_no: int, fmt: TranscriptFormat
) -> None:
    """Add each string of ``rec`` that holds quote ``q`` to what ``q`` found."""
    nq = q.nq
    first, rest = q.text_groups[0], q.text_groups[1:]
    for index, (where, key, value) in enumerate(rec.strings):
        if len(first) == 1:
            if first[0] not in value:
                continue
        elif not any(k in value for k in first):
            continue
        if rest and not all(any(k in value for k in group) for group in rest):
            continue
        if nq not in rec.norm(index):
            continue
        prov = fmt.provenance(rec.obj, (*where, key), value, lambda text: nq in normalize(text))
        _found(q, rec, value, prov, path_str, file_no, line_no, fmt)


def _found(
    q: _Quote,
    rec: _Record,
    value: str,
    prov: Provenance,
    path_str: str,
    file_no: int,
    line_no: int,
    fmt: TranscriptFormat,
) -> None:
    """Add the place of ``q`` in the string ``value`` of ``rec`` (whose words: ``prov``) to what it found."""
    sig = (prov, value)
    copy = rec.copy or sig in q.seen_strings
    q.seen_strings.add(sig)
    ref = fmt.ref(rec.obj)
    match = Match(path_str, line_no, ref.uuid, ref.timestamp, prov, copy)
    q.found.append(((int(copy), PROVENANCE_RANK.get(prov, 9), file_no, line_no), match))


# -- step 5: the quotes found nowhere as written, in strings holding erase characters ---------------

TYPED_BYTES = 16 * 1024 * 1024
"""At most this much of a file's lines holding an erase character (or of a whole-file source's strings
holding one) is decoded for the quotes found nowhere as written: the search stays bounded whatever a
file holds (a tool's progress bar drawn with backspaces, thousands of times)."""
# the JSON escapes of BACKSPACE and DEL (a writer may also store DEL raw; BACKSPACE raw is not JSON)
_ERASE_ESCAPE = re.compile(rb"\\(?:b|u00(?:08|7[fF]))")


def _typed_forms(text: str) -> tuple[str, str]:
    """The two readings of ``text`` a quote may be compared with, normalised: the erase characters
    applied (what the screen showed, what the digest shows) and removed (every key typed)."""
    return normalize(as_typed(text)), normalize(without_erase(text))


def _erase_lines(data: bytes | mmap.mmap) -> list[tuple[int, int]]:
    """Start/end offsets of the lines holding an erase character, raw or JSON-escaped, in file order
    (a backslash that is itself escaped, as in ``\\\\b``, is not an escape)."""
    spans: set[tuple[int, int]] = set()
    size = len(data)

    def line_at(pos: int) -> int:
        start = data.rfind(b"\n", 0, pos) + 1
        end = data.find(b"\n", pos)
        spans.add((start, end if end >= 0 else size))
        return end if end >= 0 else size

    for raw in (b"\x08", b"\x7f"):
        pos = data.find(raw)
        while pos >= 0:
            pos = data.find(raw, line_at(pos))
    done = -1
    for found in _ERASE_ESCAPE.finditer(data):
        pos = found.start()
        if pos < done:
            continue  # its line is in already
        back = pos
        while back > 0 and data[back - 1] == 0x5C:  # the backslashes before it
            back -= 1
        if (pos - back) % 2 == 0:
            done = line_at(pos)
    return sorted(spans)


_ERASE_SEEN: dict[tuple[str, int, int, int, int], list[tuple[int, int]]] = {}
"""The lines holding an erase character of each file version looked at, by path, device, inode, size
and modification time: a quote verified one by one, or a batch with a false quote in it every cycle,
reads a file for them once, not once per call, and a file known to hold none is not even opened. A
stale answer (a file rewritten in place to the same size, its modification time put back) can only
miss a place, never make one: a span is decoded only when it is still a whole line, and is then
compared like any other."""
_ERASE_SEEN_MAX = 4096


def _version(path: str, st: os.stat_result) -> tuple[str, int, int, int, int]:
    return (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def _verify_typed_file(fpath: Path, file_no: int, missing: list[_Quote], fmt: TranscriptFormat) -> None:
    """Look for the ``missing`` quotes in the lines of one file that hold an erase character (up to
    :data:`TYPED_BYTES` of them); a file that cannot be read was named by the first search."""
    path_str = str(fpath)
    try:
        if _ERASE_SEEN.get(_version(path_str, os.stat(fpath, follow_symlinks=False))) == []:
            return  # the usual answer: no erase character in this file (a link is refused by _open)
        data, fh = _open(fpath)
    except OSError:
        return
    if fh is None:
        return  # empty
    try:
        key = _version(path_str, os.fstat(fh.fileno()))
        spans = _ERASE_SEEN.get(key)
        if spans is None:
            spans = _erase_lines(data)
            if len(_ERASE_SEEN) >= _ERASE_SEEN_MAX:
                _ERASE_SEEN.clear()
            _ERASE_SEEN[key] = spans
        budget, size = TYPED_BYTES, len(data)
        line_no, counted_to = 1, 0
        for start, end in spans:
            if end > size or (start and data[start - 1] != 0x0A) or (end < size and data[end] != 0x0A):
                continue  # a stale answer (the file rewritten in place): no whole line there
            budget -= end - start
            if budget < 0:
                break
            line_no += data[counted_to:start].count(b"\n")
            counted_to = start
            obj = _decode(bytes(data[start:end]))
            if isinstance(obj, dict):
                _match_typed(missing, _Record(obj, fmt), path_str, file_no, line_no, fmt)
    finally:
        data.close()  # type: ignore[union-attr]
        fh.close()


def _match_typed(
    missing: list[_Quote], rec: _Record, path_str: str, file_no: int, line_no: int, fmt: TranscriptFormat
) -> None:
    """Add each string of ``rec`` holding an erase character whose erase-applied or erase-removed
    reading holds one of the ``missing`` quotes to what that quote found (whose words it is: the
    format's provenance, asked with the same readings)."""
    for where, key, value in rec.strings:
        if "\x08" not in value and "\x7f" not in value:
            continue
        applied, removed = _typed_forms(value)
        for q in missing:
            nq = q.nq
            if nq not in applied and nq not in removed:
                continue

            def holds(text: str, nq: str = nq) -> bool:
                return any(nq in form for form in _typed_forms(text))

            prov = fmt.provenance(rec.obj, (*where, key), value, holds)
            _found(q, rec, value, prov, path_str, file_no, line_no, fmt)
