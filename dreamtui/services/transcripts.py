"""Transcripts for the front ends: a session's files, its digest, a quote verified in it, the lines
appended since a file was last read, the transcripts watcher, and a project folder's readable name.

No ledger: these read the transcript files only.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dreamtui.core.config import Config
from dreamtui.core.files import is_dir, open_regular
from dreamtui.core.gate.verify import Verification, verify_quote
from dreamtui.core.ingest import formats
from dreamtui.core.ingest.digest import digest_file, digest_session
from dreamtui.core.ingest.project_name import ProjectNames
from dreamtui.core.ingest.projects import ProjectMap
from dreamtui.core.ingest.sources import FormatFolder, ProjectFiles, discover_all, format_folders, watch_roots
from dreamtui.core.ingest.tail import open_transcript
from dreamtui.core.ingest.transcripts import agent_of, agents, describe, label_of, session_files_of
from dreamtui.core.ingest.watch import Watcher
from dreamtui.core.models import Digest

__all__ = [
    "Appended",
    "FormatFolder",
    "agent_of",
    "agents",
    "label_of",
    "format_folders",
    "formats_found",
    "ProjectNames",
    "Verification",
    "Watcher",
    "digest",
    "digest_session",
    "read_appended",
    "session_files_for",
    "project_of_transcript",
    "verify",
    "watched_alone",
    "watched_folders",
]


def formats_found(config: Config) -> list[FormatFolder]:
    """Every format's folders (:func:`format_folders`), each with how many sessions are found in it
    now, and the files found inside the projects for a format that keeps none of its own (Aider)."""
    return format_folders(config, discover_all(config))


def watched_folders(config: Config) -> list[Path]:
    """Every agent's transcript folder that is a folder now, watched whole (the watcher's ``extra``;
    Claude Code's ``transcripts`` among them; never a tree of projects: ``sources.watch_roots``)."""
    return [folder for folder in watch_roots(config) if is_dir(folder)]


def watched_alone(config: Config) -> ProjectFiles:
    """The files formats keep inside the projects (Aider's histories), each watched in its folder alone
    (the watcher's ``singles``), the new ones found as sessions in new projects appear."""
    return ProjectFiles(config)


def project_of_transcript(config: Config) -> Callable[[Path], str]:
    """For the watcher: the project key a transcript's session is filed under (its repository's),
    whichever agent wrote it, as the dream cycle files it."""
    projects = ProjectMap(config.transcripts)
    return lambda path: projects.key(describe(path).project, path)


def _refuse_unreadable(path: Path) -> None:
    """A one-line error at once for a missing file, a folder, a FIFO, a device. An address of one
    session inside a source holding many (``opencode.db#<session id>``) is checked by its file."""
    with open_transcript(formats.split_address(path)[0]):
        pass


def session_files_for(path: Path) -> list[Path]:
    """The transcript ``path`` plus, for a main session file, its sub-agent files."""
    _refuse_unreadable(path)
    tf = describe(path)
    if tf.kind != "main":
        return [path]
    found = session_files_of(path)
    return [path, *[p for p in found if p.resolve() != path.resolve()]]


def digest(path: Path, *, whole_session: bool = False, interrupts: bool = True) -> Digest:
    """The digest of one transcript file (with ``whole_session``: of its session, sub-agents too)."""
    _refuse_unreadable(path)
    if not whole_session:
        return digest_file(path, interrupts=interrupts)
    files = session_files_of(path) if describe(path).kind == "main" else [path]
    return digest_session(files, interrupts=interrupts)


def verify(quote: str, files: list[Path]) -> Verification:
    """Whether ``quote`` lies inside one record of the session ``files``, and every place it does."""
    return verify_quote(quote, files)


@dataclass(frozen=True, slots=True)
class Appended:
    """Bytes read from a transcript: from ``start`` (0 when the file shrank: it was written anew)."""

    start: int
    data: bytes


def read_appended(path: Path, start: int, limit: int) -> Appended | None:
    """At most ``limit`` bytes of ``path`` from ``start``; ``None`` when it cannot be read, or when its
    format rewrites it whole (no appended lines to show). A FIFO or a device is refused at once, so a
    reader never hangs."""
    if formats.format_for(path).layout != "lines":
        return None
    try:
        with open_regular(path) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size < start:
                start = 0
            fh.seek(start)
            return Appended(start, fh.read(min(size - start, limit)))
    except OSError:
        return None
