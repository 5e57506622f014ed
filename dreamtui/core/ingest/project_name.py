"""A project's name as a person says it (``payments-api``), read from its transcripts' working directory.

Claude Code names a project's transcript folder after its working directory with every ``/`` made a
``-`` (``-home-kim-src-payments-api``), which cannot be turned back (a ``-`` in a name looks the same).
The records carry the real working directory; the transcript format reads it from the first lines of
a transcript (bounded: its ``cwd_of``), the same name :attr:`Digest.project_name` gives.

A project is its repository: a session run in a git worktree (``~/src/spotter-worktrees/spotter-a0y``)
belongs to the repository's main worktree (``spotter``), as Claude Code shares one memory across the
worktrees of a repository. :func:`~dreamtui.core.repository.repository_root` finds it: from git when the ``cwd`` exists on this
machine, else from the path alone for the usual worktree layouts, else the folder itself.
"""

from __future__ import annotations

import glob
from pathlib import Path

from dreamtui.core.files import own_dir, scan_folder
from dreamtui.core.ingest import formats
from dreamtui.core.ingest.formats.protocol import split_address
from dreamtui.core.ingest.projects import folder_key
from dreamtui.core.models import Digest
from dreamtui.core.repository import repository_name, repository_root

__all__ = ["ProjectNames", "project_name", "repository_name", "repository_root"]


def project_name(transcripts: Path, project: str, transcript: str | None = None) -> str:
    """``project``'s readable name: the last part of the working directory in ``transcript`` (or in the
    first of the project folder's transcripts that names one, at most five read), else the folder name
    without its leading dash."""
    fmt = formats.named(formats.FALLBACK)  # the transcripts folder is Claude Code's
    candidates: list[Path] = []
    if transcript:
        path = Path(transcript)
        candidates.append(path if path.is_absolute() else transcripts / path)
    folder = transcripts / project
    candidates.extend(_first_files(folder, fmt.suffix))
    for path in candidates:
        cwd = formats.format_for(path).cwd_of(split_address(path)[0])
        if cwd:
            return Digest(session="", project=project, cwd=cwd).project_name
    return _name_of_key(transcripts, project) or Digest(session="", project=project).project_name


def _name_of_key(transcripts: Path, project: str) -> str:
    """The name of project key ``project`` that no transcript folder of its own spells (a repository
    whose sessions all ran in its worktrees): the repository's name, read from the first worktree
    folder (``<key>-…``, at most five read) that belongs to it; '' when none does."""
    fmt = formats.named(formats.FALLBACK)  # the transcripts folder is Claude Code's
    try:
        siblings = sorted(p for p in transcripts.glob(f"{glob.escape(project)}-*") if own_dir(p))[:5]
    except OSError:
        return ""
    for folder in siblings:
        for path in _first_files(folder, fmt.suffix):
            cwd = fmt.cwd_of(path)
            if not cwd:
                continue
            row = folder_key(folder.name, cwd)
            if row.project == project and row.root:
                return repository_name(row.root)
            break
    return ""


def _first_files(folder: Path, suffix: str) -> list[Path]:
    """The first five regular ``suffix`` files of a project folder, never through a symlink (a linked
    folder or file is not the agent's: :data:`dreamtui.core.files.LINK_REASON`)."""
    return [e.path for e in scan_folder(folder, want=suffix) if e.is_file][:5]


class ProjectNames:
    """:func:`project_name` remembered per project folder (a queue shows the same few projects often)."""

    def __init__(self, transcripts: Path) -> None:
        self.transcripts = transcripts
        self._names: dict[str, str] = {}

    def __call__(self, project: str, transcript: str | None = None) -> str:
        if project not in self._names:
            self._names[project] = project_name(self.transcripts, project, transcript)
        return self._names[project]
