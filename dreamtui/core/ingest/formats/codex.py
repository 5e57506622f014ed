"""Codex CLI's rollouts: the :class:`~.protocol.TranscriptFormat` of OpenAI's Codex CLI.

Codex writes one JSON-lines file per session, ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``
(``CODEX_HOME`` defaults to ``~/.codex``), appended to as the session goes. Each line is
``{"timestamp", "type", "payload"}``; the types (``docs/formats.md``):

- ``session_meta``: the session's ``id``, ``cwd``, ``cli_version``, ``git``, and sometimes the base
  ``instructions`` (metadata);
- ``turn_context``: a turn's ``cwd``, model and policies (metadata);
- ``response_item``: what the model saw and said: ``message`` (``role`` ``user`` / ``assistant`` /
  ``developer``, ``content`` parts ``input_text`` / ``output_text``), ``reasoning``, ``function_call``
  / ``function_call_output``, ``custom_tool_call`` / ``custom_tool_call_output``, ``local_shell_call``,
  ``web_search_call``;
- ``event_msg``: what the interface showed: ``user_message`` (what the person typed), ``agent_message``
  (the reply's text), ``agent_reasoning``, ``token_count``, task and turn markers;
- ``compacted``: a summary replacing earlier history (metadata).

**Whose words.** The person's words are the user messages they typed: a ``user`` ``message`` item, and
its echo ``event_msg`` ``user_message``. Codex also sends its own context as user-role messages —
AGENTS.md (``# AGENTS.md instructions for …``, ``<user_instructions>``), ``<environment_context>``, a
shell command's output (``<user_shell_command>``), an aborted turn's note — each a whole message
wrapped in one tag: those are ``meta``, never the person's (:func:`is_injected`), and so is an
``event_msg`` ``user_message`` whose ``kind`` is not ``plain``. Developer and system messages, session
and turn metadata are ``meta``; the arguments and output of every tool call are ``tool``; reasoning is
the assistant's ``thinking`` (never in the digest). A tool's output that *looks* like a person's
message is still a string inside a ``function_call_output``: ``tool``.

**Duplicates.** Codex writes each typed message and each reply twice (the ``response_item`` and the
``event_msg`` echo; some rollouts have only the echo): the digest keeps one (the first of the pair),
and verification reports the second as a repeat.

**Project.** Rollouts are filed by date, not by project: :func:`describe` gives as a session's
"folder" ``encode_path`` of the working directory its ``session_meta`` names, which
``ingest.projects`` resolves to the repository's project key, shared with Claude Code's sessions of
the same repository.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from itertools import compress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import orjson

from dreamtui.core.files import Skipped, is_dir, open_regular, scan_folder
from dreamtui.core.ingest.formats.lines import decode_counted, json_lines_records
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
from dreamtui.core.ingest.tail import decode_line
from dreamtui.core.models import DigestStats, Provenance, RawRecord, Turn
from dreamtui.core.repository import encode_path

if TYPE_CHECKING:  # the digest's dedup state: digest.py imports the formats
    from dreamtui.core.ingest.digest import DigestState

name = "codex"
"""This format's name (its key in ``formats.FORMATS``, its ``[formats.codex]`` table)."""
agent = "Codex CLI"
label = "Codex"
"""The agent in a word, as the queue's and Sessions' agent column show it."""
layout: Layout = "lines"
suffix = ".jsonl"
tool_call_hint = b"call"
"""Bytes every line with a tool call holds (``function_call``, ``custom_tool_call``, ``local_shell_call``)."""

PERSON: Provenance = "person"
ASSISTANT: Provenance = "assistant"
TOOL: Provenance = "tool"
META: Provenance = "meta"

_PREFIX = "rollout-"
_HEAD_BYTES = 64 * 1024
_MAX_DEPTH = 4
"""How deep below a root rollouts are looked for (``YYYY/MM/DD/`` is three folders)."""


# -- where the transcripts are ------------------------------------------------------------------


def codex_home() -> Path:
    """``$CODEX_HOME`` when set (as Codex reads it), else ``~/.codex``."""
    home = os.environ.get("CODEX_HOME", "").strip()
    return Path(os.path.expanduser(home)) if home else Path.home() / ".codex"


def default_roots() -> list[Path]:
    """Codex's session folder, ``$CODEX_HOME/sessions``. (``archived_sessions`` holds the same files
    moved there: reading both would dream a session twice; add it in ``[formats.codex] folders`` to
    read sessions archived before dreamtui saw them.)"""
    return [codex_home() / "sessions"]


def claims(path: Path) -> bool:
    """A ``rollout-*.jsonl`` file."""
    file_name = path.name
    return file_name.startswith(_PREFIX) and file_name.endswith(suffix)


def _head(path: Path) -> bytes:
    try:
        with open_regular(path) as fh:
            return fh.read(_HEAD_BYTES)
    except OSError:
        return b""


def _meta_of(head: bytes) -> dict[str, Any]:
    """The ``session_meta`` payload among the first lines (``{}`` when there is none)."""
    for raw in head.split(b"\n", 8)[:8]:
        if b'"session_meta"' not in raw[:160]:
            continue
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        payload = obj.get("payload") if isinstance(obj, dict) else None
        if isinstance(obj, dict) and obj.get("type") == "session_meta" and isinstance(payload, dict):
            return payload
    return {}


def _cwd_in(head: bytes, meta: dict[str, Any] | None = None) -> str:
    meta = _meta_of(head) if meta is None else meta
    cwd = meta.get("cwd")
    if isinstance(cwd, str) and cwd.strip():
        return cwd
    for raw in head.split(b"\n")[:32]:  # an older rollout without it: the first turn's
        if b'"cwd"' not in raw:
            continue
        obj, _ = decode_line(raw)
        payload = obj.get("payload") if obj else None
        cwd = payload.get("cwd") if isinstance(payload, dict) else None
        if isinstance(cwd, str) and cwd.strip():
            return cwd
    return ""


_ID_TAIL = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")


def _session_from_name(path: Path) -> str:
    stem = path.name.removesuffix(suffix)
    m = _ID_TAIL.search(stem)
    return m.group(1) if m else stem.removeprefix(_PREFIX)


UNKNOWN_PROJECT = "codex-sessions"
"""The folder of a rollout that names no working directory (no repository to file it under)."""


def describe(path: Path, head: bytes | None = None) -> TranscriptFile:
    """A rollout: its session (``session_meta``'s ``id``, else the id in its name) and as its folder
    ``encode_path`` of its working directory (module docstring, "Project")."""
    path = path if isinstance(path, Path) else Path(path)
    head = _head(path) if head is None else head
    meta = _meta_of(head)
    session = meta.get("id")
    if not isinstance(session, str) or not session.strip():
        session = _session_from_name(path)
    cwd = _cwd_in(head, meta)
    return TranscriptFile(path, encode_path(cwd) if cwd else UNKNOWN_PROJECT, session, "main", None, name)


def _rollouts(folder: Path, depth: int, skipped: list[Skipped] | None, out: list[Path]) -> None:
    # the root may be a link, no date folder; a folder past the deepest level read is not named
    for entry in scan_folder(folder, skipped, follow=depth == 0, folders=depth < _MAX_DEPTH):
        if entry.is_dir and depth < _MAX_DEPTH:
            _rollouts(entry.path, depth + 1, skipped, out)
        elif entry.is_file and entry.name.startswith(_PREFIX):
            out.append(entry.path)


def discover(root: Path, skipped: list[Skipped] | None = None) -> list[TranscriptFile]:
    """Every ``rollout-*.jsonl`` under ``root`` (by date, ``YYYY/MM/DD``, or flat), oldest folder
    first; never raises (folders and files that cannot be read are named in ``skipped``)."""
    root = Path(root)
    if not is_dir(root):
        return []
    paths: list[Path] = []
    _rollouts(root, 0, skipped, paths)
    return [describe(p) for p in sorted(paths)]


def session_files(root: Path, project: str, session: str) -> list[Path]:
    """The one rollout of ``session`` under ``root``."""
    return [tf.path for tf in discover(root) if tf.session == session][:1]


def with_session(path: Path) -> list[Path]:
    """A rollout is its session's one file."""
    return [Path(path)]


def kind_of(path: Path) -> FileKind:
    """Every rollout is a main session (Codex's sub-agents write rollouts of their own)."""
    return "main"


def project_of(path: Path) -> str:
    return describe(Path(path)).project


def session_of(path: Path) -> str:
    return describe(Path(path)).session


def is_main_file(root: Path, path: Path) -> bool:
    return claims(Path(path))


def cwd_of(path: Path) -> str:
    """The working directory ``session_meta`` (or the first ``turn_context``) names."""
    return _cwd_in(_head(Path(path)))


def is_auto_dream(path: Path) -> bool:
    """Codex has no background consolidation writing into Claude Code's memory."""
    return False


records: Callable[..., Iterator[SourceRecord]] = json_lines_records
"""Each decoded line (``locator`` its line number)."""


# -- whose words ----------------------------------------------------------------------------------

_WRAPPED = re.compile(r"^\s*<([A-Za-z_][\w\- ]{0,60})>.*</\1>\s*$", re.S)
_INJECTED_STARTS = ("# AGENTS.md instructions for", "<user_instructions>", "<environment_context>")
_MESSAGE_TEXTS = ("input_text", "output_text", "text")


def is_injected(text: str) -> bool:
    """Text Codex sends as a user-role message that no person typed: AGENTS.md instructions, the
    environment context, or any message that is one ``<tag>…</tag>`` block (a shell command's output,
    an aborted turn's note, a notification)."""
    head = text.lstrip()
    return head.startswith(_INJECTED_STARTS) or bool(head.startswith("<") and _WRAPPED.match(text))


def _payload(obj: Any) -> dict[str, Any]:
    payload = obj.get("payload") if isinstance(obj, dict) else None
    return payload if isinstance(payload, dict) else {}


def _message_texts(payload: dict[str, Any]) -> list[tuple[str, JsonPath]]:
    content = payload.get("content")
    if isinstance(content, str):
        return [(content, ("payload", "content"))]
    out: list[tuple[str, JsonPath]] = []
    if isinstance(content, list):
        for i, part in enumerate(content):
            if (
                isinstance(part, dict)
                and part.get("type") in _MESSAGE_TEXTS
                and isinstance(part.get("text"), str)
            ):
                out.append((part["text"], ("payload", "content", i, "text")))
    return out


REQUEST_MARKER = "## My request for Codex:"
"""Codex's editor extensions put the files and selection the person had open before what they typed,
under ``# Context from my IDE setup:`` or ``# Files mentioned by the user:``; the person's words
follow this line."""
_IDE_STARTS = ("# Context from my IDE setup:", "# Files mentioned by the user:")


def person_text(text: str) -> str | None:
    """The person's words in a user message's text: the text stripped, or the part after
    :data:`REQUEST_MARKER` when an editor put its context first; None when the text is Codex's own
    (:func:`is_injected`) or holds no words."""
    if is_injected(text):
        return None
    head = text.lstrip()
    if head.startswith(_IDE_STARTS):
        at = text.find(REQUEST_MARKER)
        if at < 0:
            return None
        text = text[at + len(REQUEST_MARKER) :]
    cleaned = text.strip()
    return cleaned or None


def _user_role(text: str) -> tuple[Provenance, str, str]:
    said = person_text(text)
    if said is None:
        return META, "context", text
    return PERSON, "prompt", said


def pieces(obj: Any) -> list[Piece]:
    """The text pieces of one rollout line, in order, each with its provenance (module docstring)."""
    if not isinstance(obj, dict):
        return []
    rtype, payload = obj.get("type"), _payload(obj)
    ptype = payload.get("type")
    if rtype == "response_item":
        if ptype == "message":
            role = payload.get("role")
            out: list[Piece] = []
            for text, path in _message_texts(payload):
                if role == "user":
                    prov, kind, said = _user_role(text)
                    out.append(Piece(prov, said, kind, path))
                elif role == "assistant":
                    out.append(Piece(ASSISTANT, text, "text", path))
                else:
                    out.append(Piece(META, text, "system", path))
            return out
        if ptype == "reasoning":
            return [Piece(ASSISTANT, t, "thinking", p) for t, p in _reasoning_texts(payload)]
        return [Piece(TOOL, t, "tool_result", p) for t, p in _tool_texts(payload)]
    if rtype == "event_msg":
        message = payload.get("message")
        if ptype == "user_message" and isinstance(message, str):
            given = payload.get("kind")
            if given not in (None, "plain"):
                return [Piece(META, message, "context", ("payload", "message"))]
            prov, pkind, said = _user_role(message)
            return [Piece(prov, said, pkind, ("payload", "message"))]
        if ptype == "agent_message" and isinstance(message, str):
            return [Piece(ASSISTANT, message, "text", ("payload", "message"))]
        if ptype in ("agent_reasoning", "agent_reasoning_raw_content") and isinstance(
            payload.get("text"), str
        ):
            return [Piece(ASSISTANT, payload["text"], "thinking", ("payload", "text"))]
        return []
    if rtype == "compacted" and isinstance(payload.get("message"), str):
        return [Piece(META, payload["message"], "compact_summary", ("payload", "message"))]
    if rtype == "session_meta" and isinstance(payload.get("instructions"), str):
        return [Piece(META, payload["instructions"], "meta", ("payload", "instructions"))]
    return []


def _reasoning_texts(payload: dict[str, Any]) -> list[tuple[str, JsonPath]]:
    out: list[tuple[str, JsonPath]] = []
    for holder in ("summary", "content"):
        items = payload.get(holder)
        if isinstance(items, list):
            for i, item in enumerate(items):
                if isinstance(item, dict) and isinstance(item.get("text"), str):
                    out.append((item["text"], ("payload", holder, i, "text")))
    return out


def _tool_texts(payload: dict[str, Any]) -> list[tuple[str, JsonPath]]:
    """A tool call's input and output strings (``arguments``, ``input``, ``output``)."""
    out: list[tuple[str, JsonPath]] = []
    for key in ("arguments", "input", "output"):
        value = payload.get(key)
        if isinstance(value, str):
            out.append((value, ("payload", key)))
        elif isinstance(value, dict) and isinstance(value.get("content"), str):  # older outputs
            out.append((value["content"], ("payload", key, "content")))
    return out


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
    """Whose words the string at ``path`` is: the role of the piece found there; any other string of
    a tool call's item is ``tool``, any other string anywhere ``meta``."""
    path = tuple(path)
    for piece in pieces(obj):
        if piece.path == path:
            if piece.role == PERSON and piece.text != value.strip():  # an editor's context came first
                at = value.find(REQUEST_MARKER)
                return PERSON if at >= 0 and holds(value[at + len(REQUEST_MARKER) :]) else META
            return piece.role
    payload = _payload(obj)
    if (
        obj.get("type") == "response_item"
        and path[:1] == ("payload",)
        and payload.get("type")
        not in (
            "message",
            "reasoning",
        )
    ):
        return TOOL
    return META


def is_copy(obj: dict[str, Any]) -> bool:
    """No rollout line copies another file's words (an ``event_msg`` echo repeats its pair's string,
    which verification already reports as a repeat of the first)."""
    return False


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def ref(obj: dict[str, Any]) -> RecordRef:
    """A line's ``timestamp``, the ``cwd`` of a ``session_meta`` or ``turn_context``, an item's ``id``."""
    payload = _payload(obj)
    cwd = payload.get("cwd") if obj.get("type") in ("session_meta", "turn_context") else None
    uid = payload.get("id") if obj.get("type") == "response_item" else None
    return RecordRef(_str_or_none(uid), _str_or_none(obj.get("timestamp")), _str_or_none(cwd), False)


_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update) File: (.+)$", re.M)
_SHELL_TOOLS = frozenset({"shell", "exec_command", "container.exec", "local_shell", "shell_command"})


def _arguments(payload: dict[str, Any]) -> dict[str, Any]:
    args = payload.get("arguments")
    if isinstance(args, str):
        try:
            args = orjson.loads(args)
        except orjson.JSONDecodeError:
            return {}
    return args if isinstance(args, dict) else {}


def _command(value: Any) -> str | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return " ".join(value)
    return value if isinstance(value, str) else None


def tool_calls(obj: dict[str, Any]) -> list[ToolCall]:
    """A ``function_call`` (a shell's command), a ``custom_tool_call`` (``apply_patch``: the first file
    it adds or updates) or a ``local_shell_call``."""
    if obj.get("type") != "response_item":
        return []
    payload = _payload(obj)
    ptype, tool = payload.get("type"), str(payload.get("name") or "?")
    if ptype == "function_call":
        args = _arguments(payload)
        command = _command(args.get("command") or args.get("cmd")) if tool in _SHELL_TOOLS else None
        wrote = None
        if tool == "apply_patch" and isinstance(args.get("input"), str):
            m = _PATCH_FILE.search(args["input"])
            wrote = m.group(1).strip() if m else None
        return [ToolCall(tool, wrote, command)]
    if ptype == "custom_tool_call":
        patch = payload.get("input")
        m = _PATCH_FILE.search(patch) if isinstance(patch, str) and tool == "apply_patch" else None
        return [ToolCall(tool, m.group(1).strip() if m else None, None)]
    if ptype == "local_shell_call":
        action = payload.get("action")
        command = _command(action.get("command")) if isinstance(action, dict) else None
        return [ToolCall("local_shell", None, command)]
    return []


_BOOKKEEPING = frozenset({"session_meta", "turn_context", "compacted"})


def render(line: int, obj: dict[str, Any]) -> RawRecord:
    """A line as the evidence window shows it: ``type/payload type``, its time and pieces (a tool call
    without text: its name and arguments); metadata, token counts and markers fold to one line."""
    payload = _payload(obj)
    rtype = str(obj.get("type") or "?")
    ptype = str(payload.get("type") or "")
    texts = [(str(p.role), p.text) for p in pieces(obj)]
    if not texts and ptype.endswith("call"):
        args = payload.get("arguments") if "arguments" in payload else payload.get("input")
        shown = args if isinstance(args, str) else orjson.dumps(args or {}).decode("utf-8", "replace")
        texts = [("call", f"{payload.get('name') or ptype} {shown}")]
    bookkeeping = rtype in _BOOKKEEPING or (rtype == "event_msg" and not texts)
    return RawRecord(
        line,
        rtype,
        str(obj.get("timestamp") or ""),
        texts,
        kind=ptype[:40],
        bookkeeping=bookkeeping,
        folds=bookkeeping,
    )


# -- the digest: a byte test and a decoder of only the fields it reads ------------------------------

_PAYLOAD_TYPE = b'"payload":{"type":"'
_SKIPPED = frozenset(
    {
        b"function_call",
        b"function_call_output",
        b"custom_tool_call",
        b"custom_tool_call_output",
        b"local_shell_call",
        b"web_search_call",
        b"reasoning",
        b"token_count",
        b"agent_reasoning",
        b"agent_reasoning_raw_content",
        b"tool_search_call",
        b"tool_search_output",
        b"exec_command_end",
        b"patch_apply_end",
        b"mcp_tool_call_end",
    }
)
"""Payload types that never hold kept words (Codex writes ``payload`` with its ``type`` first)."""
_CHECKED_LINE = 1024
"""Longer lines take the byte test (:func:`keep`) before being decoded (a tool's output, often a few
KB, is then never scanned by the decoder)."""


def keep(buf: bytes, start: int, end: int) -> bool:
    """False only for a line whose payload type (read in its first bytes) never holds kept words
    (a tool's output, reasoning, token counts); any other shape is decoded to be safe."""
    at = buf.find(_PAYLOAD_TYPE, start, min(end, start + 256))
    if at < 0:
        return True
    p = at + len(_PAYLOAD_TYPE)
    close = buf.find(b'"', p, min(end, p + 48))
    return close < 0 or buf[p:close] not in _SKIPPED


class _Part(msgspec.Struct, gc=False):
    type: str | None = None
    text: str | None = None


class _Payload(msgspec.Struct, gc=False):
    type: str | None = None
    role: str | None = None
    content: list[_Part] | None = None
    message: str | None = None
    kind: str | None = None
    cwd: str | None = None
    id: str | None = None


class _Line(msgspec.Struct, gc=False):
    timestamp: str | None = None
    type: str | None = None
    payload: _Payload | None = None


_decode = msgspec.json.Decoder(_Line).decode
_NOT_DECODED = (msgspec.DecodeError, RecursionError)


class _Digester:
    """The turns of a rollout's lines: the person's typed messages and the model's replies, each pair
    of item and echo kept once; reasoning, tools and metadata dropped.

    :meth:`lines` decodes only the fields read (msgspec, :class:`_Line`), long lines only when
    :func:`keep` says they may hold words; a line msgspec refuses (another shape, bad bytes) takes
    :meth:`exact` (``orjson`` into a dict, :func:`pieces`)."""

    def __init__(
        self, file: str, kind: FileKind, state: DigestState, stats: DigestStats, interrupts: bool, cheap: bool
    ) -> None:
        self.file, self.kind, self.state, self.stats = file, kind, state, stats
        self.cheap = cheap
        self.cwd = ""
        self._last: dict[str, str] = {}
        """The text of the last person's and assistant's turn kept: its echo is not kept again."""

    def lines(
        self, numbers: Sequence[int], raws: Sequence[bytes], out: list[Turn], ascii: bool = False
    ) -> None:
        if self.cheap and raws and max(map(len, raws)) > _CHECKED_LINE:
            kept = [len(raw) <= _CHECKED_LINE or keep(raw, 0, len(raw)) for raw in raws]
            numbers, raws = list(compress(numbers, kept)), list(compress(raws, kept))
        recs: list[_Line | None] = []
        decoding = map(_decode, raws)
        while True:
            try:
                recs.extend(decoding)
                break
            except _NOT_DECODED:
                recs.append(None)
        for line_no, raw, rec in zip(numbers, raws, recs, strict=True):
            if rec is None:
                self.exact(raw, line_no, out)
                continue
            payload = rec.payload
            if payload is None:
                continue
            rtype, ptype = rec.type, payload.type
            if (ptype == "message" or payload.message is not None) and (
                not ascii and not raw.isascii() and not _valid_utf8(raw)
            ):
                self.exact(raw, line_no, out)  # bad bytes: repaired and counted there
                continue
            if rtype == "response_item" and ptype == "message":
                texts = [
                    p.text for p in payload.content or () if p.text is not None and p.type in _MESSAGE_TEXTS
                ]
                self._message(payload.role, texts, rec.timestamp, payload.id, line_no, out)
            elif rtype == "event_msg" and payload.message is not None:
                if ptype == "user_message" and payload.kind in (None, "plain"):
                    self._message("user", [payload.message], rec.timestamp, None, line_no, out)
                elif ptype == "agent_message":
                    self._message("assistant", [payload.message], rec.timestamp, None, line_no, out)
            elif rtype in ("session_meta", "turn_context") and not self.cwd and payload.cwd:
                self.cwd = payload.cwd

    def exact(self, raw: bytes, line_no: int, out: list[Turn]) -> None:
        """Decode one line in full (repaired or refused as ``decode_line`` does) and digest it."""
        obj = decode_counted(raw, self.stats)
        if obj is not None:
            self.record(obj, line_no, out)

    def record(self, obj: dict[str, Any], line_no: int, out: list[Turn]) -> None:
        """The turns of one decoded line, from :func:`pieces`."""
        try:
            where = ref(obj)
            if not self.cwd and where.cwd:
                self.cwd = where.cwd
            person = [p.text for p in pieces(obj) if p.role == PERSON]
            said = [p.text for p in pieces(obj) if p.role == ASSISTANT and p.kind == "text"]
            if person:
                self._message("user", person, where.timestamp, where.uuid, line_no, out, cleaned=True)
            if said:
                self._message("assistant", said, where.timestamp, where.uuid, line_no, out)
        except Exception:  # an odd record never stops the digest
            self.stats.skipped_lines += 1
            self.stats.malformed += 1

    def _message(
        self,
        role: str | None,
        texts: list[str],
        ts: str | None,
        uid: str | None,
        line_no: int,
        out: list[Turn],
        cleaned: bool = False,
    ) -> None:
        if role == "user":
            if self.kind != "main":
                return
            kept = texts if cleaned else [person_text(t) or "" for t in texts]
            text = "\n\n".join(t.strip() for t in kept if t.strip())
            if not text:
                return
            if self._last.get("user") == text:
                self._last.pop("user")  # the echo of what was just kept
                return
            if ts and not self.state.new_person(ts, text):
                return
            self._last["user"] = text
            self._last.pop("assistant", None)
            out.append(Turn("person", text, self.file, line_no, uid, ts, "prompt"))
            self.stats.chars += len(text)
        elif role == "assistant":
            for raw_text in texts:
                text = raw_text.strip()
                if not text:
                    continue
                if self._last.get("assistant") == text:
                    self._last.pop("assistant")
                    continue
                if uid and not self.state.new_block(uid, raw_text):
                    continue
                self._last["assistant"] = text
                self._last.pop("user", None)
                kind = "subagent" if self.kind == "subagent" else "text"
                out.append(Turn("assistant", text, self.file, line_no, uid, ts, kind))
                self.stats.chars += len(text)


def _valid_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def digester(
    file: str,
    kind: FileKind,
    state: DigestState,
    stats: DigestStats,
    interrupts: bool,
    cheap: bool = True,
) -> _Digester:
    """The :class:`_Digester` of one rollout's lines (see :meth:`~.protocol.TranscriptFormat.digester`)."""
    return _Digester(file, kind, state, stats, interrupts, cheap)
