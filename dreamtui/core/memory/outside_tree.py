"""The memory folder as the outside scan sees it: read safely, hashed once, compared with HEAD.

The folder is read the way the transcript folder is (:mod:`dreamtui.core.files`): it is listed with
``lstat`` and never through a symlink. A regular file is opened with ``O_NOFOLLOW | O_NONBLOCK`` and
checked with ``fstat`` (so a file swapped for a FIFO or a link between the listing and the open is
still refused); a symlink is an entry of its own (its target, never the target's bytes); a FIFO, a
device or a socket is an entry of its own (what it is, never opened); a file over :func:`max_bytes`
is hashed in chunks (bounded memory) and never read whole.

Nothing is written into git: a file's identity is its git blob id computed here (the same sha1
``git hash-object`` gives), and :class:`HashCache` keeps it in the ledger keyed by path, size,
``mtime_ns``, inode and ``ctime_ns``, so a start with nothing new re-hashes nothing. An entry whose
mtime is within :data:`RACY_NS` of the hash is not cached (a write in the same clock tick could
otherwise hide behind an unchanged stat, git's "racy clean" problem).
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from git import Repo

from dreamtui.core.config import env_bytes
from dreamtui.core.files import kind_of_mode, read_regular
from dreamtui.core.ledger import Ledger
from dreamtui.core.ledger import outside as outside_items
from dreamtui.core.memory import layout as memory

MAX_BYTES_ENV = "DREAMTUI_OUTSIDE_MAX_BYTES"
DEFAULT_MAX_BYTES = 2 * 1024 * 1024
"""A memory file larger than this is an item that says so; its bytes are never read whole."""
CHUNK = 1024 * 1024
RACY_NS = 50_000_000
"""An entry modified this close (ns) to the moment it was hashed is hashed again next time."""

_NOFOLLOW_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)

FILE, LINK, SPECIAL, LARGE = "file", "symlink", "special", "large"
"""What stands at a path: a regular file, a symlink, a FIFO/device/socket, a file over the limit."""


def max_bytes() -> int:
    """The size above which a memory file is not read (``DREAMTUI_OUTSIDE_MAX_BYTES``, default 2 MiB)."""
    return env_bytes(MAX_BYTES_ENV, DEFAULT_MAX_BYTES)  # a bad value is one line, never the default


def read_memory_bytes(path: Path | str) -> bytes | None:
    """The bytes of a memory file as every reader takes them (the consolidation finders, dedup, the
    memory listing), bounded as the scan is: a regular file of at most :func:`max_bytes`, opened with
    ``O_NOFOLLOW`` (a symlink's target is never read); None for anything else."""
    try:
        return read_regular(path, max_bytes())
    except OSError:
        return None


def read_memory(path: Path | str) -> str | None:
    """:func:`read_memory_bytes` as text (invalid UTF-8 replaced)."""
    data = read_memory_bytes(path)
    return None if data is None else data.decode("utf-8", errors="replace")


def link_blob(target: str) -> str:
    """The git blob id of a symlink whose target is ``target`` (git stores the target as the blob)."""
    data = os.fsencode(target)
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def human_size(n: int) -> str:
    """``403 MB``, ``2.0 MB``, ``812 bytes``."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= size:
            value = n / size
            return f"{value:.0f} {unit}" if value >= 10 else f"{value:.1f} {unit}"
    return f"{n} bytes"


@dataclass(slots=True)
class Entry:
    """One thing in the memory folder: what it is (:data:`FILE`…), its stat key, its blob id (a
    file's or a link's; ``None`` for a special file until hashed), and a one-line note."""

    kind: str
    size: int = 0
    mtime_ns: int = 0
    ino: int = 0
    ctime_ns: int = 0
    blob: str | None = None
    target: str | None = None
    special: str | None = None

    @property
    def key(self) -> tuple[int, int, int, int]:
        return (self.size, self.mtime_ns, self.ino, self.ctime_ns)

    def note(self) -> str | None:
        """What a person is told about an entry that is not a plain file (``None`` for one)."""
        if self.kind == LINK:
            return f"symlink → {self.target}"
        if self.kind == SPECIAL:
            return (self.special or "special file").removeprefix("a ").removeprefix("an ")
        if self.kind == LARGE:
            return f"too large to review: {human_size(self.size)} (limit {human_size(max_bytes())})"
        return None


@dataclass(slots=True)
class Tree:
    """The listed memory folder: entries by path, folders, folders it could not list, temp files."""

    entries: dict[str, Entry] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=set)
    unreadable: list[str] = field(default_factory=list)
    temps: list[str] = field(default_factory=list)


def walk(root: Path) -> Tree:
    """List ``root`` without following any symlink (stat only, nothing opened)."""
    tree = Tree()
    stack = [""]
    while stack:
        rel_dir = stack.pop()
        folder = os.path.join(root, rel_dir) if rel_dir else str(root)
        try:
            with os.scandir(folder) as it:
                listed = list(it)
        except OSError:
            tree.unreadable.append(rel_dir)
            continue
        if rel_dir and any(e.name == ".git" for e in listed):
            continue  # a nested repository is its own business
        for e in listed:
            rel = f"{rel_dir}/{e.name}" if rel_dir else e.name
            if not rel_dir and e.name == ".git":
                continue
            if e.name.startswith(memory.TMP_PREFIX):
                tree.temps.append(rel)
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            except OSError:
                tree.unreadable.append(rel)
                continue
            mode = st.st_mode
            if stat.S_ISDIR(mode):
                tree.dirs.add(rel)
                stack.append(rel)
            elif stat.S_ISREG(mode):
                tree.entries[rel] = Entry(FILE, st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)
            elif stat.S_ISLNK(mode):
                try:
                    target = os.readlink(e.path)
                except OSError:
                    continue
                tree.entries[rel] = Entry(
                    LINK, st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns, link_blob(target), target
                )
            else:
                tree.entries[rel] = Entry(
                    SPECIAL, 0, st.st_mtime_ns, st.st_ino, st.st_ctime_ns, special=kind_of_mode(mode)
                )
    return tree


# -- reading one file safely ---------------------------------------------------------------------


class NotPlain(OSError):
    """The path is not a regular file any more (a link, a FIFO, a folder…); ``strerror`` says which."""


def _open_plain(path: Path) -> tuple[int, os.stat_result]:
    try:
        fd = os.open(path, _NOFOLLOW_FLAGS)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise NotPlain(errno.ELOOP, "it is a symlink", str(path)) from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise NotPlain(errno.EINVAL, f"it is {kind_of_mode(st.st_mode)}", str(path))
    return fd, st


def read_plain(path: Path, limit: int | None = None) -> bytes | None:
    """The bytes of the regular file ``path`` (never through a symlink), or ``None`` when it is
    larger than ``limit`` (:func:`max_bytes`). Raises :class:`NotPlain` for anything else, and
    ``FileNotFoundError`` when nothing is there."""
    limit = max_bytes() if limit is None else limit
    fd, st = _open_plain(path)
    try:
        if st.st_size > limit:
            return None
        parts: list[bytes] = []
        size = 0
        while size <= limit:
            more = os.read(fd, min(CHUNK, limit + 1 - size))
            if not more:
                return b"".join(parts)
            parts.append(more)
            size += len(more)
        return None  # it grew past the limit while being read
    finally:
        os.close(fd)


def hash_plain(path: Path) -> tuple[str, int, os.stat_result]:
    """The git blob id of the regular file ``path``, read in chunks (bounded memory), its size as
    read and its ``fstat``. Raises as :func:`read_plain` does."""
    fd, st = _open_plain(path)
    try:
        # git's blob id needs the length first: read at most the size fstat gave (a file growing
        # meanwhile has a new mtime, so the next scan hashes it again)
        h = hashlib.sha1(b"blob %d\0" % st.st_size, usedforsecurity=False)
        left = st.st_size
        while left > 0:
            more = os.read(fd, min(CHUNK, left))
            if not more:
                break
            h.update(more)
            left -= len(more)
        if left:  # it shrank while being read: hash what was there
            return hash_plain(path)
        return h.hexdigest(), st.st_size, st
    finally:
        os.close(fd)


def blob_of_bytes(data: bytes) -> str:
    """The git blob id of ``data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def real_folders(root: Path, rel: str) -> bool:
    """Whether every folder on the way from ``root`` to ``rel`` is a real folder (no symlink)."""
    parts = rel.split("/")[:-1]
    path = Path(root)
    for part in parts:
        path = path / part
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                return False
        except OSError:
            return False
    return True


def read_at(root: Path, rel: str, limit: int | None = None) -> bytes | None:
    """:func:`read_plain` of ``root/rel``, refused (``NotPlain``) when a folder on the way is a link."""
    if not real_folders(root, rel):
        raise NotPlain(errno.ELOOP, "a folder on its way is a symlink", rel)
    return read_plain(Path(root) / rel, limit)


def identity(root: Path, rel: str) -> tuple[str | None, str | None]:
    """What stands at ``rel`` now, as (kind, blob): ``(None, None)`` when nothing (or a folder) is
    there, or when a folder on the way is a symlink (what is behind it is not in the memory folder).
    Never follows a symlink, never opens a FIFO; a large file is hashed in chunks."""
    path = Path(root) / rel
    if not real_folders(root, rel):
        return None, None
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None, None
    if stat.S_ISDIR(st.st_mode):
        return None, None
    if stat.S_ISLNK(st.st_mode):
        try:
            return LINK, link_blob(os.readlink(path))
        except OSError:
            return None, None
    if not stat.S_ISREG(st.st_mode):
        return SPECIAL, None
    try:
        blob, size, _ = hash_plain(path)
    except NotPlain:
        return identity(root, rel) if os.path.lexists(path) else (None, None)
    except FileNotFoundError:
        return None, None
    return (LARGE if size > max_bytes() else FILE), blob


# -- the hash cache ------------------------------------------------------------------------------


class HashCache:
    """Blob ids of regular files by (path, size, mtime_ns, inode, ctime_ns), kept in the ledger."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger
        self.known = outside_items.hashes(ledger)
        self.fresh: dict[str, tuple[tuple[int, int, int, int], str]] = {}
        self.hashed = 0

    def misses(self, tree: Tree) -> int:
        """How many regular files of ``tree`` would be hashed by :meth:`fill`."""
        n = 0
        for rel, entry in tree.entries.items():
            if entry.kind in (FILE, LARGE):
                hit = self.fresh.get(rel) or self.known.get(rel)
                n += hit is None or hit[0] != entry.key
        return n

    def fill(self, root: Path, tree: Tree) -> None:
        """Give every regular file of ``tree`` its blob id: from the cache when its stat is unchanged,
        else hashed now (and a file over the limit becomes :data:`LARGE`)."""
        limit = max_bytes()
        for rel, entry in tree.entries.items():
            if entry.kind not in (FILE, LARGE):
                continue
            entry.kind = LARGE if entry.size > limit else FILE
            hit = self.fresh.get(rel) or self.known.get(rel)
            if hit is not None and hit[0] == entry.key:
                entry.blob = hit[1]
                continue
            started = time.time_ns()
            try:
                blob, size, st = hash_plain(Path(root) / rel)
            except NotPlain as exc:
                entry.kind, entry.special = (
                    (LINK, None) if exc.errno == errno.ELOOP else (SPECIAL, exc.strerror or "")
                )
                if entry.kind == LINK:  # swapped for a link after the listing
                    try:
                        entry.target = os.readlink(Path(root) / rel)
                        entry.blob = link_blob(entry.target)
                    except OSError:
                        entry.kind = SPECIAL
                continue
            except OSError:
                entry.kind, entry.special = SPECIAL, "unreadable"
                continue
            self.hashed += 1
            entry.size, entry.mtime_ns, entry.ino, entry.ctime_ns = (
                size,
                st.st_mtime_ns,
                st.st_ino,
                st.st_ctime_ns,
            )
            entry.kind = LARGE if size > limit else FILE
            entry.blob = blob
            if st.st_mtime_ns + RACY_NS < started and st.st_ctime_ns + RACY_NS < started:
                self.fresh[rel] = (entry.key, blob)

    def save(self, tree: Tree) -> None:
        """Write what :meth:`fill` learned, and forget paths no longer there (in the current
        transaction, or one of its own)."""
        gone = [p for p in self.known if p not in tree.entries or tree.entries[p].kind not in (FILE, LARGE)]
        rows = [(p, *key, blob) for p, (key, blob) in self.fresh.items() if self.known.get(p) != (key, blob)]
        if not gone and not rows:
            return
        outside_items.save_hashes(self.ledger, gone, rows)
        for p in gone:
            self.known.pop(p, None)
        self.known.update(self.fresh)
        self.fresh = {}


# -- git, read-only ----------------------------------------------------------------------------


def git_bytes(repo: Repo, *args: str, input: bytes | None = None) -> bytes:
    """The output of a read-only ``git <args>`` in the memory repository (raises ``CalledProcessError``)."""
    env = {**os.environ, "LC_ALL": "C", **repo.git.environment()}
    return subprocess.run(
        ["git", "--no-optional-locks", *args],
        cwd=repo.working_tree_dir,
        env=env,
        input=input,
        capture_output=True,
        check=True,
    ).stdout


@dataclass(frozen=True, slots=True)
class HeadFile:
    """One file of HEAD: its mode, blob id and size."""

    mode: str
    blob: str
    size: int


def head_tree(repo: Repo) -> dict[str, HeadFile]:
    """Every file of HEAD by path (one ``git ls-tree``); empty with no commits. Submodules left out."""
    try:
        out = git_bytes(repo, "ls-tree", "-r", "-l", "-z", "--full-tree", "HEAD")
    except subprocess.CalledProcessError:
        return {}
    tree: dict[str, HeadFile] = {}
    for line in out.split(b"\0"):
        if not line:
            continue
        meta, _, path = line.partition(b"\t")
        mode, kind, sha, size = meta.decode().split()
        if kind == "blob":
            tree[os.fsdecode(path)] = HeadFile(mode, sha, int(size) if size.isdigit() else 0)
    return tree


def blobs(repo: Repo, ids: list[str]) -> dict[str, bytes]:
    """The bytes of the given blobs (one ``git cat-file --batch``); the caller leaves out large ones."""
    wanted = list(dict.fromkeys(ids))
    if not wanted:
        return {}
    out = git_bytes(repo, "cat-file", "--batch", input="".join(f"{i}\n" for i in wanted).encode())
    got: dict[str, bytes] = {}
    pos = 0
    for _ in wanted:
        end = out.index(b"\n", pos)
        header = out[pos:end].decode().split(" ")
        pos = end + 1
        if len(header) < 3 or header[1] == "missing":
            continue
        size = int(header[2])
        got[header[0]] = out[pos : pos + size]
        pos += size + 1
    return got


def ignored(repo: Repo, paths: list[str]) -> set[str]:
    """Which of the untracked ``paths`` git ignores (``.gitignore``, ``info/exclude``): one
    ``git ls-files --others --exclude-standard`` (git lists what it does not ignore, in C), and
    ``git check-ignore`` only for what git never lists (a FIFO, a socket)."""
    if not paths:
        return set()
    try:
        out = git_bytes(repo, "ls-files", "-z", "--others", "--exclude-standard", "--full-name")
    except subprocess.CalledProcessError:
        return set()
    listed = {os.fsdecode(p) for p in out.split(b"\0") if p}
    unlisted = [p for p in paths if p not in listed]
    if not unlisted:
        return set()
    try:
        out = git_bytes(repo, "check-ignore", "-z", "--stdin", input="\0".join(unlisted).encode() + b"\0")
    except subprocess.CalledProcessError as exc:
        out = exc.stdout or b""  # exit 1: none ignored
    return {os.fsdecode(p) for p in out.split(b"\0") if p}


def signature(head: str | None, tree: Tree) -> str:
    """A digest of everything the scan's result depends on in the folder: HEAD, every entry's kind,
    stat key and blob, the folders and what could not be listed. Equal signatures: nothing changed."""
    h = hashlib.sha1(usedforsecurity=False)
    h.update(f"{head}\0".encode())
    for rel in sorted(tree.entries):
        e = tree.entries[rel]
        h.update(f"{rel}\0{e.kind}\0{e.key}\0{e.blob}\0{e.target}\0".encode("utf-8", "surrogateescape"))
    h.update("\0".join(sorted(tree.dirs)).encode("utf-8", "surrogateescape"))
    h.update("\0".join(sorted(tree.unreadable)).encode("utf-8", "surrogateescape"))
    return h.hexdigest()
