"""The one frontmatter schema of a memory topic file, and a safe YAML-subset parse/dump.

A topic file starts with ``---``, then one ``key: value`` line per field, then ``---``, then the
body. Values are scalars only: a string (plain when obviously safe, otherwise double-quoted with
every line break and control character escaped), an integer, ``null``, ``true``/``false``.
Nothing is ever executed or constructed from a tag: ``!!python/object`` is just text.

``dump`` then ``parse`` gives back the same fields and the same body, byte for byte, for any
string (``---``, ``\\r``, ``\\x85``, ``\\u2028`` included).
"""

from __future__ import annotations

import re
from typing import Any

from dreamtui.core.errors import MemoryRepoError
from dreamtui.core.models import MEMORY_TYPES

FIELDS: tuple[str, ...] = (
    "name",
    "description",
    "type",
    "source_session",
    "quote",
    "verified_line",
    "candidate",
    "created",
    "modified",
    "extractor",
)
"""The one schema, in the order fields are written. ``modified`` is the field Claude Code's auto memory
now writes when it changes a file: kept as it is (a round-trip never moves or drops it)."""

REQUIRED: tuple[str, ...] = ("name", "description", "type")

FENCE = "---"
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")
_PLAIN_SAFE = re.compile(r"[A-Za-z][A-Za-z0-9 _.,/+()@-]*\Z")
_PLAIN_RESERVED = {"null", "~", "true", "false", "yes", "no", "on", "off", "y", "n"}
_INT = re.compile(r"[-+]?[0-9]+\Z")
_CREATED = re.compile(r"\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2})?(\.\d+)?(Z|[+-]\d{2}:?\d{2})?)?\Z")

_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\0": "\\0",
    "\x85": "\\N",
    "\u2028": "\\L",
    "\u2029": "\\P",
}
_UNESCAPES = {
    "\\": "\\",
    '"': '"',
    "/": "/",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "0": "\0",
    "N": "\x85",
    "L": "\u2028",
    "P": "\u2029",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "f": "\f",
    "v": "\v",
    " ": " ",
    "_": "\xa0",
}


class FrontmatterError(MemoryRepoError):
    """A topic file's frontmatter cannot be read (not the safe subset dreamtui writes)."""


def _needs_escape(ch: str) -> bool:
    code = ord(ch)
    return (
        code < 0x20
        or 0x7F <= code <= 0x9F
        or 0xD800 <= code <= 0xDFFF
        or code in (0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF)
    )


def quote(text: str) -> str:
    """``text`` as a YAML double-quoted scalar on one line (every break and control char escaped)."""
    out = ['"']
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif _needs_escape(ch):
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if not isinstance(value, str):
        raise FrontmatterError(
            f"frontmatter values must be text, numbers or null, not {type(value).__name__}"
        )
    if (
        _PLAIN_SAFE.match(value)
        and value.lower() not in _PLAIN_RESERVED
        and not _INT.match(value)
        and not value.endswith(" ")
        and " #" not in value
    ):
        return value
    return quote(value)


def dump(meta: dict[str, Any], body: str = "") -> str:
    """A topic file: the frontmatter (schema fields first, in schema order) and then ``body``."""
    lines = [FENCE]
    keys = [k for k in FIELDS if k in meta] + [k for k in meta if k not in FIELDS]
    for key in keys:
        if not isinstance(key, str) or not _KEY.match(key):
            raise FrontmatterError(f"frontmatter key {key!r} is not a simple name")
        lines.append(f"{key}: {_scalar(meta[key])}")
    lines.append(FENCE)
    return "\n".join(lines) + "\n" + body


def _unquote_double(raw: str, where: str) -> str:
    if len(raw) < 2 or not raw.endswith('"'):
        raise FrontmatterError(f"{where}: unterminated double-quoted value")
    inner = raw[1:-1]
    out: list[str] = []
    i = 0
    while i < len(inner):
        ch = inner[i]
        if ch == '"':
            raise FrontmatterError(f"{where}: stray double quote inside a value")
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        if i + 1 >= len(inner):
            raise FrontmatterError(f"{where}: value ends with a lone backslash")
        esc = inner[i + 1]
        width = {"x": 2, "u": 4, "U": 8}.get(esc)
        if width:
            digits = inner[i + 2 : i + 2 + width]
            if len(digits) != width or not all(c in "0123456789abcdefABCDEF" for c in digits):
                raise FrontmatterError(f"{where}: bad \\{esc} escape")
            out.append(chr(int(digits, 16)))
            i += 2 + width
            continue
        if esc not in _UNESCAPES:
            raise FrontmatterError(f"{where}: unknown escape \\{esc}")
        out.append(_UNESCAPES[esc])
        i += 2
    return "".join(out)


def _parse_scalar(raw: str, where: str) -> Any:
    raw = raw.strip(" \t")
    if raw.startswith('"'):
        return _unquote_double(raw, where)
    if raw.startswith("'"):
        if len(raw) < 2 or not raw.endswith("'"):
            raise FrontmatterError(f"{where}: unterminated single-quoted value")
        inner = raw[1:-1]
        if re.search(r"(?<!')'(?!')", inner.replace("''", "")):
            raise FrontmatterError(f"{where}: stray single quote inside a value")
        return inner.replace("''", "'")
    if raw in ("", "~", "null", "Null", "NULL"):
        return None
    if raw in ("true", "True", "TRUE"):
        return True
    if raw in ("false", "False", "FALSE"):
        return False
    if _INT.match(raw):
        return int(raw)
    if raw[0] in "|>[{&*!%@`":
        raise FrontmatterError(f"{where}: only single-line scalar values are supported (found {raw[:12]!r})")
    if " #" in raw:
        raw = raw.split(" #", 1)[0].rstrip()
    return raw


def split(text: str) -> tuple[str | None, str]:
    """(the frontmatter block without its fences, or ``None`` when there is none; the body)."""
    if not (text.startswith(FENCE + "\n") or text.startswith(FENCE + "\r\n")):
        return None, text
    start = text.index("\n") + 1
    pos = start
    while True:
        end = text.find("\n", pos)
        line = text[pos:] if end < 0 else text[pos:end]
        if line.rstrip("\r") == FENCE:
            block = text[start:pos]
            body = "" if end < 0 else text[end + 1 :]
            return block, body
        if end < 0:
            raise FrontmatterError("frontmatter has no closing '---' line")
        pos = end + 1


def parse(text: str) -> tuple[dict[str, Any], str]:
    """(the frontmatter fields, the body). A file with no frontmatter gives ``({}, text)``.

    Raises :class:`FrontmatterError` on anything outside the safe subset (never executes a tag).
    Lines are split on ``\\n`` only, so ``\\x85`` or ``\\u2028`` inside a value never break it.
    """
    block, body = split(text)
    if block is None:
        return {}, body
    meta: dict[str, Any] = {}
    for number, line in enumerate(block.split("\n"), start=2):
        line = line.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"frontmatter line {number}"
        if line[0] in " \t-":
            raise FrontmatterError(f"{where}: only flat 'key: value' lines are supported")
        key, sep, rest = line.partition(":")
        if not sep or not _KEY.match(key):
            raise FrontmatterError(f"{where}: expected 'key: value'")
        if rest and rest[0] not in " \t":
            raise FrontmatterError(f"{where}: expected a space after '{key}:'")
        if key in meta:
            raise FrontmatterError(f"{where}: duplicate key {key!r}")
        meta[key] = _parse_scalar(rest, where)
    return meta, body


def read_lenient(text: str) -> tuple[dict[str, str], str]:
    """(the fields as text, the body) of a file a person may have written by hand; never raises.

    For readers that must index every memory file (dedup): a line outside the safe subset is read
    as its plain text instead of refusing the file, and a file without a closed frontmatter is all body.
    """
    try:
        block, body = split(text)
    except FrontmatterError:
        return {}, text
    meta: dict[str, str] = {}
    for line in (block or "").split("\n"):
        key, sep, rest = line.rstrip("\r").partition(":")
        if not sep or not key.strip() or key.startswith((" ", "\t")):
            continue
        try:
            value = _parse_scalar(rest, "")
        except FrontmatterError:
            value = rest.strip().strip("'\"")
        meta[key.strip()] = "" if value is None else str(value)
    return meta, body


def validate(meta: dict[str, Any]) -> list[str]:
    """Every way ``meta`` breaks the one schema, as short sentences (empty when it follows it)."""
    problems: list[str] = []
    for key in REQUIRED:
        value = meta.get(key)
        if not isinstance(value, str) or not value.strip():
            problems.append(f"missing {key}")
    for key in meta:
        if key not in FIELDS:
            problems.append(f"unknown field {key}")
    kind = meta.get("type")
    if isinstance(kind, str) and kind.strip() and kind not in MEMORY_TYPES:
        problems.append(f"type {kind!r} is not one of {', '.join(MEMORY_TYPES)}")
    for key in ("name", "description"):
        value = meta.get(key)
        if isinstance(value, str) and ("\n" in value or "\r" in value):
            problems.append(f"{key} must be one line")
    for key in ("source_session", "quote", "candidate", "extractor", "created", "modified"):
        value = meta.get(key)
        if value is not None and not isinstance(value, str):
            problems.append(f"{key} must be text")
    line = meta.get("verified_line")
    if line is not None and (isinstance(line, bool) or not isinstance(line, int) or line < 1):
        problems.append("verified_line must be a positive whole number")
    for key in ("created", "modified"):
        stamp = meta.get(key)
        if isinstance(stamp, str) and not _CREATED.match(stamp):
            problems.append(f"{key} {stamp!r} is not an ISO 8601 date or timestamp")
    return problems
