"""Which dreamtui apps are open on one ledger: each holds a lock on a file of its own under the state
folder (``apps/<pid>.lock``) while it runs; a file whose lock can be taken belongs to an app that has
ended (even killed: the kernel drops the lock) and is removed. Two apps side by side each say so."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class AppPresence:
    """This app's presence file, held while it runs; :meth:`others` lists the other apps open."""

    def __init__(self, state: Path) -> None:
        self.folder = state / "apps"
        self.pid = os.getpid()
        self._fd: int | None = None

    def start(self) -> None:
        """Hold this app's presence file (a folder that cannot be written: no presence, no error)."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.folder / f"{self.pid}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return
        self._fd = fd

    def stop(self) -> None:
        """Let go of the presence file and remove it."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            (self.folder / f"{self.pid}.lock").unlink(missing_ok=True)
        finally:
            os.close(fd)

    def others(self) -> list[int]:
        """The pids of the other dreamtui apps open on this state folder, in order."""
        found: list[int] = []
        try:
            names = sorted(p.name for p in self.folder.iterdir() if p.name.endswith(".lock"))
        except OSError:
            return found
        for name in names:
            pid_text = name.removesuffix(".lock")
            if not pid_text.isdigit() or int(pid_text) == self.pid:
                continue
            if self._held(self.folder / name):
                found.append(int(pid_text))
        return found

    def _held(self, path: Path) -> bool:
        """Whether another process holds ``path``'s lock (a file nobody holds is an ended app's: removed)."""
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        else:
            path.unlink(missing_ok=True)  # an app that ended without removing it (killed)
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False
        finally:
            os.close(fd)
