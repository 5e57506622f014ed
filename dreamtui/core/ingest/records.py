"""Classify one decoded transcript record: whose words is each string in it?

Claude Code writes one JSON object per line and has no published schema, so everything here treats
every field as optional and never raises on an odd record. See ``transcript-format.md``.

- :func:`pieces` lists the text pieces of a record with their provenance (``person``, ``assistant``,
  ``tool``, ``meta``), a ``kind`` and the JSON path of the string they came from. A person's text is
  cleaned: system reminders and IDE spans stripped, slash commands turned into ``/x args``, a
  rejected tool call reduced to the person's reason.
- :func:`provenance_of` answers the same question for *any* string value inside a record, by path
  (quote verification uses it).
- :func:`is_synthetic` and :func:`block_key` support deduplication of assistant replies.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from dreamtui.core.models import Provenance

PathKey = str | int
JsonPath = tuple[PathKey, ...]

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


@dataclass(frozen=True, slots=True)
class Piece:
    """One string of a record: whose words (``role``), cleaned ``text``, ``kind`` and JSON ``path``.

    Kinds: person ``prompt``/``command``/``rejection``/``queued``/``interrupt``; assistant
    ``text``/``thinking``; tool ``tool_result``/``bash_output``; meta ``caveat``/``stdout``/
    ``notification``/``summary``/``compact_summary``/``parent``/``synthetic``/``system``/``meta``/
    ``context``.
    """

    role: Provenance
    text: str
    kind: str
    path: JsonPath


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
