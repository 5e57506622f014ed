"""GitHub Copilot CLI's older session files: the :class:`~.protocol.TranscriptFormat` of ``copilot``
before its ``events.jsonl`` logs (:mod:`.copilot`).

Copilot CLI versions of 2025 kept each session as **one JSON document**, rewritten whole as the session
grew: ``$COPILOT_HOME/history-session-state/session_<session id>_<start, epoch ms>.json``
(``COPILOT_HOME`` defaults to ``~/.copilot``), written as ``JSON.stringify(session, null, 2)`` does::

    {"sessionId", "startTime",
     "chatMessages": [OpenAI-style messages: {"role": "user"|"assistant"|"tool", "content",
                      "tool_calls", "tool_call_id", "padding"}],
     "timeline": [{"id", "timestamp", "type": "user"|"copilot"|"tool_call_completed"|"info"|"error",
                   "text", "mentions", "expandedText", "callId", "name", "arguments", "result", ...}]}

``docs/formats.md``, "GitHub Copilot CLI, the older history files"; the shapes were read from real
files, which are not redistributable (``tests/fixtures/agents/copilot/PROVENANCE.md``).

**Which list is read.** The two lists hold the same conversation twice. ``chatMessages`` is what was
sent to the model: no id, no time, the person's message with Copilot's ``<reminder>…</reminder>``
appended. ``timeline`` is what the terminal showed: every item has an ``id`` and a ``timestamp``, a
``user`` item's ``text`` is exactly what the person typed (in the real files, each one equals its
``chatMessages`` content with the ``\\n\\n<reminder>…</reminder>`` suffix cut), each ``copilot`` item is an
assistant message's ``content``, each ``tool_call_completed`` a tool's arguments and output. So the
records are the **timeline's items** (each turn once, with its id and time); a document without a
timeline (none was seen) is read from its ``chatMessages``, the person's words then the content
without what Copilot injected.

**Whose words.** A ``user`` item's ``text`` is the person's (a text that is nothing but an injected
block, such as a lone ``<reminder>``, is Copilot's: ``meta``); its ``expandedText`` (the text with the
files an ``@`` mention pulled in) and ``mentions`` are ``meta``. A ``copilot`` item's ``text`` is the
assistant's. A ``tool_call_*`` item (arguments, ``intentionSummary``, ``result``) is ``tool``, whatever
its output looks like. ``info`` and ``error`` items (sign-in, MCP servers, rate limits, "Operation
cancelled by user") and anything else are ``meta``.

**Project.** No record names the working directory, except one notice: the ``info`` item "Folder <path>
has been added to trusted folders." that Copilot writes when the person trusts the folder the CLI was
started in (one of the five real sessions has it; the newer logs confirm it names ``session.start``'s
``cwd``). That folder is the session's (:func:`cwd_of`); a session without it is filed as a Copilot CLI
log without a working directory is, under ``copilot-sessions``.
"""

from __future__ import annotations

import gc
import os
import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from dreamtui.core.errors import TranscriptError
from dreamtui.core.files import Skipped, is_dir, open_regular, scan_folder
from dreamtui.core.ingest.formats import copilot
from dreamtui.core.ingest.formats.generic import PiecesDigester
from dreamtui.core.ingest.formats.protocol import (
    FileKind,
    JsonPath,
    Layout,
    Piece,
    RecordRef,
    SourceRecord,
    ToolCall,
    TranscriptFile,
)
from dreamtui.core.ingest.tail import read_small_transcript
from dreamtui.core.models import DigestStats, Provenance, RawRecord, Turn

if TYPE_CHECKING:  # the digest's dedup state: digest.py imports the formats
    from dreamtui.core.ingest.digest import DigestState

name = "copilot-cli-history"
"""This format's name (its key in ``formats.FORMATS``)."""
agent = copilot.agent
"""The agent as a person names it: the same as the newer logs', so the queue and the stats show one."""
label = copilot.label
"""The agent in a word, as the queue's and Sessions' agent column show it."""
layout: Layout = "records"
"""A whole JSON document, rewritten as the session grows, read as records."""
suffix = ".json"
tool_call_hint = b"tool_call"
"""Bytes every record with a tool call holds (``tool_call_completed``, ``tool_calls``)."""

PERSON: Provenance = "person"
ASSISTANT: Provenance = "assistant"
TOOL: Provenance = "tool"
META: Provenance = "meta"

FOLDER = "history-session-state"
"""The folder of the session files, in ``$COPILOT_HOME``."""
PREFIX = "session_"
MAX_DOCUMENT = 512 * 1024 * 1024
"""A document larger than this is refused with a notice (it must be read whole)."""
CHAT = "chatMessages"
"""Set as ``$from`` in a record read from ``chatMessages`` (a document without a timeline)."""
FROM = "$from"
_HEAD_BYTES = 64 * 1024
_NAME = re.compile(r"^session_(.+)_(\d+)\.json$")
_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*"([^"\\]{1,200})"')
_TRUSTED = re.compile(r"^Folder (.+) has been added to trusted folders\.?$", re.S)
_TRUSTED_BYTES = b"has been added to trusted folders"


def _encode_path(path: str) -> str:
    """``encode_path`` (``core.repository``): the project key a folder's sessions are filed under."""
    return re.sub(r"[^A-Za-z0-9]", "-", path.replace("\\", "/").rstrip("/") or "/")


# -- where the sessions are -----------------------------------------------------------------------


def default_roots() -> list[Path]:
    """Copilot CLI's older session folder, ``$COPILOT_HOME/history-session-state``."""
    return [copilot.copilot_home() / FOLDER]


def default_root() -> Path:
    """The first of :func:`default_roots`."""
    return default_roots()[0]


def claims(path: Path) -> bool:
    """A ``session_*.json`` in a ``history-session-state`` folder (by the names alone)."""
    path = Path(path)
    return path.parent.name == FOLDER and path.name.startswith(PREFIX) and path.name.endswith(suffix)


def _head(path: Path) -> bytes:
    try:
        with open_regular(path) as fh:
            return fh.read(_HEAD_BYTES)
    except OSError:
        return b""


def session_of(path: Path, head: bytes | None = None) -> str:
    """The session id: the document's ``sessionId`` (its first field), else the one in the file's name,
    else the name."""
    path = Path(path)
    m = _SESSION_ID.search(_head(path) if head is None else head[:_HEAD_BYTES])
    if m:
        return m.group(1).decode("utf-8", "replace")
    named = _NAME.match(path.name)
    return named.group(1) if named else path.name.removesuffix(suffix)


_cwds: dict[str, tuple[int, int, str]] = {}
"""The working directory found in each file, with the file's size and time then."""


def cwd_of(path: Path) -> str:
    """The folder the session was started in, as its "added to trusted folders" notice names it ('' when
    the session has none: the folder was trusted before). Kept per file until the file changes."""
    path = Path(path)
    try:
        st = os.stat(path)
    except OSError:
        return ""
    key = str(path)
    cached = _cwds.get(key)
    if cached is not None and cached[:2] == (st.st_size, st.st_mtime_ns):
        return cached[2]
    found = ""
    try:
        data = read_small_transcript(path, MAX_DOCUMENT)
    except TranscriptError:
        data = None
    if data is not None and _TRUSTED_BYTES in data:
        try:
            items, chat, _spans_of = _parse(path, data)
        except TranscriptError:
            items, chat = [], False
        if chat:  # the notice is a timeline item: a chat message never names the folder
            items = []
        for item in items:
            folder = _trusted_folder(item)
            if folder:
                found = folder
                break
    _cwds[key] = (st.st_size, st.st_mtime_ns, found)
    return found


def _trusted_folder(item: Any) -> str:
    """The folder an ``info`` item says was added to the trusted folders ('' for any other record)."""
    if not isinstance(item, dict) or item.get("type") != "info" or item.get(FROM):
        return ""
    text = item.get("text")
    m = _TRUSTED.match(text.strip()) if isinstance(text, str) else None
    return m.group(1).strip() if m else ""


def project_of(path: Path) -> str:
    """``encode_path`` of the working directory (:func:`cwd_of`), else Copilot's ``copilot-sessions``."""
    cwd = cwd_of(Path(path))
    return _encode_path(cwd) if cwd else copilot.UNKNOWN_PROJECT


def describe(path: Path, head: bytes | None = None) -> TranscriptFile:
    """A session file: its session id and, as its folder, ``encode_path`` of its working directory."""
    path = path if isinstance(path, Path) else Path(path)
    return TranscriptFile(path, project_of(path), session_of(path, head), "main", None, name)


def discover(root: Path, skipped: list[Skipped] | None = None) -> list[TranscriptFile]:
    """Every ``session_*.json`` directly in ``root``; never raises (what cannot be listed or is not a
    regular file is named in ``skipped``). The root may be a link and is followed; a session file, or a
    folder in it, that is a symlink is named (``files.LINK_REASON``) and never read through."""
    root = Path(root)
    if not is_dir(root):
        return []
    paths = [
        e.path
        for e in scan_folder(root, skipped, want=suffix, follow=True)  # the root may be a link
        if e.is_file and e.name.startswith(PREFIX)
    ]
    return sorted((describe(p) for p in paths), key=lambda tf: (tf.project, str(tf.path)))


def session_files(root: Path, project: str, session: str) -> list[Path]:
    """The file of ``session`` under ``root``."""
    return [tf.path for tf in discover(root) if tf.session == session]


def with_session(path: Path) -> list[Path]:
    """A session is one file."""
    return [Path(path)]


def kind_of(path: Path) -> FileKind:
    """Every file is a main session."""
    return "main"


def is_main_file(root: Path, path: Path) -> bool:
    return claims(Path(path))


def is_auto_dream(path: Path) -> bool:
    """Copilot CLI has no background consolidation writing into Claude Code's memory."""
    return False


# -- reading a session: records -------------------------------------------------------------------


def _spans(data: bytes, key: bytes, count: int) -> list[tuple[int, int]] | None:
    """Where each item of the top-level list ``key`` lies in a document written as
    ``JSON.stringify(session, null, 2)`` does (each item between a ``    {`` line and a ``    }``
    line), or None when the document is not shaped so or the count is not ``count``."""
    head = b'\n  "' + key + b'": [\n'
    at = data.rfind(head)
    if at < 0:
        return None
    pos = at + len(head) - 1
    out: list[tuple[int, int]] = []
    find, startswith = data.find, data.startswith
    while startswith(b"\n    {\n", pos):
        end = find(b"\n    }", pos + 6)
        if end < 0:
            return None
        out.append((pos + 1, end + 6))
        pos = end + 6
        if not startswith(b",", pos):
            break
        pos += 1
    if len(out) != count or not startswith(b"\n  ]", pos):
        return None
    return out


def _parse(path: Path, data: bytes) -> tuple[list[Any], bool, list[tuple[int, int]] | None]:
    """The records' objects of a document (the timeline's items, else the ``chatMessages``), whether
    they came from ``chatMessages``, and where each lies in the file (None when the document is not
    pretty-printed as Copilot writes it); raises :class:`TranscriptError` when the document does not
    parse (half written, empty) or is not a session."""
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        why = "it is empty" if not data.strip() else "it is not a whole JSON document (half written?)"
        raise TranscriptError(f"{path}: {why}") from exc
    timeline = doc.get("timeline") if isinstance(doc, dict) else None
    messages = doc.get(CHAT) if isinstance(doc, dict) else None
    if not isinstance(timeline, list) and not isinstance(messages, list):
        raise TranscriptError(f"{path}: it is not a Copilot CLI session (no timeline, no chatMessages)")
    chat = not (isinstance(timeline, list) and timeline) and isinstance(messages, list)
    items: list[Any] = (messages if chat else timeline) or []
    return items, chat, _spans(data, CHAT.encode() if chat else b"timeline", len(items))


def _items(path: Path, data: bytes) -> tuple[list[Any], list[bytes], bool]:
    """:func:`_parse`, with each record's bytes in the file (its JSON re-encoded when the document is
    not pretty-printed as Copilot writes it)."""
    items, chat, spans = _parse(path, data)
    if spans is None:
        return items, [orjson.dumps(item) for item in items], chat
    return items, [data[a:b] for a, b in spans], chat


def read_records(path: Path) -> list[SourceRecord]:
    """The session at ``path`` as records (module docstring, "Which list is read"): the timeline's items
    numbered from 1 (``locator``), keyed by their ``id``; raises :class:`TranscriptError` when the file
    cannot be read or the document does not parse (nothing of it is read then)."""
    path = Path(path)
    data = read_small_transcript(path, MAX_DOCUMENT)
    if data is None:
        raise TranscriptError(f"{path}: the document is over {MAX_DOCUMENT // (1024 * 1024)} MiB, not read")
    items, raws, chat = _items(path, data)
    out: list[SourceRecord] = []
    for index, (item, raw) in enumerate(zip(items, raws, strict=True), start=1):
        if not isinstance(item, dict):
            continue
        if chat:
            out.append(SourceRecord(index, f"m{index}", raw, {**item, FROM: CHAT}))
        else:
            iid = item.get("id")
            out.append(SourceRecord(index, iid if isinstance(iid, str) and iid else str(index), raw, item))
    return out


def records(path: Path, member: str = "") -> Iterator[SourceRecord]:
    """The records of a session file, in order (:func:`read_records`: raises before giving any)."""
    return iter(read_records(Path(path)))


# -- whose words ----------------------------------------------------------------------------------

INJECTED_TAGS = (
    "reminder",
    "system_reminder",
    "system-reminder",
    "current_datetime",
    "system_notification",
    "system-notification",
    "environment_context",
    "custom_instructions",
)
"""The blocks Copilot wraps around what the person typed before sending it (``<reminder>`` in these
files, the others in the newer logs' ``transformedContent``): never the person's."""


def typed(text: str) -> str:
    """What the person typed of a user message: ``text`` without the injected blocks
    (:data:`INJECTED_TAGS`) at its start and end, stripped ('' when nothing else is there)."""
    rest = text.strip()
    if "</" not in rest:  # no block closes: nothing is cut (the usual typed text)
        return rest
    changed = True
    while changed and rest:
        changed = False
        for tag in INJECTED_TAGS:
            opening, closing = f"<{tag}>", f"</{tag}>"
            if rest.startswith(opening) and closing in rest:
                rest = rest[rest.index(closing) + len(closing) :].strip()
                changed = True
            elif rest.endswith(closing) and opening in rest:
                rest = rest[: rest.rindex(opening)].strip()
                changed = True
    return rest


def _strings(value: Any, path: JsonPath, out: list[tuple[str, JsonPath]], depth: int = 0) -> None:
    """Every string inside ``value`` with its path."""
    if depth > 12:
        return
    if isinstance(value, str):
        if value:
            out.append((value, path))
    elif isinstance(value, dict):
        for key, item in value.items():
            _strings(item, (*path, str(key)), out, depth + 1)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _strings(item, (*path, i), out, depth + 1)


def _is_tool(obj: dict[str, Any]) -> bool:
    itype = obj.get("type")
    return isinstance(itype, str) and itype.startswith("tool_")


def _texts(content: Any) -> list[tuple[str, JsonPath]]:
    """The text of a chat message's ``content``: a string, or the ``text`` of its parts."""
    if isinstance(content, str):
        return [(content, ("content",))] if content else []
    out: list[tuple[str, JsonPath]] = []
    if isinstance(content, list):
        for i, part in enumerate(content):
            if isinstance(part, dict) and isinstance(part.get("text"), str) and part["text"]:
                out.append((part["text"], ("content", i, "text")))
    return out


def _user_piece(text: str, path: JsonPath) -> Piece:
    words = typed(text)
    return (
        Piece(PERSON, words, copilot.person_kind(words), path)
        if words
        else Piece(META, text, "context", path)
    )


_TOOL_IDS = frozenset({"callId", "name", "toolTitle", "id", "timestamp", "type"})
"""A tool item's own fields that are not text worth a piece."""


def _chat_pieces(obj: dict[str, Any]) -> list[Piece]:
    role = obj.get("role")
    out: list[Piece] = []
    if role == "user":
        out.extend(_user_piece(t, p) for t, p in _texts(obj.get("content")))
    elif role == "assistant":
        out.extend(Piece(ASSISTANT, t, "text", p) for t, p in _texts(obj.get("content")))
        found: list[tuple[str, JsonPath]] = []
        _strings(obj.get("tool_calls"), ("tool_calls",), found)
        out.extend(Piece(TOOL, t, "tool_input", p) for t, p in found if p[-1] not in ("id", "type"))
    elif role == "tool":
        found = []
        _strings(obj.get("content"), ("content",), found)
        out.extend(Piece(TOOL, t, "tool_result", p) for t, p in found)
    else:
        out.extend(Piece(META, t, "system", p) for t, p in _texts(obj.get("content")))
    return out


def pieces(obj: Any) -> list[Piece]:
    """The text pieces of one record, in order, each with its provenance (module docstring)."""
    if not isinstance(obj, dict):
        return []
    if obj.get(FROM) == CHAT:
        return _chat_pieces(obj)
    itype = obj.get("type")
    text = obj.get("text")
    if itype == "user":
        out = [_user_piece(text, ("text",))] if isinstance(text, str) and text else []
        expanded = obj.get("expandedText")
        if isinstance(expanded, str) and expanded and expanded != text:
            out.append(Piece(META, expanded, "context", ("expandedText",)))
        return out
    if itype == "copilot":
        return [Piece(ASSISTANT, text, "text", ("text",))] if isinstance(text, str) and text else []
    if _is_tool(obj):
        found: list[tuple[str, JsonPath]] = []
        for key in obj:
            if key not in _TOOL_IDS:
                _strings(obj[key], (key,), found)
        return [Piece(TOOL, t, "tool_result" if p[0] == "result" else "tool_input", p) for t, p in found]
    if isinstance(text, str) and text:
        return [Piece(META, text, "notification", ("text",))]
    return []


def _person_or_meta(value: str, holds: Callable[[str], bool]) -> Provenance:
    """A user message's string: the person's when the quote lies in what they typed of it."""
    words = typed(value)
    return PERSON if words and (words == value.strip() or holds(words)) else META


def provenance(obj: dict[str, Any], path: JsonPath, value: str, holds: Callable[[str], bool]) -> Provenance:
    """Whose words the string ``value`` at ``path`` of the record ``obj`` is: the person's only as what
    they typed of a ``user`` item's ``text`` (of a ``user`` chat message's ``content``); the
    assistant's as a ``copilot`` item's ``text`` (an ``assistant`` message's ``content``); anything in
    a tool's item or message ``tool``; everything else ``meta``."""
    path = tuple(path)
    if not isinstance(obj, dict) or not path:
        return META
    if obj.get(FROM) == CHAT:
        role, head = obj.get("role"), path[0]
        text_path = path == ("content",) or (len(path) == 3 and path[0] == "content" and path[2] == "text")
        if role == "tool":
            return TOOL
        if role == "user":
            return _person_or_meta(value, holds) if text_path else META
        if role == "assistant":
            if text_path:
                return ASSISTANT
            return TOOL if head in ("tool_calls", "function_call") else META
        return META
    itype = obj.get("type")
    if itype == "user":
        return _person_or_meta(value, holds) if path == ("text",) else META
    if itype == "copilot":
        return ASSISTANT if path == ("text",) else META
    if _is_tool(obj):
        return TOOL
    return META


def is_copy(obj: dict[str, Any]) -> bool:
    """No record repeats another's words (the chat messages, which do, are read only without a timeline)."""
    return False


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


_NO_REF = RecordRef(None, None, None, False)


def ref(obj: dict[str, Any]) -> RecordRef:
    """A timeline item's ``id`` and ``timestamp`` (and, for the "added to trusted folders" notice, the
    folder: the session's working directory); a chat message has none."""
    if obj.get(FROM) == CHAT:
        return _NO_REF
    cwd = _trusted_folder(obj) if obj.get("type") == "info" else ""
    return RecordRef(_str_or_none(obj.get("id")), _str_or_none(obj.get("timestamp")), cwd or None, False)


# -- tool calls and the raw view ------------------------------------------------------------------

EDIT_TOOLS = frozenset({"create", "edit", "write", "apply_patch", "write_file"})
"""Copilot's tools that write a file (``path`` in their arguments); ``str_replace_editor`` too, unless
its ``command`` is ``view``."""
SHELL_TOOLS = copilot.SHELL_TOOLS


def _call(tool: str, args: Any) -> ToolCall:
    if isinstance(args, str):  # a chat message's arguments are a JSON string
        try:
            args = orjson.loads(args)
        except orjson.JSONDecodeError:
            args = {}
    args = args if isinstance(args, dict) else {}
    wrote = command = None
    if tool in EDIT_TOOLS or (tool == "str_replace_editor" and args.get("command") != "view"):
        target = args.get("path") or args.get("file_path")
        wrote = target if isinstance(target, str) else None
    elif tool in SHELL_TOOLS and isinstance(args.get("command"), str):
        command = args["command"]
    return ToolCall(tool, wrote, command)


def tool_calls(obj: dict[str, Any]) -> list[ToolCall]:
    """A ``tool_call_completed`` item's call (an assistant chat message's ``tool_calls``), with the file
    an edit wrote and the command a shell ran."""
    if obj.get(FROM) == CHAT:
        calls = obj.get("tool_calls") if obj.get("role") == "assistant" else None
        out: list[ToolCall] = []
        for call in calls if isinstance(calls, list) else []:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                out.append(_call(str(fn.get("name") or "?"), fn.get("arguments")))
        return out
    if obj.get("type") == "tool_call_completed":
        return [_call(str(obj.get("name") or "?"), obj.get("arguments"))]
    return []


def render(line: int, obj: dict[str, Any]) -> RawRecord:
    """A record as the evidence window shows it: its type, time and pieces (a tool's call: its name and
    arguments, its output); tools and notices fold to one line."""
    kind = str(obj.get("role") if obj.get(FROM) == CHAT else obj.get("type") or "?")
    texts: list[tuple[str, str]] = []
    for call in tool_calls(obj):
        args = obj.get("arguments") if obj.get(FROM) != CHAT else None
        shown = orjson.dumps(args).decode("utf-8", "replace") if args is not None else ""
        texts.append(("call", f"{call.name} {shown}".strip()))
    texts.extend(
        (str(p.role), p.text) for p in pieces(obj) if not (p.role == TOOL and p.kind == "tool_input")
    )
    conversation = kind in ("user", "copilot", "assistant")
    notice = not conversation and not kind.startswith("tool")
    return RawRecord(
        line,
        kind,
        str(obj.get("timestamp") or ""),
        texts,
        kind=kind[:40],
        bookkeeping=notice,
        folds=not conversation,
    )


# -- the digest ----------------------------------------------------------------------------------


def keep(buf: bytes, start: int, end: int) -> bool:
    """Every record may hold kept words as far as bytes tell (records are read whole, never by line)."""
    return True


def _kept_pieces(obj: Any) -> list[Piece]:
    """:func:`pieces` of the records whose words the digest keeps (a person's, an assistant's): a tool's
    item and a notice are passed over without walking their strings."""
    if not isinstance(obj, dict):
        return []
    if obj.get(FROM) == CHAT:
        return pieces(obj) if obj.get("role") in ("user", "assistant") else []
    return pieces(obj) if obj.get("type") in ("user", "copilot") else []


class _Digester(PiecesDigester):
    """The turns of a session's records: the person's typed words and the assistant's prose, each kept
    once; tools, notices and what Copilot injected dropped (:class:`~.generic.PiecesDigester` over the
    records' kept pieces). A tool's item and a notice are passed over unread, the "added to trusted
    folders" notice read for the working directory only."""

    def lines(
        self, numbers: Sequence[int], raws: Sequence[bytes], out: list[Turn], ascii: bool = False
    ) -> None:
        """Each record's JSON (a record's ``raw``) decoded and digested."""
        for line_no, raw in zip(numbers, raws, strict=True):
            self.exact(raw, line_no, out)

    def record(self, obj: dict[str, Any], line_no: int, out: list[Turn]) -> None:
        itype = obj.get("type") if type(obj) is dict else None
        if itype == "user" or itype == "copilot" or obj.get(FROM) == CHAT:
            super().record(obj, line_no, out)
        elif itype == "info" and not self.cwd:
            self.cwd = _trusted_folder(obj)


@contextmanager
def _collecting_later() -> Iterator[None]:
    """The cyclic garbage collector held while a document's records are digested: they stay alive (and
    make no cycles) until the digest ends, so each collection their allocations would trigger only walks
    them all again; it runs again after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def digest_records(
    address: Path, kind: FileKind | None, state: DigestState, stats: DigestStats, interrupts: bool
) -> tuple[TranscriptFile, list[Turn], str] | None:
    """The digest of a session file (``digest.digest_file``'s fast path): what :func:`describe`,
    :func:`records` and :func:`digester` give together (the same turns, stats and description:
    ``tests/test_formats_fast_digest.py``), from one read and one parse of the document: no record
    made, a record's bytes counted from where it lies, the working directory taken from the parse the
    digest makes (not from a second read), the collector held. None for a document over the limit
    (the records refuse it); raises :class:`TranscriptError` as :func:`records` does."""
    path = Path(address)
    data = read_small_transcript(path, MAX_DOCUMENT)
    if data is None:
        return None
    turns: list[Turn] = []
    with _collecting_later():
        items, chat, spans = _parse(path, data)
        d = digester(str(address), kind or "main", state, stats, interrupts)
        record = d.record
        count = size = 0
        for index, item in enumerate(items):
            if type(item) is not dict:
                continue
            count += 1
            size += spans[index][1] - spans[index][0] if spans is not None else len(orjson.dumps(item))
            record({**item, FROM: CHAT} if chat else item, index + 1, turns)
    stats.lines, stats.bytes = count, size
    cwd = d.cwd  # cwd_of's folder: the first trusted-folder notice of the timeline, met by the digester
    project = _encode_path(cwd) if cwd else copilot.UNKNOWN_PROJECT
    tf = TranscriptFile(path, project, session_of(path, data[:_HEAD_BYTES]), "main", None, name)
    return tf, turns, d.cwd


def digester(
    file: str,
    kind: FileKind,
    state: DigestState,
    stats: DigestStats,
    interrupts: bool,
    cheap: bool = True,
) -> _Digester:
    """The :class:`_Digester` of one session file."""
    return _Digester(_kept_pieces, ref, file, kind, state, stats, interrupts)
