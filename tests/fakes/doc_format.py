"""A whole-file transcript format for the tests of the seam's ``records`` path: a JSON document
``{"cwd": …, "messages": [{"id", "type": user|model|tool, "text", "ts"}]}`` named ``*.chat.json``,
rewritten whole as the session grows (the shape of Gemini CLI's older chats, simplified; hand-written,
not any agent's real format). :func:`registered` puts it in the registry for one test."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from dreamtui.core.errors import TranscriptError
from dreamtui.core.files import is_dir, open_regular, scan_folder
from dreamtui.core.ingest import formats
from dreamtui.core.ingest.formats.generic import PiecesDigester
from dreamtui.core.ingest.formats.protocol import Piece, RecordRef, SourceRecord, ToolCall, TranscriptFile
from dreamtui.core.models import RawRecord
from dreamtui.core.repository import encode_path

name = "doc-chat"
agent = "Doc Chat"
layout = "records"
suffix = ".chat.json"
tool_call_hint = b"tool"


def default_roots() -> list[Path]:
    return [Path.home() / ".doc-chat"]


def claims(path: Path) -> bool:
    return path.name.endswith(suffix)


def _load(path: Path) -> dict[str, Any]:
    try:
        with open_regular(path) as fh:
            data = json.loads(fh.read())
    except OSError as exc:
        raise TranscriptError(f"cannot read transcript {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise TranscriptError(f"{path} is not a whole JSON document yet ({exc.__class__.__name__})") from exc
    if not isinstance(data, dict):
        raise TranscriptError(f"{path} is not a chat document")
    return data


def records(path: Path, member: str = "") -> Iterator[SourceRecord]:
    data = _load(Path(path))
    for i, msg in enumerate(data.get("messages") or [], start=1):
        if isinstance(msg, dict):
            obj = {**msg, "cwd": data.get("cwd")}
            yield SourceRecord(i, str(msg.get("id") or i), json.dumps(msg, sort_keys=True).encode(), obj)


def describe(path: Path, head: bytes | None = None) -> TranscriptFile:
    try:
        cwd = str(_load(Path(path)).get("cwd") or "")
    except TranscriptError:
        cwd = ""
    return TranscriptFile(
        Path(path),
        encode_path(cwd) if cwd else "doc-chat",
        Path(path).name.removesuffix(suffix),
        "main",
        None,
        name,
    )


def discover(root: Path, skipped: list | None = None) -> list[TranscriptFile]:
    if not is_dir(root):
        return []
    return [describe(e.path) for e in scan_folder(root, skipped, want=suffix) if e.is_file]


def session_files(root: Path, project: str, session: str) -> list[Path]:
    return [p for p in [Path(root) / f"{session}{suffix}"] if p.exists()]


def with_session(path: Path) -> list[Path]:
    return [Path(path)]


def kind_of(path: Path) -> str:
    return "main"


def project_of(path: Path) -> str:
    return describe(path).project


def session_of(path: Path) -> str:
    return describe(path).session


def is_main_file(root: Path, path: Path) -> bool:
    return claims(Path(path))


def cwd_of(path: Path) -> str:
    try:
        return str(_load(Path(path)).get("cwd") or "")
    except TranscriptError:
        return ""


def is_auto_dream(path: Path) -> bool:
    return False


_ROLES = {"user": ("person", "prompt"), "model": ("assistant", "text"), "tool": ("tool", "tool_result")}


def pieces(obj: Any) -> list[Piece]:
    if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
        return []
    role, kind = _ROLES.get(str(obj.get("type")), ("meta", "meta"))
    return [Piece(role, obj["text"].strip() if role == "person" else obj["text"], kind, ("text",))]  # type: ignore[arg-type]


def provenance(obj: dict[str, Any], path: tuple, value: str, holds: Callable[[str], bool]) -> str:
    found = [p.role for p in pieces(obj) if p.path == tuple(path)]
    return found[0] if found else "meta"


def ref(obj: dict[str, Any]) -> RecordRef:
    def s(v: Any) -> str | None:
        return v if isinstance(v, str) else None

    return RecordRef(s(obj.get("id")), s(obj.get("ts")), s(obj.get("cwd")), False)


def is_copy(obj: dict[str, Any]) -> bool:
    return False


def tool_calls(obj: dict[str, Any]) -> list[ToolCall]:
    return []


def render(line: int, obj: dict[str, Any]) -> RawRecord:
    return RawRecord(
        line, str(obj.get("type") or "?"), str(obj.get("ts") or ""), [(p.role, p.text) for p in pieces(obj)]
    )


def digester(file, kind, state, stats, interrupts, cheap=True):  # type: ignore[no-untyped-def]
    return PiecesDigester(pieces, ref, file, kind, state, stats, interrupts)


def keep(buf: bytes, start: int, end: int) -> bool:
    return True


def write(path: Path, cwd: str, messages: list[tuple[str, str, str]]) -> Path:
    """Write the whole document: ``messages`` as ``(id, type, text)``, timestamps in order."""
    doc = {
        "cwd": cwd,
        "messages": [
            {"id": mid, "type": kind, "text": text, "ts": f"2026-03-10T21:00:{i:02d}.000Z"}
            for i, (mid, kind, text) in enumerate(messages)
        ],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return path


@contextmanager
def registered() -> Iterator[None]:
    """This module in the registry, for the length of a ``with``."""
    import sys

    module = sys.modules[__name__]
    formats.FORMATS[name] = module  # type: ignore[assignment]
    formats._claimed.cache_clear()
    try:
        yield
    finally:
        formats.FORMATS.pop(name, None)
        formats._claimed.cache_clear()
