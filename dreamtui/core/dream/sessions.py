"""What a dream cycle reads: the sessions of every agent's transcript folders (``ingest.sources``),
grouped by project (a repository: Claude Code's and Codex's sessions of one repository are one
project's), and the part of each not dreamed yet (light sleep's work), plus the cheap look at which
projects have new content."""

from __future__ import annotations

import hashlib
import heapq
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from dreamtui.core.config import Config
from dreamtui.core.errors import TranscriptError
from dreamtui.core.files import Skipped, scan_folder
from dreamtui.core.ingest import formats
from dreamtui.core.ingest.digest import DigestState, digest_increment, digest_lines
from dreamtui.core.ingest.formats.protocol import split_address
from dreamtui.core.ingest.projects import ProjectMap
from dreamtui.core.ingest.records import address_key
from dreamtui.core.ingest.sources import discover_all
from dreamtui.core.ingest.tail import LineScanner, TailRead, open_transcript
from dreamtui.core.ingest.transcripts import kind_of
from dreamtui.core.ledger import Ledger, offsets
from dreamtui.core.models import Digest, DigestStats, Turn

_SUMMED_STATS = (
    "bytes",
    "chars",
    "lines",
    "skipped_lines",
    "malformed",
    "invalid_utf8",
    "oversized",
    "replaced",
)
"""The digest counts a session adds up over its files."""


@dataclass(slots=True)
class FileRange:
    """The not-yet-dreamed part of one file of a session, and how it was read."""

    path: str
    start_offset: int
    start_line: int
    end_offset: int
    end_line: int
    content_hash: str
    read: TailRead | None = None  # persisted when the range is dreamed
    state: DigestState | None = None


@dataclass(slots=True, eq=False)
class SessionWork:
    """One session with new content as it moves through the phases."""

    project: str
    session: str
    files: list[Path]
    ranges: list[FileRange]
    digest: Digest
    mtime: float
    goodnight: bool = False
    ended: bool = False
    """Claude Code ended this session (the plugin's SessionEnd hook) and it was not written since."""
    deferred: bool = False
    memories: tuple[str, ...] = ()
    spark: bool = False
    covered: bool = False

    @property
    def person_chars(self) -> int:
        """How many characters of a person's words the new content holds (the depth signal)."""
        return self.digest.person_chars()


def project_map(config: Config, ledger: Ledger, *, remember: bool = False) -> ProjectMap:
    """Transcript folder → project key, as the ledger remembers it (``remember``: store new decisions)."""
    return ProjectMap(config.transcripts, ledger, remember=remember)


def transcript_folders(root: Path) -> list[str]:
    """The project folders under the transcripts folder (names only; unreadable entries left out)."""
    return sorted(e.name for e in scan_folder(Path(root), follow=True) if e.is_dir)  # the root may be a link


def session_groups(
    config: Config,
    project: str | None,
    skipped: list[Skipped] | None = None,
    projects: ProjectMap | None = None,
) -> dict[tuple[str, str], list[Path]]:
    """Transcript files of every agent (``ingest.sources``) grouped by (project key, session), main file
    first: the sessions of every worktree (and subfolder) of one repository, whichever agent ran them,
    are one project's (``projects``, a :class:`~dreamtui.core.ingest.projects.ProjectMap`). Folders and
    files that cannot be read (or are no regular files) are left out and named in ``skipped``."""
    root = Path(config.transcripts)
    projects = projects or ProjectMap(root)
    groups: dict[tuple[str, str], list[Path]] = {}
    found: list[Skipped] = []
    files = discover_all(config, found)
    keyed = [(projects.key(tf.project, tf.path), tf) for tf in files]
    if skipped is not None:  # for one project, only what is wrong in its own folders concerns it
        mine = None
        if project is not None:
            mine = {str(root / f) for f in {tf.project for key, tf in keyed if key == project} | {project}}
        skipped.extend(
            s
            for s in found
            if mine is None or any(s.path == m or s.path.startswith(m + os.sep) for m in mine)
        )
    for key, tf in keyed:
        if project is not None and key != project:
            continue
        groups.setdefault((key, tf.session), []).append(Path(tf.address))
    return groups


def new_content(
    ledger: Ledger,
    project: str,
    session: str,
    files: list[Path],
    unreadable: list[str] | None = None,
    skipped: list[Skipped] | None = None,
) -> SessionWork | None:
    """Digest what the session's files hold beyond their ``dreamed_offset`` (None: nothing new).

    Files that cannot be read are skipped (the next cycle tries again) and named in ``unreadable``;
    a file read for the first time in which nothing is a record (random bytes, text that is not
    UTF-8, one record over the size read, a first record cut off) is named, one line, in ``skipped``.
    """
    ranges: list[FileRange] = []
    streams: list[list[Turn]] = []
    stats = DigestStats()
    mtime = 0.0
    cwd = ""
    for path in files:
        key = address_key(path)
        try:
            digest, read, state = digest_increment(ledger, path, project, session, commit=False)
        except TranscriptError:
            if unreadable is not None and os.path.lexists(split_address(path)[0]):
                unreadable.append(str(path))
            continue  # vanished or unreadable since discovery: the next cycle sees it again
        if skipped is not None and not digest.turns and read.start_offset == 0:
            why = nothing_read(digest.stats, read.identity.size)
            if why:
                skipped.append(Skipped(str(path), why))
        mtime = max(mtime, read.identity.mtime)
        cwd = cwd or digest.cwd
        dreamed = offsets.dreamed_point(ledger, key)
        start, start_line = read.start_offset, read.start_line
        turns = list(digest.turns)
        hasher = hashlib.blake2b(digest_size=16)
        if dreamed and not read.reset and not read.records and dreamed[0] < read.start_offset:
            # someone else read past what was dreamed: digest the gap too
            start, start_line = dreamed
            with open_transcript(path) as fh:
                gap = list(LineScanner(fh, start, start_line, end=read.start_offset))
            for _n, _o, raw in gap:
                hasher.update(raw + b"\n")
            turns = digest_lines(gap, file=str(path), kind=kind_of(path), state=DigestState()) + turns
        for _n, _o, raw in read.lines:
            hasher.update(raw + b"\n")
        if read.end_offset <= start:
            continue
        ranges.append(
            FileRange(key, start, start_line, read.end_offset, read.end_line, hasher.hexdigest(), read, state)
        )
        streams.append(turns)
        for name in _SUMMED_STATS:
            setattr(stats, name, getattr(stats, name) + getattr(digest.stats, name))
    if not ranges:
        return None
    keyed = [[(t.timestamp or "", i, pos, t) for pos, t in enumerate(s)] for i, s in enumerate(streams)]
    merged = [item[3] for item in heapq.merge(*keyed)] if len(streams) > 1 else streams[0]
    digest = Digest(
        session=session, project=project, files=[str(p) for p in files], turns=merged, stats=stats, cwd=cwd
    )
    return SessionWork(project, session, list(files), ranges, digest, mtime)


def nothing_read(stats: DigestStats, size: int) -> str | None:
    """Why a non-empty file read from its start gave no record at all, one line (None: it did, or it
    is empty)."""
    if stats.lines and stats.skipped_lines >= stats.lines:
        parts = [
            f"{n} {what}"
            for n, what in (
                (stats.invalid_utf8, "not UTF-8"),
                (stats.malformed, "not a record"),
                (stats.oversized, "over the size read"),
            )
            if n
        ]
        return f"none of its {stats.lines} line(s) is a record ({', '.join(parts) or 'skipped'})"
    if not stats.lines and size > 0:
        return "nothing in it is a finished record (cut off, or not a session of its agent)"
    return None


def projects_with_new_content(config: Config, ledger: Ledger, since: datetime | None = None) -> list[str]:
    """Projects whose sessions hold bytes not yet dreamed, nor found too quiet by a cycle as they are
    (cheap: compares sizes, reads nothing); with ``since``, only files written since then count (the
    older ones wait for a back-fill)."""
    cut = since.timestamp() if since is not None else None
    dreamed = offsets.dreamed_offsets(ledger)
    projects = project_map(config, ledger)
    quiet = offsets.quiet_offsets(ledger)  # found too quiet: only words written since count as new
    quiet_whole = offsets.quiet_stats(ledger)  # a whole-file source found too quiet, as it was then
    found: list[str] = []
    for tf in discover_all(config):
        try:
            st = tf.path.stat()
        except OSError:
            continue
        if cut is not None and st.st_mtime < cut:
            continue
        fkey = address_key(tf.address)
        if formats.of_file(tf).layout == "records":  # offsets count records' bytes: compare the file
            row = offsets.file_state(ledger, fkey)
            now = (st.st_size, st.st_mtime)
            changed = (row is None or (row.size, row.mtime) != now) and quiet_whole.get(fkey) != now
        else:
            changed = st.st_size > max(dreamed.get(fkey, 0), quiet.get(fkey, 0))
        if changed:
            key = projects.key(tf.project, tf.path)
            if key not in found:
                found.append(key)
    return found
