"""Running git in a test's repositories (the tests' HOME has no git identity: a commit names one)."""

from __future__ import annotations

import subprocess
from pathlib import Path

IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "init.defaultBranch=main")


def git(repo: Path, *args: str, check: bool = True) -> str:
    """``git -C repo ARGS``; its standard output."""
    return subprocess.run(["git", "-C", str(repo), *args], check=check, capture_output=True, text=True).stdout


def git_as_tester(*args: str, cwd: Path) -> None:
    """git in ``cwd`` as a tester with a name, an e-mail and ``main`` as the first branch."""
    subprocess.run(["git", *IDENTITY, *args], cwd=cwd, check=True, capture_output=True)
