"""Text safety: the one place that decides which characters of transcript text may reach a terminal
or a file, and what they become.

Transcript text can hold ANSI/OSC escape sequences, control characters, bidi overrides and lone
surrogates (undecodable bytes). Every writer goes through one of these functions:

- into a file (memory files, ``MEMORY.md``, the briefing, claims): :func:`clean_text` /
  :func:`clean_line` *remove* escape sequences and control characters;
- onto a terminal: :func:`escape_controls` (the CLI) and :func:`visible_controls` (the app) *show* them,
  because transcript text on a screen is shown literally, never obeyed and never silently edited;
- to UTF-8 (SQLite, a model, JSON): :func:`without_surrogates`;
- into the digest (what a model reads and ``dreamtui digest`` shows): :func:`as_typed` applies the
  erase characters a terminal agent stored with the person's keystrokes.

Secrets are not this module's job: callers redact (:mod:`dreamtui.core.secrets`) before cutting.
"""

from __future__ import annotations

import re

# One escape-sequence grammar: CSI (ESC [ … or the one-byte C1 CSI), OSC (ESC ] … BEL/ST; an
# unterminated one runs to the next ESC/BEL) and two-character ESC sequences.
ESCAPE_SEQUENCE = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])|\x9b[0-?]*[ -/]*[@-~]"
)
# Characters a file must not hold: C0 except tab/newline, DEL, C1, line/paragraph separators, BOM.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff]")
# Characters a terminal must not be sent raw: C0 except tab/newline, DEL, C1, bidi marks, overrides
# and isolates (they reorder what is shown), lone surrogates.
_TERMINAL_UNSAFE = [
    *range(0x00, 0x09),
    *range(0x0B, 0x20),
    *range(0x7F, 0xA0),
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
    0x200E,
    0x200F,
]
_TERMINAL_UNSAFE_RE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
SURROGATE = re.compile("[\ud800-\udfff]")

_ESCAPED = {code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" for code in _TERMINAL_UNSAFE}
_JSON_ESCAPED = {code: f"\\u{code:04x}" for code in _TERMINAL_UNSAFE if code >= 0x7F}
_PICTURES = {"\x1b": "␛", "\r": "␍", "\x07": "␇", "\x7f": "␡"}


# -- into a file ----------------------------------------------------------------------------------


def clean_text(text: str) -> str:
    """``text`` without escape sequences or control characters, line breaks as ``\\n``, valid UTF-8
    (memory files and ``MEMORY.md``)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\u2028", "\n").replace("\x85", "\n")
    text = CONTROL.sub("", ESCAPE_SEQUENCE.sub("", text))
    return text.encode("utf-8", "replace").decode("utf-8")  # a lone surrogate becomes "?"


def clean_line(text: str, control: str = " ") -> str:
    """One line: escape sequences removed, each control character replaced by ``control``,
    whitespace runs collapsed to one space."""
    return " ".join(CONTROL.sub(control, ESCAPE_SEQUENCE.sub("", text)).split())


def shorten(line: str, limit: int | None) -> str:
    """``line`` cut to at most ``limit`` characters at a word boundary, ending in ``…``."""
    if limit is None or len(line) <= limit:
        return line
    cut = line[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut[: cut.rfind(" ")]
    return cut.rstrip(" ,.;:-") + "…"


def has_control(text: str) -> bool:
    """Whether ``text`` holds a character :func:`clean_text` would remove (file names refuse them)."""
    return CONTROL.search(text) is not None


# -- onto a terminal ------------------------------------------------------------------------------
# The CLI and the app differ on purpose: CLI output is copied, grepped and piped, so it uses
# unambiguous ``\x1b`` escapes; the app keeps columns aligned, so it uses one-cell control pictures.


def escape_controls(text: str) -> str:
    """``text`` with control characters and bidi marks as ``\\x1b`` / ``\\u202e`` (the CLI)."""
    return text.translate(_ESCAPED)


def escape_controls_json(text: str) -> str:
    """JSON text with DEL, C1 and bidi marks as ``\\u`` escapes (still valid JSON, the same data)."""
    return text.translate(_JSON_ESCAPED)


def _picture(match: re.Match[str]) -> str:
    ch = match.group(0)
    if ch in _PICTURES:
        return _PICTURES[ch]
    code = ord(ch)
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode "control pictures" block
    if 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return f"\\u{code:04x}"


def visible_controls(text: str) -> str:
    """``text`` with control characters as control pictures (``␛``), bidi marks as ``\\u202e`` and
    lone surrogates as U+FFFD (the app)."""
    return _TERMINAL_UNSAFE_RE.sub(_picture, text)


# -- into the digest -----------------------------------------------------------------------------

# the erase characters: BACKSPACE and DEL, each stored after the character it erased
_ERASE_RUNS = re.compile("([\x08\x7f]+)")


def as_typed(text: str) -> str:
    """``text`` as it was on the screen when it was sent: each BACKSPACE (``\\x08``) or DEL
    (``\\x7f``) erases the character before it, a run of them as many (never past the start of the
    text); text without either is returned as it is.

    Why: a terminal agent (the Cursor CLI, ...) can store a person's keystrokes with the erase
    characters still in them (``recebe l\\x08odens`` for what read ``recebe odens``). Shown raw, a
    model quoting the line either copies invisible characters or drops them, and neither quote is in
    the raw bytes. The digest shows this form; quote verification (``core/gate/verify.py``) accepts it,
    and the form with the erase characters merely removed, as readings of the record. A character is
    one code point. The terminal and the evidence view keep showing the raw characters
    (:func:`visible_controls`): there a transcript is shown literally.
    """
    if "\x08" not in text and "\x7f" not in text:
        return text
    # read from the end: each erase character still owed takes the next character met (one pass,
    # each piece cut once, however many runs reach into it); owed at the start, it erased nothing
    parts = _ERASE_RUNS.split(text)  # text, a run, text, a run, ..., text
    kept: list[str] = []
    owed = 0
    for i in range(len(parts) - 1, -1, -1):
        part = parts[i]
        if i % 2:
            owed += len(part)
        elif owed >= len(part):
            owed -= len(part)
        else:
            kept.append(part[: len(part) - owed] if owed else part)
            owed = 0
    kept.reverse()
    return "".join(kept)


def without_erase(text: str) -> str:
    """``text`` with its erase characters removed and nothing erased (what was typed, every key kept):
    the other reading quote verification accepts (see :func:`as_typed`)."""
    if "\x08" not in text and "\x7f" not in text:
        return text
    return _ERASE_RUNS.sub("", text)


# -- to UTF-8 -------------------------------------------------------------------------------------


def without_surrogates(text: str) -> str:
    """``text`` with every lone surrogate (an undecodable byte) as U+FFFD, so it encodes as UTF-8."""
    return SURROGATE.sub("\ufffd", text)


_UNSPACED = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")
"""Han and kana: scripts written without spaces between words."""


def word_count(text: str) -> float:
    """Words in ``text``: space-separated tokens, and two Han or kana characters for one word.

    Chinese and Japanese put no spaces between words, so a whole sentence would count as one word;
    two characters is about the length of a word in both. The gate refuses a quote this counts as too
    short, and the heuristic extractor never proposes one: both count with this.
    """
    unspaced = len(_UNSPACED.findall(text))
    return len(_UNSPACED.sub(" ", text).split()) + unspaced / 2
