"""A project is its repository: which project a transcript folder's sessions belong to.

Claude Code names a transcript folder after the working directory a session started in
(``/home/kim/src/spotter-worktrees/spotter-a0y`` → ``-home-kim-src-spotter-worktrees-spotter-a0y``)
and shares one memory across the worktrees (and subfolders) of a git repository. dreamtui files such a
folder's sessions under the **project key** of its repository: the folder name Claude Code gives the
repository's main worktree (``-home-kim-src-spotter``), whether or not a session ever ran there. That
key is what the ledger's ``project`` columns hold, what ``memory.project_folder`` turns into the one
memory folder (``projects/home-kim-src-spotter/``), what the cycle groups by and what the dedup scope
compares.

The repository is found from the transcript alone (:func:`folder_key`): the records' ``cwd``; then git,
when that folder is on this machine (a worktree's ``.git`` file points to ``gitdir: …/.git/worktrees/x``;
``core.repository`` asks ``git rev-parse --git-common-dir``); else the usual worktree layouts of the
path (``<repo>-worktrees/<w>``, ``<repo>/.claude/worktrees/<w>``, …); else the folder is its own
project. A folder's project is decided once and remembered in the ledger (``project_folders``), so
removing a worktree after its session (``git worktree remove``) never moves its project.

A folder is a worktree's only by what git or the layout says; a folder name alone is never split on
``-`` (``-home-kim-my-app`` may be ``my-app`` or ``my/app``), except for the dotted layouts, whose
``--`` (``/.``) cannot come from anything else a person types.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from dreamtui.core import clock
from dreamtui.core.files import scan_folder
from dreamtui.core.ingest import formats
from dreamtui.core.ingest.formats.protocol import split_address
from dreamtui.core.ledger import Ledger, project_folders
from dreamtui.core.ledger.project_folders import ProjectFolder
from dreamtui.core.repository import by_git, by_layout, encode_path

__all__ = ["ProjectFolder", "ProjectMap", "encode_path", "folder_key", "rekey_old_rows"]

_DOTTED = re.compile(r"^(?P<repo>.+?)--(?:claude|git)?-?worktrees-[^/]+$")
"""A folder name from ``<repo>/.claude/worktrees/<w>``, ``<repo>/.git/worktrees/<w>`` or
``<repo>/.worktrees/<w>`` (``/.`` is written ``--``), read when no record gives a ``cwd``."""


def _key_for(folder: str, cwd: str, root: str) -> str:
    """The project key of ``folder`` (sessions started in ``cwd``) for repository ``root``: the folder
    name itself when ``cwd`` is the root; else the folder's own first characters when ``cwd`` lies
    inside ``root`` and the folder spells ``cwd`` character for character (whatever Claude Code made of
    each character, the root's folder is spelt the same); else :func:`encode_path` of the root."""
    posix = cwd.replace("\\", "/").rstrip("/")
    if posix == root:
        return folder
    if not posix.startswith(root + "/"):  # git resolved a symlink on the way (macOS's /tmp, a linked ~/src)
        try:
            inside = Path(os.path.realpath(posix)).relative_to(root).as_posix()
        except ValueError:
            inside = ""
        if inside == ".":
            return folder  # the root itself, reached through a link
        if inside and posix.endswith("/" + inside):
            root = posix[: -len(inside) - 1]  # the root as the session's own path spells it
    if posix.startswith(root + "/") and len(folder) == len(posix):
        return folder[: len(root)]
    return encode_path(root)


def folder_key(folder: str, cwd: str) -> ProjectFolder:
    """Which project the sessions of transcript ``folder`` belong to, from their records' ``cwd``:
    the repository's main worktree by git (when ``cwd`` is on this machine), else by a worktree layout
    of the path, else the folder itself (``how`` says which: ``git``, ``layout``, ``folder``)."""
    if cwd and cwd.strip():
        posix = cwd.replace("\\", "/").rstrip("/") or "/"
        root = by_git(cwd)
        if root is not None:
            return ProjectFolder(folder, _key_for(folder, cwd, root), root, "git")
        root = by_layout(posix)
        if root is not None:
            return ProjectFolder(folder, _key_for(folder, cwd, root), root, "layout")
        return ProjectFolder(folder, folder, posix, "folder")
    m = _DOTTED.match(folder)
    if m is not None:
        return ProjectFolder(folder, m["repo"], "", "layout")
    return ProjectFolder(folder, folder, "", "folder")


class ProjectMap:
    """Transcript folder → project key, remembered in the ledger when one is given (``remember``: the
    folder's project is stored the first time it is decided, and read from there ever after)."""

    def __init__(self, transcripts: Path, ledger: Ledger | None = None, *, remember: bool = False) -> None:
        self.transcripts = Path(transcripts)
        self.ledger = ledger
        self.remember = remember
        self._rows: dict[str, ProjectFolder] = project_folders.known(ledger) if ledger is not None else {}

    def row(self, folder: str, probe: Path | None = None) -> ProjectFolder:
        """The remembered or newly decided project of ``folder`` (its ``cwd`` read from ``probe``, else
        from the first of the folder's transcripts that has one, at most five read)."""
        found = self._rows.get(folder)
        if found is not None:
            return found
        found = self._shared(folder_key(folder, self._cwd(folder, probe)))
        self._rows[folder] = found
        if self.remember and self.ledger is not None:
            project_folders.remember(self.ledger, found, clock.now_iso())
        return found

    def key(self, folder: str, probe: Path | None = None) -> str:
        """The project key of transcript folder ``folder``."""
        return self.row(folder, probe).project

    def _shared(self, found: ProjectFolder) -> ProjectFolder:
        """A repository already known under another key (Claude Code's folder spelt it so; another
        agent's session arrives with its own spelling of the same root) keeps that key: one project,
        one memory folder, one queue for every agent's sessions of one repository."""
        if not found.root or found.how == "folder":
            return found
        for row in self._rows.values():
            if row.root == found.root and row.how != "folder" and row.project != found.project:
                return ProjectFolder(found.folder, row.project, found.root, found.how)
        return found

    def _cwd(self, folder: str, probe: Path | None) -> str:
        """The working directory of ``folder``'s sessions: read from ``probe`` (by its own format), else
        from the first of the folder's files under the transcripts folder (Claude Code's layout)."""
        if probe is not None:
            cwd = formats.format_for(probe).cwd_of(split_address(probe)[0])
            if cwd:
                return cwd
        fmt = formats.named(formats.FALLBACK)
        paths = [e.path for e in scan_folder(self.transcripts / folder, want=fmt.suffix) if e.is_file]
        for path in paths[:5]:  # never through a symlink (files.LINK_REASON)
            cwd = fmt.cwd_of(path)
            if cwd:
                return cwd
        return ""

    def known(self, folder: str) -> ProjectFolder | None:
        """The project of ``folder`` when it is remembered or already decided here (None: not yet)."""
        return self._rows.get(folder)

    def keys(self) -> set[str]:
        """Every project key a known folder belongs to."""
        return {row.project for row in self._rows.values()}

    def folders_of(self, key: str) -> list[str]:
        """The transcript folders known (remembered or decided here) to belong to project ``key``."""
        return sorted(f for f, row in self._rows.items() if row.project == key)

    def resolve(self, name: str, folders: Iterable[str] = ()) -> str | None:
        """The project a person named: a transcript folder (its key) or a project key itself (one of
        ``folders`` or a remembered folder belongs to it); None when it is neither."""
        folders = list(folders)
        if name in folders or (self.transcripts / name).is_dir():
            return self.key(name)
        if name in {row.project for row in self._rows.values()}:
            return name
        if any(self.key(f) == name for f in folders):
            return name
        return None


def rekey_old_rows(ledger: Ledger, pmap: ProjectMap) -> list[tuple[str, str, int]]:
    """File the ledger's rows of a transcript folder that belongs to another project (a worktree's or a
    subfolder's, stored under the folder's own name before projects were repositories) under that
    project, in one transaction per folder. A value that is already a project key, or a folder no
    longer here whose name says nothing, stays. Returns ``(old, new, candidates moved)`` per folder."""
    moved: list[tuple[str, str, int]] = []
    keys = pmap.keys()
    for old in sorted(project_folders.stored_projects(ledger)):
        if not old:
            continue
        row = pmap.known(old)
        if row is None:
            if old in keys:
                continue  # already a project key
            row = pmap.row(old) if (pmap.transcripts / old).is_dir() else folder_key(old, "")
        if row.project != old:
            moved.append((old, row.project, project_folders.rekey(ledger, old, row.project)))
    return moved
