"""Read the JSON in a small model's answer, however it was wrapped or bent.

Small local models break JSON in a handful of ways: a code fence around it, prose before or after,
a ``<think>`` block first, single quotes, trailing commas, Python's ``True``/``None``, unquoted keys,
an answer cut off at the token limit, one broken item among good ones. :func:`loads_lenient` undoes
each of these and, when the whole cannot be read, keeps every item of the list that can and counts
the rest. It never invents content: a value is either read as written or given up.
"""

from __future__ import annotations

import json
import re
from typing import Any

_THINK = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)
_DECODER = json.JSONDecoder(strict=False)  # raw newlines and tabs inside strings are read as written
_WORDS = {"True": "true", "False": "false", "None": "null"}
_CLOSERS = ",:}]"


class NoJson(ValueError):
    """The answer holds no JSON value that can be read."""


def _strip_wrapping(text: str) -> str:
    """The text without ``<think>`` blocks, and the inside of the first code fence holding JSON."""
    text = _THINK.sub("", text)
    for match in _FENCE.finditer(text):
        inner = match.group(1)
        if "{" in inner or "[" in inner:
            return inner
    return text


def _start(text: str) -> int:
    """Where the first object or array begins (-1: none)."""
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    return min(starts) if starts else -1


def _single_quoted(text: str, i: int, out: list[str]) -> int:
    """Copy the single-quoted string at ``text[i]`` as a double-quoted one; return the index after it.

    A ``'`` ends it only when what follows is a JSON delimiter (so ``'don't'`` stays one string)."""
    n = len(text)
    j = i + 1
    buf: list[str] = []
    while j < n:
        c = text[j]
        if c == "\\" and j + 1 < n:
            nxt = text[j + 1]
            buf.append("'" if nxt == "'" else c + nxt)
            j += 2
            continue
        if c == "'":
            k = j + 1
            while k < n and text[k] in " \t\r\n":
                k += 1
            if k >= n or text[k] in _CLOSERS:
                out.append('"' + "".join(buf) + '"')
                return j + 1
        buf.append('\\"' if c == '"' else c)
        j += 1
    out.append('"' + "".join(buf))  # unterminated: left for the decoder to refuse
    return n


def repair(text: str) -> str:
    """``text`` with the usual small-model mistakes outside strings undone: single-quoted strings,
    trailing commas, ``True``/``False``/``None``, unquoted keys. Double-quoted strings are kept."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':  # copy a double-quoted string as it is
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif c == "'":
            i = _single_quoted(text, i, out)
        elif c == ",":
            k = i + 1
            while k < n and text[k] in " \t\r\n":
                k += 1
            if k < n and text[k] in "}]":
                i += 1  # a trailing comma
            else:
                out.append(c)
                i += 1
        elif c.isalpha() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            k = j
            while k < n and text[k] in " \t":
                k += 1
            if k < n and text[k] == ":" and word not in ("true", "false", "null"):
                out.append(f'"{word}"')  # an unquoted key
            else:
                out.append(_WORDS.get(word, word))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _decode(text: str) -> Any:
    """The first JSON value in ``text`` (what follows it is ignored); raises ValueError."""
    start = _start(text)
    if start < 0:
        raise NoJson("no JSON object or list in the answer")
    try:
        return _DECODER.raw_decode(text, start)[0]
    except ValueError:
        pass
    fixed = repair(text[start:])
    return _DECODER.raw_decode(fixed, _start(fixed))[0]


def _objects_in(text: str, start: int) -> tuple[list[str], int, bool]:
    """The balanced ``{…}`` pieces at the top level of the list that opens at ``text[start]``, how many
    other items it holds (strings: not lessons), and whether it was cut off (a last object never closed)."""
    pieces: list[str] = []
    depth, begin, quote, stray = 0, -1, "", 0
    i, n = start + 1, len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 2
                continue
            if c == quote:
                quote = ""
        elif c in "\"'" and depth == 0:
            quote, stray = c, stray + 1
        elif c in "\"'":
            quote = c if c == '"' or text[i - 1] in " \t\r\n:,[{" else ""
        elif c == "{":
            if depth == 0:
                begin = i
            depth += 1
        elif c == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                pieces.append(text[begin : i + 1])
        elif c == "]" and depth == 0:
            return pieces, stray, False
        i += 1
    return pieces, stray, depth > 0


def _salvage(text: str) -> tuple[list[Any], int]:
    """The readable items of the answer's list of objects, and how many were given up."""
    key = re.search(r"""["']?candidates["']?\s*:\s*\[""", text)
    start = key.end() - 1 if key else text.find("[")
    if start < 0:
        start = text.find("{") - 1  # a run of bare objects: read them as a list
        if start < -1:
            raise NoJson("no JSON object or list in the answer")
    pieces, stray, cut = _objects_in(text, start)
    items: list[Any] = []
    bad = stray + (1 if cut else 0)
    for piece in pieces:
        try:
            items.append(_decode(piece))
        except ValueError:
            bad += 1
    if not items and not bad:
        raise NoJson("no JSON object or list in the answer")
    return items, bad


def loads_lenient(text: str, *, list_key: str = "candidates") -> tuple[Any, int]:
    """The JSON value of a model's answer and how many list items had to be given up.

    When the whole value cannot be read, the items of its ``list_key`` list (or its first list) that
    can be read are returned as ``{list_key: [...]}``. Raises :class:`NoJson` (a ValueError) when
    nothing can be read."""
    body = _strip_wrapping(text)
    try:
        return _decode(body), 0
    except ValueError:
        pass
    items, bad = _salvage(body)
    return {list_key: items}, bad


def snippet(text: str, limit: int = 80) -> str:
    """The start of an answer on one line, for an error message."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
