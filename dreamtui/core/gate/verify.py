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
4. Confirm: walk every string value of the decoded record; the normalised quote must lie inside one
   normalised string. Each place is reported with its provenance (``records.provenance_of``) and
   whether the record is a copy (an ``agent_progress`` record, or a repeat of a string already
   matched). Originals come before copies, then person > assistant > meta > tool.
"""

from __future__ import annotations

import json
import mmap
import re
import unicodedata
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from dreamtui.core.files import open_regular
from dreamtui.core.ingest import records
from dreamtui.core.ingest.tail import decode_line
from dreamtui.core.models import Match, Verification
from dreamtui.core.text import SURROGATE

MIN_WORDS = 6
"""Quotes with fewer words are refused as unverifiable: too easy to find by chance."""

_UNSPACED = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")
"""Han and kana: scripts written without spaces between words."""


def word_count(text: str) -> float:
    """Words in ``text``: space-separated tokens, and two Han or kana characters for one word.

    Chinese and Japanese put no spaces between words, so a whole sentence would count as one word;
    two characters is about the length of a word in both.
    """
    unspaced = len(_UNSPACED.findall(text))
    return len(_UNSPACED.sub(" ", text).split()) + unspaced / 2

PROVENANCE_RANK = {"person": 0, "assistant": 1, "meta": 2, "tool": 3}

_QUOTE_MAP = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u02bc", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb", '"'),
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
}
_FANCY = re.compile("[" + "".join(_QUOTE_MAP) + "]")
_WS = re.compile(r"\s+")
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
        text = _FANCY.sub(lambda m: _QUOTE_MAP[m.group(0)], text)
    return _WS.sub(" ", text).strip()


def refusal(quote: str) -> str | None:
    """Why ``quote`` cannot be verified at all, or None when it may be searched."""
    if _HIDDEN.search(quote):
        return "refused: the quote holds zero-width, bidi-control or tag characters"
    words = word_count(normalize(quote))
    if words < MIN_WORDS:
        shown = f"{words:g}" if words == int(words) else f"{words:.1f}"
        return f"unverifiable: too short ({shown} words; at least {MIN_WORDS} needed)"
    return None


def _json_escaped(text: str) -> bytes:
    return json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8", "surrogatepass")


def needles(norm_quote: str) -> list[list[bytes]]:
    """What a raw line holding the quote must contain: for every run of the normalised quote that
    normalisation cannot have produced (no spaces, quotes, dashes), its JSON-escaped bytes in NFC
    or (when different) NFD form. Longest run first; at least one form of every run must occur."""
    runs = sorted({r for r in _UNSTABLE.split(norm_quote) if r}, key=lambda r: -len(r.encode("utf-8")))
    groups: list[list[bytes]] = []
    for run in runs:
        forms = [run]
        nfd = unicodedata.normalize("NFD", run)
        if nfd != run:
            forms.append(nfd)
        escaped = [_json_escaped(f) for f in forms]
        # a writer with ensure_ascii=True would have written \uXXXX escapes instead of UTF-8
        escaped += [e for e in (json.dumps(f)[1:-1].encode("ascii") for f in forms) if e not in escaped]
        groups.append(escaped)
    return groups


def _strings(obj: Any) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Every string value inside ``obj`` with its JSON path (iterative: deep nesting is fine)."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), obj)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            yield path, value
        elif isinstance(value, dict):
            stack.extend(((*path, k), v) for k, v in reversed(list(value.items())))
        elif isinstance(value, list):
            stack.extend(((*path, i), v) for i, v in reversed(list(enumerate(value))))


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
                    any(data.find(k, start, end) >= 0 for k in group) for group in rest):
                spans.add((start, end))
            pos = data.find(key, end)
    return sorted(spans)


def _decode(raw: bytes) -> Any:
    """The record on one line, decoded exactly as the digest decodes it (a BOM removed, bad bytes as
    U+FFFD), so a quote the digest showed from a repaired record verifies."""
    return decode_line(raw)[0]


def _provenance(obj: dict[str, Any], path: tuple[str | int, ...], value: str, nq: str) -> str:
    offset: int | None = None
    at = value.find(records.REJECTION_MARKER)
    if at >= 0:
        tail_start = at + len(records.REJECTION_MARKER)
        offset = tail_start if nq in normalize(value[tail_start:]) else 0
    return records.provenance_of(obj, path, offset)


def _is_progress_copy(obj: dict[str, Any]) -> bool:
    data = obj.get("data")
    return obj.get("type") == "progress" and isinstance(data, dict) and data.get("type") == "agent_progress"


def _open(path: Path) -> tuple[bytes | mmap.mmap, Any]:
    fh = open_regular(path)  # a FIFO or a device is refused at once, never read
    try:
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ), fh
    except ValueError:  # empty file
        fh.close()
        return b"", None


def verify_quote(quote: str, files: Sequence[Path | str]) -> Verification:
    """Search ``quote`` in the raw transcript ``files`` (a session's main file and its sub-agents).

    Verified when the normalised quote lies inside one string value of a record; every place is
    reported, originals before copies, then person > assistant > meta > tool, then file order.
    Unreadable files are skipped (the reason says so when nothing is found).
    """
    why = refusal(quote)
    if why:
        return Verification(False, [], why)
    nq = normalize(quote)
    groups = needles(nq)
    text_groups = [[json.loads(b'"' + k + b'"') for k in group] for group in groups]
    found: list[tuple[tuple[int, int, int, int], Match]] = []
    seen_strings: set[tuple[str, str]] = set()
    unreadable: list[str] = []
    for file_no, fpath in enumerate(files):
        fpath = Path(fpath)
        try:
            data, fh = _open(fpath)
        except OSError as exc:
            unreadable.append(f"{fpath.name}: {exc.strerror}")
            continue
        try:
            spans = _candidate_lines(data, groups)
            line_no, counted_to = 1, 0
            for start, end in spans:
                line_no += data[counted_to:start].count(b"\n")
                counted_to = start
                obj = _decode(bytes(data[start:end]))
                if not isinstance(obj, dict):
                    continue
                progress = _is_progress_copy(obj)
                for path, value in _strings(obj):
                    if not all(any(k in value for k in group) for group in text_groups):
                        continue
                    if nq not in normalize(value):
                        continue
                    prov = _provenance(obj, path, value, nq)
                    sig = (prov, value)
                    copy = progress or sig in seen_strings
                    seen_strings.add(sig)
                    match = Match(str(fpath), line_no, _str_or_none(obj.get("uuid")),
                                  _str_or_none(obj.get("timestamp")), prov, copy)  # type: ignore[arg-type]
                    found.append(((int(copy), PROVENANCE_RANK.get(prov, 9), file_no, line_no), match))
        finally:
            if fh is not None:
                data.close()  # type: ignore[union-attr]
                fh.close()
    if found:
        found.sort(key=lambda item: item[0])
        unique = list(dict.fromkeys(m for _, m in found))
        return Verification(True, unique, None)
    reason = "not found: the quote is not inside any one string of the session's records"
    if unreadable:
        reason += f" (unreadable: {', '.join(unreadable)})"
    return Verification(False, [], reason)


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None
