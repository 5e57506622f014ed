"""Open transcript files safely: regular files only, never a blocking open, one-line reasons.

A FIFO, a device or a socket named ``*.jsonl`` must never be opened the ordinary way: opening a FIFO
for reading waits for a writer (forever), and ``/dev/zero`` never ends. :func:`open_regular` opens
with ``O_NONBLOCK`` (a FIFO opens at once) and checks the open file with ``fstat`` (no race between
a check and the open), then gives back an ordinary blocking file object.

Folders can be listed but not searched (``r--``), or not listed at all: :func:`scan_folder` lists one
without raising, reporting a folder it cannot read or search as a :class:`Skipped` notice.

**Never through a symlink.** Agents write their sessions as regular files in their own folders, so a
session file, or a folder below a format's root, that is a symlink is never read through: it is one
notice (:data:`LINK_REASON`, the one wording every format gives) and the rest is read. The roots
themselves (``~/.claude/projects``, ``~/.codex/sessions``, a configured folder) may be links (often into
a dotfiles folder) and are followed: :func:`scan_folder` ``follow=True``, :func:`is_dir`. Files are
opened with ``O_NOFOLLOW`` (:func:`open_regular`, :func:`read_regular`; ``follow=True`` for a file a
person names, such as the config) and folders below a root are listed through a descriptor opened with
``O_NOFOLLOW``, so a link swapped in after a listing is refused too. This also rules out link loops.
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
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0) | _NOFOLLOW
_SCAN_FD = os.scandir in os.supports_fd and bool(_NOFOLLOW) and hasattr(os, "O_DIRECTORY")

LINK_REASON = "it is a symlink; dreamtui reads an agent's sessions only where the agent writes them"
"""Why a session file, or a folder below a format's root, that is a symlink is not read: one wording
for every format (the module docstring, "Never through a symlink")."""


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


def regular_problem(path: Path | str, *, follow: bool = False) -> str | None:
    """None when ``path`` is a regular file; else why it is not read, one line (a symlink:
    :data:`LINK_REASON`, unless ``follow``).

    Never opens the path and never raises.
    """
    try:
        st = os.stat(path) if follow else os.lstat(path)
    except FileNotFoundError:
        return "it does not exist"
    except (OSError, ValueError) as exc:
        return f"cannot read it ({error_reason(exc) if isinstance(exc, OSError) else exc})"
    if stat.S_ISLNK(st.st_mode):
        return LINK_REASON
    return None if stat.S_ISREG(st.st_mode) else not_regular_reason(st.st_mode)


def is_dir(path: Path | str) -> bool:
    """Whether ``path`` is a folder, a symlink to one followed (a root: the module docstring); False
    (never an exception) when it cannot even be looked at."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def own_dir(path: Path | str, skipped: list[Skipped] | None = None) -> bool:
    """Whether ``path`` is a folder itself, never a symlink to one (a folder below a format's root);
    a symlink there is named in ``skipped`` (:data:`LINK_REASON`). False, never an exception, when it
    is anything else or cannot be looked at."""
    try:
        st = os.lstat(path)
    except (OSError, ValueError):
        return False
    if stat.S_ISLNK(st.st_mode):
        if skipped is not None:
            skipped.append(Skipped(os.fspath(path), LINK_REASON))
        return False
    return stat.S_ISDIR(st.st_mode)


def link_below(root: Path | str, path: Path | str) -> Path | None:
    """The first symlink on the way from ``root`` (itself never looked at: a root may be a link) down
    to ``path`` (included), else None (also when ``path`` is not below ``root``, or a part of the way
    does not exist). One ``lstat`` a level: for a path named from outside (an event, a ledger row),
    never a listing's entries."""
    root, path = Path(root), Path(path)
    try:
        rel = path.relative_to(root)
    except ValueError:
        return None
    here = root
    for part in rel.parts:
        here = here / part
        try:
            if stat.S_ISLNK(os.lstat(here).st_mode):
                return here
        except (OSError, ValueError):
            return None
    return None


def _link_error(exc: OSError, path: Path | str) -> OSError:
    """The error of an ``O_NOFOLLOW`` open: a symlink at ``path`` (``ELOOP``; FreeBSD's ``EMLINK``;
    ``ENOTDIR`` with ``O_DIRECTORY``) as :class:`NotRegularFile` saying :data:`LINK_REASON`, anything
    else as it was. Costs an ``lstat`` only on that error."""
    if exc.errno in (errno.ELOOP, errno.EMLINK, errno.ENOTDIR):
        try:
            if stat.S_ISLNK(os.lstat(path).st_mode):
                return NotRegularFile(errno.ELOOP, LINK_REASON, os.fspath(path))
        except OSError:
            pass
    return exc


def _open_checked(path: Path | str, follow: bool) -> tuple[int, os.stat_result]:
    """A descriptor of ``path`` opened without blocking (``O_NOFOLLOW`` unless ``follow``) and its
    ``fstat``, when it is a regular file; else raises as :func:`open_regular` does (the descriptor
    closed)."""
    try:
        fd = os.open(path, _OPEN_FLAGS if follow else _OPEN_FLAGS | _NOFOLLOW)
    except OSError as exc:
        raise _link_error(exc, path) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(errno.EINVAL, not_regular_reason(st.st_mode), os.fspath(path))
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def open_regular(path: Path | str, *, follow: bool = False) -> IO[bytes]:
    """Open ``path`` for binary reading if, and only if, it is a regular file, never through a symlink
    (``O_NOFOLLOW``; ``follow=True`` for a file a person names, such as the config).

    The open itself never blocks (``O_NONBLOCK``: a FIFO opens at once); the open descriptor is then
    checked with ``fstat``, so a file swapped for a FIFO between a listing and the open is still
    refused. Raises :class:`NotRegularFile` (an ``OSError``) for anything but a regular file (a
    symlink: :data:`LINK_REASON`), and the ordinary ``OSError`` when it cannot be opened.
    """
    fd, _ = _open_checked(path, follow)
    try:
        # O_NONBLOCK stays: it changes nothing for a regular file's reads (and clearing it costs
        # two system calls per file, which the digest of a small file notices)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path | str, limit: int, *, follow: bool = False) -> bytes | None:
    """The whole content of ``path`` when it is a regular file of at most ``limit`` bytes, else None
    (a larger file: read it in chunks). Checked and opened as :func:`open_regular` does (never through
    a symlink unless ``follow``), and raises as it does; four system calls (open, ``fstat``, one read,
    close) and no file object, so a small transcript costs little more than its bytes."""
    fd, st = _open_checked(path, follow)
    try:
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


def read_head(path: Path | str, size: int) -> bytes:
    """The first ``size`` bytes (fewer in a shorter file) of ``path`` when it is a regular file:
    checked and opened as :func:`open_regular` does, and raises as it does; four system calls and no
    file object (a check of a file's header costs half of what :func:`open_regular` does); never
    through a symlink (:data:`LINK_REASON`)."""
    fd, _ = _open_checked(path, False)
    try:
        return os.read(fd, size)
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
    folder: Path | str,
    skipped: list[Skipped] | None = None,
    *,
    want: str = ".jsonl",
    follow: bool = False,
    folders: bool = True,
) -> Iterator[Entry]:
    """The entries of ``folder`` sorted by name: every sub-folder and every regular file whose name
    ends with ``want``, never a symlink. Never raises: a folder that cannot be listed, or listed but
    not searched, is reported once in ``skipped``; a ``want`` file that is not a regular file (a FIFO,
    a device, a socket, a folder named like one) is reported and left out.

    Never through a symlink (the module docstring): a symlink named like a ``want`` file, to a folder,
    or that cannot be followed (a loop) is one :data:`LINK_REASON` notice; any other symlink (to a file
    of another name, or to nothing) is left out silently. ``folders=False``: the caller takes files only
    (it lists the same folder again for its sub-folders, or has none), so a link to a folder is not
    named here (it would be named twice). ``folder`` itself may be a symlink only with
    ``follow`` (a format's root); else it is listed through a descriptor opened with ``O_NOFOLLOW`` and
    a symlink there is one notice. A folder's entries cost one ``lstat`` each, as they did before
    (whether an entry is a link comes free with the listing), and a link one ``stat`` more."""
    name = os.fspath(folder)
    try:
        if follow or not _SCAN_FD:
            if not follow and stat.S_ISLNK(os.lstat(name).st_mode):
                raise NotRegularFile(errno.ELOOP, LINK_REASON, name)
            with os.scandir(name) as it:
                listed = _listed(it)
        else:
            fd = os.open(name, _DIR_FLAGS)
            try:
                with os.scandir(fd) as it:
                    listed = _listed(it)  # looked at while the descriptor is open
            finally:
                os.close(fd)
    except OSError as exc:
        if not follow:
            exc = _link_error(exc, name)
        if skipped is not None and not isinstance(exc, (FileNotFoundError, NotADirectoryError)):
            why = exc.strerror if isinstance(exc, NotRegularFile) else None
            skipped.append(Skipped(name, why or f"cannot list this folder ({error_reason(exc)})"))
        return
    prefix = name if name.endswith(os.sep) else name + os.sep
    for entry_name, st in listed:
        path = prefix + entry_name  # an entry of a descriptor's listing is named by its name alone
        if isinstance(st, FileNotFoundError):
            continue  # vanished
        if isinstance(st, PermissionError):
            # listed but not searchable: every entry fails the same way, so say it once, for the folder
            if skipped is not None:
                skipped.append(Skipped(name, f"cannot open the files in this folder ({error_reason(st)})"))
            return
        if isinstance(st, OSError):
            if skipped is not None and entry_name.endswith(want):
                skipped.append(Skipped(path, f"cannot read it ({error_reason(st)})"))
            continue
        if stat.S_ISLNK(st.st_mode):
            if skipped is not None and _named_link(path, entry_name, want, folders):
                skipped.append(Skipped(path, LINK_REASON))
            continue
        if stat.S_ISDIR(st.st_mode):
            if want and entry_name.endswith(want):  # a folder named like a transcript: never one
                if skipped is not None:
                    skipped.append(Skipped(path, not_regular_reason(st.st_mode)))
                continue
            yield Entry(Path(path), entry_name, True, False)
        elif entry_name.endswith(want):
            if stat.S_ISREG(st.st_mode):
                yield Entry(Path(path), entry_name, False, True)
            elif skipped is not None:
                skipped.append(Skipped(path, not_regular_reason(st.st_mode)))


def _listed(it: Iterator[os.DirEntry[str]]) -> list[tuple[str, os.stat_result | OSError]]:
    """Each entry's name and ``lstat`` (or the error it gave), sorted by name. The listing says whether
    an entry is a symlink for free; the ``lstat`` is the one call per entry (made once: the listing's
    own, when the file system did not say the type)."""
    out: list[tuple[str, os.stat_result | OSError]] = []
    for entry in it:
        try:
            out.append((entry.name, entry.stat(follow_symlinks=False)))
        except OSError as exc:
            out.append((entry.name, exc))
    out.sort(key=lambda e: e[0])
    return out


def _named_link(path: str, name: str, want: str, folders: bool) -> bool:
    """Whether a symlink met in a listing is named in a notice: one named like a session (``want``),
    one to a folder, one that cannot be followed (a loop); not one to a file of another name or to
    nothing (a stray link beside the sessions says nothing)."""
    if want and name.endswith(want):
        return True
    if not folders:
        return False
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except FileNotFoundError:
        return False
    except OSError:
        return True


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
