"""Find Claude Code transcript files and tell main sessions, sub-agents and compaction helpers apart.

Layouts under the transcripts root (``~/.claude/projects``)::

    <project>/<session>.jsonl                          main session (1.0.x sidechains inside it)
    <project>/agent-<8 hex>.jsonl                      2.0.x sub-agent (session read from its lines)
    <project>/<session>/subagents/agent-<id>.jsonl     2.1.x sub-agent (+ optional .meta.json)
    .../agent-acompact-*.jsonl                         the compaction helper: no human words
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from dreamtui.core.files import Skipped, is_dir, open_regular, regular_problem, scan_folder

FileKind = Literal["main", "subagent", "compact"]
_KIND_ORDER = {"main": 0, "subagent": 1, "compact": 2}
_SESSION_ID = re.compile(rb'"sessionId"\s*:\s*"([^"\\]{1,200})"')
_HEAD_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class TranscriptFile:
    """One transcript file: which project and session it belongs to, and what it is."""

    path: Path
    project: str
    session: str
    kind: FileKind
    agent_id: str | None = None


def agent_id_of(path: Path) -> str | None:
    """``agent-<id>.jsonl`` -> ``<id>``; None for a main session file."""
    stem = Path(path).name.removesuffix(".jsonl")
    return stem[len("agent-"):] if stem.startswith("agent-") else None


def kind_of(path: Path) -> FileKind:
    """``main``, ``subagent`` or ``compact`` (``agent-acompact-*``) by the file name."""
    agent = agent_id_of(path)
    if agent is None:
        return "main"
    return "compact" if agent.startswith("acompact") else "subagent"


def _in_subagents_dir(path: Path) -> bool:
    return path.parent.name == "subagents"


def project_of(path: Path) -> str:
    """The project folder name a transcript belongs to (in every layout)."""
    path = Path(path)
    if _in_subagents_dir(path):
        return path.parent.parent.parent.name
    return path.parent.name


def session_id_in(path: Path) -> str | None:
    """The ``sessionId`` of the first record that has one, read from the file's first bytes."""
    try:
        with open_regular(path) as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError:
        return None
    m = _SESSION_ID.search(head)
    return m.group(1).decode("utf-8", "replace") if m else None


def session_of(path: Path) -> str:
    """The session a transcript belongs to: its file name, its folder (2.1.x sub-agents), or, for a
    2.0.x ``agent-*.jsonl`` beside the sessions, the ``sessionId`` inside it."""
    path = Path(path)
    if _in_subagents_dir(path):
        return path.parent.parent.name
    if agent_id_of(path) is not None:
        return session_id_in(path) or path.name.removesuffix(".jsonl")
    return path.name.removesuffix(".jsonl")


def describe(path: Path) -> TranscriptFile:
    """A :class:`TranscriptFile` for one path (what the ``*_of`` functions say, the path parsed once)."""
    path = Path(path)
    stem = path.name.removesuffix(".jsonl")
    agent = stem[len("agent-"):] if stem.startswith("agent-") else None
    kind: FileKind = "main" if agent is None else "compact" if agent.startswith("acompact") else "subagent"
    parent = path.parent
    if parent.name == "subagents":
        return TranscriptFile(path, parent.parent.parent.name, parent.parent.name, kind, agent)
    session = stem if agent is None else session_id_in(path) or stem
    return TranscriptFile(path, parent.name, session, kind, agent)


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
                found.extend(e.path for e in scan_folder(sub, skipped)
                             if e.is_file and e.name.startswith("agent-"))
    return found


def discover(root: Path, skipped: list[Skipped] | None = None) -> list[TranscriptFile]:
    """Every transcript under ``root`` (the projects folder), main files before their sub-agents.

    A missing or unreadable root gives ``[]``. ``.jsonl`` files directly inside ``root`` are taken
    as one project named after ``root``. Never raises and never opens anything but regular files:
    a project folder that cannot be listed or searched, and a ``*.jsonl`` that is a FIFO, a device
    or a socket, are left out and reported in ``skipped`` (one :class:`Skipped` each), so one bad
    project never hides the others.
    """
    root = Path(root)
    if not is_dir(root):
        return []
    paths: list[Path] = []
    for entry in scan_folder(root, skipped):
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
    out.extend(describe(e.path) for e in scan_folder(sub) if e.is_file and e.name.startswith("agent-"))
    for e in scan_folder(project_dir):
        if e.is_file and e.name.startswith("agent-") and session_id_in(e.path) == session:
            out.append(describe(e.path))
    return [tf.path for tf in sorted(out, key=lambda tf: (_KIND_ORDER[tf.kind], str(tf.path)))]
