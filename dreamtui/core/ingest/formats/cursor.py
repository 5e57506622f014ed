"""Cursor's agent chats, as the Cursor CLI (``cursor-agent``) stores them: one SQLite database per chat.

What is read, and what is not:

- **read**: the CLI's chats, ``~/.cursor/chats/<md5 of the working directory>/<agent id>/store.db``.
  Its ``meta`` row ``0`` is hex-encoded JSON (``agentId``, ``name``, ``createdAt``, …); its ``blobs``
  table is content-addressed: the messages are JSON blobs (``role`` system / user / assistant / tool,
  ``content`` a string or parts ``text`` / ``reasoning`` / ``tool-call`` / ``tool-result``), the
  conversation tree's nodes binary blobs. Messages are taken in the order the conversation's root
  node (the ``meta``'s ``latestRootBlobId``) lists them (:func:`conversation_order`): real stores
  do not keep their rows in that order (a chat's person messages can all lie after the replies);
  a message the root does not list follows in row order, and a store whose root is missing or odd
  is read in row order.
- **not read**: the editor's chats (``state.vscdb``, table ``cursorDiskKV``); the editor's
  ``~/.cursor/projects/*/agent-transcripts``; prompt history. Nothing of the editor's is opened.

A chat's path is its ``store.db``; its records (:func:`records`) are its JSON message blobs, one
:class:`~.protocol.SourceRecord` each, keyed by the blob's id (a content hash: a changed message is a
new blob, so a new key). Whose words: a ``user`` message's text is the person's only inside its
``<user_query>`` span when it has one (Cursor wraps the person's words so, and puts the context it
attaches — ``<user_info>``, open files, rules — around them: ``meta``); a user text with no tags at all
is the person's. ``tool`` messages and ``tool-result`` parts are tool output; ``reasoning`` parts the
assistant's thinking (never in the digest); ``system`` messages ``meta``.

The working directory is not stored in the chat itself: it is the ``Workspace Path`` Cursor names in
the context of the first user message, taken only when its MD5 is the chat folder's name (so a path
typed in a message can never pose as the chat's directory). Every database read goes through
:mod:`dreamtui.core.ledger.agent_stores` (read-only, short, never holding a lock the agent waits on).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from dreamtui.core.errors import TranscriptError
from dreamtui.core.files import Skipped, is_dir, link_below, regular_problem, scan_folder
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
from dreamtui.core.ledger import agent_stores
from dreamtui.core.ledger.agent_stores import StoreUnreadable, as_bytes
from dreamtui.core.models import DigestStats, Provenance, RawRecord, Turn
from dreamtui.core.repository import encode_path

if TYPE_CHECKING:  # the digest's dedup state: digest.py imports the formats
    from dreamtui.core.ingest.digest import DigestState

name = "cursor"
"""This format's name (its key in ``formats.FORMATS``)."""
agent = "Cursor CLI"
"""The agent as a person names it (the CLI's chats are what is read)."""
label = "Cursor"
"""The agent in a word, as the queue's and Sessions' agent column show it."""
layout: Layout = "records"
"""One SQLite database per chat, read as records, one per message."""
suffix = ".db"
"""How a chat's file name ends (``store.db``)."""
tool_call_hint = b'"tool-call"'
"""Bytes every message holding a tool call holds."""
STORE_NAME = "store.db"

PERSON: Provenance = "person"
ASSISTANT: Provenance = "assistant"
TOOL: Provenance = "tool"
META: Provenance = "meta"

_HASH = re.compile(r"^[0-9a-f]{32}$")
_QUERY = re.compile(r"<user_query>(.*?)</user_query>", re.S)
_WORKSPACE = re.compile(r"^Workspace Path: (.+)$", re.M)


def default_root() -> Path:
    """The Cursor CLI's chats folder, ``~/.cursor/chats``."""
    return Path.home() / ".cursor" / "chats"


def default_roots() -> list[Path]:
    """The Cursor CLI's chats folder (:func:`default_root`)."""
    return [default_root()]


def claims(path: Path) -> bool:
    """A chat's ``store.db`` (or its write-ahead log ``store.db-wal``, what a live chat changes) two
    folders below a folder named by an MD5 (``<md5>/<agent id>/store.db``). Not ``-shm``: a reader
    changes it too."""
    path = Path(path)
    return path.name in (STORE_NAME, STORE_NAME + "-wal") and _HASH.match(path.parent.parent.name) is not None


def cwd_hash(cwd: str) -> str:
    """The chat folder's name for a working directory: the MD5 of its path, in hex."""
    return hashlib.md5(cwd.encode("utf-8", "surrogateescape"), usedforsecurity=False).hexdigest()


# -- where the chats are --------------------------------------------------------------------------


def describe(path: Path, head: bytes | None = None) -> TranscriptFile:
    """``<root>/<md5 of cwd>/<agent id>/store.db``: the session is the agent id; the project the
    working directory as a folder name (``encode_path``), or the MD5 folder when the chat
    names no directory that matches it."""
    path = _store_of(Path(path))
    return TranscriptFile(path, project_of(path), path.parent.name, "main", None, name)


def _store_of(path: Path) -> Path:
    return path.with_name(STORE_NAME) if path.name == STORE_NAME + "-wal" else path


def discover(root: Path, skipped: list[Skipped] | None = None) -> list[TranscriptFile]:
    """Every chat's ``store.db`` under ``root`` (``<md5>/<agent id>/store.db``). Never raises: a folder
    that cannot be read, and a ``store.db`` that is not a regular file, are reported in ``skipped``."""
    root = Path(root)
    found: list[TranscriptFile] = []
    if not is_dir(root):
        return found
    for project in scan_folder(root, skipped, want=STORE_NAME, follow=True):  # no link below the root
        if not project.is_dir:
            continue
        for chat in scan_folder(project.path, skipped, want=STORE_NAME):
            if not chat.is_dir:
                continue
            for entry in scan_folder(chat.path, skipped, want=STORE_NAME, folders=False):
                if entry.name == STORE_NAME and entry.is_file:
                    found.append(describe(entry.path))
    return sorted(found, key=lambda f: (f.project, f.session))


def session_files(root: Path, project: str, session: str) -> list[Path]:
    """The one ``store.db`` of a chat (when it is there)."""
    store = Path(root) / project / session / STORE_NAME
    return [store] if regular_problem(store) is None and link_below(root, store) is None else []


def with_session(path: Path) -> list[Path]:
    """A chat is one file."""
    return [Path(path)]


def kind_of(path: Path) -> FileKind:
    """Every CLI chat is a main session."""
    return "main"


def project_of(path: Path) -> str:
    """The chat's working directory as a folder name, else its MD5 folder."""
    cwd = cwd_of(path)
    return encode_path(cwd) if cwd else Path(path).parent.parent.name


def session_of(path: Path) -> str:
    """The chat's agent id (its folder)."""
    return Path(path).parent.name


def is_main_file(root: Path, path: Path) -> bool:
    """A ``store.db`` two folders below ``root``."""
    path = Path(path)
    return path.name == STORE_NAME and path.parent.parent.parent == Path(root)


def is_auto_dream(path: Path) -> bool:
    """Cursor has no background memory consolidation of its own."""
    return False


def meta_of(path: Path) -> dict[str, Any]:
    """The chat's ``meta`` row ``0`` decoded (hex, then JSON); ``{}`` when it is missing or odd."""
    try:
        with agent_stores.reading(path) as conn:
            value = agent_stores.cursor_meta(conn)
    except StoreUnreadable:
        return {}
    try:
        obj = orjson.loads(bytes.fromhex(value.decode("ascii")))
    except (ValueError, orjson.JSONDecodeError):
        return {}
    return obj if isinstance(obj, dict) else {}


def cwd_of(path: Path) -> str:
    """The ``Workspace Path`` named in the chat's user messages whose MD5 is the chat folder's name
    ('' when none is: a chat whose folder is not an MD5 takes the first one named)."""
    try:
        recs = list(records(path))
    except TranscriptError:
        return ""
    return _cwd_in([rec.obj for rec in recs], Path(path).parent.parent.name)


def _cwd_in(objs: list[dict[str, Any]], folder: str) -> str:
    """:func:`cwd_of` of a chat's decoded messages, its chat folder's name ``folder``: the ``Workspace
    Path`` a user or system message names, else (a store that names none, as real chats of 2025 do)
    the folder whose MD5 is ``folder`` among the absolute paths the chat mentions and their parents
    (:func:`_cwd_by_hash`)."""
    for obj in objs:
        if obj.get("role") not in ("user", "system"):
            continue
        for text, _ in _texts(obj):
            if "Workspace Path: " not in text:  # (a substring test is ten times cheaper than the search)
                continue
            for m in _WORKSPACE.finditer(text):
                cwd = m.group(1).strip()
                if cwd and (cwd_hash(cwd) == folder or not _HASH.match(folder)):
                    return cwd
    return _cwd_by_hash(objs, folder) if _HASH.match(folder) else ""


_ABSOLUTE = re.compile(r"/(?<![\w.~$/-]/)[^\s'\"`<>|;,(){}\[\]*?]+")
"""An absolute path: a ``/`` not preceded by a word character, ``.``, ``~``, ``$``, ``/`` or ``-``, and
what follows it up to a blank, a quote or a shell or bracket character. The ``/`` comes first and the
character before it is looked at behind it: the search then skips to each ``/`` (twice as fast as a
look-behind tried at every character)."""
_PATH_SCAN = 64 * 1024
"""How much of each string is searched for paths (a tool's output can be megabytes long)."""


def _strings(value: Any, out: list[str], depth: int = 0) -> None:
    """Every string inside ``value`` (its first :data:`_PATH_SCAN` characters), in order, down to six
    levels of objects and lists (a string at any level; a string inside is taken without a call)."""
    if isinstance(value, str):
        out.append(value[:_PATH_SCAN])
        return
    if depth >= 6:
        return
    if isinstance(value, dict):
        items: Any = value.values()
    elif isinstance(value, list):
        items = value
    else:
        return
    for v in items:
        if isinstance(v, str):
            out.append(v[:_PATH_SCAN])
        elif isinstance(v, (dict, list)):
            _strings(v, out, depth + 1)


def _cwd_by_hash(objs: list[dict[str, Any]], folder: str) -> str:
    """The directory whose MD5 is ``folder`` among the absolute paths named in the chat's messages
    (the person's words, tool calls' arguments, tool results: the first 64 KB of each string) and
    each of their parents; '' when none is. Only an exact MD5 match counts, so a path the chat merely
    mentions is never taken for the working directory."""
    tried: set[str] = set()
    strings: list[str] = []
    for obj in objs:
        _strings(obj.get("content"), strings)
    # one search over the strings joined by newlines: a path never spans a newline, and one after it
    # is taken as one at the start of its string is, so the paths found, and their order, are each
    # string's own (one search instead of one a string)
    for m in _ABSOLUTE.finditer("\n".join(t for t in strings if "/" in t)):
        path = m.group(0).rstrip(".:")
        while path and path not in tried:
            tried.add(path)
            if cwd_hash(path) == folder:
                return path
            parent = path.rsplit("/", 1)[0]
            path = parent if parent and parent != path else ("/" if path != "/" else "")
    return ""


# -- the records of a chat ------------------------------------------------------------------------


def records(path: Path, member: str = "") -> Iterator[SourceRecord]:
    """A chat's JSON messages in the order they were written, one record each, keyed by blob id (a
    chat is its own file: ``member`` is unused). Raises :class:`~dreamtui.core.errors.TranscriptError`
    (one line) when the store cannot be read now; a blob that is not a JSON message is left out."""
    yield from _read(Path(path))


_MAX_ROOT = 16 * 1024 * 1024
"""A root node larger than this is not parsed (the chat is read in row order)."""


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80 or shift > 63:
            return value, i


def conversation_order(root: bytes) -> list[str]:
    """The message ids the conversation's root node lists, in order: its field 1 entries of 32 bytes
    (a protocol-buffer message; the ids are the SHA-256 of each message blob). ``[]`` when the node
    cannot be parsed: the chat is then read in row order."""
    out: list[str] = []
    i, end = 0, len(root)
    try:
        while i < end:
            key, i = _varint(root, i)
            field, wire = key >> 3, key & 7
            if wire == 2:
                size, i = _varint(root, i)
                if i + size > end:
                    return []
                if field == 1 and size == 32:
                    out.append(root[i : i + size].hex())
                i += size
            elif wire == 0:
                _, i = _varint(root, i)
            elif wire in (1, 5):
                i += 8 if wire == 1 else 4
            else:
                return []
    except IndexError:
        return []
    return out


def _root_id(meta: bytes) -> str:
    try:
        obj = orjson.loads(bytes.fromhex(meta.decode("ascii")))
    except (ValueError, orjson.JSONDecodeError):
        return ""
    root = obj.get("latestRootBlobId") if isinstance(obj, dict) else None
    return root if isinstance(root, str) else ""


def _in_order(blobs: list[agent_stores.CursorRow], order: list[str]) -> list[agent_stores.CursorRow]:
    """``blobs`` (rows ``(rowid, id, data)``) in the conversation's order: those ``order`` lists first,
    as it lists them, then the rest in row order."""
    if not order:
        return blobs
    place = {blob_id: i for i, blob_id in reversed(list(enumerate(order)))}
    listed = sorted((b for b in blobs if b[1] in place), key=lambda b: place[b[1]])
    return listed + [b for b in blobs if b[1] not in place]


def _read(path: Path) -> list[SourceRecord]:
    """:func:`records`, all of them read at once."""
    return [SourceRecord(i, key, raw, obj) for i, (key, raw, obj) in enumerate(_messages(path), start=1)]


def _messages(path: Path) -> list[tuple[str, bytes, dict[str, Any]]]:
    """Each JSON message of the chat at ``path`` (its store, or its write-ahead log) as ``(blob id,
    bytes, decoded)``, in the conversation's order (:func:`conversation_order`): what :func:`records` gives, without the
    records. Raises :class:`~dreamtui.core.errors.TranscriptError` when the store cannot be read now."""
    try:
        with agent_stores.reading(_store_of(path)) as conn:
            blobs, root = agent_stores.cursor_json_blobs(conn, _root_id(agent_stores.cursor_meta(conn)))
    except StoreUnreadable as exc:
        raise TranscriptError(f"cannot read {path}: {exc.strerror}") from None
    if root is not None and len(root) <= _MAX_ROOT:
        blobs = _in_order(blobs, conversation_order(root))
    out: list[tuple[str, bytes, dict[str, Any]]] = []
    loads, decode_error, limit = orjson.loads, orjson.JSONDecodeError, agent_stores.MAX_ROW_BYTES
    for _, key, data in blobs:
        if type(data) is not bytes or len(data) > limit:
            data = as_bytes(data)  # (b'' for anything but text or bytes within the limit)
        try:
            obj = loads(data)
        except decode_error:
            continue
        if type(obj) is dict and isinstance(obj.get("role"), str):
            out.append((key if type(key) is str else "", data, obj))
    return out


# -- whose words ----------------------------------------------------------------------------------


def _texts(obj: dict[str, Any]) -> list[tuple[str, JsonPath]]:
    """The ``text`` strings of a message: its content string, or its ``text`` parts."""
    content = obj.get("content")
    if isinstance(content, str):
        return [(content, ("content",))]
    out: list[tuple[str, JsonPath]] = []
    if isinstance(content, list):
        for i, block in enumerate(content):
            if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
                out.append((block["text"], ("content", i, "text")))
    return out


def person_text(text: str) -> str | None:
    """The person's words in a user message's text: the ``<user_query>`` spans joined, or the whole
    text when it holds no tag at all; None when it is only attached context."""
    spans = [m.group(1).strip() for m in _QUERY.finditer(text)]
    if spans:
        joined = "\n\n".join(s for s in spans if s)
        return joined or None
    if "<" in text and re.search(r"<[a-z_]+>", text):
        return None
    cleaned = text.strip()
    return cleaned or None


def _block_pieces(block: dict[str, Any], i: int) -> list[Piece]:
    btype = block.get("type")
    if btype == "reasoning" and isinstance(block.get("text"), str):
        return [Piece(ASSISTANT, block["text"], "thinking", ("content", i, "text"))]
    if btype == "tool-result":
        for field in ("result", "output", "content"):
            value = block.get(field)
            if isinstance(value, str):
                return [Piece(TOOL, value, "tool_result", ("content", i, field))]
    return []


def pieces(obj: Any) -> list[Piece]:
    """The text pieces of one message, each with its provenance (see the module docstring)."""
    if not isinstance(obj, dict):
        return []
    role = obj.get("role")
    out: list[Piece] = []
    if role == "user":
        for text, path in _texts(obj):
            mine = person_text(text)
            if mine is None:
                out.append(Piece(META, text, "context", path))
            else:
                out.append(Piece(PERSON, mine, "prompt", path))
    elif role == "assistant":
        out += [Piece(ASSISTANT, text, "text", path) for text, path in _texts(obj)]
    elif role == "tool":
        out += [Piece(TOOL, text, "tool_result", path) for text, path in _texts(obj)]
    elif role == "system":
        out += [Piece(META, text, "system", path) for text, path in _texts(obj)]
    content = obj.get("content")
    if isinstance(content, list):
        for i, block in enumerate(content):
            if isinstance(block, dict):
                out += _block_pieces(block, i)
    out.sort(key=lambda p: p.path[1] if len(p.path) > 1 and isinstance(p.path[1], int) else 0)
    return out


def provenance(obj: dict[str, Any], path: JsonPath, value: str, holds: Callable[[str], bool]) -> Provenance:
    """Whose words the string at ``path`` is: a user text is the person's only where a quote lies
    inside its ``<user_query>`` span (``holds`` asks that of the span); everything inside a tool
    message or a tool-result part is ``tool``; other strings are their piece's, else ``meta``."""
    path = tuple(path)
    role = obj.get("role")
    if role == "tool":
        return TOOL
    block = None
    if len(path) >= 2 and path[0] == "content" and isinstance(path[1], int):
        content = obj.get("content")
        if isinstance(content, list) and 0 <= path[1] < len(content) and isinstance(content[path[1]], dict):
            block = content[path[1]]
    if block is not None and block.get("type") in ("tool-result", "tool-call"):
        return TOOL
    for piece in pieces(obj):
        if piece.path != path:
            continue
        if piece.role == PERSON:
            return PERSON if holds(piece.text) else META
        return piece.role
    return META


# -- where a record is, its tool calls, the raw view ----------------------------------------------


def ref(obj: dict[str, Any]) -> RecordRef:
    """A message's id (Cursor gives assistant and tool messages one), no time (the store keeps none
    per message), no directory, never a sub-agent."""
    uuid = obj.get("id")
    return RecordRef(uuid if isinstance(uuid, str) else None, None, None, False)


def is_copy(obj: dict[str, Any]) -> bool:
    """A content-addressed store keeps each message once."""
    return False


_WROTE_KEYS = ("target_file", "file_path", "filePath", "path")


def tool_calls(obj: dict[str, Any]) -> list[ToolCall]:
    """The ``tool-call`` parts of an assistant message: a tool whose name says it edits or writes
    names the file it wrote (``target_file``, ``file_path``, ``filePath`` or ``path``); a tool whose
    name says it runs a terminal or shell command names the ``command``."""
    content = obj.get("content")
    if obj.get("role") != "assistant" or not isinstance(content, list):
        return []
    out: list[ToolCall] = []
    for block in content:
        if not isinstance(block, dict) or block.get("type") != "tool-call":
            continue
        tool = str(block.get("toolName") or "?")
        args = block.get("args")
        args = args if isinstance(args, dict) else {}
        low = tool.lower()
        wrote = command = None
        if any(w in low for w in ("edit", "write", "create", "patch")):
            wrote = next((args[k] for k in _WROTE_KEYS if isinstance(args.get(k), str)), None)
        elif any(w in low for w in ("terminal", "shell", "bash", "run", "command")):
            command = args.get("command") if isinstance(args.get("command"), str) else None
        out.append(ToolCall(tool, wrote, command))
    return out


def render(line: int, obj: dict[str, Any]) -> RawRecord:
    """A message as the evidence window shows it: its role, its pieces and its tool calls."""
    texts = [(str(p.role), p.text) for p in pieces(obj)]
    content = obj.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool-call":
                args = orjson.dumps(block.get("args") or {}).decode("utf-8", "replace")
                texts.append(("call", f"{block.get('toolName') or '?'} {args}"))
    role = str(obj.get("role") or "?")
    return RawRecord(line, role, "", texts, bookkeeping=role == "system", folds=role == "system")


def digester(
    file: str,
    kind: FileKind,
    state: DigestState,
    stats: DigestStats,
    interrupts: bool,
    cheap: bool = True,
) -> PiecesDigester:
    """The generic digest of a chat's pieces (``formats/generic.py``)."""
    return PiecesDigester(pieces, ref, file, kind, state, stats, interrupts)


def digest_records(
    address: Path, kind: FileKind | None, state: DigestState, stats: DigestStats, interrupts: bool
) -> tuple[TranscriptFile, list[Turn], str]:
    """The digest of a chat read once (``digest.digest_file``'s fast path): what :func:`describe`,
    :func:`records` and :func:`digester` give together (the same turns, stats and description:
    ``tests/test_formats_fast_digest.py``), the store opened once instead of twice (the description's
    working directory is found in the messages the digest reads anyway), no record built, a message
    that is neither the person's nor the assistant's (``tool``, ``system``: its pieces are tool
    output, thinking or ``meta``, never kept, and its reference names no directory) passed over
    without listing its pieces, and the person's words of a user message and an assistant's text
    strings made into turns inline (their other pieces are context, thinking or tool output)."""
    path = _store_of(address if isinstance(address, Path) else Path(address))
    found = _messages(path)
    folder = path.parent.parent.name
    cwd = _cwd_in([obj for _, _, obj in found], folder)
    tf = TranscriptFile(path, encode_path(cwd) if cwd else folder, path.parent.name, "main", None, name)
    turns: list[Turn] = []
    file = str(address)
    kind = kind or tf.kind
    new_block = state.new_block
    main, compact = kind == "main", kind == "compact"
    reply_kind = "subagent" if kind == "subagent" else "text"
    size = 0
    for locator, (_, raw, obj) in enumerate(found, start=1):
        size += len(raw)
        role = obj["role"]
        if compact or role not in ("user", "assistant"):
            continue
        uuid = obj.get("id")
        uuid = uuid if type(uuid) is str else None
        if role == "user":
            # inline, what PiecesDigester makes of a user message's pieces in a main chat: the person's
            # words of its texts joined as one prompt (no time: never deduplicated); else nothing
            if main:
                words = [mine for mine in (person_text(t) for t, _ in _texts(obj)) if mine is not None]
                if words:
                    prompt = "\n\n".join(words)
                    turns.append(Turn("person", prompt, file, locator, uuid, None, "prompt"))
                    stats.chars += len(prompt)
        else:
            # inline, what PiecesDigester makes of an assistant's pieces: its text strings in order
            for text, _ in _texts(obj):
                said = text.strip()
                if not said or (uuid and not new_block(uuid, text)):
                    continue
                turns.append(Turn("assistant", said, file, locator, uuid, None, reply_kind))
                stats.chars += len(said)
    stats.lines += len(found)
    stats.bytes += size
    return tf, turns, ""  # (no message names a working directory of its own: ref gives none)


def shared_reads() -> AbstractContextManager[None]:
    """The format's optional hook for a pass that digests many sessions (``digest.shared_reads``):
    a chat's store is read more than once in a pass (its description, its records): those reads share
    one connection, each read still its own short read transaction, the connection closed when the
    pass ends (:func:`dreamtui.core.ledger.agent_stores.sharing`)."""
    return agent_stores.sharing()


def keep(buf: bytes, start: int, end: int) -> bool:
    """Records are not read as lines: every record is kept for the digest to look at."""
    return True


def watch_paths(path: Path) -> list[Path]:
    """The store and its write-ahead log (a live chat changes ``store.db-wal`` first)."""
    return [Path(path), Path(f"{path}-wal")]


def created_at(path: Path) -> str | None:
    """When the chat was started (the meta row's ``createdAt``), ISO 8601."""
    ms = meta_of(path).get("createdAt")
    if not isinstance(ms, int) or not 0 < ms < 10**14:
        return None
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
