"""Find Claude Code transcript files and tell main sessions, sub-agents and compaction helpers apart.

Layouts under the transcripts root (``~/.claude/projects``)::

    <project>/<session>.jsonl                          main session (1.0.x sidechains inside it)
    <project>/agent-<8 hex>.jsonl                      2.0.x sub-agent (session read from its lines)
    <project>/<session>/subagents/agent-<id>.jsonl     2.1.x sub-agent (+ optional .meta.json)
    <project>/<session>/subagents/workflows/<id>/agent-<x>.jsonl   a workflow's sub-agent (+ .meta.json)
    .../agent-acompact-*.jsonl                         the compaction helper: no human words
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Literal

import msgspec

from dreamtui.core.files import Skipped, is_dir, open_regular, regular_problem, scan_folder

FileKind = Literal["main", "subagent", "compact"]
_KIND_ORDER = {"main": 0, "subagent": 1, "compact": 2}
_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*"([^"\\]{1,200})"')
_HEAD_BYTES = 64 * 1024
EXTRACTOR_WORKDIR = "dreamtui-extractor-cwd"
"""The working directory (under dreamtui's state folder) of the ``claude-code`` extractor's own
Claude Code calls. Claude Code names a project folder after its working directory, every character
but ASCII letters and digits a dash, so a transcript those calls left (they run with session
persistence off, so none should) lives in a folder ending with :data:`EXTRACTOR_PROJECT_SUFFIX`,
which :func:`discover` skips: dreamtui never dreams its own extraction calls."""
EXTRACTOR_PROJECT_SUFFIX = "-" + re.sub(r"[^A-Za-z0-9]", "-", EXTRACTOR_WORKDIR)


def is_extractor_project(name: str) -> bool:
    """Whether a project folder is the one of the claude-code extractor's own working directory."""
    return name.endswith(EXTRACTOR_PROJECT_SUFFIX)


class TranscriptFile(msgspec.Struct, frozen=True):
    """One transcript file: which project and session it belongs to, and what it is.

    A frozen msgspec struct (equal, hashable and immutable as a frozen dataclass is): every digest
    makes one, in 0.1 µs where a frozen dataclass took 0.4."""

    path: Path
    project: str
    session: str
    kind: FileKind
    agent_id: str | None = None


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
        return TranscriptFile(path, up(3), up(2), kind, agent)
    if agent is not None and up(2) == "workflows" and up(3) == "subagents":  # subagents/workflows/<id>/
        return TranscriptFile(path, up(5), up(4), kind, agent)
    session = stem if agent is None else session_id_in(path, head) or stem
    return TranscriptFile(path, up(1), session, kind, agent)


def _sort_key(tf: TranscriptFile) -> tuple[str, str, int, str]:
    return (tf.project, tf.session, _KIND_ORDER[tf.kind], str(tf.path))


def _project_files(project_dir: Path, skipped: list[Skipped] | None = None) -> list[Path]:
    found: list[Path] = []
    for entry in scan_folder(project_dir, skipped):
        if entry.is_file:
            found.append(entry.path)
        elif entry.is_dir:
            sub = entry.path / "subagents"
            if is_dir(sub):
                found.extend(_subagent_files(sub, skipped))
    return found


def _subagent_files(sub: Path, skipped: list[Skipped] | None = None) -> list[Path]:
    """``agent-*.jsonl`` files in a ``subagents`` folder and in its ``workflows/<id>/`` folders
    (the ``.meta.json`` beside them are not transcripts)."""

    def agents(folder: Path) -> list[Path]:
        return [
            e.path
            for e in scan_folder(folder, skipped)
            if e.is_file and e.name.startswith("agent-") and e.name.endswith(".jsonl")
        ]

    found = agents(sub)
    workflows = sub / "workflows"
    if is_dir(workflows):
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
    for entry in scan_folder(root, skipped):
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
