"""The dream-cycle lock: one cycle at a time on this machine.

A :class:`filelock.FileLock` (``flock``) on ``config.lock_path``, taken without waiting. The
operating system releases it when the holding process exits or is killed, so a crash never leaves a
stale lock behind. The lock file holds the holder's pid and start time for the "busy" message; its
content is informative only.
"""

from __future__ import annotations

import os
from pathlib import Path
from types import TracebackType

from filelock import FileLock, Timeout

from dreamtui.core import clock
from dreamtui.core.errors import CycleBusy, LedgerError


class CycleLock:
    """A non-blocking exclusive lock on a file; use as a context manager.

    ``acquire`` raises :class:`CycleBusy` at once when another process (or another ``CycleLock`` in
    this process) holds it.
    """

    busy = "another dream cycle is running{holder}; try again when it has finished"
    """The :class:`CycleBusy` message (``{holder}``: `` (pid 123, since …)`` or nothing)."""
    wait = 0.0
    """Seconds ``acquire`` waits for the lock before it says busy."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock: FileLock | None = None

    @property
    def held(self) -> bool:
        """This object holds the lock."""
        return self._lock is not None

    def acquire(self) -> None:
        """Take the lock or raise :class:`CycleBusy` naming the holder."""
        if self._lock is not None:
            return
        lock = FileLock(self.path, timeout=self.wait)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            lock.acquire()
        except Timeout:
            raise CycleBusy(self.busy.format(holder=_read_holder(self.path))) from None
        except OSError as exc:
            raise LedgerError(f"cannot open the dream lock {self.path}: {exc.strerror}") from exc
        try:
            self.path.write_text(f"{os.getpid()} {clock.now_iso()}\n", encoding="utf-8")
        except OSError:
            pass  # the holder line is informative only
        self._lock = lock

    def release(self) -> None:
        """Release the lock (a no-op when not held)."""
        lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()

    def __enter__(self) -> CycleLock:
        self.acquire()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


class WatchLock(CycleLock):
    """Held by a running ``dreamtui watch`` (one per state folder): ``dreamtui status`` asks it whether
    watch runs (:func:`holder`), and a second watch is refused."""

    busy = "another `dreamtui watch` is running{holder} on these folders; stop it first (dreamtui status)"
    wait = 2.0  # a status probing the lock holds it for an instant


def holder(path: Path) -> tuple[int, str] | None:
    """``(pid, since)`` of the process holding the lock at ``path`` (``(0, "")`` when its file does not say),
    None when nobody holds it. The probe takes the lock for an instant when it is free."""
    if not path.exists():
        return None
    lock = FileLock(path, timeout=0)
    try:
        lock.acquire()
    except Timeout:
        words = _read_holder(path)
        if not words:
            return (0, "")
        pid, _, since = words.removeprefix(" (pid ").removesuffix(")").partition(", since ")
        return (int(pid), since)
    except OSError:
        return None
    lock.release()
    return None


def _read_holder(path: Path) -> str:
    """`` (pid 123 since 2026-…)`` from the lock file, or empty when unreadable."""
    try:
        text = path.read_bytes()[:200].decode("utf-8", "replace").split()
    except OSError:
        return ""
    if len(text) >= 2 and text[0].isdigit():
        return f" (pid {text[0]}, since {text[1]})"
    return ""
