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
import subprocess
from pathlib import Path, PurePosixPath

_LAYOUTS = (
    # (a path ending ..., the part that names the repository) — recognised from the path alone
    re.compile(r"^(?P<repo>.+)/\.git/worktrees/[^/]+$"),
    re.compile(r"^(?P<repo>.+)/\.claude/worktrees/[^/]+$"),
    re.compile(r"^(?P<repo>.+)/\.worktrees/[^/]+$"),
    re.compile(r"^(?P<parent>.*)/(?P<name>[^/]+)-worktrees/[^/]+$"),
)


def _by_layout(cwd: str) -> str | None:
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


@functools.lru_cache(maxsize=256)
def _by_git(cwd: str) -> str | None:
    """The main worktree of the git repository holding ``cwd`` (``git rev-parse --git-common-dir``,
    resolved), or None when ``cwd`` is not a folder in a repository on this machine."""
    if not os.path.isdir(cwd):
        return None
    try:
        out = subprocess.run(
            ["git", "-C", cwd, "rev-parse", "--path-format=absolute", "--git-common-dir"],
            capture_output=True,
            text=True,
            timeout=10,
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"},
        )
    except (OSError, subprocess.SubprocessError):
        return None
    line = out.stdout.strip()
    if out.returncode != 0 or not line:
        return None
    common = Path(line).resolve()
    if common.name == ".git":
        return str(common.parent)
    return str(common.with_suffix("")) if common.suffix == ".git" else str(common)  # a bare repository


def repository_root(cwd: str) -> str:
    """The folder that names the project a session in ``cwd`` belongs to: the main worktree of its git
    repository (from git when ``cwd`` exists here, else from a worktree layout of the path), else
    ``cwd`` itself. '' stays ''."""
    if not cwd or not cwd.strip():
        return cwd
    posix = cwd.replace("\\", "/").rstrip("/") or "/"
    found = _by_git(cwd)
    if found is not None:
        return found
    return _by_layout(posix) or posix


def repository_name(cwd: str) -> str:
    """The project's name for a session run in ``cwd``: the last part of :func:`repository_root`."""
    root = repository_root(cwd)
    return PurePosixPath(root.replace("\\", "/")).name if root else ""
