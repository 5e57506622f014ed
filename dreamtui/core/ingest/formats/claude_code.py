"""Claude Code's transcripts: the one :class:`~.protocol.TranscriptFormat` there is.

Every field name of Claude Code's records, and every shape of their files and folders, is known here
and nowhere else (``../shared/docs/transcript-format.md`` describes them). Claude Code writes one
JSON object per line and has no published schema, so everything here treats every field as optional
and never raises on an odd record. The sections, in the protocol's order:

- **where**: the folders and files (``~/.claude/projects/<project>/<session>.jsonl`` and the
  sub-agents beside it, below);
- **whose words**: :func:`pieces` lists the text pieces of a record with their provenance
  (``person``, ``assistant``, ``tool``, ``meta``), a ``kind`` and the JSON path of the string they
  came from; a person's text is cleaned: system reminders and IDE spans stripped, slash commands
  turned into ``/x args``, a rejected tool call reduced to the person's reason.
  :func:`provenance_of` answers the same question for *any* string value inside a record, by path
  (quote verification asks it through :func:`provenance`); :func:`is_synthetic` and
  :func:`block_key` support deduplication of assistant replies;
- **where a record is, tool calls, the raw view** (:func:`ref`, :func:`tool_calls`, :func:`render`);
- **the digest**: the byte test :func:`needed` and the fast path (:class:`_Digester`, made by
  :func:`digester`), which decodes only the fields it reads (``docs/digest.md``).

Layouts under the transcripts root (``~/.claude/projects``)::

    <project>/<session>.jsonl                          main session (1.0.x sidechains inside it)
    <project>/agent-<8 hex>.jsonl                      2.0.x sub-agent (session read from its lines)
    <project>/<session>/subagents/agent-<id>.jsonl     2.1.x sub-agent (+ optional .meta.json)
    <project>/<session>/subagents/workflows/<id>/agent-<x>.jsonl   a workflow's sub-agent (+ .meta.json)
    .../agent-acompact-*.jsonl                         the compaction helper: no human words
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterator, Sequence
from itertools import compress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import orjson

from dreamtui.core.files import Skipped, is_dir, open_regular, own_dir, regular_problem, scan_folder
from dreamtui.core.ingest.formats.lines import json_lines_records
from dreamtui.core.ingest.formats.protocol import (
    EXTRACTOR_WORKDIR,
    FileKind,
    JsonPath,
    Layout,
    PathKey,
    Piece,
    RecordRef,
    SourceRecord,
    ToolCall,
    TranscriptFile,
)
from dreamtui.core.ingest.tail import decode_line
from dreamtui.core.models import DigestStats, Provenance, RawRecord, Role, Turn

if TYPE_CHECKING:  # the digest's dedup state: digest.py imports the formats
    from dreamtui.core.ingest.digest import DigestState

name = "claude-code"
"""This format's name (its key in ``formats.FORMATS``)."""
agent = "Claude Code"
label = "Claude"
"""The agent in a word, as the queue's and Sessions' agent column show it."""
layout: Layout = "lines"
suffix = ".jsonl"
"""How a transcript file's name ends."""
tool_call_hint = b"tool_use"
"""Bytes every line with a tool call holds (its ``tool_use`` block)."""


def default_root() -> Path:
    """Claude Code's transcript folder, ``~/.claude/projects`` (the config's ``transcripts``)."""
    return Path.home() / ".claude" / "projects"


def default_roots() -> list[Path]:
    """:func:`default_root`."""
    return [default_root()]


def claims(path: Path) -> bool:
    """Any ``*.jsonl`` (asked last: the other formats' names are narrower)."""
    return path.name.endswith(suffix)


records: Callable[..., Iterator[SourceRecord]] = json_lines_records
"""Each decoded line (``locator`` its line number)."""


# -- where the transcripts are ------------------------------------------------------------------

_KIND_ORDER = {"main": 0, "subagent": 1, "compact": 2}
_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*"([^"\\]{1,200})"')
_HEAD_BYTES = 64 * 1024
EXTRACTOR_PROJECT_SUFFIX = "-" + re.sub(r"[^A-Za-z0-9]", "-", EXTRACTOR_WORKDIR)
"""Claude Code names a project folder after its working directory, every character but ASCII letters
and digits a dash: a transcript the extractor's own calls left (in
:data:`~.protocol.EXTRACTOR_WORKDIR`) lives in a folder ending with this, which :func:`discover`
skips."""


def is_extractor_project(name: str) -> bool:
    """Whether a project folder is the one of the claude-code extractor's own working directory."""
    return name.endswith(EXTRACTOR_PROJECT_SUFFIX)


def agent_id_of(path: Path) -> str | None:
    """``agent-<id>.jsonl`` -> ``<id>``; None for a main session file."""
    stem = (path if isinstance(path, Path) else Path(path)).name.removesuffix(".jsonl")
    return stem[len("agent-") :] if stem.startswith("agent-") else None


def kind_of(path: Path) -> FileKind:
    """``main``, ``subagent`` or ``compact`` (``agent-acompact-*``) by the file name."""
    agent = agent_id_of(path if isinstance(path, Path) else Path(path))
    if agent is None:
        return "main"
    return "compact" if agent.startswith("acompact") else "subagent"


def subagents_dir(path: Path) -> Path | None:
    """The ``<session>/subagents`` folder a sub-agent file lives in (directly, or below
    ``workflows/<id>/``), or ``None``."""
    path = Path(path)
    if path.parent.name == "subagents":
        return path.parent
    if path.parent.parent.name == "workflows" and path.parent.parent.parent.name == "subagents":
        return path.parent.parent.parent
    return None


def agent_meta(path: Path) -> dict[str, object] | None:
    """The ``agent-<id>.meta.json`` beside a sub-agent file (``agentType``, ``description``, …), or
    ``None`` when there is none or it is not a JSON object."""
    agent = agent_id_of(path)
    if agent is None:
        return None
    meta = Path(path).with_name(f"agent-{agent}.meta.json")
    try:
        with open_regular(meta) as fh:
            data = json.loads(fh.read(_HEAD_BYTES))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def parent_tool_call(path: Path, main: Path | None = None) -> tuple[int, str] | None:
    """The parent session's tool call that started a sub-agent: (line number, ``tool_use`` id) in the
    main transcript. Found by the meta file's ``toolUseId`` (or ``parentToolUseID``) when it has one,
    else by its ``description`` equal to a ``Task``/``Agent`` call's ``description``."""
    meta = agent_meta(path)
    folder = subagents_dir(path)
    if meta is None or folder is None:
        return None
    main = main or folder.parent.parent / f"{folder.parent.name}.jsonl"
    wanted_id = meta.get("toolUseId") or meta.get("parentToolUseID") or meta.get("toolUseID")
    description = meta.get("description")
    try:
        with open_regular(main) as fh:
            for number, raw in enumerate(fh, start=1):
                if b"tool_use" not in raw:
                    continue
                try:
                    obj = json.loads(raw)
                except ValueError:
                    continue
                message = obj.get("message") if isinstance(obj, dict) else None
                content = message.get("content") if isinstance(message, dict) else None
                for block in content if isinstance(content, list) else []:
                    if not isinstance(block, dict) or block.get("type") != "tool_use":
                        continue
                    given = block.get("input")
                    args: dict[str, Any] = given if isinstance(given, dict) else {}
                    if (wanted_id and block.get("id") == wanted_id) or (
                        not wanted_id
                        and description
                        and block.get("name") in ("Task", "Agent")
                        and args.get("description") == description
                    ):
                        return number, str(block.get("id"))
    except OSError:
        return None
    return None


def project_of(path: Path) -> str:
    """The project folder name a transcript belongs to (in every layout)."""
    path = Path(path)
    folder = subagents_dir(path)
    if folder is not None:
        return folder.parent.parent.name
    return path.parent.name


def session_id_in(path: Path, head: bytes | None = None) -> str | None:
    """The ``sessionId`` of the first record that has one, read from the file's first bytes
    (``head``, when the caller has already read them)."""
    if head is None:
        try:
            with open_regular(path) as fh:
                head = fh.read(_HEAD_BYTES)
        except OSError:
            return None
    m = _SESSION_ID.search(head, 0, _HEAD_BYTES)
    return m.group(1).decode("utf-8", "replace") if m else None


def session_of(path: Path) -> str:
    """The session a transcript belongs to: its file name, its folder (2.1.x sub-agents), or, for a
    2.0.x ``agent-*.jsonl`` beside the sessions, the ``sessionId`` inside it."""
    path = Path(path)
    folder = subagents_dir(path)
    if folder is not None:
        return folder.parent.name
    if agent_id_of(path) is not None:
        return session_id_in(path) or path.name.removesuffix(".jsonl")
    return path.name.removesuffix(".jsonl")


def describe(path: Path, head: bytes | None = None) -> TranscriptFile:
    """A :class:`TranscriptFile` for one path (what the ``*_of`` functions say, the path parsed once).

    ``head``: the file's first bytes, when already read (a 2.0.x sub-agent file beside the sessions
    names its session inside; without ``head`` the file is opened to read it)."""
    path = path if isinstance(path, Path) else Path(path)
    parts = path.parts
    names = parts[1:] if path.anchor else parts  # the names of the path and of its folders, outermost first

    def up(k: int) -> str:  # the name of the k-th folder above the file ("" past the top, as Path.parent)
        return names[-1 - k] if k < len(names) else ""

    stem = up(0).removesuffix(".jsonl")
    agent = stem[len("agent-") :] if stem.startswith("agent-") else None
    kind: FileKind = "main" if agent is None else "compact" if agent.startswith("acompact") else "subagent"
    if up(1) == "subagents":
        return TranscriptFile(path, up(3), up(2), kind, agent, name)
    if agent is not None and up(2) == "workflows" and up(3) == "subagents":  # subagents/workflows/<id>/
        return TranscriptFile(path, up(5), up(4), kind, agent, name)
    session = stem if agent is None else session_id_in(path, head) or stem
    return TranscriptFile(path, up(1), session, kind, agent, name)


def _sort_key(tf: TranscriptFile) -> tuple[str, str, int, str]:
    return (tf.project, tf.session, _KIND_ORDER[tf.kind], str(tf.path))


def _project_files(project_dir: Path, skipped: list[Skipped] | None = None) -> list[Path]:
    found: list[Path] = []
    for entry in scan_folder(project_dir, skipped):
        if entry.is_file:
            found.append(entry.path)
        elif entry.is_dir:
            sub = entry.path / "subagents"
            if own_dir(sub, skipped):
                found.extend(_subagent_files(sub, skipped))
    return found


def _subagent_files(sub: Path, skipped: list[Skipped] | None = None) -> list[Path]:
    """``agent-*.jsonl`` files in a ``subagents`` folder and in its ``workflows/<id>/`` folders
    (the ``.meta.json`` beside them are not transcripts)."""

    def agents(folder: Path) -> list[Path]:
        return [
            e.path
            for e in scan_folder(folder, skipped, folders=False)  # its workflows: listed by the caller
            if e.is_file and e.name.startswith("agent-") and e.name.endswith(".jsonl")
        ]

    found = agents(sub)
    workflows = sub / "workflows"
    if own_dir(workflows, skipped):
        for entry in scan_folder(workflows, skipped):
            if entry.is_dir:
                found.extend(agents(entry.path))
    return found


def discover(root: Path, skipped: list[Skipped] | None = None) -> list[TranscriptFile]:
    """Every transcript under ``root`` (the projects folder), main files before their sub-agents.

    A missing or unreadable root gives ``[]``. ``.jsonl`` files directly inside ``root`` are taken
    as one project named after ``root``. The project folder of the claude-code extractor's own
    working directory (:func:`is_extractor_project`) is skipped. Never raises and never opens anything but regular files:
    a project folder that cannot be listed or searched, and a ``*.jsonl`` that is a FIFO, a device
    or a socket, are left out and reported in ``skipped`` (one :class:`Skipped` each), so one bad
    project never hides the others.
    """
    root = Path(root)
    if not is_dir(root):
        return []
    paths: list[Path] = []
    for entry in scan_folder(root, skipped, follow=True):  # the root may be a link; nothing below it
        if entry.is_dir and is_extractor_project(entry.name):
            continue  # the claude-code extractor's own calls, never a session to dream
        if entry.is_dir:
            paths.extend(_project_files(entry.path, skipped))
        else:
            paths.append(entry.path)
    return sorted((describe(p) for p in paths), key=_sort_key)


def session_files(root: Path, project: str, session: str) -> list[Path]:
    """The files of one session: the main file first (when it exists), then its sub-agent and
    compaction files in all layouts."""
    project_dir = Path(root) / project
    out: list[TranscriptFile] = []
    main = project_dir / f"{session}.jsonl"
    if regular_problem(main) is None:
        out.append(describe(main))
    sub = project_dir / session / "subagents"
    out.extend(describe(p) for p in _subagent_files(sub))
    for e in scan_folder(project_dir):
        if e.is_file and e.name.startswith("agent-") and session_id_in(e.path) == session:
            out.append(describe(e.path))
    return [tf.path for tf in sorted(out, key=lambda tf: (_KIND_ORDER[tf.kind], str(tf.path)))]


def with_session(path: Path) -> list[Path]:
    """The main file ``path`` and its sub-agents' files (``<project>/<session>.jsonl``'s)."""
    path = Path(path)
    found = session_files(path.parent.parent, path.parent.name, session_of(path))
    return [path, *[p for p in found if p != path]]


def is_main_file(root: Path, path: Path) -> bool:
    """A main session file where the dream cycle looks for one: ``<root>/<project>/<session>.jsonl``
    (or directly in the root); files nested deeper belong to no project the cycle knows."""
    parent = path.parent
    return kind_of(path) == "main" and (parent == root or parent.parent == root)


def cwd_of(path: Path) -> str:
    """The first ``cwd`` in the first 64 KiB of the transcript ``path`` ('' if none or unreadable)."""
    try:
        with open_regular(path) as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError:
        return ""
    for raw in head.splitlines():
        if b'"cwd"' not in raw:
            continue
        try:
            cwd = json.loads(raw).get("cwd")
        except (ValueError, AttributeError):
            continue
        if isinstance(cwd, str) and cwd.strip():
            return cwd
    return ""


def is_auto_dream(path: Path) -> bool:
    """A sub-agent under ``subagents/workflows/``, or one whose meta file's ``agentType`` or
    ``description`` says it dreams: Claude Code's background consolidation."""
    parts = Path(path).parts
    if "subagents" in parts and "workflows" in parts[parts.index("subagents") :]:
        return True
    meta = agent_meta(path) or {}
    said = " ".join(str(meta.get(k, "")) for k in ("agentType", "description")).lower()
    return "dream" in said


# -- whose words: the pieces of a record ------------------------------------------------------

PERSON: Provenance = "person"
ASSISTANT: Provenance = "assistant"
TOOL: Provenance = "tool"
META: Provenance = "meta"

REJECTION_MARKER = "The user provided the following reason for the rejection:"
REJECTION_PREFIX = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
    "edit, the new_string was NOT written to the file). " + REJECTION_MARKER
)
"""What Claude Code writes before the person's reason when they reject a tool call and say why."""
REJECTION_RESULT_PREFIX = "Error: "
"""The record's ``toolUseResult`` is this followed by the tool result's text, for a rejection."""
INTERRUPT_PREFIX = "[Request interrupted by user"
HARNESS_MARKERS = ("[Request interrupted by user]", "[Request interrupted by user for tool use]")
"""Fixed texts Claude Code itself writes into a session: never a lesson's quote, whoever it looks like."""
CAVEAT_PREFIXES = ("<local-command-caveat>", "Caveat: The messages below were generated")
META_PREFIXES = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<task-notification>",
    "<agent-notification>",
    "<user-prompt-submit-hook>",
)
TOOL_PREFIXES = ("<bash-stdout>", "<bash-stderr>")
COMPACT_PREFIX = "This session is being continued from a previous conversation"

_PREFIX_STARTS = "".join(
    sorted(
        {
            p[0]
            for p in (
                *CAVEAT_PREFIXES,
                *META_PREFIXES,
                *TOOL_PREFIXES,
                INTERRUPT_PREFIX,
                COMPACT_PREFIX,
                "<bash-input>",
            )
        }
    )
)
"""The first characters of every prefix :func:`classify_user_text` looks for."""
_STRIP_SPANS = re.compile(r"<(system-reminder|ide_opened_file|ide_selection|ide_diagnostics)>.*?</\1>", re.S)
_COMMAND_NAME = re.compile(r"<command-name>(.*?)</command-name>", re.S)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)
_BASH_INPUT = re.compile(r"<bash-input>(.*?)</bash-input>", re.S)
_META_FLAGS = ("isMeta", "isCompactSummary", "isVisibleInTranscriptOnly")


# -- person text --------------------------------------------------------------------------------


def strip_spans(text: str) -> str:
    """Remove ``<system-reminder>`` and IDE spans (``<ide_opened_file>``, ``<ide_selection>``)."""
    if "<" not in text:
        return text
    return _STRIP_SPANS.sub("", text)


def classify_user_text(text: str) -> tuple[Provenance, str, str]:
    """Classify the text of a ``user`` record (not a tool result): ``(role, kind, cleaned text)``.

    A slash command becomes ``/x args``; caveats, command output and notifications are ``meta``;
    text that is only reminders or IDE context is ``meta`` kind ``context``.
    """
    head = text.lstrip()
    if head[:1] in _PREFIX_STARTS:  # most prompts start otherwise: none of these checks can match
        if head.startswith(CAVEAT_PREFIXES):
            return META, "caveat", text
        if head.startswith(META_PREFIXES):
            kind = "stdout" if head.startswith("<local-command") else "notification"
            return META, kind, text
        if head.startswith(TOOL_PREFIXES):
            return TOOL, "bash_output", text
        if head.startswith(INTERRUPT_PREFIX):
            return PERSON, "interrupt", head.strip()
        if head.startswith(COMPACT_PREFIX):
            return META, "compact_summary", text
    if "<" not in head:  # no tag anywhere: neither a command nor a span to strip
        cleaned = text.strip()
        return (PERSON, "prompt", cleaned) if cleaned else (META, "context", text)
    if "<command-name>" in head:
        name_m = _COMMAND_NAME.search(head)
        if name_m:
            name = name_m.group(1).strip()
            if name and not name.startswith("/"):
                name = "/" + name
            args_m = _COMMAND_ARGS.search(head)
            args = args_m.group(1).strip() if args_m else ""
            return PERSON, "command", f"{name} {args}".strip()
    if head.startswith("<bash-input>"):
        m = _BASH_INPUT.search(head)
        if m:
            return PERSON, "command", "!" + m.group(1).strip()
    cleaned = strip_spans(text).strip()
    if not cleaned:
        return META, "context", text
    return PERSON, "prompt", cleaned


def rejection_reason(text: str) -> str | None:
    """The person's reason in the text of a rejected tool call's result: what follows Claude Code's
    fixed :data:`REJECTION_PREFIX`, which must start the text. None when the text is not shaped so.

    The text alone proves nothing (a command's output can say the same); :func:`rejection_of`
    checks the whole record.
    """
    if not text.startswith(REJECTION_PREFIX):
        return None
    reason = text[len(REJECTION_PREFIX) :].strip()
    return reason or None


def rejection_of(obj: Any, index: int) -> str | None:
    """The person's reason when block ``index`` of the ``user`` record ``obj`` is a rejected tool call
    exactly as Claude Code writes it, else None.

    The shape (real transcripts, ``transcript-format.md``): a ``user`` record, not a sidechain and not
    meta, whose ``message.content[index]`` is a ``tool_result`` with ``is_error: true`` and a *string*
    ``content`` that starts with :data:`REJECTION_PREFIX`, and whose ``toolUseResult`` is
    ``"Error: "`` followed by that same string. Anything else that says the sentence (a failing
    command's output, a file that was read, a web page) is tool output.
    """
    if not isinstance(obj, dict) or obj.get("type") != "user":
        return None
    if _is_meta_record(obj) or obj.get("isSidechain") is True:
        return None
    content = _content(obj)
    if not isinstance(content, list) or not 0 <= index < len(content):
        return None
    block = content[index]
    if not isinstance(block, dict) or block.get("type") != "tool_result" or block.get("is_error") is not True:
        return None
    text = block.get("content")
    if not isinstance(text, str) or obj.get("toolUseResult") != REJECTION_RESULT_PREFIX + text:
        return None
    return rejection_reason(text)


# -- helpers ------------------------------------------------------------------------------------


def _is_meta_record(obj: dict[str, Any]) -> bool:
    return any(obj.get(flag) is True for flag in _META_FLAGS)


def _content(obj: dict[str, Any]) -> Any:
    message = obj.get("message")
    if isinstance(message, dict):
        return message.get("content")
    return None


def is_synthetic(obj: Any) -> bool:
    """An assistant record the harness wrote itself (``message.model == "<synthetic>"``)."""
    if not isinstance(obj, dict):
        return False
    message = obj.get("message")
    return isinstance(message, dict) and message.get("model") == "<synthetic>"


def _short_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()


def block_key(obj: Any, index: int) -> str | None:
    """A key that is equal for the same block of the same reply, however often it is rewritten.

    ``(message.id, block)``: the block is identified by its type and its text (or tool-use id),
    not by its position, because each block of one reply is written on its own line.
    Falls back to the record ``uuid`` when there is no ``message.id``; None when neither exists.
    """
    if not isinstance(obj, dict):
        return None
    message = obj.get("message")
    if not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, str):
        block: Any = {"type": "text", "text": content}
    elif isinstance(content, list) and 0 <= index < len(content):
        block = content[index]
    else:
        return None
    owner = message.get("id") or obj.get("uuid")
    if not isinstance(owner, str) or not owner:
        return None
    if not isinstance(block, dict):
        return f"{owner}:{index}"
    btype = block.get("type")
    if btype == "tool_use" and isinstance(block.get("id"), str):
        return f"{owner}:tool_use:{block['id']}"
    for field_name in ("text", "thinking", "data"):
        value = block.get(field_name)
        if isinstance(value, str):
            return f"{owner}:{btype}:{_short_hash(value)}"
    return f"{owner}:{btype}:{index}"


def _text_of_blocks(value: Any, path: JsonPath) -> list[tuple[str, JsonPath]]:
    """The strings of a tool_result ``content`` (a string or a list of text blocks)."""
    if isinstance(value, str):
        return [(value, path)]
    out: list[tuple[str, JsonPath]] = []
    if isinstance(value, list):
        for i, block in enumerate(value):
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                out.append((block["text"], (*path, i, "text")))
    return out


# -- pieces -------------------------------------------------------------------------------------


def _user_pieces(obj: dict[str, Any], parent_wrote_it: bool) -> list[Piece]:
    content = _content(obj)
    meta_record = _is_meta_record(obj)
    compact = obj.get("isCompactSummary") is True
    tool_record = "toolUseResult" in obj
    base: JsonPath = ("message", "content")
    out: list[Piece] = []

    def add_text(text: str, path: JsonPath) -> None:
        if meta_record:
            out.append(Piece(META, text, "compact_summary" if compact else "meta", path))
        elif parent_wrote_it:
            out.append(Piece(META, text, "parent", path))
        elif tool_record:
            out.append(Piece(TOOL, text, "tool_result", path))
        else:
            role, kind, cleaned = classify_user_text(text)
            out.append(Piece(role, cleaned, kind, path))

    if isinstance(content, str):
        add_text(content, base)
        return out
    if not isinstance(content, list):
        return out
    for i, block in enumerate(content):
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and isinstance(block.get("text"), str):
            add_text(block["text"], (*base, i, "text"))
        elif btype == "tool_result":
            reason = None if parent_wrote_it else rejection_of(obj, i)
            if reason is not None:
                out.append(Piece(PERSON, reason, "rejection", (*base, i, "content")))
                continue
            for text, path in _text_of_blocks(block.get("content"), (*base, i, "content")):
                out.append(Piece(TOOL, text, "tool_result", path))
    return out


def _assistant_pieces(obj: dict[str, Any]) -> list[Piece]:
    content = _content(obj)
    synthetic = is_synthetic(obj) or obj.get("isApiErrorMessage") is True
    base: JsonPath = ("message", "content")
    if isinstance(content, str):
        if synthetic:
            return [Piece(META, content, "synthetic", base)]
        return [Piece(ASSISTANT, content, "text", base)]
    out: list[Piece] = []
    if not isinstance(content, list):
        return out
    for i, block in enumerate(content):
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and isinstance(block.get("text"), str):
            if synthetic:
                out.append(Piece(META, block["text"], "synthetic", (*base, i, "text")))
            else:
                out.append(Piece(ASSISTANT, block["text"], "text", (*base, i, "text")))
        elif btype == "thinking" and isinstance(block.get("thinking"), str):
            out.append(Piece(ASSISTANT, block["thinking"], "thinking", (*base, i, "thinking")))
    return out


def queue_texts(obj: dict[str, Any]) -> list[tuple[str, JsonPath]]:
    """The text strings of a ``queue-operation`` record's ``content`` (a string or text blocks)."""
    content = obj.get("content")
    if isinstance(content, str):
        return [(content, ("content",))]
    out: list[tuple[str, JsonPath]] = []
    if isinstance(content, list):
        for i, block in enumerate(content):
            if isinstance(block, dict) and isinstance(block.get("text"), str):
                out.append((block["text"], ("content", i, "text")))
            elif isinstance(block, str):
                out.append((block, ("content", i)))
    return out


def _queue_pieces(obj: dict[str, Any]) -> list[Piece]:
    if obj.get("operation") not in ("enqueue", "popAll"):
        return [Piece(META, t, "meta", p) for t, p in queue_texts(obj)]
    out: list[Piece] = []
    for text, path in queue_texts(obj):
        role, kind, cleaned = classify_user_text(text)
        if role == PERSON and kind == "prompt":
            kind = "queued"
        out.append(Piece(role, cleaned, kind, path))
    return out


def pieces(obj: Any, *, first_sidechain_user: bool = False) -> list[Piece]:
    """The text pieces of one decoded record, in order, each with its provenance.

    ``first_sidechain_user``: this is the first ``user`` record of a sidechain, which the parent
    agent wrote (never a person's words). Every ``user`` text in a sidechain is treated the same
    way, since only the parent agent and tools speak there. Unknown record types give ``[]``
    or ``meta`` pieces; nothing raises.
    """
    if not isinstance(obj, dict):
        return []
    rtype = obj.get("type")
    if rtype == "user":
        parent = first_sidechain_user or obj.get("isSidechain") is True
        return _user_pieces(obj, parent)
    if rtype == "assistant":
        return _assistant_pieces(obj)
    if rtype == "queue-operation":
        return _queue_pieces(obj)
    if rtype == "summary" and isinstance(obj.get("summary"), str):
        return [Piece(META, obj["summary"], "summary", ("summary",))]
    if rtype == "system" and isinstance(obj.get("content"), str):
        return [Piece(META, obj["content"], "system", ("content",))]
    return []


# -- provenance of any string -------------------------------------------------------------------


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


def _is_rejection(obj: dict[str, Any]) -> bool:
    """Some block of the record is a rejected tool call in Claude Code's exact shape."""
    content = _content(obj)
    return isinstance(content, list) and any(rejection_of(obj, i) is not None for i in range(len(content)))


def _reason_covers(text: Any, offset: int | None) -> bool:
    """In a string of a real rejection, the person's words are after the marker (any offset when None)."""
    if not isinstance(text, str):
        return False
    at = text.find(REJECTION_MARKER)
    if at < 0:
        return False
    return offset is None or offset >= at + len(REJECTION_MARKER)


def provenance_of(obj: Any, path: JsonPath | list[PathKey], offset: int | None = None) -> Provenance:
    """Whose words the string at ``path`` inside the record ``obj`` is.

    ``person``: a person typed it (prompts, slash commands, rejection reasons, queued text).
    ``assistant``: the model's prose or thinking. ``tool``: tool output and tool input
    (``tool_result`` blocks, ``toolUseResult``, ``tool_use`` input, ``progress`` copies): untrusted.
    ``meta``: everything else (``isMeta``, compaction summaries, caveats, command output, system
    records, field values such as ``cwd``). ``offset`` (optional) is where the quote starts in the
    string: a rejection's boilerplate before the person's reason is ``tool``.
    """
    path = tuple(path)
    if not isinstance(obj, dict) or not path:
        return META
    rtype = obj.get("type")
    head = path[0]
    if head == "toolUseResult":
        real = path == ("toolUseResult",) and _is_rejection(obj)
        return PERSON if real and _reason_covers(_get(obj, path), offset) else TOOL
    if rtype == "progress" and head == "data":
        return TOOL
    if rtype == "queue-operation" and head == "content":
        if obj.get("operation") not in ("enqueue", "popAll"):
            return META
        value = _get(obj, path)
        if not isinstance(value, str):
            return META
        return _person_or_meta(value)
    if head != "message" or len(path) < 2 or path[1] != "content":
        return META
    content = _content(obj)
    if rtype == "assistant":
        if is_synthetic(obj) or obj.get("isApiErrorMessage") is True:
            return META
        if isinstance(content, str):
            return ASSISTANT if len(path) == 2 else META
        block = _get(obj, path[:3]) if len(path) >= 3 else None
        if not isinstance(block, dict):
            return META
        btype = block.get("type")
        if btype in ("text", "thinking"):
            return ASSISTANT if len(path) == 4 and path[3] in ("text", "thinking") else META
        if btype in ("tool_use", "server_tool_use") and len(path) >= 4 and path[3] == "input":
            return TOOL
        if btype and "result" in str(btype):
            return TOOL
        return META
    if rtype != "user":
        return META
    value = _get(obj, path)
    if not isinstance(value, str):
        return META
    if len(path) >= 3:
        block = _get(obj, path[:3])
        if isinstance(block, dict) and block.get("type") == "tool_result":
            real = (
                path[3:] == ("content",)
                and isinstance(path[2], int)
                and rejection_of(obj, path[2]) is not None
            )
            return PERSON if real and _reason_covers(value, offset) else TOOL
        if not (isinstance(block, dict) and block.get("type") == "text" and path[3:] == ("text",)):
            return META
    elif len(path) != 2:
        return META
    if _is_meta_record(obj) or obj.get("isSidechain") is True:
        return META
    if "toolUseResult" in obj:
        return TOOL
    return _person_or_meta(value)


def _person_or_meta(text: str) -> Provenance:
    """Provenance of user-typed text; an interrupt marker is the harness's, so ``meta``."""
    role, kind, _ = classify_user_text(text)
    return META if kind == "interrupt" else role


def provenance(obj: dict[str, Any], path: JsonPath, value: str, holds: Callable[[str], bool]) -> Provenance:
    """:func:`provenance_of` for a quote found in the string ``value`` at ``path``: in a rejection's
    string the person's words start after :data:`REJECTION_MARKER`, so the quote is the person's only
    when the part after the marker ``holds`` it."""
    offset: int | None = None
    at = value.find(REJECTION_MARKER)
    if at >= 0:
        tail_start = at + len(REJECTION_MARKER)
        offset = tail_start if holds(value[tail_start:]) else 0
    return provenance_of(obj, path, offset)


# -- where a record is, its tool calls, the raw view --------------------------------------------


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def ref(obj: dict[str, Any]) -> RecordRef:
    """A record's ``uuid``, ``timestamp``, ``cwd`` and ``isSidechain`` (any true value)."""
    return RecordRef(
        _str_or_none(obj.get("uuid")),
        _str_or_none(obj.get("timestamp")),
        _str_or_none(obj.get("cwd")),
        bool(obj.get("isSidechain")),
    )


def is_copy(obj: dict[str, Any]) -> bool:
    """A ``progress`` record of ``data.type`` ``agent_progress``: a sub-agent's message copied into
    the main file."""
    data = obj.get("data")
    return obj.get("type") == "progress" and isinstance(data, dict) and data.get("type") == "agent_progress"


EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "Write", "NotebookEdit"})
"""The tools that write a file: their ``input`` names it as ``file_path`` (``notebook_path``)."""
SHELL_TOOL = "Bash"


def _tool_use_blocks(obj: dict[str, Any]) -> list[dict[str, Any]]:
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]


def tool_calls(obj: dict[str, Any]) -> list[ToolCall]:
    """The ``tool_use`` blocks of a record whose ``input`` is an object, with the file an edit tool
    wrote (``file_path`` or ``notebook_path``) and the command ``Bash`` ran."""
    out: list[ToolCall] = []
    for block in _tool_use_blocks(obj):
        args = block.get("input")
        if not isinstance(args, dict):
            continue
        tool = block.get("name")
        wrote = command = None
        if tool in EDIT_TOOLS:
            target = args.get("file_path") or args.get("notebook_path")
            wrote = target if isinstance(target, str) else None
        elif tool == SHELL_TOOL and isinstance(args.get("command"), str):
            command = args["command"]
        out.append(ToolCall(str(tool), wrote, command))
    return out


BOOKKEEPING_TYPES = frozenset(
    {"progress", "attachment", "file-history-snapshot", "permission-mode", "last-prompt", "queue-operation"}
)
"""Records that are bookkeeping, not conversation: one dim line each in the evidence window."""


def _record_kind(obj: dict[str, Any]) -> str:
    """What a bookkeeping record is about: a progress record's ``data.type``, an attachment's
    ``attachment.type``, a system record's ``subtype`` ('' otherwise)."""
    for holder in ("data", "attachment"):
        inner = obj.get(holder)
        if isinstance(inner, dict) and isinstance(inner.get("type"), str):
            return str(inner["type"])[:40]
    subtype = obj.get("subtype")
    return subtype[:40] if isinstance(subtype, str) else ""


def _call_lines(obj: dict[str, Any]) -> list[tuple[str, str]]:
    """``tool_use`` blocks as ``("call", "Name {input}")`` lines."""
    return [
        (
            "call",
            f"{block.get('name') or '?'} {orjson.dumps(block.get('input') or {}).decode('utf-8', errors='replace')}",
        )
        for block in _tool_use_blocks(obj)
    ]


def render(line: int, obj: dict[str, Any]) -> RawRecord:
    """A record's ``type``, ``timestamp`` and pieces (a record without any: its tool calls) for the
    evidence window; a progress or hook record folds to one line."""
    texts = [(str(p.role), p.text) for p in pieces(obj)] or _call_lines(obj)
    rtype = str(obj.get("type") or "?")
    kind = _record_kind(obj)
    bookkeeping = rtype in BOOKKEEPING_TYPES
    return RawRecord(
        line,
        rtype,
        str(obj.get("timestamp") or ""),
        texts,
        kind=kind,
        bookkeeping=bookkeeping,
        folds=bookkeeping or "hook" in kind,
    )


# -- the digest: the byte test ------------------------------------------------------------------
# Decode only what is read: a line over 8 KB is first ruled out or in by the byte test
# :func:`needed`; the others are decoded by msgspec into :class:`_Record`, which holds only the
# fields the digest reads (see ``docs/digest.md``).

_TYPE = b'"type":"'
_SPACED = b'"type": "'
_CONTENT = b'"content":'
_ROLE = b'"role":"'
_TEXT_BLOCK = b'"type":"text"'
_SMALL = 64 * 1024  # a line this short is cheap to search in full
_WINDOW = 512
# Top-level record types that never hold kept text. Claude Code writes ``type`` before the rest of
# these records, so the first ``"type":"`` of the line names the record.
_SKIP_TYPES = frozenset(
    {
        b"progress",
        b"file-history-snapshot",
        b"summary",
        b"system",
        b"permission-mode",
        b"last-prompt",
        b"custom-title",
        b"ai-title",
        b"tag",
        b"agent-name",
        b"pr-link",
    }
)
_DATA = b'"data":"'
_ASSISTANT_HEAD = b'message","role":"assistant","content":'
_USER_HEAD = b'user","message":{"role":"user","content":'
_ATTACHMENT = b'"attachment":{'
_ASSISTANT_HEAD_LEN = len(_ASSISTANT_HEAD)
_USER_HEAD_LEN = len(_USER_HEAD)
_ATTACHMENT_LEN = len(_ATTACHMENT)
_BIG_STRING = 4096


def _tool_result_needed(buf: bytes, start: int, stop: int) -> bool:
    """A user line whose content starts at ``start`` with a tool result: needed only for a
    rejection, a short error result whose flag or words sit near the start."""
    if buf.find(b'"tool_result"', start, stop) < 0 and buf.find(b'"tool_use_id"', start, stop) < 0:
        return True
    return (
        buf.find(b'"is_error":true', start, stop) >= 0
        or buf.find(b"The user doesn't want to", start, stop) >= 0
    )


def _user_needed(buf: bytes, at: int, end: int) -> bool:
    """A user line: skip it when its content starts with a tool result that is no rejection."""
    c = buf.find(_CONTENT, at, end)
    if c < 0:
        return True
    return _tool_result_needed(buf, c, min(c + _WINDOW, end))


def _assistant_needed(buf: bytes, at: int, end: int) -> bool:
    """An assistant line: needed when its content is a string or has a text block."""
    c = buf.find(_CONTENT, at, end)
    if c < 0:
        return True
    c += len(_CONTENT)
    if not buf.startswith(b"[", c, end):
        return True
    return buf.find(_TEXT_BLOCK, c, end) >= 0


def _slow_needed(buf: bytes, start: int, end: int) -> bool:
    """The conservative test for lines of an unexpected shape (``buf[start:end]``, not copied)."""
    find = buf.find
    if find(b'"type":"user"', start, end) >= 0 or find(b'"type":"queue-operation"', start, end) >= 0:
        return True
    if find(b'"type":"assistant"', start, end) >= 0:
        return find(_TEXT_BLOCK, start, end) >= 0 or find(b'"content":"', start, end) >= 0
    return find(_SPACED, start, end) >= 0  # not Claude Code's compact writer: decode to be safe


def needed(buf: bytes, start: int, end: int) -> bool:
    """Whether the line ``buf[start:end]`` may hold text the digest keeps: a cheap, conservative
    byte test that mostly looks at the first few hundred bytes, without copying the line.

    Claude Code writes an assistant line as ``…"message":{…"type":"message","role":"assistant",
    "content":[…`` and a user line as ``…"type":"user","message":{"role":"user","content":…``; other
    records put their own ``type`` first. Lines of any other shape take a slower, safe path.
    """
    find = buf.find
    at = find(_TYPE, start, end)
    if at < 0:
        return True  # empty, broken or spaced JSON: decode it and see
    p = at + 8
    close = find(b'"', p, p + 64 if p + 64 < end else end)
    first = buf[p:close] if close > 0 else b""
    if first == b"message":
        if buf.startswith(_ASSISTANT_HEAD, p, end):
            q = p + _ASSISTANT_HEAD_LEN
            return not buf.startswith(b"[", q, end) or find(_TEXT_BLOCK, q, end) >= 0
    elif first == b"user" and buf.startswith(_USER_HEAD, p, end):
        q = p + _USER_HEAD_LEN
        if not buf.startswith(b"[", q, end):
            return True
        w = q + _WINDOW if q + _WINDOW < end else end
        if find(b'"tool_result"', q, w) < 0 and find(b'"tool_use_id"', q, w) < 0:
            return True
        return find(b'"is_error":true', q, w) >= 0 or find(b"The user doesn't want to", q, w) >= 0
    if first in _SKIP_TYPES or (
        at - start >= _ATTACHMENT_LEN and buf.startswith(_ATTACHMENT, at - _ATTACHMENT_LEN, end)
    ):
        return False
    if first == b"queue-operation":
        # text typed while the agent was busy is the record's "content"; most queue operations
        # (dequeue, remove, a bare enqueue) have none, and hold nothing to keep (a \u escape could
        # spell the key: decode those)
        return find(b'"content"', start, end) >= 0 or find(b"\\u", start, end) >= 0
    if first == b"user":
        return _user_needed(buf, at, end)
    if first in (b"message", b"assistant"):
        r = find(_ROLE, at, at + _WINDOW if at + _WINDOW < end else end)
        if r >= 0 and buf.startswith(b"user", r + len(_ROLE), end):
            return _user_needed(buf, at, end)
        return _assistant_needed(buf, at, end)
    return _slow_needed(buf, start, end)


def needs_decode(raw: bytes) -> bool:
    """:func:`needed` for one whole line."""
    return needed(raw, 0, len(raw))


def drop_big_strings(raw: bytes) -> bytes:
    """``raw`` with long ``"data":"…"`` values (base64 images) emptied, so decoding skips them.

    Only values without a backslash are emptied: their closing quote is certainly the next ``"``.
    """
    out: list[bytes] = []
    pos = search = 0
    while True:
        k = raw.find(_DATA, search)
        if k < 0:
            break
        start = k + len(_DATA)
        end = raw.find(b'"', start)
        if end < 0:
            break
        if end - start >= _BIG_STRING and raw.find(b"\\", start, end) < 0:
            out.append(raw[pos:start])
            pos = end
        search = end + 1
    if not out:
        return raw
    out.append(raw[pos:])
    return b"".join(out)


# -- the fast path's decoded shape: only the fields the digest reads ------------------------------
# msgspec skips every other field (tool input and output, thinking, snapshots, progress data, image
# data) without building it, whatever the key order. A value of another shape than Claude Code writes
# (``message`` not an object, a block that is not one, a ``uuid`` that is not a string) fails
# validation, and the line takes the exact path, which treats it as the dict code always did.


class _Block(msgspec.Struct, gc=False):
    type: str | None = None
    text: str | None = None
    is_error: Any = None
    content: msgspec.Raw = msgspec.Raw()  # a tool result's output: decoded only for an error result


class _Message(msgspec.Struct, gc=False):
    id: str | None = None
    model: Any = None
    content: str | list[_Block] | None = None


class _Record(msgspec.Struct, gc=False):
    type: str | None = None
    message: _Message | None = None
    uuid: str | None = None
    timestamp: str | None = None
    isSidechain: Any = None
    isApiErrorMessage: Any = None
    isMeta: Any = None
    isCompactSummary: Any = None
    isVisibleInTranscriptOnly: Any = None
    toolUseResult: msgspec.Raw = msgspec.Raw()  # only whether it is there: empty when absent


class _Queued(msgspec.Struct, gc=False):
    """A ``queue-operation`` record (decoded a second time, for these fields)."""

    operation: Any = None
    content: Any = None
    uuid: Any = None
    timestamp: Any = None
    cwd: Any = None


class _Cwd(msgspec.Struct, gc=False):
    cwd: Any = None


_decode_record = msgspec.json.Decoder(_Record).decode
_decode_cwd = msgspec.json.Decoder(_Cwd).decode
_decode_queued = msgspec.json.Decoder(_Queued).decode
_decode_value = msgspec.json.Decoder().decode
_NOT_DECODED = (msgspec.DecodeError, RecursionError)  # msgspec.ValidationError is a DecodeError
_BLOCK = 256
"""Lines decoded together before their records are made into turns (:meth:`_Digester.lines`)."""
_CHECKED_LINE = 8192
"""Lines longer than this take the byte test (:func:`needed`) before being decoded; shorter ones are
decoded at once (msgspec skipping a short line costs less than the test)."""


def _harness(rec: _Record) -> bool:
    """Whether a user record is flagged as the harness's (:data:`_META_FLAGS`)."""
    return rec.isMeta is True or rec.isCompactSummary is True or rec.isVisibleInTranscriptOnly is True


def _may_be_rejection(content: msgspec.Raw) -> bool:
    """Whether an error tool result's ``content`` (raw JSON) is a string in the shape of a rejected
    tool call (:func:`rejection_of` checks the rest); any other is tool output."""
    try:
        value = _decode_value(content)
    except _NOT_DECODED:
        return True  # let the exact path decide
    return isinstance(value, str) and value.startswith(REJECTION_PREFIX)


def _valid_utf8(raw: bytes) -> bool:
    """Whether ``raw`` is UTF-8 (msgspec does not check the bytes of the fields it skips)."""
    if raw.isascii():
        return True
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class _Digester:
    """Turns the lines of one file into Turns, updating stats and dedup state.

    :meth:`lines` is the fast path: a short line, or a long one the byte test keeps, is decoded
    into :class:`_Record` (only the fields read here); a line msgspec refuses or finds of another
    shape, a user record that may hold a rejection and a kept record with bad bytes take the exact
    path (:meth:`exact`: ``orjson`` into a dict, repaired by ``decode_line`` when needed), which
    ``digest_file(path, cheap=False)`` uses for every line.
    """

    def __init__(
        self,
        file: str,
        kind: FileKind,
        state: DigestState,
        stats: DigestStats,
        interrupts: bool,
        cheap: bool = True,
    ) -> None:
        self.cheap = cheap
        self.file = file
        self.kind = kind
        self.state = state
        self.stats = stats
        self.interrupts = interrupts
        self.cwd = ""

    # -- the fast path ---------------------------------------------------------------------------

    def lines(
        self, numbers: Sequence[int], raws: Sequence[bytes], out: list[Turn], ascii: bool = False
    ) -> None:
        """Digest the lines ``raws`` (numbered ``numbers``) into ``out``: the fast path, in blocks of
        :data:`_BLOCK` lines (the records of one block are alive at once; a block stays in the caches)."""
        if len(raws) <= _BLOCK:
            self._block(numbers, raws, out, ascii)
            return
        for start in range(0, len(raws), _BLOCK):
            self._block(numbers[start : start + _BLOCK], raws[start : start + _BLOCK], out, ascii)

    def _block(self, numbers: Sequence[int], raws: Sequence[bytes], out: list[Turn], ascii: bool) -> None:
        """First every line is decoded (:meth:`_decoded`: in C, one call for all of them, a long line only
        when the byte test keeps it); then the hot loop turns the records into Turns: an assistant
        record with one text block (how Claude Code writes prose) and a plain prompt inline, everything
        else through a method."""
        numbers, raws, recs = self._decoded(numbers, raws)
        stats = self.stats
        exact, user, turns = self.exact, self._user_rec, self._assistant_turns
        main = self.kind == "main"
        compact = self.kind == "compact"
        state, file = self.state, self.file
        blocks, persons = state.blocks, state.persons
        new_block, new_person = state.new_block, state.new_person
        inline = not state.hashed  # the dedup state in memory, checked here
        classify, person = classify_user_text, PERSON
        chars = 0  # of the turns made inline (the methods count their own)
        fast = inline and bool(self.cwd)  # turns may be made inline (the first one sets cwd)
        prose = "subagent" if self.kind == "subagent" else "text"
        for line_no, raw, rec in zip(numbers, raws, recs):  # noqa: B905 (the three are as long)
            if rec is None:  # msgspec refused it: the exact path repairs, counts or skips it
                exact(raw, line_no, out)
                continue
            try:
                rtype = rec.type
                if rtype == "assistant":
                    message = rec.message
                    if message is None or compact:
                        continue
                    content = message.content
                    if type(content) is list and len(content) == 1:  # how Claude Code writes a reply
                        block = content[0]
                        text = block.text
                        if text is None or block.type != "text":
                            continue
                    elif type(content) is str:
                        text = content
                    elif isinstance(content, list) and content:
                        texts = [b.text for b in content if b.type == "text" and b.text is not None]
                        if texts and message.model != "<synthetic>" and rec.isApiErrorMessage is not True:
                            turns(rec, raw, texts, line_no, out)
                        continue
                    else:
                        continue
                    if message.model == "<synthetic>" or rec.isApiErrorMessage is True:
                        continue
                    if not fast or rec.isSidechain is True:
                        turns(rec, raw, [text], line_no, out)
                        fast = inline and bool(self.cwd)
                        continue
                    if not ascii and not raw.isascii() and not _valid_utf8(raw):
                        exact(raw, line_no, out)  # bad bytes: repaired and counted there
                        continue
                    # one text block, valid UTF-8, the state in memory: _assistant_turns inline
                    stripped = text.strip()
                    if stripped:
                        owner = message.id or rec.uuid
                        if owner:
                            if owner not in blocks:
                                blocks[owner] = text
                            elif not new_block(owner, text):
                                continue
                        out.append(Turn("assistant", stripped, file, line_no, rec.uuid, rec.timestamp, prose))
                        chars += len(stripped)
                elif not main:
                    continue
                elif rtype == "user":
                    message = rec.message
                    if message is None or rec.isSidechain is True:
                        continue
                    content = message.content
                    if type(content) is str:  # a prompt, a command, an interrupt or harness text
                        if rec.toolUseResult:
                            continue
                        role, kind, text = classify(content)
                        if (
                            role != person
                            or rec.isMeta is True
                            or rec.isCompactSummary is True
                            or rec.isVisibleInTranscriptOnly is True
                        ):  # _harness, inline
                            continue
                        if not ascii and not raw.isascii() and not _valid_utf8(raw):
                            exact(raw, line_no, out)
                            continue
                        if not fast or kind == "interrupt" or state.queued_any:
                            self._person_one(kind, text, rec, raw, line_no, out)
                            fast = inline and bool(self.cwd)
                            continue
                        # a prompt or a command, the state in memory, nothing queued: _person_one inline
                        ts = rec.timestamp
                        if ts is not None:
                            if ts not in persons:
                                persons[ts] = text
                            elif not new_person(ts, text):
                                continue
                        out.append(Turn("person", text, file, line_no, rec.uuid, ts, kind))
                        chars += len(text)
                    elif (
                        type(content) is list
                        and len(content) == 1
                        and content[0].type == "tool_result"
                        and content[0].is_error is not True
                    ):
                        continue  # a tool's output, the most common user record
                    else:
                        user(rec, raw, line_no, out)
                elif rtype == "queue-operation":
                    self._queued_rec(raw, line_no, out)
            except Exception:  # an odd record must never stop the digest
                stats.skipped_lines += 1
                stats.malformed += 1
        stats.chars += chars

    def _decoded(
        self,
        numbers: Sequence[int],
        raws: Sequence[bytes],
    ) -> tuple[Sequence[int], Sequence[bytes], list[_Record | None]]:
        """The lines worth decoding and their records (None where msgspec refuses the line).

        A line over :data:`_CHECKED_LINE` bytes is left out unless :func:`needed` keeps it (a short one
        costs msgspec less than the byte test would). The lines are decoded by ``map`` in C; a line that
        raises leaves the records before it in the list (``list.extend`` keeps what it took), a None
        stands for it, and decoding goes on with the next line.
        """
        if self.cheap and raws and max(map(len, raws)) > _CHECKED_LINE:
            kept = [len(raw) <= _CHECKED_LINE or needed(raw, 0, len(raw)) for raw in raws]
            numbers, raws = list(compress(numbers, kept)), list(compress(raws, kept))
        recs: list[_Record | None] = []
        decoding = map(_decode_record, raws)
        while True:
            try:
                recs.extend(decoding)
                return numbers, raws, recs
            except _NOT_DECODED:
                recs.append(None)

    def _queued_rec(self, raw: bytes, line_no: int, out: list[Turn]) -> None:
        """Text typed while the agent was busy (:func:`pieces` of a queue operation)."""
        try:
            rec = _decode_queued(raw)
        except _NOT_DECODED:
            self.exact(raw, line_no, out)
            return
        if rec.operation not in ("enqueue", "popAll") or rec.content is None:
            return  # other operations hold no person's text
        person = []
        for text, _path in queue_texts({"content": rec.content}):
            role, kind, cleaned = classify_user_text(text)
            if role == PERSON and kind != "interrupt":
                person.append(cleaned)
        if not person:
            return
        if not raw.isascii() and not _valid_utf8(raw):
            self.exact(raw, line_no, out)
            return
        self._queued_text("\n\n".join(person), rec.timestamp, rec.uuid, rec.cwd, line_no, out)

    def _assistant_turns(
        self, rec: _Record, raw: bytes, texts: list[str], line_no: int, out: list[Turn]
    ) -> None:
        """The turns of an assistant record's text blocks, each kept once per ``(message.id, text)``
        (a line with bad bytes goes to the exact path, which repairs and counts it)."""
        if not raw.isascii() and not _valid_utf8(raw):
            self.exact(raw, line_no, out)
            return
        message = rec.message
        kind = "subagent" if self.kind == "subagent" or rec.isSidechain is True else "text"
        uuid, ts = rec.uuid, rec.timestamp
        owner = message.id or uuid or None  # type: ignore[union-attr]
        state, file = self.state, self.file
        for raw_text in texts:
            text = raw_text.strip()
            if not text:
                continue
            if owner is not None and not state.new_block(owner, raw_text):
                continue
            if not self.cwd:
                self._note_cwd(rec, raw)
            out.append(Turn("assistant", text, file, line_no, uuid, ts, kind))
            self.stats.chars += len(text)

    def _user_rec(self, rec: _Record, raw: bytes, line_no: int, out: list[Turn]) -> None:
        """A user record's person text (:func:`pieces` for the shapes that hold it), or the
        exact path for a record whose tool result may be a rejection."""
        if rec.isSidechain is True or rec.message is None:
            return
        content = rec.message.content
        if isinstance(content, str):
            texts: list[str] = [content]
        elif content is None:
            return
        else:
            texts = []
            for block in content:
                btype = block.type
                if btype == "text":
                    if block.text is not None:
                        texts.append(block.text)
                elif (
                    btype == "tool_result"
                    and block.is_error is True
                    and block.content
                    and _may_be_rejection(block.content)
                ):
                    self.exact(raw, line_no, out)  # a rejected tool call: the exact path finds the reason
                    return
            if not texts:
                return
        if rec.toolUseResult:
            return  # tool output, never a person's
        person = []
        for text in texts:
            role, kind, cleaned = classify_user_text(text)
            if role == PERSON:
                person.append((kind, cleaned))
        if person and not _harness(rec):
            if not raw.isascii() and not _valid_utf8(raw):
                self.exact(raw, line_no, out)
                return
            kind, text = _one_person(person)
            self._person_one(kind, text, rec, raw, line_no, out)

    # -- the exact path --------------------------------------------------------------------------

    def exact(self, raw: bytes, line_no: int, out: list[Turn]) -> None:
        """Decode one line in full with ``orjson`` (repairing or refusing it as ``decode_line`` does)
        and append its turns to ``out``."""
        stats = self.stats
        if raw.endswith(b"\n"):
            raw = raw[:-1]
        if len(raw) > _SMALL:
            raw = drop_big_strings(raw)
        try:  # the common case inline; decode_line repairs or refuses the rest
            obj = orjson.loads(raw)
            error = None if type(obj) is dict else "?"
        except orjson.JSONDecodeError:
            error = "?"
        if error is not None:
            obj, error = decode_line(raw)
            if error == "replaced":
                stats.replaced += 1  # kept, and counted so a repaired record is never silent
            elif obj is None:
                stats.skipped_lines += 1
                if error == "invalid_utf8":
                    stats.invalid_utf8 += 1
                elif error in ("malformed", "not_object"):
                    stats.malformed += 1
                return
        try:
            self.record(obj, line_no, out)
        except Exception:  # an odd record must never stop the digest
            stats.skipped_lines += 1
            stats.malformed += 1

    def record(self, obj: dict[str, Any], line_no: int, out: list[Turn]) -> None:
        """Append the turns of one decoded record to ``out``."""
        rtype = obj.get("type")
        if rtype == "assistant":
            self._assistant(obj, line_no, out)
        elif self.kind != "main":
            return  # sub-agent "user" lines are the parent agent; compaction files have no person
        elif rtype == "user":
            self._user(obj, line_no, out)
        elif rtype == "queue-operation":
            self._queued(obj, line_no, out)

    def _turn(self, role: Role, text: str, obj: dict[str, Any], line_no: int, kind: str) -> Turn:
        return self._make(role, text, obj.get("timestamp"), obj.get("uuid"), obj.get("cwd"), line_no, kind)

    def _make(self, role: Role, text: str, ts: Any, uuid: Any, cwd: Any, line_no: int, kind: str) -> Turn:
        if not self.cwd:
            self.cwd = cwd if isinstance(cwd, str) else ""
        self.stats.chars += len(text)
        return Turn(
            role,
            text,
            self.file,
            line_no,  # type: ignore[arg-type]
            uuid if isinstance(uuid, str) else None,
            ts if isinstance(ts, str) else None,
            kind,
        )

    def _assistant(self, obj: dict[str, Any], line_no: int, out: list[Turn]) -> None:
        message = obj.get("message")
        if type(message) is not dict or self.kind == "compact":
            return
        if message.get("model") == "<synthetic>" or obj.get("isApiErrorMessage") is True:
            return
        content = message.get("content")
        if isinstance(content, str):
            blocks: list[Any] = [{"type": "text", "text": content}]
        elif isinstance(content, list):
            blocks = content
        else:
            return
        kind = "subagent" if self.kind == "subagent" or obj.get("isSidechain") is True else "text"
        state = self.state
        # block_key for a text block: "<message.id or uuid>:text:<hash of the text>"
        owner = message.get("id") or obj.get("uuid")
        if not isinstance(owner, str) or not owner:
            owner = None
        for block in blocks:
            if type(block) is not dict or block.get("type") != "text":
                continue
            raw_text = block.get("text")
            if not isinstance(raw_text, str):
                continue
            text = raw_text.strip()
            if not text:
                continue
            if owner is not None and not state.new_block(owner, raw_text):
                continue
            out.append(self._turn("assistant", text, obj, line_no, kind))

    def _user(self, obj: dict[str, Any], line_no: int, out: list[Turn]) -> None:
        if obj.get("isSidechain") is True:
            return
        person = [(p.kind, p.text) for p in pieces(obj) if p.role == "person"]
        if person:
            self._person(person, obj, line_no, out)

    def _person(
        self, person: list[tuple[str, str]], obj: dict[str, Any], line_no: int, out: list[Turn]
    ) -> None:
        """The turn of a decoded person's record from its person pieces ``(kind, text)``."""
        kind, text = _one_person(person)
        self._person_one(kind, text, obj, None, line_no, out)

    def _person_one(
        self, kind: str, text: str, rec: Any, raw: bytes | None, line_no: int, out: list[Turn]
    ) -> None:
        """The turn of a person's record (``rec`` a :class:`_Record` with its ``raw`` line, or a dict):
        kept once per timestamp and text, and not again when it was queued while the agent was busy.
        An interrupt marker is kept only with ``interrupts``."""
        if raw is None:
            ts, uuid = rec.get("timestamp"), rec.get("uuid")
            ts = ts if isinstance(ts, str) else None
            uuid = uuid if isinstance(uuid, str) else None
        else:
            ts, uuid = rec.timestamp, rec.uuid
        if kind == "interrupt":
            if self.interrupts:
                if not self.cwd:
                    self._note_cwd(rec, raw)
                out.append(Turn("person", text, self.file, line_no, uuid, ts, "interrupt"))
                self.stats.chars += len(text)
            return
        state = self.state
        if ts is not None:
            persons = state.persons
            if state.hashed or ts in persons:
                if not state.new_person(ts, text):
                    return  # the same record rewritten with a new uuid
            else:
                persons[ts] = text
        if state.hashed or state.queued_any:
            queued = state.key("q", "", text)
            if state.has(queued):
                state.discard(queued)  # typed while busy: already kept where it was queued
                return
        if not self.cwd:
            self._note_cwd(rec, raw)
        out.append(Turn("person", text, self.file, line_no, uuid, ts, kind))
        self.stats.chars += len(text)

    def _note_cwd(self, rec: Any, raw: bytes | None) -> None:
        """The session's working directory: the first ``cwd`` of a kept record (read from the line
        when it comes to that, so the fast path decodes no ``cwd`` per line)."""
        if self.cwd:
            return
        if raw is None:
            cwd = rec.get("cwd")
        else:
            try:
                cwd = _decode_cwd(raw).cwd
            except _NOT_DECODED:
                cwd = None
        self.cwd = cwd if isinstance(cwd, str) else ""

    def _queued(self, obj: dict[str, Any], line_no: int, out: list[Turn]) -> None:
        person = [p for p in pieces(obj) if p.role == "person" and p.kind != "interrupt"]
        if person:
            self._queued_text(
                "\n\n".join(p.text for p in person),
                obj.get("timestamp"),
                obj.get("uuid"),
                obj.get("cwd"),
                line_no,
                out,
            )

    def _queued_text(self, text: str, ts: Any, uuid: Any, cwd: Any, line_no: int, out: list[Turn]) -> None:
        """The turn of text typed while the agent was busy, kept once (until it arrives as a prompt)."""
        key = self.state.key("q", "", text)
        if self.state.has(key):
            return
        self.state.add(key)
        self.state.queued_any = True
        out.append(self._make("person", text, ts, uuid, cwd, line_no, "queued"))


def _one_person(person: list[tuple[str, str]]) -> tuple[str, str]:
    """The ``(kind, text)`` of a person's record from its pieces: the pieces' text joined (interrupt
    markers left out unless there is nothing else), a rejection or a command before a prompt."""
    if len(person) == 1:
        kind, text = person[0]
        return (kind if kind in ("interrupt", "rejection", "command") else "prompt"), text
    kinds = [k for k, _ in person]
    if all(k == "interrupt" for k in kinds):
        return "interrupt", person[0][1]
    text = "\n\n".join([t for k, t in person if k != "interrupt"])
    return ("rejection" if "rejection" in kinds else "command" if "command" in kinds else "prompt"), text


def keep(buf: bytes, start: int, end: int) -> bool:
    """The fast path's filter for a line ``buf[start:end]``: a short line is decoded (msgspec skips it
    faster than the byte test could), a long one only when :func:`needed` says it may hold kept text."""
    return end - start <= _CHECKED_LINE or needed(buf, start, end)


def digester(
    file: str,
    kind: FileKind,
    state: DigestState,
    stats: DigestStats,
    interrupts: bool,
    cheap: bool = True,
) -> _Digester:
    """The :class:`_Digester` of one file's lines (see :meth:`~.protocol.TranscriptFormat.digester`)."""
    return _Digester(file, kind, state, stats, interrupts, cheap)
