"""Which repository a working directory belongs to: a project is its repository, not its worktree.

Claude Code shares one memory across the worktrees of a git repository, so dreamtui files a session
run in ``~/src/spotter-worktrees/spotter-a0y`` under the repository's main worktree (``spotter``):
from git when the folder exists on this machine (``git rev-parse --git-common-dir``, resolved), else
from the path alone for the usual worktree layouts (conservatively), else the folder itself.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path, PurePosixPath

from dreamtui.core import foreign_git

_LAYOUTS = (
    # (a path ending ..., the part that names the repository) — recognised from the path alone
    re.compile(r"^(?P<repo>.+)/\.git/worktrees/[^/]+$"),
    re.compile(r"^(?P<repo>.+)/\.claude/worktrees/[^/]+$"),
    re.compile(r"^(?P<repo>.+)/\.worktrees/[^/]+$"),
    re.compile(r"^(?P<parent>.*)/(?P<name>[^/]+)-worktrees/[^/]+$"),
)


def by_layout(cwd: str) -> str | None:
    """The main worktree of a worktree path recognised from its shape alone, else None (conservative:
    only ``<repo>/.git/worktrees/<w>``, ``<repo>/.claude/worktrees/<w>``, ``<repo>/.worktrees/<w>`` and
    ``<parent>/<repo>-worktrees/<w>``, the last giving ``<parent>/<repo>``)."""
    for layout in _LAYOUTS:
        m = layout.match(cwd)
        if m is None:
            continue
        if "repo" in m.groupdict():
            return m["repo"] or None
        return f"{m['parent']}/{m['name']}"
    return None


def _main_of(common: Path) -> str:
    """The main worktree of the repository whose common git folder is ``common`` (resolved)."""
    if common.name == ".git":
        return str(common.parent)
    return str(common.with_suffix("")) if common.suffix == ".git" else str(common)  # a bare repository


def by_dotgit(cwd: str) -> str | None:
    """The main worktree of the repository holding ``cwd``, read from the ``.git`` entries of ``cwd`` and
    its parents without running git: a ``.git`` folder is the main worktree's; a ``.git`` file (a
    worktree's) says ``gitdir: <repo>/.git/worktrees/<w>``, whose ``commondir`` names ``<repo>/.git``.
    None when no ``.git`` is found or it cannot be read."""
    here = Path(cwd)
    for folder in (here, *here.parents):
        dotgit = folder / ".git"
        try:
            if dotgit.is_dir():
                return str(folder.resolve())
            if not dotgit.is_file():
                continue
            line = dotgit.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            return None
        if not line.startswith("gitdir:"):
            return None
        gitdir = Path(line.removeprefix("gitdir:").strip())
        gitdir = (gitdir if gitdir.is_absolute() else folder / gitdir).resolve()
        try:
            common_rel = (gitdir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            common_rel = ""
        if common_rel:
            common = Path(common_rel)
            return _main_of((common if common.is_absolute() else gitdir / common).resolve())
        if gitdir.parent.name == "worktrees":
            return _main_of(gitdir.parent.parent)
        return _main_of(gitdir)  # a submodule or a separate git dir: that repository's own
    return None


@functools.lru_cache(maxsize=256)
def by_git(cwd: str) -> str | None:
    """The main worktree of the git repository holding ``cwd`` (``git rev-parse --git-common-dir``,
    resolved; read from the ``.git`` files when git cannot run), or None when ``cwd`` is not a folder
    in a repository on this machine (a relative ``cwd`` is nobody's: it would be read from here)."""
    if not os.path.isabs(cwd) or not os.path.isdir(cwd):
        return None
    try:  # the repository is not ours: git runs with every program its config could name off
        out = foreign_git.run(cwd, "rev-parse", "--path-format=absolute", "--git-common-dir", timeout=10)
    except OSError:  # no git on this machine
        return by_dotgit(cwd)
    line = (out or b"").decode("utf-8", "surrogateescape").strip()
    if not line:
        return None
    return _main_of(Path(line).resolve())


def repository_root(cwd: str) -> str:
    """The folder that names the project a session in ``cwd`` belongs to: the main worktree of its git
    repository (from git when ``cwd`` exists here, else from a worktree layout of the path), else
    ``cwd`` itself. '' stays ''."""
    if not cwd or not cwd.strip():
        return cwd
    posix = cwd.replace("\\", "/").rstrip("/") or "/"
    found = by_git(cwd)
    if found is not None:
        return found
    return by_layout(posix) or posix


def repository_name(cwd: str) -> str:
    """The project's name for a session run in ``cwd``: the last part of :func:`repository_root`."""
    root = repository_root(cwd)
    return PurePosixPath(root.replace("\\", "/")).name if root else ""


def encode_path(path: str) -> str:
    """The folder name Claude Code gives a session started in ``path``: every character other than an
    ASCII letter or digit made a ``-`` (``/Users/kim/.claude`` → ``-Users-kim--claude``). The project
    key of a repository: what every format's sessions of that repository are filed under."""
    return re.sub(r"[^A-Za-z0-9]", "-", path.replace("\\", "/").rstrip("/") or "/")
