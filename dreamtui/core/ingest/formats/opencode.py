"""OpenCode's sessions: the SQLite database ``opencode.db`` of current versions, and the
``storage/`` JSON files of older ones.

Where (the data folder, ``$XDG_DATA_HOME/opencode``, else ``~/.local/share/opencode``)::

    opencode.db                                   session / message / part rows (current versions)
    storage/session/<project id>/<session>.json   older versions: one file per session,
    storage/message/<session>/<message>.json      one per message,
    storage/part/<message>/<part>.json            one per part of a message

A database holds every session, so a session inside it is addressed as ``<db>#<session id>``
(:func:`address`: the database's path and the session, its member): the session's place in its source. A session of the
older layout is its ``storage/session/…/<session>.json`` file. Both give the same records
(:func:`records`): one :class:`~.protocol.SourceRecord` per **part**, keyed by the part's id, whose
``raw`` is the part as stored (the row's ``data`` column, or the part's JSON file) and whose ``obj``
is the part with what its message says about it (:func:`record_obj`): the role, whether a
sub-agent's session holds it, the working directory.

Whose words: a ``text`` part of a ``user`` message is the person's, unless OpenCode wrote it
(``synthetic``: a file it read for the person, a reminder) or the session is a sub-agent's (its
``user`` messages are the parent agent's prompt). A ``tool`` part is tool output; a ``reasoning``
part is the assistant's thinking (never in the digest); an assistant ``text`` part of a compaction
summary (``summary: true``) is OpenCode's, ``meta``. Every read of the database goes through
:mod:`dreamtui.core.ledger.agent_stores` (read-only, short, never holding a lock the agent waits on).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from dreamtui.core.errors import TranscriptError
from dreamtui.core.files import Skipped, open_regular, own_dir, scan_folder
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
    address_of,
    split_address,
)
from dreamtui.core.ledger import agent_stores
from dreamtui.core.ledger.agent_stores import OpenCodeSession, StoreUnreadable, as_bytes
from dreamtui.core.models import DigestStats, Provenance, RawRecord, Turn
from dreamtui.core.repository import encode_path

if TYPE_CHECKING:  # the digest's dedup state: digest.py imports the formats
    from dreamtui.core.ingest.digest import DigestState

name = "opencode"
"""This format's name (its key in ``formats.FORMATS``)."""
agent = "OpenCode"
"""The agent as a person names it."""
label = "OpenCode"
"""The agent in a word, as the queue's and Sessions' agent column show it."""
layout: Layout = "records"
"""A database (or a session's JSON files) read as records, one per part."""
suffix = ".db"
"""How the database's name ends (a session of the older layout is a ``.json`` file)."""
tool_call_hint = b'"tool"'
"""Bytes every part holding a tool call holds (``"type":"tool"``)."""
DB_NAME = "opencode.db"
MAX_JSON_BYTES = 16 * 1024 * 1024
"""A JSON file of the older layout larger than this is not read."""

PERSON: Provenance = "person"
ASSISTANT: Provenance = "assistant"
TOOL: Provenance = "tool"
META: Provenance = "meta"


def default_root() -> Path:
    """OpenCode's data folder: ``$XDG_DATA_HOME/opencode``, else ``~/.local/share/opencode``."""
    base = os.environ.get("XDG_DATA_HOME", "").strip()
    return (Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share") / "opencode"


def default_roots() -> list[Path]:
    """OpenCode's data folder (:func:`default_root`), where ``opencode.db`` and ``storage/`` are."""
    return [default_root()]


WAL_NAME = DB_NAME + "-wal"


def claims(path: Path) -> bool:
    """``opencode.db``, its write-ahead log ``opencode.db-wal`` (what a live session changes: the
    watcher hears it), or a session file of the older layout (``storage/session/<project>/*.json``).
    Not ``-shm``: a reader changes it too, so dreamtui's own reads would look like new rows."""
    path = Path(path)
    return path.name in (DB_NAME, WAL_NAME) or _storage_of(path) is not None


_OWNERS_MAX = 4096
_owners: dict[str, Path] = {}
"""A message's session file in the older layout (message id, or ``<storage>\\0<session id>``, ->
``storage/session/…/<session>.json``), learned from the changes heard (:func:`changed_source`);
emptied when full."""


def belongs(path: Path) -> bool:
    """Whether ``path`` is a message's or a part's file of the older layout
    (``storage/message/<session>/<message>.json``, ``storage/part/<message>/<part>.json``), by its name
    and folders alone: a file whose change is its session's (:func:`changed_source`), whose size and
    mtime the watcher's rescan keeps (the hook :func:`~..formats.belongs` asks)."""
    kind = path.parent.parent
    return path.suffix == ".json" and kind.name in ("message", "part") and kind.parent.name == "storage"


def changed_source(path: Path) -> Path | None:
    """The session file (older layout) whose session a changed file or folder that is not a transcript
    belongs to, else None; any path not below ``storage/message`` or ``storage/part`` is answered
    from its name alone. A live session of the
    older layout writes each new message as ``storage/message/<session>/<message>.json`` and its parts
    as ``storage/part/<message>/<part>.json`` and leaves its session file as it is: the watcher hears the
    session through these (the module-level hook a watcher asks, :func:`~..formats.source_of`). A part's
    message is known from its message's file heard before, else from the ``sessionID`` the part names."""
    path = Path(path)
    if path.suffix == ".json":  # a file: its folder names the session or the message
        parent, name = path.parent, path.stem
    else:
        parent, name = path, ""
    kind = parent.parent
    if kind.parent.name != "storage" or kind.name not in ("message", "part"):
        return None
    storage = kind.parent
    if kind.name == "message":
        found = _session_file(storage, parent.name)
        if found is not None and name:
            _remember(name, found)
        return found
    known = _owners.get(parent.name)
    if known is not None or not name:
        return known
    part = _json(path)  # a part heard before its message's file: the session it names
    session = part.get("sessionID") if part is not None else None
    return _session_file(storage, session) if isinstance(session, str) else None


def _session_file(storage: Path, session: str) -> Path | None:
    """``storage/session/<project>/<session>.json``, looked for in each project's folder (the one found
    last time looked at first)."""
    if not session or "/" in session or session in (".", ".."):
        return None
    known = _owners.get(f"{storage}\0{session}")
    if known is not None and os.path.lexists(known):
        return known
    for entry in scan_folder(storage / "session"):
        candidate = entry.path / f"{session}.json"
        if entry.is_dir and os.path.lexists(candidate):
            _remember(f"{storage}\0{session}", candidate)
            return candidate
    return None


def _remember(key: str, session_file: Path) -> None:
    if len(_owners) >= _OWNERS_MAX:
        _owners.clear()
    _owners[key] = session_file


# -- addressing a session -------------------------------------------------------------------------


def address(db: Path, session: str) -> Path:
    """The address of ``session`` inside the database ``db``: ``<db>#<session>`` (``address_of``)."""
    return Path(address_of(db, session))


def split(path: Path | str, member: str = "") -> tuple[Path, str] | None:
    """``(database, session id)`` for a database and a member, or for an address of one session
    (``split_address``); None for any other path (a session file of the older layout). The write-ahead
    log stands for its database."""
    if member:
        return _db_path(Path(path)), member
    file, inside = split_address(path)
    if inside:
        return _db_path(file), inside
    return None


def _db_path(path: Path) -> Path:
    return path.with_name(DB_NAME) if path.name == WAL_NAME else path


def _storage_of(path: Path) -> Path | None:
    """The ``storage`` folder of a session file ``storage/session/<project>/<session>.json``."""
    if (
        path.suffix == ".json"
        and path.parent.parent.name == "session"
        and path.parent.parent.parent.name == "storage"
    ):
        return path.parent.parent.parent
    return None


def project_name(directory: str, fallback: str) -> str:
    """A session's project folder name: ``encode_path`` of its working directory (as every format not
    grouped by project folder names it), ``fallback`` when there is none."""
    return encode_path(directory) if directory else fallback


# -- where the sessions are -----------------------------------------------------------------------


def _db_of(root: Path) -> Path:
    root = Path(root)
    return root if root.name.endswith(suffix) else root / DB_NAME


def _db_files(db: Path, skipped: list[Skipped] | None) -> list[TranscriptFile]:
    if not os.path.lexists(db):
        return []
    try:
        with agent_stores.reading(db) as conn:
            sessions = agent_stores.opencode_sessions(conn)
    except StoreUnreadable as exc:
        if skipped is not None:
            skipped.append(Skipped(str(db), exc.strerror or "cannot read it"))
        return []
    return [_file_of(db, s) for s in sessions]


def _file_of(db: Path, s: OpenCodeSession) -> TranscriptFile:
    kind: FileKind = "subagent" if s.parent_id else "main"
    return TranscriptFile(
        db,
        project_name(s.directory or s.worktree, s.project_id),
        s.parent_id or s.id,
        kind,
        s.id if s.parent_id else None,
        name,
        s.id,
    )


def _json(path: Path) -> dict[str, Any] | None:
    try:
        with open_regular(path) as fh:
            data = fh.read(MAX_JSON_BYTES + 1)
    except OSError:
        return None
    if len(data) > MAX_JSON_BYTES:
        return None
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def _json_files(storage: Path, skipped: list[Skipped] | None) -> list[TranscriptFile]:
    out: list[TranscriptFile] = []
    sessions = storage / "session"
    if not own_dir(storage, skipped) or not own_dir(sessions, skipped):  # never through a link
        return out
    for project in scan_folder(sessions, skipped, want=".json"):
        if not project.is_dir:
            continue
        for entry in scan_folder(project.path, skipped, want=".json", folders=False):
            if entry.is_file:
                out.append(describe(entry.path))
    return out


def discover(root: Path, skipped: list[Skipped] | None = None) -> list[TranscriptFile]:
    """Every session under OpenCode's data folder ``root``: those of ``opencode.db`` and those of the
    older ``storage/`` layout that the database does not hold (OpenCode copies them into it when it
    moves to the database). Main sessions before sub-agents'. Never raises: an unreadable database
    or folder is reported in ``skipped`` and the rest is still read."""
    root = Path(root)
    found = _db_files(_db_of(root), skipped)
    known = {f.member for f in found}
    if not root.name.endswith(suffix):
        found += [f for f in _json_files(root / "storage", skipped) if f.path.stem not in known]
    return sorted(found, key=lambda f: (f.project, f.session, f.kind != "main", str(f.path)))


def describe(path: Path, head: bytes | None = None) -> TranscriptFile:
    """A :class:`TranscriptFile` for a session path (either layout). A session the database no longer
    holds is described from its path alone."""
    where = split(path)
    path = Path(path)
    if where is not None:
        db, session = where
        try:
            with agent_stores.reading(db) as conn:
                rows = agent_stores.opencode_sessions(conn, session)
        except StoreUnreadable:
            rows = []
        if rows:
            return _file_of(db, rows[0])
        return TranscriptFile(db, db.stem, session, "main", None, name, session)
    info = _json(path) or {}
    parent = info.get("parentID") if isinstance(info.get("parentID"), str) else None
    directory = info.get("directory") if isinstance(info.get("directory"), str) else ""
    kind: FileKind = "subagent" if parent else "main"
    return TranscriptFile(
        path,
        project_name(str(directory), path.parent.name),
        parent or path.stem,
        kind,
        path.stem if parent else None,
    )


def session_files(root: Path, project: str, session: str) -> list[Path]:
    """A session's address first, then those of the sessions it started (its sub-agents), in either
    layout."""
    return [Path(f.address) for f in discover(root) if f.session == session]


def with_session(path: Path) -> list[Path]:
    """The session at ``path`` (an address, or a session file of the older layout) first, then the
    sessions it started."""
    tf = describe(path)
    where = split(path)
    if where is not None:
        try:
            with agent_stores.reading(where[0]) as conn:
                children = agent_stores.opencode_children(conn, where[1])
        except StoreUnreadable:
            children = []
        return [Path(path), *(address(where[0], c) for c in children)]
    storage = _storage_of(Path(path))
    if storage is None:
        return [Path(path)]
    return [
        Path(path),
        *(f.path for f in _json_files(storage, None) if f.session == tf.session and f.path != Path(path)),
    ]


def kind_of(path: Path) -> FileKind:
    """``main``, or ``subagent`` for a session another session started."""
    return describe(path).kind


def project_of(path: Path) -> str:
    """The project a session belongs to: its working directory as a folder name."""
    return describe(path).project


def session_of(path: Path) -> str:
    """The session a path belongs to (a sub-agent's: the session that started it)."""
    return describe(path).session


def is_main_file(root: Path, path: Path) -> bool:
    """A main session of the database (or of the older layout) under ``root``."""
    where = split(path)
    inside = where is not None and where[0] == _db_of(Path(root))
    inside = inside or _storage_of(Path(path)) == Path(root) / "storage"
    return inside and kind_of(path) == "main"


def cwd_of(path: Path) -> str:
    """The session's working directory: its ``directory`` column (or field), else the first one an
    assistant message names (``path.cwd``), else its project's worktree ('' when none)."""
    where = split(path)
    path = Path(path)
    if where is not None:
        db, session = where
        try:
            with agent_stores.reading(db) as conn:
                rows = agent_stores.opencode_sessions(conn, session)
                first = agent_stores.opencode_first_cwd(conn, session)
        except StoreUnreadable:
            return ""
        if not rows:
            return first
        return rows[0].directory or first or rows[0].worktree
    info = _json(path) or {}
    directory = info.get("directory")
    return directory if isinstance(directory, str) else ""


def is_auto_dream(path: Path) -> bool:
    """OpenCode has no background memory consolidation of its own."""
    return False


# -- the records of a session ---------------------------------------------------------------------


def _decode(raw: bytes) -> dict[str, Any] | None:
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def _message_info(message: dict[str, Any]) -> dict[str, Any]:
    """What a message says about each of its parts: ``role``, ``compaction`` (an assistant's
    compaction summary) and ``cwd``."""
    where = message.get("path")
    cwd = where.get("cwd") if isinstance(where, dict) else None
    role = message.get("role")
    return {
        "role": role if isinstance(role, str) else None,
        "compaction": message.get("summary") is True or message.get("mode") == "compaction",
        "cwd": cwd if isinstance(cwd, str) else None,
    }


def record_obj(
    part: dict[str, Any], message: dict[str, Any], ids: dict[str, Any], subagent: bool
) -> dict[str, Any]:
    """The decoded record of one part: the ids (``id``, ``messageID``, ``sessionID``) and ``time``
    (ms), what its message says about it (``role``, ``compaction``, ``cwd``), ``subagent`` (a
    sub-agent's session) and the part as stored (under ``part``)."""
    return {**ids, **_message_info(message), "subagent": subagent, "part": part}


_Info = tuple[str | None, bool, str | None]
"""What a message says about its parts: ``(role, compaction, cwd)`` (:func:`_message_info`)."""


def _read_session(
    db: Path, session: str
) -> tuple[list[OpenCodeSession], dict[Any, _Info], list[agent_stores.OpenCodeRow]]:
    """One read of a session in the database: its ``session`` row (none when it is gone), what each
    message says about its parts, and its parts in order (messages by creation, a message's parts by
    id). Raises ``OSError`` (:class:`StoreUnreadable`) when the database cannot be read now."""
    with agent_stores.reading(db) as conn:
        rows = agent_stores.opencode_sessions(conn, session)
        messages = agent_stores.opencode_messages(conn, session)
        parts = agent_stores.opencode_parts(conn, session)
    order: dict[Any, int] = {}
    infos: dict[Any, _Info] = {}
    for m in messages:
        order[m[0]] = len(order)
        info = _message_info(_decode(as_bytes(m[3])) or {})
        infos[m[0]] = (info["role"], info["compaction"], info["cwd"])
    last = len(order)
    parts.sort(key=lambda p: (order.get(p[1], last), str(p[1]), str(p[0])))
    return rows, infos, parts


_NO_INFO: _Info = (None, False, None)


def _db_records(db: Path, session: str) -> Iterator[SourceRecord]:
    rows, infos, parts = _read_session(db, session)
    subagent = bool(rows and rows[0].parent_id)
    empty = _NO_INFO
    loads, decode_error = orjson.loads, orjson.JSONDecodeError
    for locator, (part_id, message_id, created, data) in enumerate(parts, start=1):
        if type(data) is not bytes or len(data) > agent_stores.MAX_ROW_BYTES or type(part_id) is not str:
            continue
        try:
            part = loads(data)
        except decode_error:
            continue
        if type(part) is not dict:
            continue
        role, compaction, cwd = infos.get(message_id, empty)
        obj = {
            "id": part_id,
            "messageID": message_id if type(message_id) is str else None,
            "sessionID": session,
            "time": created if type(created) is int else None,
            "role": role,
            "compaction": compaction,
            "cwd": cwd,
            "subagent": subagent,
            "part": part,
        }
        yield SourceRecord(locator, part_id, data, obj)


def _json_records(path: Path) -> Iterator[SourceRecord]:
    storage = _storage_of(path)
    info = _json(path)
    if storage is None or info is None:
        raise StoreUnreadable(path, "it is not an OpenCode session file")
    session = path.stem
    subagent = isinstance(info.get("parentID"), str) and bool(info.get("parentID"))
    messages: list[tuple[int, str, dict[str, Any]]] = []
    linked = not own_dir(storage / "message") or not own_dir(storage / "part")  # never through a link
    for entry in () if linked else scan_folder(storage / "message" / session, want=".json"):
        if entry.is_file:
            m = _json(entry.path)
            if m is not None:
                created = m.get("time", {}).get("created") if isinstance(m.get("time"), dict) else None
                messages.append((created if isinstance(created, int) else 0, entry.path.stem, m))
    locator = 0
    for _, message_id, message in sorted(messages):
        for entry in scan_folder(storage / "part" / message_id, want=".json"):
            if not entry.is_file:
                continue
            locator += 1
            try:
                with open_regular(entry.path) as fh:
                    raw = fh.read(MAX_JSON_BYTES + 1)
            except OSError:
                continue
            part = _decode(raw) if len(raw) <= MAX_JSON_BYTES else None
            if part is None:
                continue
            when = part.get("time", {}).get("start") if isinstance(part.get("time"), dict) else None
            ids = {
                "id": entry.path.stem,
                "messageID": message_id,
                "sessionID": session,
                "time": when if isinstance(when, int) else message.get("time", {}).get("created"),
            }
            yield SourceRecord(locator, entry.path.stem, raw, record_obj(part, message, ids, subagent))


def records(path: Path, member: str = "") -> Iterator[SourceRecord]:
    """The records of one session (either layout: ``member`` the session inside the database at
    ``path``, or ``path`` an address), one per part, in order: messages by creation, a message's parts
    by id. Everything is read before the first record is given (the database's read transaction has
    ended by then). Raises :class:`~dreamtui.core.errors.TranscriptError` (one line) when the database
    or file cannot be read now; a part that is not a JSON object is left out."""
    where = split(path, member)
    if where is None and Path(path).name == DB_NAME:
        raise TranscriptError(f"cannot read {path}: which session of the database is not said")
    try:
        found = list(_db_records(*where) if where is not None else _json_records(Path(path)))
    except OSError as exc:
        raise TranscriptError(f"cannot read {exc.filename or path}: {exc.strerror or exc}") from None
    yield from found


# -- whose words ----------------------------------------------------------------------------------


_INJECTED = re.compile(
    r"^(?:Called the \w+ tool with the following input:|<path>[^<]*</path>\s*<content>|<file>\n)"
)


def is_injected(text: str) -> bool:
    """Whether a user text is what OpenCode writes itself when the person attaches a file: its fixed
    sentence ("Called the Read tool with the following input: …") or the read tool's output
    (``<path>…</path><content>…``, ``<file>``). Current versions mark those parts ``synthetic``; an
    older version's unmarked part is caught here."""
    return _INJECTED.match(text.lstrip()) is not None


def _part(obj: Any) -> dict[str, Any]:
    part = obj.get("part") if isinstance(obj, dict) else None
    return part if isinstance(part, dict) else {}


def pieces(obj: Any) -> list[Piece]:
    """The text pieces of one record, each with its provenance (see the module docstring); a tool
    part's output is ``tool``; step, snapshot and patch parts have none. Never raises."""
    if not isinstance(obj, dict):
        return []
    part = _part(obj)
    ptype = part.get("type")
    role = obj.get("role")
    text = part.get("text")
    if ptype == "text" and isinstance(text, str):
        path: JsonPath = ("part", "text")
        if role == "user":
            if obj.get("subagent") is True:
                return [Piece(META, text, "parent", path)]
            if part.get("synthetic") is True or part.get("ignored") is True or is_injected(text):
                return [Piece(META, text, "context", path)]
            cleaned = text.strip()
            return [Piece(PERSON, cleaned, "prompt", path)] if cleaned else []
        if role == "assistant":
            if obj.get("compaction") is True:
                return [Piece(META, text, "compact_summary", path)]
            return [Piece(ASSISTANT, text, "text", path)]
        return [Piece(META, text, "meta", path)]
    if ptype == "reasoning" and isinstance(text, str):
        return [Piece(ASSISTANT, text, "thinking", ("part", "text"))]
    if ptype == "tool":
        state = part.get("state")
        if isinstance(state, dict):
            for field in ("output", "error"):
                if isinstance(state.get(field), str):
                    return [Piece(TOOL, state[field], "tool_result", ("part", "state", field))]
    return []


def provenance_of(obj: Any, path: JsonPath) -> Provenance:
    """Whose words the string at ``path`` inside the record ``obj`` is: only a piece's own string
    (:func:`pieces`) has its piece's provenance; every other string is ``tool`` inside a tool part,
    else ``meta``."""
    path = tuple(path)
    for piece in pieces(obj):
        if piece.path == path:
            return piece.role
    if path[:1] == ("part",) and _part(obj).get("type") == "tool":
        return TOOL
    return META


def provenance(obj: dict[str, Any], path: JsonPath, value: str, holds: Callable[[str], bool]) -> Provenance:
    """:func:`provenance_of`; a quote is the person's only in their own text part (the cleaned text is
    the stored text without its surrounding blanks, so ``holds`` needs no narrowing)."""
    return provenance_of(obj, path)


# -- where a record is, its tool calls, the raw view ----------------------------------------------


_SECONDS: dict[int, str] = {}


def _iso(ms: Any) -> str | None:
    """Milliseconds since the epoch as ISO 8601 (``2026-12-07T01:30:46.123Z``), None for anything
    else. The seconds' text is cached: a session's parts share their seconds, and every record's
    reference asks for its time."""
    if type(ms) is not int or not 0 < ms < 10**14:
        return None
    second, milli = divmod(ms, 1000)
    head = _SECONDS.get(second)
    if head is None:
        if len(_SECONDS) > 65536:
            _SECONDS.clear()
        head = _SECONDS[second] = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{head}.{milli:03d}Z"


def ref(obj: dict[str, Any]) -> RecordRef:
    """A part's id, its time, its message's working directory, and whether a sub-agent wrote it."""
    uuid = obj.get("id")
    return RecordRef(
        uuid if isinstance(uuid, str) else None,
        _iso(obj.get("time")),
        obj.get("cwd") if isinstance(obj.get("cwd"), str) else None,
        obj.get("subagent") is True,
    )


def is_copy(obj: dict[str, Any]) -> bool:
    """OpenCode writes each part once; none repeats another."""
    return False


EDIT_TOOLS = frozenset({"edit", "write", "multiedit"})
"""OpenCode's tools that write a file, named by their input's ``filePath``."""
PATCH_TOOLS = frozenset({"patch", "apply_patch"})
"""Tools that apply a patch: the first file it adds or updates is the one named."""
SHELL_TOOL = "bash"
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update) File: (.+)$", re.M)


def tool_calls(obj: dict[str, Any]) -> list[ToolCall]:
    """A ``tool`` part as a :class:`ToolCall`: the file an edit tool wrote and the command ``bash`` ran."""
    part = _part(obj)
    if part.get("type") != "tool" or not isinstance(part.get("tool"), str):
        return []
    state = part.get("state")
    args = state.get("input") if isinstance(state, dict) else None
    args = args if isinstance(args, dict) else {}
    tool = part["tool"]
    wrote = command = None
    if tool in EDIT_TOOLS and isinstance(args.get("filePath"), str):
        wrote = args["filePath"]
    elif tool in PATCH_TOOLS:
        text = args.get("patchText") or args.get("patch") or ""
        m = _PATCH_FILE.search(text) if isinstance(text, str) else None
        wrote = m.group(1).strip() if m else None
    elif tool == SHELL_TOOL and isinstance(args.get("command"), str):
        command = args["command"]
    return [ToolCall(tool, wrote, command)]


BOOKKEEPING_PARTS = frozenset(
    {"step-start", "step-finish", "snapshot", "patch", "retry", "compaction", "agent"}
)
"""Part types that are bookkeeping, not conversation: one dim line each in the evidence window."""


def render(line: int, obj: dict[str, Any]) -> RawRecord:
    """A part as the evidence window shows it: ``<role>/<part type>``, its time, its pieces (a tool
    part: its call, then its output)."""
    part = _part(obj)
    ptype = str(part.get("type") or "?")
    texts: list[tuple[str, str]] = []
    if ptype == "tool":
        state = part.get("state") if isinstance(part.get("state"), dict) else {}
        args = state.get("input") if isinstance(state, dict) else None
        call = orjson.dumps(args if args is not None else {}).decode("utf-8", "replace")
        texts.append(("call", f"{part.get('tool') or '?'} {call}"))
    texts += [(str(p.role), p.text) for p in pieces(obj)]
    bookkeeping = ptype in BOOKKEEPING_PARTS
    return RawRecord(
        line,
        f"{obj.get('role') or '?'}/{ptype}",
        _iso(obj.get("time")) or "",
        texts,
        kind=ptype if bookkeeping else "",
        bookkeeping=bookkeeping,
        folds=bookkeeping,
    )


# -- the digest -------------------------------------------------------------------------------------


class _Digester(PiecesDigester):
    """The generic digest of pieces, with one shortcut: only a ``text`` part can hold kept words (a
    tool part is tool output, a reasoning part thinking, the rest bookkeeping), so any other part is
    passed over without listing its pieces, its working directory still noted."""

    def record(self, obj: dict[str, Any], line_no: int, out: list[Turn]) -> None:
        part = obj.get("part")
        if type(part) is dict and part.get("type") != "text":
            if not self.cwd and type(obj.get("cwd")) is str:
                self.cwd = obj["cwd"]
            return
        super().record(obj, line_no, out)


def digester(
    file: str,
    kind: FileKind,
    state: DigestState,
    stats: DigestStats,
    interrupts: bool,
    cheap: bool = True,
) -> _Digester:
    """The digest of one session's records (``formats/generic.py``, with the shortcut of
    :class:`_Digester`); ``cheap`` changes nothing here."""
    return _Digester(pieces, ref, file, kind, state, stats, interrupts)


def digest_records(
    address: Path, kind: FileKind | None, state: DigestState, stats: DigestStats, interrupts: bool
) -> tuple[TranscriptFile, list[Turn], str] | None:
    """The digest of one session of the database read once (``digest.digest_file``'s fast path; None
    for a session of the older layout: its records are read). What it gives is what :func:`describe`,
    :func:`records` and :func:`digester` give together (the same turns, stats and description:
    ``tests/test_formats_fast_digest.py``), without a second connection for the description and
    without building a record for the parts the digest drops (every part that is not ``text``: its
    data is still decoded, so a part is counted exactly when :func:`records` would give it)."""
    where = split(address)
    if where is None:
        return None
    db, session = where
    try:
        rows, infos, parts = _read_session(db, session)
    except OSError as exc:
        raise TranscriptError(f"cannot read {exc.filename or db}: {exc.strerror or exc}") from None
    tf = _file_of(db, rows[0]) if rows else TranscriptFile(db, db.stem, session, "main", None, name, session)
    turns: list[Turn] = []
    d = _Digester(pieces, ref, str(address), kind or tf.kind, state, stats, interrupts)
    subagent = bool(rows and rows[0].parent_id)
    empty = _NO_INFO
    loads, decode_error, limit = orjson.loads, orjson.JSONDecodeError, agent_stores.MAX_ROW_BYTES
    count = size = 0
    file, new_person, new_block = str(address), state.new_person, state.new_block
    plain_kind = d.kind in ("main", "subagent")  # another kind asked for: every text part as a record
    main = d.kind == "main"
    reply_kind = "subagent" if d.kind == "subagent" or subagent else "text"
    for locator, (part_id, message_id, created, data) in enumerate(parts, start=1):
        if type(data) is not bytes or len(data) > limit or type(part_id) is not str:
            continue
        try:
            part = loads(data)
        except decode_error:
            continue
        if type(part) is not dict:
            continue
        count += 1
        size += len(data)
        if part.get("type") != "text":  # _Digester.record's shortcut, without the record
            if not d.cwd:
                cwd = infos.get(message_id, empty)[2]
                if type(cwd) is str:
                    d.cwd = cwd
            continue
        role, compaction, cwd = infos.get(message_id, empty)
        text = part.get("text")
        if type(text) is not str or not plain_kind or type(created) is not int:
            obj = {
                "id": part_id,
                "messageID": message_id if type(message_id) is str else None,
                "sessionID": session,
                "time": created if type(created) is int else None,
                "role": role,
                "compaction": compaction,
                "cwd": cwd,
                "subagent": subagent,
                "part": part,
            }
            d.record(obj, locator, turns)
            continue
        # a text part, inline: what PiecesDigester._record makes of pieces() and ref() for it
        if not d.cwd and cwd:
            d.cwd = cwd
        if role == "user":
            if subagent or part.get("synthetic") is True or part.get("ignored") is True or is_injected(text):
                continue
            said = text.strip()
            if not said or not main:
                continue
            ts = _iso(created)
            if ts and not new_person(ts, said):
                continue
            turns.append(Turn("person", said, file, locator, part_id, ts, "prompt"))
            stats.chars += len(said)
        elif role == "assistant" and not compaction:
            said = text.strip()
            if not said or (part_id and not new_block(part_id, text)):
                continue
            turns.append(Turn("assistant", said, file, locator, part_id, _iso(created), reply_kind))
            stats.chars += len(said)
    stats.lines, stats.bytes = count, size
    return tf, turns, d.cwd


def shared_reads() -> AbstractContextManager[None]:
    """The format's optional hook for a pass that digests many sessions (``digest.shared_reads``):
    one ``opencode.db`` holds every session: the sessions read in a pass share one connection to it,
    each read still its own short read transaction, the connection closed when the pass ends
    (:func:`dreamtui.core.ledger.agent_stores.sharing`)."""
    return agent_stores.sharing()


def keep(buf: bytes, start: int, end: int) -> bool:
    """Records are not read as lines: every record is kept for the digest to look at."""
    return True


def watch_paths(path: Path) -> list[Path]:
    """The files whose change means a session may have new records: the database and its write-ahead
    log (a live session changes ``opencode.db-wal``, not the database file), or the older layout's
    session file and its message and part folders."""
    where = split(Path(path))
    if where is not None:
        db = where[0]
        return [db, Path(f"{db}-wal")]
    storage = _storage_of(Path(path))
    if storage is None:
        return [Path(path)]
    return [Path(path), storage / "message" / Path(path).stem]


def fingerprint(path: Path) -> str:
    """A short digest of what :func:`watch_paths` shows (sizes and change times): equal while nothing
    was written."""
    parts = []
    for p in watch_paths(path):
        try:
            st = os.lstat(p)  # never through a link
            parts.append(f"{p}:{st.st_size}:{st.st_mtime_ns}")
        except OSError:
            parts.append(f"{p}:-")
    return hashlib.blake2b("|".join(parts).encode(), digest_size=8).hexdigest()
