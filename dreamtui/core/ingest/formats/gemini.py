"""Gemini CLI's chats: the :class:`~.protocol.TranscriptFormat` of Google's ``gemini``.

Gemini CLI records every session under ``~/.gemini/tmp/<project>/chats/`` (``GEMINI_CLI_HOME`` moves
``~``), ``<project>`` being the SHA-256 of the project's folder (older versions) or a short name the
folder was given in ``~/.gemini/projects.json`` (newer ones, with the folder's path in
``<project>/.project_root``). Two shapes, both read (``docs/formats.md``, "Gemini CLI"; real files in
``tests/fixtures/agents/gemini/PROVENANCE.md``):

- **one JSON document** per session, ``session-<date>-<id8>.json``, rewritten whole as the session
  grows: ``{"sessionId", "projectHash", "startTime", "lastUpdated", "messages": [...], "summary"}``.
  A document caught half written does not parse: nothing of it is read, and the next look tries
  again (:func:`records` raises :class:`~dreamtui.core.errors.TranscriptError`).
- **JSON lines** (2026), ``session-<date>-<id8>.jsonl``, appended to: a header record (``sessionId``,
  ``projectHash``, ``startTime``, ``kind``), message records (a message written again with the same
  ``id`` replaces the earlier one: tokens and tool calls are added so), ``{"$set": {...}}`` records
  that update the header (a ``$set`` of ``messages`` is a checkpoint: the history again, a message it
  leaves out staying read, one first seen there Gemini's own) and
  ``{"$rewindTo": id}`` records that drop a message and every later one. A resumed ``.json`` session is
  copied into a ``.jsonl`` beside it, which supersedes it (:func:`discover` reads the ``.jsonl``).
  A sub-agent's chat is ``chats/<parent session id>/<id>.jsonl``.

A message is ``{"id", "timestamp", "type", "content", ...}``; ``content`` is a string or a list of parts
(``{"text"}``, ``{"functionResponse"}``, ``{"functionCall"}``, ``{"text", "thought": true}``).

**Whose words.** ``user`` messages hold the person's words, except what Gemini puts there itself: the
session's context (``<session_context>``, ``<hook_context>``), the files an ``@path`` pulled in
(between ``--- Content from referenced files ---`` and ``--- End of content ---``), a tool's response
(``functionResponse`` parts: ``tool``), and a message that first appears in a checkpoint (a summary
Gemini wrote into the history, never typed). When a message has ``displayContent``, that is what the
person typed and ``content`` what was sent (``meta``). ``gemini`` messages are the assistant's:
``content`` its prose, ``thoughts`` and thought parts its thinking (never in the digest), ``toolCalls``
the tools' arguments and results (``tool``). ``info``, ``warning`` and ``error`` messages are Gemini's
notices (``meta``).

**Project.** The working directory is not in the records: :func:`cwd_of` reads ``.project_root``, then
``projects.json``, then finds the folder whose SHA-256 is the project hash among the folders the
session names (its ``directories``, the absolute paths its tools were given and their parents, the
folder its ``<session_context>`` names) and those Gemini knows (``trustedFolders.json``,
``projects.json``). A hashed project none of these names stays unresolved: its sessions are filed
under ``gemini-<project folder>``.
"""

from __future__ import annotations

import gc
import hashlib
import json
import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import orjson

from dreamtui.core.errors import TranscriptError
from dreamtui.core.files import Skipped, is_dir, open_regular, own_dir, read_regular, scan_folder
from dreamtui.core.ingest.formats.lines import decode_counted
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
from dreamtui.core.ingest.tail import LineScanner, decode_line, open_transcript, read_small_transcript
from dreamtui.core.models import DigestStats, Provenance, RawRecord, Turn

if TYPE_CHECKING:  # the digest's dedup state: digest.py imports the formats
    from dreamtui.core.ingest.digest import DigestState

name = "gemini-cli"
"""This format's name (its key in ``formats.FORMATS``)."""
agent = "Gemini CLI"
"""The agent as a person names it."""
label = "Gemini"
"""The agent in a word, as the queue's and Sessions' agent column show it."""
layout: Layout = "records"
"""A whole JSON document (or JSON lines with updates) read as records."""
suffix = ".jsonl"
"""The newer files' ending (the older ones end ``.json``)."""
tool_call_hint = b"toolCalls"
"""Bytes every message with a tool call holds."""

PERSON: Provenance = "person"
ASSISTANT: Provenance = "assistant"
TOOL: Provenance = "tool"
META: Provenance = "meta"

DOCUMENT = ".json"
"""The older, whole-document files' ending."""
CHATS = "chats"
SESSION_PREFIX = "session-"
MAX_DOCUMENT = 512 * 1024 * 1024
"""A JSON document larger than this is refused with a notice (it must be read whole)."""
_HEAD_BYTES = 64 * 1024
_HASH = re.compile(r"^[0-9a-f]{64}$")


def _encode_path(path: str) -> str:
    """``encode_path`` (``core.repository``): the project key a folder's sessions are filed under."""
    return re.sub(r"[^A-Za-z0-9]", "-", path.replace("\\", "/").rstrip("/") or "/")


# -- where the chats are --------------------------------------------------------------------------


def gemini_dir() -> Path:
    """``$GEMINI_CLI_HOME/.gemini`` when set (as Gemini CLI reads it), else ``~/.gemini``."""
    home = os.environ.get("GEMINI_CLI_HOME", "").strip()
    return (Path(os.path.expanduser(home)) if home else Path.home()) / ".gemini"


def default_roots() -> list[Path]:
    """Gemini CLI's per-project folders, ``~/.gemini/tmp``."""
    return [gemini_dir() / "tmp"]


def default_root() -> Path:
    """The first of :func:`default_roots`."""
    return default_roots()[0]


def _is_chat_name(file_name: str) -> bool:
    return file_name.endswith(suffix) or file_name.endswith(DOCUMENT)


def _chats_dir(path: Path) -> Path | None:
    """The ``chats`` folder a chat file lives in (directly: a session; one below: a sub-agent)."""
    if path.parent.name == CHATS:
        return path.parent
    if path.parent.parent.name == CHATS:
        return path.parent.parent
    return None


def claims(path: Path) -> bool:
    """A ``session-*.json`` or ``session-*.jsonl`` in a ``chats`` folder (a session), or a ``.json`` or
    ``.jsonl`` one folder below it (a sub-agent's chat)."""
    path = Path(path)
    if not _is_chat_name(path.name):
        return False
    if path.parent.name == CHATS:
        return path.name.startswith(SESSION_PREFIX)
    return path.parent.parent.name == CHATS


def kind_of(path: Path) -> FileKind:
    """``subagent`` for a chat in a ``chats/<parent session>/`` folder, else ``main``."""
    path = Path(path)
    return "subagent" if path.parent.name != CHATS and path.parent.parent.name == CHATS else "main"


def project_dir(path: Path) -> Path:
    """The ``<project>`` folder (hash or short name) a chat belongs to."""
    chats = _chats_dir(Path(path))
    return chats.parent if chats is not None else Path(path).parent


_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*"([^"\\]{1,200})"')


def _head(path: Path) -> bytes:
    try:
        with open_regular(path) as fh:
            return fh.read(_HEAD_BYTES)
    except OSError:
        return b""


def session_of(path: Path) -> str:
    """The session: a sub-agent's parent (its folder), else the ``sessionId`` the file names, else
    its name."""
    path = Path(path)
    if kind_of(path) == "subagent":
        return path.parent.name
    m = _SESSION_ID.search(_head(path))
    return m.group(1).decode("utf-8", "replace") if m else _stem(path)


def _stem(path: Path) -> str:
    return path.name.removesuffix(suffix).removesuffix(DOCUMENT)


def project_of(path: Path) -> str:
    """``encode_path`` of the project's folder when it can be found (:func:`cwd_of`), else
    ``gemini-<project folder>``."""
    cwd = cwd_of(path)
    return _encode_path(cwd) if cwd else f"gemini-{project_dir(Path(path)).name}"


def describe(path: Path, head: bytes | None = None) -> TranscriptFile:
    """A chat file: its project (:func:`project_of`), session and kind."""
    path = path if isinstance(path, Path) else Path(path)
    kind = kind_of(path)
    if kind == "subagent":
        session, agent_id = path.parent.name, _stem(path)
    else:
        m = _SESSION_ID.search(_head(path) if head is None else head[:_HEAD_BYTES])
        session, agent_id = (m.group(1).decode("utf-8", "replace") if m else _stem(path)), None
    return TranscriptFile(path, project_of(path), session, kind, agent_id, name)


def _chat_files(folder: Path, skipped: list[Skipped] | None) -> list[Path]:
    """The ``.jsonl`` and ``.json`` chats of one folder; a ``.json`` whose ``.jsonl`` copy is beside it
    (a resumed session Gemini moved to JSON lines) is left out."""
    main = folder.name == CHATS  # a session's chats start with session-; a sub-agent's are any name
    lines = {
        e.name: e.path
        for e in scan_folder(folder, skipped, want=suffix, folders=False)  # its sub-folders: listed again
        if e.is_file and (not main or e.name.startswith(SESSION_PREFIX))
    }
    docs = [
        e.path
        for e in scan_folder(folder, skipped, want=DOCUMENT, folders=False)
        if e.is_file and (not main or e.name.startswith(SESSION_PREFIX))
    ]
    return sorted([*lines.values(), *(p for p in docs if p.name + "l" not in lines)])


def discover(root: Path, skipped: list[Skipped] | None = None) -> list[TranscriptFile]:
    """Every chat under ``root`` (``<project>/chats/*.json[l]`` and sub-agents' chats one folder
    below), main files before their sub-agents; never raises (what cannot be listed or read is named
    in ``skipped``)."""
    root = Path(root)
    if not is_dir(root):
        return []
    paths: list[Path] = []
    for project in scan_folder(root, skipped, want="\0", follow=True):  # no link below the root
        chats = project.path / CHATS
        if not project.is_dir or not own_dir(chats, skipped):
            continue
        paths.extend(_chat_files(chats, skipped))
        for sub in scan_folder(chats, skipped, want="\0"):
            if sub.is_dir:
                paths.extend(_chat_files(sub.path, skipped))
    found = [describe(p) for p in paths]
    return sorted(found, key=lambda tf: (tf.project, tf.session, tf.kind != "main", str(tf.path)))


def session_files(root: Path, project: str, session: str) -> list[Path]:
    """The chats of one session under ``root``: the main file, then its sub-agents'."""
    return [tf.path for tf in discover(root) if tf.session == session]


def with_session(path: Path) -> list[Path]:
    """The chats of the session whose main chat is ``path``: ``path``, then its sub-agents' chats
    (``chats/<session id>/``)."""
    path = Path(path)
    if kind_of(path) != "main":
        return [path]
    folder = path.parent / session_of(path)
    subs = sorted(_chat_files(folder, None)) if own_dir(folder) else []
    return [path, *subs]


def is_main_file(root: Path, path: Path) -> bool:
    """A main chat in ``<root>/<project>/chats/``."""
    path = Path(path)
    return claims(path) and kind_of(path) == "main" and path.parent.parent.parent == Path(root)


def is_auto_dream(path: Path) -> bool:
    """Gemini CLI has no background consolidation writing into Claude Code's memory."""
    return False


# -- the working directory ------------------------------------------------------------------------

_PATH_ARGS = ("file_path", "absolute_path", "path", "dir_path", "directory", "cwd")
_WORKING_IN = re.compile(r"I'm currently working in the directory: (.+)")
_WORKSPACE_DIRS = re.compile(r"\*\*Workspace Directories:\*\*\n((?:\s+- .+\n?)+)")
_ABSOLUTE = re.compile(r"(?<![\w.~])/(?:[\w.@+-]+/)*[\w.@+-]+|\b[A-Za-z]:\\[^\s\"'<>|]+")
"""An absolute path inside a tool's arguments or result (POSIX, or a Windows drive's)."""
_resolved: dict[str, tuple[str, tuple[int, int]]] = {}
"""Project folders looked at: the folder found ('' when none) and the chats' state then."""


def path_hash(folder: str) -> str:
    """The name older Gemini CLI versions give a project's folder: the SHA-256 of its path."""
    return hashlib.sha256(folder.encode("utf-8", "surrogatepass")).hexdigest()


def resolve_hash(digest: str, candidates: Iterable[str]) -> str:
    """The folder among ``candidates`` and their parents whose :func:`path_hash` is ``digest`` ('')."""
    tried: set[str] = set()
    for candidate in candidates:
        if not candidate or not candidate.startswith(("/", "\\")) and ":" not in candidate[:3]:
            continue
        folder = candidate.rstrip("/\\") or candidate
        while folder and folder not in tried:
            tried.add(folder)
            if path_hash(folder) == digest:
                return folder
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    return ""


def _read_json(path: Path) -> Any:
    try:
        data = read_regular(path, 4 * 1024 * 1024)
    except OSError:
        return None
    if data is None:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


def _known_folders(gemini: Path) -> list[str]:
    """The folders Gemini CLI itself names: ``trustedFolders.json`` and ``projects.json`` keys."""
    out: list[str] = []
    trusted = _read_json(gemini / "trustedFolders.json")
    if isinstance(trusted, dict):
        out.extend(k for k in trusted if isinstance(k, str))
    projects = _read_json(gemini / "projects.json")
    if isinstance(projects, dict) and isinstance(projects.get("projects"), dict):
        out.extend(k for k in projects["projects"] if isinstance(k, str))
    return out


def _session_folders(path: Path) -> list[str]:
    """The folders a chat names: its header's ``directories``, its session context's working folder
    and workspace folders, and the absolute paths its tools were given."""
    out: list[str] = []
    try:
        session = read_session(path)
    except TranscriptError:
        return out
    dirs = session.meta.get("directories")
    if isinstance(dirs, list):
        out.extend(d for d in dirs if isinstance(d, str))
    for rec in session.records:
        msg = rec.obj
        if msg.get("type") == "user":
            for text, _path in _texts(msg.get("content"), ("content",)):
                if "<session_context>" in text or "working in the directory" in text:
                    m = _WORKING_IN.search(text)
                    if m:
                        out.append(m.group(1).strip())
                    w = _WORKSPACE_DIRS.search(text)
                    if w:
                        out.extend(
                            line.strip()[2:].strip() for line in w.group(1).splitlines() if line.strip()
                        )
        calls = msg.get("toolCalls")
        for call in calls if isinstance(calls, list) else []:
            if not isinstance(call, dict):
                continue
            args = call.get("args")
            if isinstance(args, dict):
                out.extend(v for k in _PATH_ARGS if isinstance(v := args.get(k), str))
            found: list[tuple[str, JsonPath]] = []
            _strings([args, call.get("result")], (), found)
            for text, _where in found:
                out.extend(m.group(0) for m in _ABSOLUTE.finditer(text, 0, 4096))
    return out


_NAMED_FILES = 24
"""How many of a project's chats (the newest) are read for the folders they name."""
_NAMED_BYTES = 16 * 1024 * 1024
"""A chat larger than this is not read for the folders it names."""


def _project_chats(folder: Path) -> list[tuple[int, int, Path]]:
    """``(mtime, size, path)`` of every chat of a project folder (sessions and sub-agents)."""
    out: list[tuple[int, int, Path]] = []
    chats = folder / CHATS
    for directory in [chats, *(e.path for e in scan_folder(chats, want="\0") if e.is_dir)]:
        for p in _chat_files(directory, None):
            try:
                st = p.stat()
            except OSError:
                continue
            out.append((st.st_mtime_ns, st.st_size, p))
    return out


def project_cwd(folder: Path) -> str:
    """The folder a project folder's chats ran in (module docstring, "Project"); '' when nothing
    names it. A found answer is kept; an unresolved one is looked for again when the chats change."""
    folder = Path(folder)
    key = str(folder)
    cached = _resolved.get(key)
    if cached is not None and cached[0]:
        return cached[0]
    chats = _project_chats(folder)
    stamp = (len(chats), max((c[0] for c in chats), default=0))
    if cached is not None and cached[1] == stamp:
        return cached[0]
    gemini = folder.parent.parent
    found = ""
    try:
        with open_regular(folder / ".project_root") as fh:
            found = fh.read(4096).decode("utf-8", "replace").strip()
    except OSError:
        pass
    if not found:
        projects = _read_json(gemini / "projects.json")
        table = projects.get("projects") if isinstance(projects, dict) else None
        if isinstance(table, dict):
            found = next((k for k, v in table.items() if v == folder.name and isinstance(k, str)), "")
    if not found:
        named: list[str] = []
        for _mtime, size, p in sorted(chats, reverse=True)[:_NAMED_FILES]:
            if size <= _NAMED_BYTES:
                named.extend(_session_folders(p))
        if _HASH.match(folder.name):
            found = resolve_hash(folder.name, [*named, *_known_folders(gemini)])
        elif named:
            found = named[0]  # a short name without its marker: the folder its chats name
    _resolved[key] = (found, stamp)
    return found


def cwd_of(path: Path) -> str:
    """The folder the chat ran in: its project folder's (:func:`project_cwd`)."""
    return project_cwd(project_dir(Path(path)))


# -- reading a chat: records ----------------------------------------------------------------------

CHECKPOINT = "$via"
"""Set (``"checkpoint"``) in a message that first appeared in a ``$set`` of ``messages``: Gemini
wrote it into the history itself (a summary), no person typed it."""


@dataclass(slots=True)
class Session:
    """A chat read whole: its header (updated by every ``$set``) and its messages as records."""

    meta: dict[str, Any] = field(default_factory=dict)
    records: list[SourceRecord] = field(default_factory=list)


def _message_raw(msg: dict[str, Any]) -> bytes:
    return orjson.dumps(msg)


_MESSAGES_KEY = b'\n  "messages": ['


def _document_slices(data: bytes) -> tuple[list[bytes], dict[str, Any]] | None:
    """The bytes of each message of a document written as ``JSON.stringify(record, null, 2)`` does
    (each message between a ``    {`` line and a ``    }`` line, a comma between two) and the document
    without them, or None when the document is not shaped so (or does not parse around its list)."""
    key = data.find(_MESSAGES_KEY + b"\n")
    if key < 0:
        return None
    pos = open_at = key + len(_MESSAGES_KEY)
    slices: list[bytes] = []
    while data.startswith(b"\n    {\n", pos):
        end = data.find(b"\n    }", pos + 6)
        if end < 0:
            return None
        slices.append(data[pos + 1 : end + 6])
        pos = end + 6
        if not data.startswith(b",", pos):
            break
        pos += 1
    if not slices or not data.startswith(b"\n  ]", pos):
        return None
    try:
        rest = orjson.loads(data[:open_at] + data[pos:])
    except orjson.JSONDecodeError:
        return None
    if not isinstance(rest, dict) or rest.pop("messages", None) != []:
        return None
    return slices, rest


def _read_document(path: Path, data: bytes) -> Session:
    """A whole-document chat (``.json``): its messages numbered from 1 (``locator``), keyed by their
    ``id``, each record's ``raw`` its bytes in the file; raises :class:`TranscriptError` when the
    document does not parse (half written, empty)."""
    session = Session()
    shaped = _document_slices(data)
    messages: list[Any] = []
    if shaped is not None:
        try:
            messages = [orjson.loads(s) for s in shaped[0]]
        except orjson.JSONDecodeError:
            shaped = None
    if shaped is not None:
        raws, session.meta = shaped
    else:
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            why = "it is empty" if not data.strip() else "it is not a whole JSON document (half written?)"
            raise TranscriptError(f"{path}: {why}") from exc
        if not isinstance(doc, dict):
            raise TranscriptError(f"{path}: it is not a Gemini CLI chat (not a JSON object)")
        listed = doc.pop("messages", None)
        messages = listed if isinstance(listed, list) else []
        session.meta = doc
        raws = [_message_raw(m) if isinstance(m, dict) else b"" for m in messages]
    for index, (msg, raw) in enumerate(zip(messages, raws, strict=True), start=1):
        if isinstance(msg, dict):
            mid = msg.get("id")
            key = mid if isinstance(mid, str) and mid else str(index)
            session.records.append(SourceRecord(index, key, raw, msg))
    return session


_WHOLE_LINES = 64 * 1024 * 1024
"""A JSON-lines chat up to this size is read in one piece; a larger one line by line."""
_TIME_ONLY = b'{"$set":{"lastUpdated":"'
"""The update Gemini appends after nearly every message (the time alone): nothing to read in it."""


def _complete_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """``(number, bytes)`` of each complete line of a large chat, read in chunks (a last line without
    its newline waits)."""
    with open_transcript(path) as fh:
        for line_no, _offset, raw in LineScanner(fh):
            yield line_no, raw


_ID_HEAD = b'{"id":"'
Span = tuple[int, bytes | None, int, int, "dict[str, Any] | None"]
"""Where a message's last version is: ``(line, raw or None, start, end, decoded or None)``; ``raw``
None means ``data[start:end]`` of the chat read whole."""


@dataclass(slots=True)
class _Lines:
    """A JSON-lines chat scanned: its header, and the last version of each message (not decoded yet
    when it was recognised by its first bytes)."""

    meta: dict[str, Any] = field(default_factory=dict)
    latest: dict[str, Span] = field(default_factory=dict)
    data: bytes = b""


def _scan_lines(path: Path) -> _Lines:
    """Read a JSON-lines chat once: the header and its updates, rewinds and checkpoints applied, and
    where each message's last version is. Gemini writes a message's ``id`` first: a message line is
    recognised by its first bytes and decoded only if it stays the last version (:func:`_line_records`)."""
    out = _Lines()
    data = read_small_transcript(path, _WHOLE_LINES)
    if data is None:  # a very large chat: line by line, the lines kept
        for line_no, raw in _complete_lines(path):
            _scan_line(out, line_no, raw, raw, 0, len(raw))
        return out
    out.data = data
    find, startswith, latest = data.find, data.startswith, out.latest
    start, line_no = 0, 0
    while True:
        end = find(b"\n", start)
        if end < 0:
            break  # after the last newline: nothing, or a line still being written
        line_no += 1
        if startswith(_ID_HEAD, start, end):  # the common line, inline: a message, read by its id
            close = find(b'"', start + 7, start + 263 if start + 263 < end else end)
            if close > start + 7 and find(b"\\", start + 7, close) < 0:
                latest[data[start + 7 : close].decode("utf-8", "replace")] = (line_no, None, start, end, None)
                start = end + 1
                continue
        elif startswith(_TIME_ONLY, start, end) and end - start < 80 and data.count(b'"', start, end) == 6:
            start = end + 1
            continue  # the time alone
        _scan_line(out, line_no, None, data, start, end)
        start = end + 1
    return out


def _scan_line(out: _Lines, line_no: int, raw: bytes | None, data: bytes, start: int, end: int) -> None:
    if data.startswith(_ID_HEAD, start, end):
        close = data.find(b'"', start + 7, min(end, start + 263))
        if close > start + 7 and data.find(b"\\", start + 7, close) < 0:
            out.latest[data[start + 7 : close].decode("utf-8", "replace")] = (line_no, raw, start, end, None)
            return
    elif data.startswith(_TIME_ONLY, start, end) and end - start < 80 and data.count(b'"', start, end) == 6:
        return  # the time alone
    line = data[start:end] if raw is None else raw
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        obj, _error = decode_line(line)
    if type(obj) is not dict:
        return
    mid = obj.get("id")
    if type(mid) is str and mid:
        out.latest[mid] = (line_no, line, start, end, obj)
        return
    rewind = obj.get("$rewindTo")
    update = obj.get("$set")
    if isinstance(rewind, str):
        _rewind(out.latest, rewind)
    elif isinstance(update, dict):
        listed = update.get("messages")
        if isinstance(listed, list):
            _checkpoint(out.latest, listed, line_no)
        out.meta.update({k: v for k, v in update.items() if k != "messages"})
    elif isinstance(obj.get("sessionId"), str):
        listed = obj.pop("messages", None)
        out.meta.update(obj)
        if isinstance(listed, list):  # a legacy record on one line
            _checkpoint(out.latest, listed, line_no, typed=True)


def _line_records(scan: _Lines) -> Iterator[SourceRecord]:
    """The messages of a scanned chat, in order, each decoded as it is given (so a digest holds one
    at a time); a version that does not decode, or is not the message its first bytes named, is left out."""
    data = scan.data
    for mid, (line_no, raw, start, end, obj) in scan.latest.items():
        if raw is None:
            raw = data[start:end]
        if obj is None:
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                obj, _error = decode_line(raw)
            if type(obj) is not dict or obj.get("id") != mid:
                continue
        yield SourceRecord(line_no, mid, raw, obj)


def _read_lines(path: Path) -> Session:
    """A JSON-lines chat read whole (module docstring): its header and its messages' records."""
    scan = _scan_lines(path)
    return Session(scan.meta, list(_line_records(scan)))


_Latest = dict[str, Span]


def _rewind(messages: _Latest, to: str) -> None:
    """Drop message ``to`` and every later one (all of them when ``to`` is not there, as Gemini does);
    walks back from the end, so a rewind costs what it drops."""
    gone: list[str] = []
    for key in reversed(messages):
        gone.append(key)
        if key == to:
            break
    else:
        messages.clear()
        return
    for key in gone:
        del messages[key]


def _checkpoint(messages: _Latest, listed: list[Any], line_no: int, typed: bool = False) -> None:
    """Apply a checkpoint (``$set`` of ``messages``, the history as Gemini rebuilt it): every message
    seen before stays, as the line that wrote it (a checkpoint that leaves out old turns only shortens
    what the model sees, nobody took the words back); one first seen here is added, marked
    :data:`CHECKPOINT` (``typed``: a whole legacy record on one line, whose messages are real)."""
    for msg in listed:
        if not isinstance(msg, dict) or not isinstance(msg.get("id"), str) or not msg["id"]:
            continue
        mid = msg["id"]
        if mid not in messages:
            obj = msg if typed else {**msg, CHECKPOINT: "checkpoint"}
            raw = _message_raw(msg)
            messages[mid] = (line_no, raw, 0, len(raw), obj)


def read_session(path: Path) -> Session:
    """The chat at ``path`` read whole (a ``.json`` document or a ``.jsonl`` log); raises
    :class:`TranscriptError` with a one-line reason when it cannot be read or parsed."""
    path = Path(path)
    if path.name.endswith(suffix):
        return _read_lines(path)
    with _collecting_later():
        data = read_small_transcript(path, MAX_DOCUMENT)
        if data is None:
            raise TranscriptError(
                f"{path}: the document is over {MAX_DOCUMENT // (1024 * 1024)} MiB, not read"
            )
        return _read_document(path, data)


@contextmanager
def _collecting_later() -> Iterator[None]:
    """The cyclic garbage collector held while a chat's records are decoded: the records are kept
    (and make no cycles), so the collections their allocations would trigger only walk them again
    and again (a third of the read, measured); it runs again after."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def records(path: Path, member: str = "") -> Iterator[SourceRecord]:
    """The messages of a chat, in order, as the agent itself would load them (module docstring);
    raises :class:`TranscriptError` when the file cannot be read or a document is half written
    (before giving any record). A JSON-lines chat's messages are decoded as they are given."""
    path = Path(path)
    if path.name.endswith(suffix):
        return _line_records(_scan_lines(path))
    return iter(read_session(path).records)


# -- whose words ----------------------------------------------------------------------------------

AT_FILES_START = "--- Content from referenced files ---"
AT_FILES_END = "--- End of content ---"
_CONTEXT_STARTS = ("<session_context>", "<hook_context>")


def _texts(content: Any, base: JsonPath) -> list[tuple[str, JsonPath]]:
    """The ``text`` strings of a message's ``content`` (a string or a list of parts)."""
    if isinstance(content, str):
        return [(content, base)]
    out: list[tuple[str, JsonPath]] = []
    if isinstance(content, list):
        for i, part in enumerate(content):
            if isinstance(part, str):
                out.append((part, (*base, i)))
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                out.append((part["text"], (*base, i, "text")))
    return out


def _person_kind(text: str) -> tuple[Provenance, str]:
    """A user text's role and kind by itself: context Gemini injects is ``meta``."""
    head = text.lstrip()
    if not head:
        return META, "context"
    if head.startswith(_CONTEXT_STARTS):
        return META, "context"
    if head.startswith(AT_FILES_START):
        return META, "context"
    if re.match(r"/[A-Za-z][\w:-]*(\s|$)", head):
        return PERSON, "command"
    return PERSON, "prompt"


def _user_parts(msg: dict[str, Any], field_name: str) -> list[tuple[Provenance, str, str, JsonPath]]:
    """``(role, kind, text, path)`` of each string of a user message's ``field_name`` (``content`` or
    ``displayContent``): the files an ``@path`` pulled in (between the markers) and a text starting
    with them are ``meta``; a string holding the person's words before the marker gives the person
    that start; ``functionResponse`` parts are ``tool``."""
    value = msg.get(field_name)
    out: list[tuple[Provenance, str, str, JsonPath]] = []
    inside = False
    parts: list[tuple[int | None, Any]] = (
        [(None, value)]
        if isinstance(value, str)
        else list(enumerate(value))
        if isinstance(value, list)
        else []
    )
    for i, part in parts:
        base: JsonPath = (field_name,) if i is None else (field_name, i)
        if isinstance(part, dict) and "text" not in part:
            found: list[tuple[str, JsonPath]] = []
            _strings(part, base, found)
            out.extend((TOOL, "tool_result", t, p) for t, p in found)
            continue
        text = part if isinstance(part, str) else part.get("text") if isinstance(part, dict) else None
        if not isinstance(text, str):
            continue
        path = base if isinstance(part, str) else (*base, "text")
        stripped = text.strip()
        if inside:
            out.append((META, "context", text, path))
            if stripped.startswith(AT_FILES_END) or stripped.endswith(AT_FILES_END):
                inside = False
            continue
        at = text.find(AT_FILES_START)
        if at > 0 and text[:at].strip():
            out.append((PERSON, "prompt", text[:at].strip(), path))
            inside = AT_FILES_END not in text[at:]
            continue
        role, kind = _person_kind(text)
        if at == 0 or text.lstrip().startswith(AT_FILES_START):
            inside = AT_FILES_END not in text
        out.append((role, kind, text.strip() if role == PERSON else text, path))
    return out


_CALL_IDS = frozenset({"functionResponse", "functionCall"})


def _strings(value: Any, path: JsonPath, out: list[tuple[str, JsonPath]], depth: int = 0) -> None:
    """Every string inside ``value`` with its path (a tool's arguments or result), a function call's
    or response's own ``id`` and ``name`` left out (no text)."""
    if depth > 12:
        return
    if isinstance(value, str):
        if value and not (len(path) >= 2 and path[-2] in _CALL_IDS and path[-1] in ("id", "name")):
            out.append((value, path))
    elif isinstance(value, dict):
        for key, item in value.items():
            _strings(item, (*path, str(key)), out, depth + 1)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _strings(item, (*path, i), out, depth + 1)


def _user_pieces(msg: dict[str, Any]) -> list[Piece]:
    if msg.get(CHECKPOINT):
        return [Piece(META, t, "synthetic", p) for t, p in _texts(msg.get("content"), ("content",))]
    shown = msg.get("displayContent")
    if shown:
        out = [Piece(META, t, "context", p) for t, p in _texts(msg.get("content"), ("content",))]
        out.extend(Piece(r, t, k, p) for r, k, t, p in _user_parts(msg, "displayContent"))
        return out
    return [Piece(r, t, k, p) for r, k, t, p in _user_parts(msg, "content")]


def person_texts(msg: dict[str, Any]) -> list[tuple[str, str]]:
    """``(kind, text)`` of the person's words in a message (what the digest keeps of it)."""
    if msg.get("type") != "user":
        return []
    return [(p.kind, p.text) for p in _user_pieces(msg) if p.role == PERSON]


def assistant_texts(msg: dict[str, Any]) -> list[tuple[str, JsonPath]]:
    """The prose of a ``gemini`` message (its ``content`` text, thought parts left out)."""
    content = msg.get("content")
    if isinstance(content, str):
        return [(content, ("content",))] if content else []
    out: list[tuple[str, JsonPath]] = []
    if isinstance(content, list):
        for i, part in enumerate(content):
            if (
                isinstance(part, dict)
                and isinstance(part.get("text"), str)
                and part.get("thought") is not True
            ):
                out.append((part["text"], ("content", i, "text")))
    return out


def _gemini_pieces(msg: dict[str, Any]) -> list[Piece]:
    out: list[Piece] = []
    thoughts = msg.get("thoughts")
    for i, thought in enumerate(thoughts if isinstance(thoughts, list) else []):
        if isinstance(thought, dict):
            for key in ("subject", "description"):
                if isinstance(thought.get(key), str) and thought[key]:
                    out.append(Piece(ASSISTANT, thought[key], "thinking", ("thoughts", i, key)))
    content = msg.get("content")
    for i, part in enumerate(content if isinstance(content, list) else []):
        if not isinstance(part, dict):
            continue
        if part.get("thought") is True and isinstance(part.get("text"), str):
            out.append(Piece(ASSISTANT, part["text"], "thinking", ("content", i, "text")))
        elif "functionCall" in part:
            found: list[tuple[str, JsonPath]] = []
            _strings(part["functionCall"], ("content", i, "functionCall"), found)
            out.extend(Piece(TOOL, t, "tool_input", p) for t, p in found)
    out.extend(Piece(ASSISTANT, t, "text", p) for t, p in assistant_texts(msg))
    calls = msg.get("toolCalls")
    for i, call in enumerate(calls if isinstance(calls, list) else []):
        if isinstance(call, dict):
            for key, kind in (
                ("args", "tool_input"),
                ("result", "tool_result"),
                ("resultDisplay", "tool_result"),
            ):
                found = []
                _strings(call.get(key), ("toolCalls", i, key), found)
                out.extend(Piece(TOOL, t, kind, p) for t, p in found)
    return out


def pieces(obj: Any) -> list[Piece]:
    """The text pieces of one message, in order, each with its provenance (module docstring)."""
    if not isinstance(obj, dict):
        return []
    mtype = obj.get("type")
    if mtype == "user":
        return _user_pieces(obj)
    if mtype == "gemini":
        return _gemini_pieces(obj)
    if mtype in ("info", "warning", "error"):
        return [Piece(META, t, "notification", p) for t, p in _texts(obj.get("content"), ("content",))]
    return []


def _get(obj: Any, path: JsonPath) -> Any:
    cur = obj
    for key in path:
        if isinstance(key, int) and isinstance(cur, list) and -len(cur) <= key < len(cur):
            cur = cur[key]
        elif isinstance(key, str) and isinstance(cur, dict):
            cur = cur.get(key)
        else:
            return None
    return cur


def provenance(obj: dict[str, Any], path: JsonPath, value: str, holds: Callable[[str], bool]) -> Provenance:
    """Whose words the string ``value`` at ``path`` of the message ``obj`` is (module docstring). In a
    string whose start is the person's and whose rest the files an ``@path`` pulled in, the quote is
    the person's only when that start ``holds`` it."""
    path = tuple(path)
    if not isinstance(obj, dict) or not path:
        return META
    mtype, head = obj.get("type"), path[0]
    if mtype == "gemini":
        if head == "thoughts":
            return ASSISTANT if len(path) == 3 and path[2] in ("subject", "description") else META
        if head == "toolCalls":
            return TOOL if len(path) >= 3 and path[2] in ("args", "result", "resultDisplay") else META
        if head == "content":
            if len(path) == 1:
                return ASSISTANT
            part = _get(obj, path[:2])
            if isinstance(part, dict) and ("functionCall" in part or "functionResponse" in part):
                return TOOL
            return ASSISTANT if path[2:] == ("text",) else META
        return META
    if mtype != "user" or head not in ("content", "displayContent"):
        return META
    if obj.get(CHECKPOINT) or (head == "content" and obj.get("displayContent")):
        return TOOL if _in_function_part(obj, path) else META
    for role, _kind, text, where in _user_parts(obj, head):
        if where != path:
            continue
        if role == PERSON and text != value.strip() and not holds(text):
            continue  # the person's start of the string does not hold it: the files after it do
        return role
    return TOOL if _in_function_part(obj, path) else META


def _in_function_part(obj: dict[str, Any], path: JsonPath) -> bool:
    part = _get(obj, path[:2]) if len(path) >= 2 else None
    return isinstance(part, dict) and ("functionResponse" in part or "functionCall" in part)


def is_copy(obj: dict[str, Any]) -> bool:
    """No Gemini message repeats another's words."""
    return False


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def ref(obj: dict[str, Any]) -> RecordRef:
    """A message's ``id`` and ``timestamp`` (messages name no working directory)."""
    return RecordRef(_str_or_none(obj.get("id")), _str_or_none(obj.get("timestamp")), None, False)


# -- tool calls and the raw view ------------------------------------------------------------------

EDIT_TOOLS = frozenset({"write_file", "replace", "edit", "edit_file", "smart_edit"})
"""Gemini CLI's tools that write a file (``file_path`` in their arguments)."""
SHELL_TOOLS = frozenset({"run_shell_command", "shell"})


def tool_calls(obj: dict[str, Any]) -> list[ToolCall]:
    """The ``toolCalls`` of a ``gemini`` message, with the file an edit wrote and the command a shell ran."""
    calls = obj.get("toolCalls") if obj.get("type") == "gemini" else None
    out: list[ToolCall] = []
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, dict):
            continue
        tool = str(call.get("name") or "?")
        given = call.get("args")
        args: dict[str, Any] = given if isinstance(given, dict) else {}
        wrote = command = None
        if tool in EDIT_TOOLS:
            target = args.get("file_path") or args.get("absolute_path") or args.get("path")
            wrote = target if isinstance(target, str) else None
        elif tool in SHELL_TOOLS and isinstance(args.get("command"), str):
            command = args["command"]
        out.append(ToolCall(tool, wrote, command))
    return out


def render(line: int, obj: dict[str, Any]) -> RawRecord:
    """A message as the evidence window shows it: its type, time and pieces, then each tool call's
    name and arguments; notices fold to one line."""
    mtype = str(obj.get("type") or "?")
    texts = [(str(p.role), p.text) for p in pieces(obj) if not (p.role == TOOL and p.kind == "tool_input")]
    calls = obj.get("toolCalls")
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            shown = orjson.dumps(call.get("args") or {}).decode("utf-8", "replace")
            texts.append(("call", f"{call.get('name') or '?'} {shown}"))
    notice = mtype in ("info", "warning", "error")
    return RawRecord(
        line, mtype, str(obj.get("timestamp") or ""), texts, kind=mtype[:40], bookkeeping=notice, folds=notice
    )


# -- the digest ----------------------------------------------------------------------------------


def keep(buf: bytes, start: int, end: int) -> bool:
    """Whether a JSON line may hold kept words: False only for a ``$set``/``$rewindTo`` update or the
    header (a cheap test on its first bytes)."""
    return not (buf.startswith(b'{"$set"', start, end) or buf.startswith(b'{"$rewindTo"', start, end))


class _Digester:
    """The turns of a chat's messages: the person's words and the assistant's prose (a sub-agent's as
    ``subagent``), each kept once; thoughts, tools and notices dropped. Fed records (:meth:`record`,
    from :func:`records`), or JSON lines (:meth:`lines`, each line one message)."""

    def __init__(
        self, file: str, kind: FileKind, state: DigestState, stats: DigestStats, interrupts: bool
    ) -> None:
        self.file, self.kind, self.state, self.stats = file, kind, state, stats
        self.cwd = ""

    def lines(
        self, numbers: Sequence[int], raws: Sequence[bytes], out: list[Turn], ascii: bool = False
    ) -> None:
        for line_no, raw in zip(numbers, raws, strict=True):
            if keep(raw, 0, len(raw)):
                self.exact(raw, line_no, out)

    def exact(self, raw: bytes, line_no: int, out: list[Turn]) -> None:
        """Decode one line in full (repaired or refused as ``decode_line`` does) and digest it."""
        obj = decode_counted(raw, self.stats)
        if obj is not None:
            self.record(obj, line_no, out)

    def record(self, obj: dict[str, Any], line_no: int, out: list[Turn]) -> None:
        """The turns of one message; an odd message is counted, never raised."""
        try:
            self._record(obj, line_no, out)
        except Exception:
            self.stats.skipped_lines += 1
            self.stats.malformed += 1

    def _record(self, obj: dict[str, Any], line_no: int, out: list[Turn]) -> None:
        mtype = obj.get("type")
        if mtype == "gemini":
            content = obj.get("content")
            if type(content) is str:  # the usual reply: its text at once
                texts = [content] if content else []
            else:
                texts = [t for t, _path in assistant_texts(obj)]
            if not texts:
                return
            uuid, ts = _str_or_none(obj.get("id")), _str_or_none(obj.get("timestamp"))
            kind = "subagent" if self.kind == "subagent" else "text"
            for raw_text in texts:
                text = raw_text.strip()
                if not text or (uuid and not self.state.new_block(uuid, raw_text)):
                    continue
                out.append(Turn("assistant", text, self.file, line_no, uuid, ts, kind))
                self.stats.chars += len(text)
        elif mtype == "user" and self.kind == "main":
            person = person_texts(obj)
            if not person:
                return
            uuid, ts = _str_or_none(obj.get("id")), _str_or_none(obj.get("timestamp"))
            text = "\n\n".join(t for _k, t in person)
            kind = person[0][0] if len(person) == 1 else "prompt"
            if ts is not None and not self.state.new_person(ts, text):
                return
            out.append(Turn("person", text, self.file, line_no, uuid, ts, kind))
            self.stats.chars += len(text)


class _Fields(msgspec.Struct, gc=False):
    """What the digest reads of a message (every other field, a tool call's result above all, is
    skipped unread): a missing field is None, as ``dict.get`` gives it."""

    id: Any = None
    type: Any = None
    timestamp: Any = None
    content: Any = None
    displayContent: Any = None  # noqa: N815 (the message's own field name)
    via: Any = msgspec.field(name=CHECKPOINT, default=None)


_decode_fields = msgspec.json.Decoder(_Fields).decode
_NOT_DECODED = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)
_NON_DIGIT = re.compile(rb"[^0-9]")


def _long_number(raw: bytes, limit: int) -> bool:
    """Whether ``raw`` may hold a run of ``limit`` digits (an integer Python's ``json`` refuses,
    which msgspec passes over unread): every such run holds one of the bytes ``limit`` apart."""
    if limit <= 0 or len(raw) < limit:
        return False
    for i, byte in enumerate(raw[::limit]):
        if 48 <= byte <= 57:
            m = _NON_DIGIT.search(raw, i * limit)
            end = m.start() if m is not None else len(raw)
            if end >= limit and raw[end - limit : end].isdigit():
                return True
    return False


def _fields_of(raw: bytes, mid: str, limit: int) -> _Fields | None:
    """The fields the digest reads of a message line, decoded by msgspec (the rest skipped); None when
    msgspec refuses the line, it names another message, or it may hold what Python's ``json`` refuses
    (the line is then decoded the exact way: ``orjson``, else ``decode_line``). Bytes msgspec takes
    and ``orjson`` refuses (a bad byte or an infinite number in a skipped field) are what
    ``decode_line`` repairs or takes as they are, so the fields read are the same."""
    try:
        m = _decode_fields(raw)
    except _NOT_DECODED:
        return None
    if m.id != mid or _long_number(raw, limit):
        return None
    return m


def _document_messages(path: Path) -> list[tuple[int, bytes, dict[str, Any]]]:
    """``(locator, raw, message)`` of each message of a ``.json`` chat, as :func:`read_session` gives
    its records (the same messages, numbers and bytes; the same :class:`TranscriptError`), without
    the records themselves. Call with the collector held (:func:`_collecting_later`)."""
    data = read_small_transcript(path, MAX_DOCUMENT)
    if data is None:
        raise TranscriptError(f"{path}: the document is over {MAX_DOCUMENT // (1024 * 1024)} MiB, not read")
    shaped = _document_slices(data)
    if shaped is not None:
        loads = orjson.loads
        try:
            messages = [loads(s) for s in shaped[0]]
        except orjson.JSONDecodeError:
            pass  # as _read_document does: the whole document decoded, or refused
        else:
            return [
                (i, raw, m)
                for i, (m, raw) in enumerate(zip(messages, shaped[0], strict=True), start=1)
                if type(m) is dict
            ]
    return [(rec.locator, rec.raw, rec.obj) for rec in _read_document(path, data).records]


def digest_records(
    address: Path, kind: FileKind | None, state: DigestState, stats: DigestStats, interrupts: bool
) -> tuple[TranscriptFile, list[Turn], str]:
    """The digest of a chat (``digest.digest_file``'s fast path): what :func:`describe`, :func:`records`
    and :func:`digester` give together (the same turns, stats and description:
    ``tests/test_formats_fast_digest.py``). A JSON-lines chat's messages are decoded only in the
    fields the digest reads (:func:`_fields_of`), no record made; a document's records are digested
    with the garbage collector held (:func:`_collecting_later`: every message stays alive until the
    digest ends, and each collection the digest's allocations would trigger walks them all again)."""
    path = Path(address)
    tf = describe(path)
    turns: list[Turn] = []
    d = _Digester(str(address), kind or tf.kind, state, stats, interrupts)
    file, new_block = str(address), state.new_block
    reply_kind = "subagent" if d.kind == "subagent" else "text"

    def reply(mid: Any, content: str, timestamp: Any, line_no: int) -> None:
        """A ``gemini`` message whose ``content`` is a string, as :meth:`_Digester._record` reads it."""
        text = content.strip()
        if text and (not (type(mid) is str and mid) or new_block(mid, content)):
            uuid = mid if type(mid) is str else None
            ts = timestamp if type(timestamp) is str else None
            turns.append(Turn("assistant", text, file, line_no, uuid, ts, reply_kind))
            stats.chars += len(text)

    if not path.name.endswith(suffix):
        with _collecting_later():  # the document's messages stay alive while they are digested
            for locator, stored, msg in _document_messages(path):
                stats.lines += 1
                stats.bytes += len(stored)
                if msg.get("type") == "gemini" and type(msg.get("content")) is str:
                    reply(msg.get("id"), msg["content"], msg.get("timestamp"), locator)
                else:
                    d.record(msg, locator, turns)
        return tf, turns, d.cwd
    scan = _scan_lines(path)
    data, limit = scan.data, sys.get_int_max_str_digits()
    count = size = 0
    for mid, (line_no, raw, start, end, obj) in scan.latest.items():
        if raw is None:
            raw = data[start:end]
        if obj is None:
            m = _fields_of(raw, mid, limit)
            if m is not None:
                count += 1
                size += len(raw)
                mtype, content = m.type, m.content
                if mtype == "gemini" and type(content) is str:  # the usual reply
                    reply(mid, content, m.timestamp, line_no)
                elif mtype == "gemini" or mtype == "user":
                    fields = {
                        "id": m.id,
                        "type": mtype,
                        "timestamp": m.timestamp,
                        "content": content,
                        "displayContent": m.displayContent,
                        CHECKPOINT: m.via,
                    }
                    d.record(fields, line_no, turns)
                continue
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError:
                obj, _error = decode_line(raw)
            if type(obj) is not dict or obj.get("id") != mid:
                continue
        count += 1
        size += len(raw)
        d.record(obj, line_no, turns)
    stats.lines, stats.bytes = count, size
    return tf, turns, d.cwd


def digester(
    file: str,
    kind: FileKind,
    state: DigestState,
    stats: DigestStats,
    interrupts: bool,
    cheap: bool = True,
) -> _Digester:
    """The :class:`_Digester` of one chat."""
    return _Digester(file, kind, state, stats, interrupts)
