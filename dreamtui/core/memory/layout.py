"""The memory repository's layout: index, topic files, slugs, safe paths, the index ceiling.

Layout (what Claude Code loads)::

    MEMORY.md                      the index: one line per memory, ``- [Title](path.md) — hook``
    <slug>.md                      global topic files
    projects/<project>/<slug>.md   project-scoped topic files
    briefing.md                    the latest briefing
    reviews/review-<date>.md       one review file per day

Every name below the repository root is made here, by code, never taken from model output, and
every write goes through :func:`safe_path` (no ``..``, no absolute paths, nothing under ``.git`` in
any case, no reserved device names, no NUL, no symlinked component) and :func:`atomic_write`.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from dreamtui.core.errors import MemoryRepoError
from dreamtui.core.models import Jsonable
from dreamtui.core.secrets import redact
from dreamtui.core.text import clean_text, has_control, shorten

INDEX = "MEMORY.md"
BRIEFING = "briefing.md"
REVIEWS = "reviews"
PROJECTS = "projects"
TMP_PREFIX = ".dreamtui-tmp-"

MAX_INDEX_LINES = 200
MAX_INDEX_BYTES = 25_000
WARN_PCT = 85.0

SLUG_MAX = 60
TITLE_MAX = 80
HOOK_MAX = 150

_RESERVED = {
    "con",
    "prn",
    "aux",
    "nul",
    "clock$",
    "conin$",
    "conout$",
    *(f"com{i}" for i in range(10)),
    *(f"lpt{i}" for i in range(10)),
    "com¹",
    "com²",
    "com³",
    "lpt¹",
    "lpt²",
    "lpt³",
}
# Topic slugs that would collide with the repository's own files on a case-insensitive disk.
_TAKEN_SLUGS = {"memory", "briefing", "readme", "claude", "index"}


# -- text --------------------------------------------------------------------------------------


def one_line(text: str, limit: int | None = None) -> str:
    """``clean_text`` on a single line, whitespace collapsed, cut at a word boundary to ``limit``."""
    return shorten(" ".join(clean_text(text).split()), limit)


def slugify(text: str, max_len: int = SLUG_MAX) -> str:
    """A file-name slug: lowercase ASCII ``[a-z0-9-]``, at most ``max_len`` characters, never empty,
    never a reserved device name or one of the repository's own file names."""
    ascii_text = (
        unicodedata.normalize("NFKD", clean_text(text)).encode("ascii", "ignore").decode("ascii").lower()
    )
    words = re.findall(r"[a-z0-9]+", ascii_text)
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > max_len:
            if not slug:
                slug = word[:max_len]
            break
        slug = candidate
    slug = slug.strip("-") or "memory-note"
    if slug in _RESERVED or slug in _TAKEN_SLUGS:
        slug = f"{slug}-note"
    return slug


def unique_slug(directory: Path, slug: str, taken: set[str] | frozenset[str] = frozenset()) -> str:
    """``slug``, or ``slug-2``, ``slug-3``… so that ``<slug>.md`` is new in ``directory``
    (compared case-insensitively, as on macOS and Windows disks)."""
    try:
        existing = {p.name.lower() for p in directory.iterdir()}
    except OSError:
        existing = set()
    existing |= {f"{t.lower()}.md" for t in taken}
    name, n = slug, 1
    while f"{name}.md" in existing:
        n += 1
        suffix = f"-{n}"
        name = slug[: SLUG_MAX - len(suffix)].rstrip("-") + suffix
    return name


# -- paths -------------------------------------------------------------------------------------


def is_bare_repository(path: Path) -> bool:
    """``path`` looks like a bare git repository: ``HEAD``, ``objects/`` and ``refs/`` at its top and no
    ``.git`` (cheap, without git; :func:`gitops.open_repo` asks git itself)."""
    path = Path(path)
    try:
        return (
            (path / "HEAD").is_file()
            and (path / "objects").is_dir()
            and (path / "refs").is_dir()
            and not os.path.lexists(path / ".git")
        )
    except OSError:
        return False


def foreign_folder_message(path: Path) -> str | None:
    """Why ``path`` cannot be taken as the memory repository without being asked: a folder that holds
    files and is not a git repository (dreamtui would ``git init`` it and commit into it). ``None``
    for a git repository (work tree), an empty folder or none at all."""
    path = Path(path)
    try:
        if not path.is_dir() or os.path.lexists(path / ".git") or is_bare_repository(path):
            return None
        with os.scandir(path) as entries:
            names = sorted(entry.name for _, entry in zip(range(4), entries, strict=False))
    except OSError:
        return None
    if not names:
        return None
    shown = ", ".join(names[:3]) + (", …" if len(names) > 3 else "")
    return (
        f"memory folder {path} holds files ({shown}) and is not a git repository; dreamtui would make it "
        "one and commit into it. Pass --init to do that, or give an empty folder or a git repository "
        "as --memory"
    )


def bare_repository_message(path: Path) -> str:
    """The one-line refusal of a bare repository given as the memory repository."""
    return (
        f"memory repository {path} is a bare git repository (no work tree for the memory files); give a "
        "clone with a work tree, or an empty folder, as --memory"
    )


def _check_component(part: str, rel: str) -> None:
    if part in ("", ".", ".."):
        raise MemoryRepoError(f"unsafe memory path {rel!r}: '{part}' is not allowed")
    bare = part.rstrip(". ").lower()
    if bare == ".git" or bare.startswith("git~"):
        raise MemoryRepoError(f"unsafe memory path {rel!r}: nothing may be written under .git")
    stem = bare.split(".", 1)[0].rstrip(" ")
    if stem in _RESERVED:
        raise MemoryRepoError(f"unsafe memory path {rel!r}: {part!r} is a reserved device name")
    try:
        encoded = os.fsencode(part)
    except UnicodeError:
        raise MemoryRepoError(f"unsafe memory path {rel!r}: {part!r} cannot be a file name here") from None
    if len(encoded) > 255:
        raise MemoryRepoError(f"unsafe memory path {rel!r}: a name is longer than 255 bytes")
    if any(ch in part for ch in '\\:*?"<>|') or has_control(part):
        raise MemoryRepoError(f"unsafe memory path {rel!r}: {part!r} has a character not allowed in names")


def safe_path(root: Path, rel: str | PurePosixPath) -> Path:
    """``root / rel`` after proving it is a safe place to write.

    Refuses NUL bytes, absolute paths, ``..``, anything under ``.git`` (any case), reserved device
    names, over-long names, and any existing component that is a symlink (checked with ``lstat``)
    or not a folder. Raises :class:`MemoryRepoError` with a one-line reason.
    """
    text = str(rel)
    if "\x00" in text:
        raise MemoryRepoError(f"unsafe memory path {text!r}: it contains a NUL byte")
    if not text or text.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", text) or Path(text).is_absolute():
        raise MemoryRepoError(f"unsafe memory path {text!r}: it must be relative to the memory repository")
    parts = text.split("/")
    for part in parts:
        _check_component(part, text)
    if len(text.encode("utf-8", "surrogatepass")) > 1024:
        raise MemoryRepoError(f"unsafe memory path {text!r}: it is too long")
    current = Path(root)
    for index, part in enumerate(parts):
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            break
        except OSError as exc:
            raise MemoryRepoError(
                f"unsafe memory path {text!r}: cannot inspect {current}: {exc.strerror}"
            ) from exc
        if stat.S_ISLNK(st.st_mode):
            raise MemoryRepoError(f"unsafe memory path {text!r}: {current} is a symlink")
        last = index == len(parts) - 1
        if not last and not stat.S_ISDIR(st.st_mode):
            raise MemoryRepoError(f"unsafe memory path {text!r}: {current} is not a folder")
        if last and not stat.S_ISREG(st.st_mode):
            raise MemoryRepoError(f"unsafe memory path {text!r}: {current} is not a regular file")
    return Path(root) / Path(*parts)


def make_dirs(root: Path, rel_dir: str) -> list[str]:
    """Create the folders of ``rel_dir`` below ``root`` safely; return those it created (relative)."""
    created: list[str] = []
    if not rel_dir:
        return created
    parts = rel_dir.split("/")
    for i in range(1, len(parts) + 1):
        sub = "/".join(parts[:i])
        for part in parts[:i]:
            _check_component(part, rel_dir)
        path = Path(root) / sub
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            try:
                os.mkdir(path)
            except OSError as exc:
                raise MemoryRepoError(f"cannot create folder {path}: {exc.strerror}") from exc
            created.append(sub)
            continue
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            raise MemoryRepoError(f"unsafe memory path {rel_dir!r}: {path} is not a plain folder")
    return created


PROJECT_HASH_CHARS = 10
"""Hex characters of the hash that tells apart project folders whose readable slugs are alike."""


def legacy_project_folder(name: str) -> str:
    """The folder name the first versions gave a project: its slug alone (lossy: ``-home-u-日本語``
    and ``-home-u-中文`` were both ``home-u``)."""
    return slugify(name)


def project_folder(name: str) -> str:
    """The folder below ``projects/`` that holds one project's memories: distinct for distinct names.

    * A name in Claude Code's encoding of a lowercase path (``-home-kim-app``: ``-`` then lowercase
      ASCII words joined by single dashes) keeps its old slug (``home-kim-app``): the slug loses only
      the leading dash, so it was already injective, and every existing folder of such a project
      keeps its name (nothing moves). Such a folder never contains ``--``.
    * Any other name (capitals, ``--``, ``_``, non-ASCII, emoji, ``...``, ``memory``, an over-long
      path) loses information in its slug, so it gets the slug, ``--`` and a stable hash of the exact
      name: ``home-u--3f2a9c41d7``. The ``--`` keeps these apart from the kept slugs above; the hash
      keeps them apart from each other (and from a name differing only in case: every folder name is
      lowercase, so case-insensitive disks see distinct names too).

    Memories such a project got under its old lossy folder (:func:`legacy_project_folder`) stay where
    they are and are still read as its own (``gate.pipeline.Scopes`` asks the ledger who accepted
    them); new ones are written to this folder.
    """
    slug = slugify(name)
    if name == f"-{slug}":
        return slug
    digest = hashlib.blake2b(name.encode("utf-8", "surrogatepass"), digest_size=PROJECT_HASH_CHARS // 2)
    base = slugify(name, SLUG_MAX - PROJECT_HASH_CHARS - 2)
    return f"{base}--{digest.hexdigest()}"


def topic_rel_path(scope: str, project: str, slug: str) -> str:
    """``<slug>.md`` for a global memory, ``projects/<project-folder>/<slug>.md`` for a project one
    (:func:`project_folder`)."""
    if scope in ("global", "", "user"):
        return f"{slug}.md"
    return f"{PROJECTS}/{project_folder(project or scope)}/{slug}.md"


def storable(data: bytes) -> bytes:
    """``data`` as dreamtui writes it into the memory folder: every secret redacted
    (:func:`dreamtui.core.secrets.redact`). Any bytes round-trip, invalid UTF-8 included; idempotent.

    Callers that compare or hash what they are about to write use this to know the bytes on disk.
    """
    text = data.decode("utf-8", "surrogateescape")
    clean = redact(text)
    return data if clean == text else clean.encode("utf-8", "surrogateescape")


def _umask() -> int:
    """The process's umask, read without changing it (``/proc``; 0o022 where that cannot be read)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022


def file_mode(target: Path) -> int:
    """The mode a write of ``target`` keeps: the file's own permission bits when it exists (a rewrite
    never turns 0644 into 0600), else what a new file gets under the umask."""
    try:
        st = os.lstat(target)
    except OSError:
        return 0o666 & ~_umask()
    return stat.S_IMODE(st.st_mode) if stat.S_ISREG(st.st_mode) else 0o666 & ~_umask()


def write_temp(root: Path, rel: str, data: bytes, *, verbatim: bool = False) -> Path:
    """Write ``data`` (secrets redacted unless ``verbatim``) to a fsynced temp file beside ``root/rel``,
    with the mode ``root/rel`` has (:func:`file_mode`); the caller moves it into place or deletes it.
    A full disk or a read-only folder is one :class:`MemoryRepoError` line, and no temp file is left."""
    if not verbatim:
        data = storable(data)
    target = safe_path(root, rel)
    try:
        fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, dir=target.parent)
    except OSError as exc:
        raise MemoryRepoError(f"cannot write {target}: {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), file_mode(target))
            os.fsync(fh.fileno())
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise MemoryRepoError(f"cannot write {target}: {exc.strerror or exc}") from exc
        raise
    return Path(tmp)


def atomic_write(
    root: Path, rel: str, data: bytes, crash_hook: object = None, *, verbatim: bool = False
) -> None:
    """Write ``data`` to ``root/rel`` atomically: a temp file in the same folder, fsync, ``os.replace``;
    the file keeps its mode.

    Every secret in ``data`` is redacted first (:func:`storable`): nothing dreamtui writes into the
    memory folder holds one. ``verbatim`` writes the bytes as they are; only for putting back bytes
    that were already there (a file's committed or earlier content, when a write is rolled back).
    ``crash_hook`` (a callable) runs between the fsync and the replace; used by the crash test.
    """
    tmp = write_temp(root, rel, data, verbatim=verbatim)
    target = safe_path(root, rel)
    try:
        if callable(crash_hook):
            crash_hook()
        safe_path(root, rel)  # re-check: nothing swapped a component for a symlink meanwhile
        os.replace(tmp, target)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):  # a full disk, a read-only folder: one line, never a traceback
            raise MemoryRepoError(f"cannot write {target}: {exc.strerror or exc}") from exc
        raise
    fsync_dir(target.parent)


def fsync_dir(folder: Path) -> None:
    """Make a folder's entries durable (best effort)."""
    try:
        dfd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def remove_temp_files(root: Path, folders: list[str]) -> list[str]:
    """Delete dreamtui's own leftover temp files (``.dreamtui-tmp-*``) in ``folders``; return them."""
    removed = []
    for rel in dict.fromkeys(folders):
        folder = Path(root) / rel if rel else Path(root)
        try:
            entries = list(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.name.startswith(TMP_PREFIX) and entry.is_file() and not entry.is_symlink():
                try:
                    entry.unlink()
                    removed.append(entry.relative_to(root).as_posix())
                except OSError:
                    pass
    return removed


def read_bytes(root: Path, rel: str) -> bytes | None:
    """The bytes of ``root/rel``, or ``None`` when it does not exist."""
    try:
        return (Path(root) / rel).read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None


# -- the index ---------------------------------------------------------------------------------


def index_line(title: str, rel: str, hook: str) -> str:
    """``- [Title](path.md) — hook`` on one line, the title and hook cleaned and bounded."""
    title = one_line(title, TITLE_MAX).replace("[", "(").replace("]", ")") or "memory"
    hook = one_line(hook, HOOK_MAX)
    target = rel.replace(" ", "%20").replace("(", "%28").replace(")", "%29")
    line = f"- [{title}]({target})"
    return f"{line} — {hook}" if hook else line


def add_index_line(index_text: str, line: str) -> str:
    """The index with ``line`` appended (a final newline kept, in the file's own line endings)."""
    eol = "\r\n" if "\r\n" in index_text else "\n"
    if index_text and not index_text.endswith("\n"):
        index_text += eol
    return index_text + line + eol


def remove_index_line(index_text: str, line: str) -> str:
    """The index without the last line equal to ``line`` (unchanged when it is not there)."""
    lines = index_text.split("\n")
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].rstrip("\r") == line:
            del lines[i]
            return "\n".join(lines)
    return index_text


@dataclass(frozen=True, slots=True)
class CeilingStatus(Jsonable):
    """How full ``MEMORY.md`` is against what Claude Code loads (200 lines, 25 KB)."""

    lines: int
    bytes: int
    pct: float
    max_lines: int = MAX_INDEX_LINES
    max_bytes: int = MAX_INDEX_BYTES

    @property
    def warn(self) -> bool:
        """At or past 85% of either limit."""
        return self.pct >= WARN_PCT

    @property
    def over(self) -> bool:
        """Past either limit."""
        return self.lines > self.max_lines or self.bytes > self.max_bytes

    JSON_KEYS = ("lines", "bytes", "pct", "warn", "over", "max_lines", "max_bytes")  # as printed


_HTML_COMMENT_LINES = re.compile(rb"^[ \t]*<!--.*?(?:-->|\Z)[ \t]*(?:\r?\n|\Z)", re.S | re.M)
_HTML_COMMENT = re.compile(rb"<!--.*?(?:-->|\Z)", re.S)
_FRONTMATTER = re.compile(rb"\A---\r?\n(?:.*?\r?\n)?---[ \t]*(?:\r?\n|\Z)", re.S)


def counted_part(data: bytes) -> bytes:
    """What of ``MEMORY.md`` counts against Claude Code's limit: the text without a leading
    frontmatter block and without HTML comments (``<!-- … -->``, over several lines too; a comment
    that fills its lines takes them along)."""
    data = _FRONTMATTER.sub(b"", data, count=1)
    return _HTML_COMMENT.sub(b"", _HTML_COMMENT_LINES.sub(b"", data))


def ceiling_of(index_text: str | bytes) -> CeilingStatus:
    """The ceiling status of an index text, counted as Claude Code counts it (:func:`counted_part`)."""
    data = index_text.encode("utf-8", "surrogatepass") if isinstance(index_text, str) else index_text
    data = counted_part(data)
    lines = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    pct = max(100.0 * lines / MAX_INDEX_LINES, 100.0 * len(data) / MAX_INDEX_BYTES)
    return CeilingStatus(lines, len(data), round(pct, 1))


def ceiling_status(root: Path) -> CeilingStatus:
    """The ceiling status of ``root/MEMORY.md`` (empty when missing)."""
    return ceiling_of(read_bytes(root, INDEX) or b"")


def ceiling_warning(status: CeilingStatus) -> str | None:
    """The warning every command prints from 85%, or ``None`` below it."""
    if not status.warn:
        return None
    # rounded, but never "100%" while there is still room (199 of 200 lines is 99%)
    pct = round(status.pct) if status.pct >= 100 else min(round(status.pct), 99)
    return (
        f"warning: MEMORY.md is at {pct}% of what Claude Code loads "
        f"({status.lines}/{status.max_lines} lines, {status.bytes:,}/{status.max_bytes:,} bytes); "
        "merge or remove index lines before it fills up"
    )


def check_ceiling(new_index: str | bytes) -> CeilingStatus:
    """Raise :class:`MemoryRepoError` when ``new_index`` would pass the ceiling; else its status."""
    status = ceiling_of(new_index)
    if status.over:
        raise MemoryRepoError(
            f"accept refused: MEMORY.md would have {status.lines} lines and {status.bytes:,} bytes, past the "
            f"ceiling of {status.max_lines} lines / {status.max_bytes:,} bytes that Claude Code loads; "
            "merge or remove index lines (or move detail into topic files) and try again"
        )
    return status
