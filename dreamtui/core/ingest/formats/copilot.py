"""GitHub Copilot CLI's session logs: the :class:`~.protocol.TranscriptFormat` of ``copilot``.

Copilot CLI appends one JSON object a line to ``$COPILOT_HOME/session-state/<session id>/events.jsonl``
(``COPILOT_HOME`` defaults to ``~/.copilot``); versions before the per-session folder kept one flat
``session-state/<session id>.jsonl``. Each line is an event ``{"type", "data", "id", "timestamp",
"parentId"}`` (a sub-agent's events also carry ``agentId``); the types read here (``docs/formats.md``,
"GitHub Copilot CLI"; shapes from real files recorded in ``tests/fixtures/agents/copilot/PROVENANCE.md``):

- ``session.start`` / ``session.resume``: the session's id, CLI version and ``context.cwd`` (metadata);
- ``system.message``: the system prompt Copilot sends (metadata, never the person's);
- ``user.message``: ``content`` is what the person typed; ``transformedContent`` is the same text
  wrapped in what Copilot injects (``<current_datetime>``, ``<system_reminder>``…): metadata;
- ``assistant.message``: the model's ``content``, its ``reasoningText`` (thinking, never in the digest)
  and ``toolRequests`` (``toolCallId``, ``name``, ``arguments``); a sub-agent's replies carry
  ``agentId`` and ``data.parentToolCallId``;
- ``tool.execution_start`` / ``tool.execution_complete``: a tool's arguments and result (``tool``);
- ``hook.start`` / ``hook.end``: a hook's input, which repeats the person's prompt or a tool's result
  (``tool``, and a copy: :func:`is_copy`);
- ``session.info`` / ``warning`` / ``error``, ``session.model_change``, ``assistant.turn_*``,
  ``subagent.*``, ``session.shutdown`` and the rest: metadata.

**Whose words.** Only a ``user.message``'s ``content`` is the person's, and only in the main
conversation: one a sub-agent received (``agentId``, ``parentToolCallId``) is the parent agent's
prompt, one with a ``source`` other than the person (a skill, a system notification) is Copilot's.
A tool's output that *looks* like a person's event is a string inside ``tool.execution_complete``:
``tool``.

**Project.** Sessions are filed by id, not by project: :func:`describe` gives as a session's folder
``encode_path`` of the working directory ``session.start`` names (``workspace.yaml``'s ``cwd`` when the
log has none yet), which ``ingest.projects`` resolves to the repository's project key.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import orjson

from dreamtui.core.files import Skipped, is_dir, open_regular, own_dir, regular_problem, scan_folder
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
from dreamtui.core.ingest.tail import LineScanner, decode_line, open_transcript
from dreamtui.core.models import DigestStats, Provenance, RawRecord, Turn

if TYPE_CHECKING:  # the digest's dedup state: digest.py imports the formats
    from dreamtui.core.ingest.digest import DigestState

name = "copilot-cli"
"""This format's name (its key in ``formats.FORMATS``)."""
agent = "Copilot CLI"
"""The agent as a person names it."""
label = "Copilot"
"""The agent in a word, as the queue's and Sessions' agent column show it."""
layout: Layout = "lines"
"""Appended JSON lines."""
suffix = ".jsonl"
tool_call_hint = b"toolRequests"
"""Bytes every line with a tool call holds (an ``assistant.message``'s ``toolRequests``)."""

PERSON: Provenance = "person"
ASSISTANT: Provenance = "assistant"
TOOL: Provenance = "tool"
META: Provenance = "meta"

EVENTS = "events.jsonl"
"""The log's name inside a session's folder."""
UNKNOWN_PROJECT = "copilot-sessions"
"""The folder of a session whose log names no working directory yet."""
_HEAD_BYTES = 64 * 1024
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def _encode_path(path: str) -> str:
    """``encode_path`` (``core.repository``): the project key a folder's sessions are filed under."""
    return re.sub(r"[^A-Za-z0-9]", "-", path.replace("\\", "/").rstrip("/") or "/")


# -- where the sessions are -----------------------------------------------------------------------


def copilot_home() -> Path:
    """``$COPILOT_HOME`` when set (as Copilot CLI reads it), else ``~/.copilot``."""
    home = os.environ.get("COPILOT_HOME", "").strip()
    return Path(os.path.expanduser(home)) if home else Path.home() / ".copilot"


def default_roots() -> list[Path]:
    """Copilot CLI's session folder, ``$COPILOT_HOME/session-state``."""
    return [copilot_home() / "session-state"]


def default_root() -> Path:
    """The first of :func:`default_roots`."""
    return default_roots()[0]


def claims(path: Path) -> bool:
    """``<id>/events.jsonl`` in a folder named by a session id, or a flat ``<uuid>.jsonl`` in a
    ``session-state`` folder (by the names alone, nothing opened)."""
    path = Path(path)
    if path.name == EVENTS:
        return bool(_UUID.match(path.parent.name)) or path.parent.parent.name == "session-state"
    return (
        path.name.endswith(suffix)
        and bool(_UUID.match(path.name[: -len(suffix)]))
        and (path.parent.name == "session-state")
    )


def _head(path: Path) -> bytes:
    try:
        with open_regular(path) as fh:
            return fh.read(_HEAD_BYTES)
    except OSError:
        return b""


def _start_data(head: bytes) -> dict[str, Any]:
    """The ``data`` of the first ``session.start`` or ``session.resume`` among the first lines."""
    for raw in head.split(b"\n")[:16]:
        if b"session.start" not in raw and b"session.resume" not in raw:
            continue
        obj, _ = decode_line(raw)
        data = obj.get("data") if obj else None
        if isinstance(data, dict):
            return data
    return {}


def _cwd_in(head: bytes) -> str:
    context = _start_data(head).get("context")
    cwd = context.get("cwd") if isinstance(context, dict) else None
    return cwd if isinstance(cwd, str) and cwd.strip() else ""


_YAML_CWD = re.compile(r"^cwd:\s*(.+?)\s*$", re.M)


def _workspace_cwd(path: Path) -> str:
    """``cwd:`` of the ``workspace.yaml`` beside an ``events.jsonl`` ('' when there is none)."""
    if path.name != EVENTS:
        return ""
    try:
        with open_regular(path.with_name("workspace.yaml")) as fh:
            text = fh.read(_HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return ""
    m = _YAML_CWD.search(text)
    return m.group(1).strip("'\"") if m else ""


def session_of(path: Path) -> str:
    """The session id: the folder of an ``events.jsonl``, the name of a flat log."""
    path = Path(path)
    return path.parent.name if path.name == EVENTS else path.name.removesuffix(suffix)


def describe(path: Path, head: bytes | None = None) -> TranscriptFile:
    """A session log: its session id and, as its folder, ``encode_path`` of its working directory
    (module docstring, "Project")."""
    path = path if isinstance(path, Path) else Path(path)
    head = _head(path) if head is None else head
    session = _start_data(head).get("sessionId")
    if not isinstance(session, str) or not session.strip():
        session = session_of(path)
    cwd = _cwd_in(head) or _workspace_cwd(path)
    project = _encode_path(cwd) if cwd else UNKNOWN_PROJECT
    return TranscriptFile(path, project, session, "main", None, name)


def _logs(root: Path, skipped: list[Skipped] | None) -> list[Path]:
    found: list[Path] = []
    for entry in scan_folder(root, skipped, follow=True):  # the root may be a link; no session folder
        if entry.is_file:
            found.append(entry.path)  # the older flat <id>.jsonl
        elif entry.is_dir:
            events = [
                e.path
                for e in scan_folder(entry.path, skipped, folders=False)
                if e.is_file and e.name == EVENTS
            ]
            found.extend(events)
    return found


def discover(root: Path, skipped: list[Skipped] | None = None) -> list[TranscriptFile]:
    """Every session log under ``root`` (``<id>/events.jsonl`` and flat ``<id>.jsonl``); never raises
    (folders that cannot be listed and logs that are not regular files are named in ``skipped``)."""
    root = Path(root)
    if not is_dir(root):
        return []
    return sorted((describe(p) for p in _logs(root, skipped)), key=lambda tf: (tf.project, str(tf.path)))


def session_files(root: Path, project: str, session: str) -> list[Path]:
    """The log of ``session`` under ``root`` (the folder's ``events.jsonl``, else the flat file)."""
    folder = Path(root) / session
    for candidate in (folder / EVENTS, Path(root) / f"{session}{suffix}"):
        if (candidate.parent != folder or own_dir(folder)) and regular_problem(candidate) is None:
            return [candidate]
    return []


def with_session(path: Path) -> list[Path]:
    """A log is its session's one file (a sub-agent's events are inside it)."""
    return [Path(path)]


def kind_of(path: Path) -> FileKind:
    """Every log is a main session: a sub-agent's events are inside it (``agentId``)."""
    return "main"


def project_of(path: Path) -> str:
    return describe(Path(path)).project


def is_main_file(root: Path, path: Path) -> bool:
    return claims(Path(path))


def cwd_of(path: Path) -> str:
    """The working directory ``session.start`` names (else ``workspace.yaml``'s)."""
    path = Path(path)
    return _cwd_in(_head(path)) or _workspace_cwd(path)


def is_auto_dream(path: Path) -> bool:
    """Copilot CLI has no background consolidation writing into Claude Code's memory."""
    return False


def records(path: Path, member: str = "") -> Iterator[SourceRecord]:
    """Each complete line that decodes to an object (``locator`` and ``key`` its line number)."""
    with open_transcript(Path(path)) as fh:
        for line_no, _offset, raw in LineScanner(fh):
            obj, _error = decode_line(raw)
            if obj is not None:
                yield SourceRecord(line_no, str(line_no), raw, obj)


# -- whose words ----------------------------------------------------------------------------------

_NOTIFICATION_STARTS = ("<system_notification", "<system-notification", "<system_reminder")
_TOOL_TYPES = ("tool.", "hook.", "permission.", "external_tool.")
_META_TEXT = {
    "system.message": ("content", "system"),
    "session.info": ("message", "notification"),
    "session.warning": ("message", "notification"),
    "session.error": ("message", "notification"),
    "session.task_complete": ("summary", "summary"),
    "session.compaction_complete": ("summary", "compact_summary"),
    "abort": ("reason", "notification"),
}
"""Events whose one string field is Copilot's own text: the field and the piece's kind."""


def _data(obj: Any) -> dict[str, Any]:
    data = obj.get("data") if isinstance(obj, dict) else None
    return data if isinstance(data, dict) else {}


def is_subagent(obj: dict[str, Any]) -> bool:
    """An event of a sub-agent's (``agentId`` on the event, or ``parentToolCallId`` in its data)."""
    return bool(obj.get("agentId")) or bool(_data(obj).get("parentToolCallId"))


def _typed_by_person(obj: dict[str, Any]) -> bool:
    """A ``user.message`` of the main conversation that no skill or notification sent."""
    source = _data(obj).get("source")
    return not is_subagent(obj) and source in (None, "", "user")


def _person_or_meta(obj: dict[str, Any], text: str) -> tuple[Provenance, str]:
    if not _typed_by_person(obj):
        return META, "parent" if is_subagent(obj) else "synthetic"
    head = text.lstrip()
    if not head:
        return META, "context"
    if head.startswith(_NOTIFICATION_STARTS):
        return META, "notification"
    return PERSON, person_kind(head)


_COMMAND = re.compile(r"/[A-Za-z][\w:-]*(\s|$)")


def person_kind(text: str) -> str:
    """``command`` for a slash command the person typed (``/init``: Copilot sends its own prompt for it,
    in ``transformedContent``), else ``prompt``."""
    return "command" if _COMMAND.match(text.lstrip()) else "prompt"


def _tool_strings(value: Any, path: JsonPath, out: list[tuple[str, JsonPath]], depth: int = 0) -> None:
    """Every string inside a tool's arguments or result, with its path."""
    if depth > 12:
        return
    if isinstance(value, str):
        if value:
            out.append((value, path))
    elif isinstance(value, dict):
        for key, item in value.items():
            _tool_strings(item, (*path, str(key)), out, depth + 1)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _tool_strings(item, (*path, i), out, depth + 1)


def pieces(obj: Any) -> list[Piece]:
    """The text pieces of one event, in order, each with its provenance (module docstring)."""
    if not isinstance(obj, dict):
        return []
    etype = obj.get("type")
    data = _data(obj)
    out: list[Piece] = []
    if etype == "user.message":
        content = data.get("content")
        if isinstance(content, str):
            role, kind = _person_or_meta(obj, content)
            out.append(Piece(role, content.strip() if role == PERSON else content, kind, ("data", "content")))
        injected = data.get("transformedContent")
        if isinstance(injected, str) and injected:
            out.append(Piece(META, injected, "context", ("data", "transformedContent")))
    elif etype == "assistant.message":
        reasoning = data.get("reasoningText")
        if isinstance(reasoning, str) and reasoning:
            out.append(Piece(ASSISTANT, reasoning, "thinking", ("data", "reasoningText")))
        content = data.get("content")
        if isinstance(content, str) and content:
            out.append(Piece(ASSISTANT, content, "text", ("data", "content")))
    elif etype == "assistant.reasoning":
        content = data.get("content")
        if isinstance(content, str) and content:
            out.append(Piece(ASSISTANT, content, "thinking", ("data", "content")))
    elif isinstance(etype, str) and etype.startswith(_TOOL_TYPES):
        found: list[tuple[str, JsonPath]] = []
        _tool_strings(data, ("data",), found)
        kind = "tool_result" if etype.endswith("complete") or etype.startswith("hook.") else "tool_input"
        out.extend(Piece(TOOL, text, kind, path) for text, path in found if path[-1] not in _IDS)
    elif etype in _META_TEXT:
        field, kind = _META_TEXT[etype]
        value = data.get(field)
        if isinstance(value, str) and value:
            out.append(Piece(META, value, kind, ("data", field)))
    return out


_IDS = frozenset(
    {
        "toolCallId",
        "hookInvocationId",
        "hookType",
        "toolName",
        "sessionId",
        "interactionId",
        "turnId",
        "requestId",
    }
)
"""Identifier fields of a tool or hook event: not text worth a piece."""


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
    """Whose words the string ``value`` at ``path`` of the event ``obj`` is: the person's only as a
    main ``user.message``'s ``content``; the assistant's as an ``assistant.message``'s ``content`` or
    ``reasoningText``; anything inside a tool's or a hook's event, or a tool request's arguments,
    ``tool``; everything else ``meta``."""
    path = tuple(path)
    if not isinstance(obj, dict) or len(path) < 2 or path[0] != "data":
        return META
    etype = obj.get("type")
    if isinstance(etype, str) and etype.startswith(_TOOL_TYPES):
        return TOOL
    if etype == "user.message":
        if path == ("data", "content") and isinstance(_get(obj, path), str):
            return _person_or_meta(obj, value)[0]
        return TOOL if path[1] == "attachments" else META
    if etype == "assistant.message":
        if path in (("data", "content"), ("data", "reasoningText")):
            return ASSISTANT
        return TOOL if path[1] == "toolRequests" else META
    if etype == "assistant.reasoning" and path == ("data", "content"):
        return ASSISTANT
    return META


def is_copy(obj: dict[str, Any]) -> bool:
    """A hook's event: its input repeats the person's prompt or a tool's result."""
    etype = obj.get("type")
    return isinstance(etype, str) and etype.startswith("hook.")


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def ref(obj: dict[str, Any]) -> RecordRef:
    """An event's ``id``, ``timestamp``, the working directory a ``session.start`` or
    ``session.resume`` names, and whether a sub-agent wrote it."""
    cwd = None
    if obj.get("type") in ("session.start", "session.resume"):
        context = _data(obj).get("context")
        cwd = _str_or_none(context.get("cwd")) if isinstance(context, dict) else None
    return RecordRef(_str_or_none(obj.get("id")), _str_or_none(obj.get("timestamp")), cwd, is_subagent(obj))


# -- tool calls and the raw view ------------------------------------------------------------------

EDIT_TOOLS = frozenset({"edit", "create", "write", "str_replace_editor", "apply_patch", "write_file"})
"""Copilot's tools that write a file (``path`` in their arguments)."""
SHELL_TOOLS = frozenset({"bash", "powershell", "shell"})
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update) File: (.+)$", re.M)


def _arguments(request: dict[str, Any]) -> dict[str, Any]:
    args = request.get("arguments")
    if isinstance(args, str):  # some versions write the arguments as a JSON string
        try:
            args = orjson.loads(args)
        except orjson.JSONDecodeError:
            return {}
    return args if isinstance(args, dict) else {}


def tool_calls(obj: dict[str, Any]) -> list[ToolCall]:
    """The ``toolRequests`` of an ``assistant.message``, with the file an edit wrote (``path``) and
    the command a shell ran (``command``)."""
    if obj.get("type") != "assistant.message":
        return []
    requests = _data(obj).get("toolRequests")
    out: list[ToolCall] = []
    for request in requests if isinstance(requests, list) else []:
        if not isinstance(request, dict):
            continue
        tool = str(request.get("name") or "?")
        args = _arguments(request)
        wrote = command = None
        if tool in EDIT_TOOLS:
            target = args.get("path") or args.get("file_path") or args.get("filePath")
            if not isinstance(target, str) and isinstance(args.get("input"), str):
                m = _PATCH_FILE.search(args["input"])
                target = m.group(1).strip() if m else None
            wrote = target if isinstance(target, str) else None
        elif tool in SHELL_TOOLS and isinstance(args.get("command"), str):
            command = args["command"]
        out.append(ToolCall(tool, wrote, command))
    return out


def render(line: int, obj: dict[str, Any]) -> RawRecord:
    """An event as the evidence window shows it: its type, time and pieces (a tool request: its name
    and arguments); tools, hooks and session bookkeeping fold to one line."""
    etype = str(obj.get("type") or "?")
    texts = [(str(p.role), p.text) for p in pieces(obj) if not (p.role == TOOL and len(p.text) < 2)]
    if etype == "assistant.message":
        requests = _data(obj).get("toolRequests")
        for request in requests if isinstance(requests, list) else []:
            if isinstance(request, dict):
                shown = orjson.dumps(_arguments(request)).decode("utf-8", "replace")
                texts.append(("call", f"{request.get('name') or '?'} {shown}"))
    conversation = etype in ("user.message", "assistant.message", "assistant.reasoning")
    bookkeeping = not conversation and not etype.startswith("tool.")
    return RawRecord(
        line,
        etype,
        str(obj.get("timestamp") or ""),
        texts,
        kind=etype[:40],
        bookkeeping=bookkeeping,
        folds=bookkeeping or etype.startswith("hook."),
    )


# -- the digest ----------------------------------------------------------------------------------

_TYPE_AT_START = b'{"type":"'
_READ_TYPES = frozenset({b"user.message", b"assistant.message", b"session.start", b"session.resume"})
"""The events the digest decodes (Copilot writes ``type`` first): the rest hold no kept words."""


def keep(buf: bytes, start: int, end: int) -> bool:
    """False only for an event whose type (its first bytes) never holds kept words: a tool's or a
    hook's event, a turn marker, the system prompt; any other shape is decoded to be safe."""
    if not buf.startswith(_TYPE_AT_START, start, end):
        return True
    p = start + len(_TYPE_AT_START)
    close = buf.find(b'"', p, min(end, p + 64))
    return close < 0 or buf[p:close] in _READ_TYPES


class _Context(msgspec.Struct, gc=False):
    cwd: str | None = None


class _Data(msgspec.Struct, gc=False):
    content: str | None = None
    source: str | None = None
    parentToolCallId: str | None = None  # noqa: N815 (the event's own field name)
    messageId: str | None = None  # noqa: N815
    context: _Context | None = None


class _Event(msgspec.Struct, gc=False):
    type: str | None = None
    id: str | None = None
    timestamp: str | None = None
    agentId: str | None = None  # noqa: N815
    data: _Data | None = None


_decode = msgspec.json.Decoder(_Event).decode
_NOT_DECODED = (msgspec.DecodeError, RecursionError, UnicodeDecodeError)


class _Digester:
    """The turns of a session log: the person's typed messages and the model's replies (a
    sub-agent's as ``subagent``); reasoning, tools, hooks and metadata dropped.

    :meth:`lines` skips by the event's type (:func:`keep`) and decodes only the fields read (msgspec,
    :class:`_Event`); a line msgspec refuses takes :meth:`exact` (``orjson``, :func:`pieces`)."""

    def __init__(
        self, file: str, kind: FileKind, state: DigestState, stats: DigestStats, interrupts: bool, cheap: bool
    ) -> None:
        self.file, self.kind, self.state, self.stats, self.cheap = file, kind, state, stats, cheap
        self.cwd = ""

    def lines(
        self, numbers: Sequence[int], raws: Sequence[bytes], out: list[Turn], ascii: bool = False
    ) -> None:
        for line_no, raw in zip(numbers, raws, strict=True):
            if self.cheap and not keep(raw, 0, len(raw)):
                continue
            try:
                ev = _decode(raw)
            except _NOT_DECODED:
                self.exact(raw, line_no, out)
                continue
            etype, data = ev.type, ev.data
            if data is None:
                continue
            if etype == "user.message" or etype == "assistant.message":
                if not ascii and not raw.isascii():
                    try:
                        raw.decode("utf-8")
                    except UnicodeDecodeError:
                        self.exact(raw, line_no, out)
                        continue
                sub = bool(ev.agentId) or bool(data.parentToolCallId)
                if etype == "user.message":
                    if not sub and data.source in (None, "", "user") and data.content is not None:
                        self._person(data.content, ev.id, ev.timestamp, line_no, out)
                elif data.content:
                    self._assistant(data.content, data.messageId or ev.id, ev, sub, line_no, out)
            elif not self.cwd and data.context is not None and data.context.cwd:
                self.cwd = data.context.cwd

    def exact(self, raw: bytes, line_no: int, out: list[Turn]) -> None:
        """Decode one line in full (repaired or refused as ``decode_line`` does) and digest it."""
        obj = decode_counted(raw, self.stats)
        if obj is not None:
            self.record(obj, line_no, out)

    def record(self, obj: dict[str, Any], line_no: int, out: list[Turn]) -> None:
        """The turns of one decoded event, from :func:`pieces`; an odd event is counted, never raised."""
        try:
            where = ref(obj)
            if not self.cwd and where.cwd:
                self.cwd = where.cwd
            for piece in pieces(obj):
                if piece.role == PERSON:
                    self._person(piece.text, where.uuid, where.timestamp, line_no, out)
                elif piece.role == ASSISTANT and piece.kind == "text":
                    owner = _data(obj).get("messageId")
                    self._assistant(
                        piece.text,
                        owner if isinstance(owner, str) else where.uuid,
                        obj,
                        where.sidechain,
                        line_no,
                        out,
                    )
        except Exception:  # an odd record never stops the digest
            self.stats.skipped_lines += 1
            self.stats.malformed += 1

    def _person(self, raw_text: str, uuid: str | None, ts: str | None, line_no: int, out: list[Turn]) -> None:
        text = raw_text.strip()
        if not text or text.startswith(_NOTIFICATION_STARTS):
            return
        if ts is not None and not self.state.new_person(ts, text):
            return
        out.append(Turn("person", text, self.file, line_no, uuid, ts, person_kind(text)))
        self.stats.chars += len(text)

    def _assistant(
        self, raw_text: str, owner: str | None, ev: Any, sub: bool, line_no: int, out: list[Turn]
    ) -> None:
        text = raw_text.strip()
        if not text:
            return
        if owner and not self.state.new_block(owner, raw_text):
            return
        uuid = ev.get("id") if isinstance(ev, dict) else ev.id
        ts = ev.get("timestamp") if isinstance(ev, dict) else ev.timestamp
        kind = "subagent" if sub or self.kind == "subagent" else "text"
        out.append(Turn("assistant", text, self.file, line_no, _str_or_none(uuid), _str_or_none(ts), kind))
        self.stats.chars += len(text)


def digester(
    file: str,
    kind: FileKind,
    state: DigestState,
    stats: DigestStats,
    interrupts: bool,
    cheap: bool = True,
) -> _Digester:
    """The :class:`_Digester` of one session log's lines."""
    return _Digester(file, kind, state, stats, interrupts, cheap)
