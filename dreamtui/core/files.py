"""Open transcript files safely: regular files only, never a blocking open, one-line reasons.

A FIFO, a device or a socket named ``*.jsonl`` must never be opened the ordinary way: opening a FIFO
for reading waits for a writer (forever), and ``/dev/zero`` never ends. :func:`open_regular` opens
with ``O_NONBLOCK`` (a FIFO opens at once) and checks the open file with ``fstat`` (no race between
a check and the open), then gives back an ordinary blocking file object.

Folders can be listed but not searched (``r--``), or not listed at all: :func:`scan_folder` lists one
without raising, reporting a folder it cannot read or search as a :class:`Skipped` notice.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

_OPEN_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
)


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket or a folder, not a regular file (``strerror`` says which)."""


@dataclass(frozen=True, slots=True)
class Skipped:
    """A path left out of a listing or a read, and why (one line)."""

    path: str
    reason: str

    @property
    def notice(self) -> str:
        """``skipped <path>: <reason>`` on one line."""
        return f"skipped {self.path}: {self.reason}"


def kind_of_mode(mode: int) -> str:
    """What a file mode is, in words: ``a FIFO``, ``a character device``, ``a folder``…"""
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISLNK, "a symlink"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def not_regular_reason(mode: int) -> str:
    """The one-line reason a file of ``mode`` is not read."""
    return f"it is {kind_of_mode(mode)}, not a regular file"


def error_reason(exc: OSError) -> str:
    """An ``OSError`` as a short reason (``permission denied``…), without a traceback."""
    text = exc.strerror or str(exc) or type(exc).__name__
    return text if isinstance(exc, NotRegularFile) else text[:1].lower() + text[1:]


def regular_problem(path: Path | str) -> str | None:
    """None when ``path`` is a regular file (symlinks followed); else why it is not read, one line.

    Never opens the path and never raises.
    """
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "it does not exist"
    except OSError as exc:
        return f"cannot read it ({error_reason(exc)})"
    return None if stat.S_ISREG(st.st_mode) else not_regular_reason(st.st_mode)


def is_dir(path: Path | str) -> bool:
    """Whether ``path`` is a folder; False (never an exception) when it cannot even be looked at."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def open_regular(path: Path | str) -> IO[bytes]:
    """Open ``path`` for binary reading if, and only if, it is a regular file.

    The open itself never blocks (``O_NONBLOCK``: a FIFO opens at once); the open descriptor is then
    checked with ``fstat``, so a file swapped for a FIFO between a listing and the open is still
    refused. Raises :class:`NotRegularFile` (an ``OSError``) for anything but a regular file, and the
    ordinary ``OSError`` when it cannot be opened.
    """
    fd = os.open(path, _OPEN_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(errno.EINVAL, not_regular_reason(st.st_mode), os.fspath(path))
        # O_NONBLOCK stays: it changes nothing for a regular file's reads (and clearing it costs
        # two system calls per file, which the digest of a small file notices)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path | str, limit: int, *, nofollow: bool = False) -> bytes | None:
    """The whole content of ``path`` when it is a regular file of at most ``limit`` bytes, else None
    (a larger file: read it in chunks). Checked and opened as :func:`open_regular` does, and raises
    as it does; four system calls (open, ``fstat``, one read, close) and no file object, so a small
    transcript costs little more than its bytes. With ``nofollow`` a symlink is never followed
    (``O_NOFOLLOW``: an ``OSError``)."""
    fd = os.open(path, _OPEN_FLAGS | (getattr(os, "O_NOFOLLOW", 0) if nofollow else 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(errno.EINVAL, not_regular_reason(st.st_mode), os.fspath(path))
        if st.st_size > limit:
            return None
        data = os.read(fd, st.st_size + 1)  # one byte more: a read that fills it means the file grew
        if len(data) <= st.st_size:
            return data
        parts = [data]
        size = len(data)
        while size <= limit:
            more = os.read(fd, limit + 1 - size)
            if not more:
                return b"".join(parts)
            parts.append(more)
            size += len(more)
        return None
    finally:
        os.close(fd)


@dataclass(slots=True)
class Entry:
    """One entry of a listed folder: its path, and whether it is a folder or a regular file."""

    path: Path
    name: str
    is_dir: bool
    is_file: bool


def scan_folder(
    folder: Path, skipped: list[Skipped] | None = None, *, want: str = ".jsonl"
) -> Iterator[Entry]:
    """The entries of ``folder`` sorted by name: every sub-folder and every regular file whose name
    ends with ``want``. Never raises: a folder that cannot be listed, or listed but not searched,
    is reported once in ``skipped``; a ``want`` file that is not a regular file (a FIFO, a device,
    a socket, a folder named like one) is reported and left out."""
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        if skipped is not None and not isinstance(exc, (FileNotFoundError, NotADirectoryError)):
            skipped.append(Skipped(str(folder), f"cannot list this folder ({error_reason(exc)})"))
        return
    for entry in entries:
        try:
            st = os.stat(entry.path)  # follows symlinks, like is_file()/is_dir()
        except FileNotFoundError:
            continue  # vanished, or a dangling symlink
        except PermissionError as exc:
            # listed but not searchable: every entry fails the same way, so say it once, for the folder
            if skipped is not None:
                skipped.append(
                    Skipped(str(folder), f"cannot open the files in this folder ({error_reason(exc)})")
                )
            return
        except OSError as exc:
            if skipped is not None and entry.name.endswith(want):
                skipped.append(Skipped(entry.path, f"cannot read it ({error_reason(exc)})"))
            continue
        if stat.S_ISDIR(st.st_mode):
            if want and entry.name.endswith(want):  # a folder named like a transcript: never one
                if skipped is not None:
                    skipped.append(Skipped(entry.path, not_regular_reason(st.st_mode)))
                continue
            yield Entry(Path(entry.path), entry.name, True, False)
        elif entry.name.endswith(want):
            if stat.S_ISREG(st.st_mode):
                yield Entry(Path(entry.path), entry.name, False, True)
            elif skipped is not None:
                skipped.append(Skipped(entry.path, not_regular_reason(st.st_mode)))


def replace_where_it_points(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (a temporary file beside it, synced, then renamed over it),
    where a symlink points (a file kept in a dotfiles repository is edited there, never replaced by a
    file of its own), keeping its mode and making a missing folder. Raises ``OSError`` with nothing
    left behind."""
    target = Path(os.path.realpath(path))
    tmp = target.with_name(target.name + ".dreamtui-tmp")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else None
        with tmp.open("wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise
