"""A transcript format written for ``tests/test_format_seam.py``: proof that a new agent is one module.

"PlainChat" is no real agent. It is the smallest module that answers the
:class:`~dreamtui.core.ingest.formats.protocol.TranscriptFormat` protocol: JSON lines appended to
``$PLAINCHAT_HOME/chats/<session>.pchat``, a first ``{"type": "start", "cwd": …}`` line, then
``{"type": "person" | "reply" | "tool", "id", "at", "text"}`` lines. It is registered in the tests with
one entry in ``formats.FORMATS`` and nothing else in dreamtui is told about it; the module imports
only what CONTRIBUTING.md's "Trace 1" says a format may (the protocol, the shared line readers, the
generic digester, ``core.files``, ``core.models``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dreamtui.core.files import Skipped, open_regular, regular_problem, scan_folder
from dreamtui.core.ingest.formats.generic import PiecesDigester
from dreamtui.core.ingest.formats.lines import json_lines_records
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
from dreamtui.core.models import DigestStats, Provenance, RawRecord

if TYPE_CHECKING:
    from dreamtui.core.ingest.digest import DigestState

name = "plainchat"
agent = "PlainChat"
label = "Plain"
layout: Layout = "lines"
suffix = ".pchat"
tool_call_hint = b'"tool"'

_ROLES: dict[str, Provenance] = {"person": "person", "reply": "assistant", "tool": "tool", "start": "meta"}


def _encode(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", path.rstrip("/") or "/")


def default_roots() -> list[Path]:
    """``$PLAINCHAT_HOME/chats``."""
    return [Path(os.environ.get("PLAINCHAT_HOME", str(Path.home() / ".plainchat"))) / "chats"]


def claims(path: Path) -> bool:
    """A ``*.pchat`` file in a ``chats`` folder."""
    path = Path(path)
    return path.name.endswith(suffix) and path.parent.name == "chats"


def cwd_of(path: Path) -> str:
    """The ``cwd`` of the first line."""
    try:
        with open_regular(path) as fh:
            first = fh.readline()
    except OSError:
        return ""
    obj, _ = decode_line(first.rstrip(b"\n"))
    cwd = obj.get("cwd") if obj else None
    return cwd if isinstance(cwd, str) else ""


def describe(path: Path, head: bytes | None = None) -> TranscriptFile:
    """A session per file, filed under its working directory's key."""
    path = Path(path)
    cwd = cwd_of(path)
    return TranscriptFile(path, _encode(cwd) if cwd else "plainchat", session_of(path), "main", None, name)


def discover(root: Path, skipped: list[Skipped] | None = None) -> list[TranscriptFile]:
    """Every ``*.pchat`` directly in ``root``."""
    found = [
        describe(e.path) for e in scan_folder(Path(root), skipped, want=suffix, follow=True) if e.is_file
    ]
    return [tf for tf in found if claims(tf.path)]


def session_files(root: Path, project: str, session: str) -> list[Path]:
    """The one file of a session."""
    path = Path(root) / f"{session}{suffix}"
    return [path] if regular_problem(path) is None else []  # a regular file, never a link


def with_session(path: Path) -> list[Path]:
    """A session is one file."""
    return [Path(path)]


def kind_of(path: Path) -> FileKind:
    """Every file is a main session."""
    return "main"


def project_of(path: Path) -> str:
    """The working directory's key."""
    return describe(Path(path)).project


def session_of(path: Path) -> str:
    """The file's name without ``.pchat``."""
    return Path(path).name.removesuffix(suffix)


def is_main_file(root: Path, path: Path) -> bool:
    """Every claimed file."""
    return claims(Path(path))


def is_auto_dream(path: Path) -> bool:
    """PlainChat has no background memory work."""
    return False


def records(path: Path, member: str = "") -> Iterator[SourceRecord]:
    """Each decoded line."""
    return json_lines_records(path, member)


def pieces(obj: Any) -> list[Piece]:
    """The record's ``text``, with whose words it is by ``type``."""
    if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
        return []
    role = _ROLES.get(str(obj.get("type")), "meta")
    return [Piece(role, obj["text"], "prompt" if role == "person" else "text", ("text",))]


def provenance(obj: dict[str, Any], path: JsonPath, value: str, holds: Callable[[str], bool]) -> Provenance:
    """Only a ``text`` of a record is anyone's words; the rest is metadata."""
    return _ROLES.get(str(obj.get("type")), "meta") if path == ("text",) else "meta"


def ref(obj: dict[str, Any]) -> RecordRef:
    """Its id, time and working directory."""
    return RecordRef(obj.get("id"), obj.get("at"), obj.get("cwd"), False)


def is_copy(obj: dict[str, Any]) -> bool:
    """No record repeats another."""
    return False


def tool_calls(obj: dict[str, Any]) -> list[ToolCall]:
    """A ``tool`` record is the output of a command, not a call that writes."""
    return []


def render(line: int, obj: dict[str, Any]) -> RawRecord:
    """The record's type, time and text."""
    texts = [(p.role, p.text) for p in pieces(obj)]
    return RawRecord(line, str(obj.get("type", "")), str(obj.get("at") or ""), texts)


def digester(
    file: str, kind: FileKind, state: DigestState, stats: DigestStats, interrupts: bool, cheap: bool = True
) -> PiecesDigester:
    """The generic digester over :func:`pieces`."""
    return PiecesDigester(pieces, ref, file, kind, state, stats, interrupts)


def keep(buf: bytes, start: int, end: int) -> bool:
    """A line may hold kept words unless it is a tool's output."""
    return b'"type":"tool"' not in buf[start:end]
