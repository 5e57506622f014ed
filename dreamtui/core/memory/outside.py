"""Outside changes: what others wrote into the memory repository, as review items.

Claude Code writes memory by itself (auto memory saves files during a session; its background
consolidation, "auto dream", merges, rewrites and deletes them). A person edits files by hand. None
of this passes through dreamtui's queue, so :func:`scan` (run at every start and by
:class:`OutsideWatcher` on file events) compares the working tree with ``HEAD`` and makes one item per
changed file (``added``, ``modified``, ``deleted``, ``renamed``; ``MEMORY.md`` index lines added or
dropped are listed on its item).

The memory folder is read safely (:mod:`.outside_tree`): listed with ``lstat``, never through a
symlink; a symlink, a FIFO, a device or a socket is an item of its own that says what it is
(``symlink → /target``, ``FIFO``) and whose target is never opened; a file over the size limit is an
item that says so and is never read whole. Accept commits a regular file's bytes only: a symlink, a
special file or a file over the limit is refused with a line saying what to do instead.

Nothing is written into git before a person decides: a file's identity is its blob id, computed
here and cached in the ledger by its stat (a start with nothing new hashes nothing); accept writes
the blob of exactly the bytes it checked, reject keeps the rejected bytes' blob. Renames are paired
in O(n log n) (:mod:`.outside_renames`). The slow part (listing and hashing) runs before the memory
lock is taken; under the lock the folder is listed again (stat only) and the items are updated.

dreamtui's own writes never become items: what it commits is in ``HEAD``; a write in flight is
named by a ``memory_intents`` row or a ``generated_writes`` blob, its temp files are skipped, and a
scan holds the memory lock, so it never sees an accept half-way.

Who wrote a change is read from the transcripts: a ``Write``/``Edit``/``MultiEdit`` tool call (or a
``Bash`` command naming the file) whose path is the file, in a transcript record at most
:func:`window` seconds before the change. A record from a sub-agent whose meta says it dreams, or one
under ``subagents/workflows/``, is **auto dream**; any other is **auto memory**. With no record, a
change that came with several other deletions or rewrites (:data:`BATCH_MIN`) is **auto dream**, and
anything else is the **person**'s own.

Accept commits exactly the reviewed bytes (a commit built from a temporary index, trailer
``Dreamtui-Reviewed: outside``): the working file is never touched, so an edit made meanwhile stays
and becomes the next item. Reject puts the file back from ``HEAD`` only while it still holds the
reviewed bytes, and keeps the rejected bytes' blob id with the reason in the ledger.

Every byte that could reach git passes the secret scanner (:mod:`dreamtui.core.secrets`): the scan
records on the item the rules that find a secret in a regular file's bytes or in its names (shown as
SECRET; its diff, index lines and transcript record are shown redacted); accept scans the exact bytes
it is about to commit again and refuses them with one line ("… holds a secret (github-pat): remove it
from the file, then dreamtui outside again — or reject it"). Once the person removes the secret, the
bytes (so the blob) differ and the next scan makes a clean item. A reject of such a file is allowed
(HEAD's version comes back) but its bytes are not kept in git.

Both are crash-safe: an ``outside_intents`` row is written first; reject moves the reviewed file
aside with one rename and links HEAD's bytes in its place. At the next start (every scan, accept or
reject begins with :func:`recover`, under the lock) an interrupted accept is recorded when its commit
reached HEAD and forgotten otherwise, an interrupted reject is finished (or, when the file changed,
put back), and dreamtui's own temp files are removed: a file missing after a kill is never shown as
deleted by a person.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets as token_source
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from git import GitCommandError, Repo

from dreamtui.core import clock
from dreamtui.core import secrets as secret_scan
from dreamtui.core.config import Config, env_seconds
from dreamtui.core.errors import DreamError, MemoryRepoError
from dreamtui.core.files import open_regular
from dreamtui.core.ingest import formats
from dreamtui.core.ledger import Ledger, intents, journal
from dreamtui.core.ledger import generated as generated_writes
from dreamtui.core.ledger import outside as outside_items
from dreamtui.core.ledger.db import stored_text
from dreamtui.core.ledger.outside import WRITER_LABELS, Item
from dreamtui.core.memory import gitops, index_check, textdiff
from dreamtui.core.memory import layout as memory
from dreamtui.core.memory import outside_agents as agents
from dreamtui.core.memory import outside_renames as renames
from dreamtui.core.memory import outside_tree as tree_of
from dreamtui.core.memory.decisions import memory_lock
from dreamtui.core.memory.outside_tree import FILE, LARGE, LINK, SPECIAL, Entry, HeadFile, Tree

TRAILER_REVIEWED = "Dreamtui-Reviewed"
TRAILER_OUTSIDE = "Dreamtui-Outside"
WINDOW_ENV = "DREAMTUI_OUTSIDE_WINDOW"
DEFAULT_WINDOW = 600.0
BATCH_MIN = 3
"""Deletions and rewrites seen together from this many files on are one loud batch."""
ASIDE, NEW = f"{memory.TMP_PREFIX}oaside-", f"{memory.TMP_PREFIX}onew-"
"""The names of a reject's temp files: the reviewed file moved aside, HEAD's bytes about to go in."""

_INDEX_LINE = re.compile(r"^\s*[-*] \[")


class OutsideError(DreamError):
    """An outside item cannot be decided (unknown, already decided, changed since it was seen)."""


@dataclass(slots=True)
class Record:
    """The transcript record of a tool call that wrote a memory file."""

    transcript: str
    session: str
    line: int
    tool: str
    timestamp: str
    writer: str


@dataclass(slots=True)
class ScanReport:
    """What one scan found: new items, items whose file changed again, items gone, batches, and
    what the scan could not look at (one line each)."""

    new: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    batches: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    hashed: int = 0


def window() -> float:
    """Seconds before a change in which a transcript record counts as its writer."""
    return env_seconds(WINDOW_ENV, DEFAULT_WINDOW)  # a bad value is a one-line ConfigError


def items(ledger: Ledger, status: str | None = "pending") -> list[Item]:
    """Outside items (``status=None``: all), oldest first."""
    return outside_items.items(ledger, status)


def get(ledger: Ledger, item_id: str) -> Item:
    """One item by id (a unique prefix is enough)."""
    rows = outside_items.with_prefix(ledger, item_id)
    if len(rows) != 1:
        raise OutsideError(
            f"no outside item {item_id!r}" if not rows else f"outside item {item_id!r} is ambiguous"
        )
    return rows[0]


# -- what changed ------------------------------------------------------------------------------


def _sha256_at(root: Path, rel: str) -> str | None | bool:
    """sha256 of the regular file ``rel`` (``None``: nothing there; ``False``: not a readable file)."""
    try:
        data = tree_of.read_at(Path(root), rel)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:
        return False
    return False if data is None else hashlib.sha256(data).hexdigest()


def _ours_in_flight(ledger: Ledger, root: Path, tree: Tree) -> set[str]:
    """Paths whose working bytes are a write dreamtui has in flight (an intent, a generated file)."""
    ours: set[str] = set()
    for intent in intents.listed(ledger):
        for rel, digest in intent.paths.items():
            if _sha256_at(root, rel) == digest:
                ours.add(rel)
    for rel, blob in generated_writes.blobs(ledger):
        entry = tree.entries.get(rel)
        if entry is not None and entry.kind == FILE and entry.blob == blob:
            ours.add(rel)
    return ours


@dataclass(slots=True)
class _Change:
    path: str
    kind: str
    work: Entry | None
    head: HeadFile | None
    old_path: str | None = None
    note: str | None = None

    @property
    def blob(self) -> str | None:
        return self.work.blob if self.work is not None else None

    @property
    def entry(self) -> str | None:
        return self.work.kind if self.work is not None else None


def _same(entry: Entry, head: HeadFile) -> bool:
    if entry.blob is None or entry.blob != head.blob:
        return False
    return (entry.kind == LINK) == (head.mode == "120000")


def _parents(rel: str) -> Iterator[str]:
    parts = rel.split("/")
    for i in range(1, len(parts)):
        yield "/".join(parts[:i])


def _deleted_note(rel: str, tree: Tree) -> str | None | bool:
    """Why ``rel`` is not a file any more, when it says something (``False``: it cannot be known)."""
    if rel in tree.unreadable or "" in tree.unreadable:
        return False  # it could not be looked at
    if rel in tree.dirs:
        return "a folder stands here now"
    for parent in _parents(rel):
        if parent in tree.unreadable:
            return False
        entry = tree.entries.get(parent)
        if entry is not None:
            return f"{parent} is {'a symlink' if entry.kind == LINK else 'not a folder'} now"
    return None


def changes(
    repo: Repo,
    ledger: Ledger,
    tree: Tree | None = None,
    head: dict[str, HeadFile] | None = None,
    pending: dict[str, Item] | None = None,
) -> list[_Change]:
    """Every path whose working entry differs from HEAD, less dreamtui's own writes in flight and
    what git ignores; a deleted file and a new one with (nearly) the same text are one rename."""
    root = gitops.work_tree(repo)
    if tree is None:
        tree = tree_of.walk(root)
        tree_of.HashCache(ledger).fill(root, tree)
    head = tree_of.head_tree(repo) if head is None else head
    pending = {i.path: i for i in items(ledger)} if pending is None else pending
    ours = _ours_in_flight(ledger, root, tree)
    found: list[_Change] = []
    fresh_paths = [p for p in tree.entries if p not in head]
    skip = tree_of.ignored(repo, fresh_paths) | ours
    for rel, entry in tree.entries.items():
        if rel in skip or agents.is_snapshot(rel):
            continue  # an agent's snapshot is compared with the agent's own file (outside_agents)
        old = head.get(rel)
        if old is not None and _same(entry, old):
            continue
        found.append(_Change(rel, "added" if old is None else "modified", entry, old, note=entry.note()))
    for rel, old in head.items():
        if rel in tree.entries or rel in ours or agents.is_snapshot(rel):
            continue
        note = _deleted_note(rel, tree)
        if note is False:
            continue  # under a folder that cannot be listed: unknown, never a deletion
        found.append(_Change(rel, "deleted", None, old, note=note if isinstance(note, str) else None))
    return _pair_renames(repo, root, found, pending)


def _pair_renames(repo: Repo, root: Path, found: list[_Change], pending: dict[str, Item]) -> list[_Change]:
    deleted = {c.path: c for c in found if c.kind == "deleted" and c.note is None and c.head is not None}
    added = {c.path: c for c in found if c.kind == "added" and c.entry == FILE and c.blob}

    def settled(c: _Change, kind: str) -> bool:
        item = pending.get(c.path)
        return item is not None and item.kind == kind and item.blob == c.blob

    d_sides = [
        renames.Side(c.path, c.head.blob, c.head.size, settled(c, "deleted"))
        for c in deleted.values()
        if c.head is not None
    ]
    a_sides = [
        renames.Side(c.path, c.blob or "", c.work.size if c.work else 0, settled(c, "added"))
        for c in added.values()
    ]
    kept = {
        i.path: i.old_path
        for i in pending.values()
        if i.kind == "renamed" and i.old_path and i.path in added and added[i.path].blob == i.blob
    }

    def texts(ds: list[renames.Side], as_: list[renames.Side]) -> tuple[dict[str, bytes], dict[str, bytes]]:
        got = tree_of.blobs(repo, [d.blob for d in ds])
        old = {d.path: got[d.blob] for d in ds if d.blob in got}
        new: dict[str, bytes] = {}
        for a in as_:
            try:
                data = tree_of.read_at(root, a.path, renames.TEXT_MAX)
            except OSError:
                continue
            if data is not None and tree_of.blob_of_bytes(data) == a.blob:
                new[a.path] = data
        return old, new

    pairs = renames.pair(d_sides, a_sides, {k: v for k, v in kept.items() if v}, texts)
    paired = set(pairs) | set(pairs.values())
    out = [c for c in found if c.path not in paired]
    for new_path, old_path in pairs.items():
        new, gone = added[new_path], deleted[old_path]
        out.append(_Change(new_path, "renamed", new.work, gone.head, old_path=old_path))
    return sorted(out, key=lambda c: c.path)


# -- who wrote it ------------------------------------------------------------------------------


def _writer_of_transcript(transcript: Path) -> str:
    """``auto-dream`` for the agent's background consolidation (the format says which transcripts
    are), ``auto-memory`` for any other session."""
    return "auto-dream" if formats.format_for(transcript).is_auto_dream(transcript) else "auto-memory"


_COMMAND_SCAN = 1024
"""How far after the memory folder's path a ``Bash`` command is searched for a file's path."""


class _Targets:
    """The absolute paths (as the memory folder is named and as it resolves) of the changed files."""

    def __init__(self, config: Config, rels: list[str]) -> None:
        roots = {
            os.path.normpath(os.path.realpath(config.memory)),
            os.path.normpath(str(config.memory)),
        }
        self.roots = sorted(roots, key=len, reverse=True)
        self.rel_of: dict[str, str] = {}
        for rel in rels:
            for root in roots:
                self.rel_of[os.path.normpath(os.path.join(root, rel))] = rel
        self.needles = {rel.rsplit("/", 1)[-1].encode() for rel in rels}

    def in_path(self, value: str, cwd: str) -> str | None:
        path = value if os.path.isabs(value) else os.path.join(cwd or "/", value)
        return self.rel_of.get(os.path.normpath(path))

    def in_command(self, command: str) -> set[str]:
        """The changed files whose absolute path appears in ``command`` (as a substring)."""
        found: set[str] = set()
        for root in self.roots:
            at = command.find(root)
            while at >= 0:
                end = min(len(command), at + len(root) + _COMMAND_SCAN)
                for stop in range(at + len(root) + 1, end + 1):
                    rel = self.rel_of.get(command[at:stop])
                    if rel is not None:
                        found.add(rel)
                at = command.find(root, at + 1)
        return found


def find_records(
    config: Config, whens: dict[str, float], paths: list[Path] | None = None
) -> dict[str, Record]:
    """For each changed file (path → when it changed): the latest transcript record, at most
    :func:`window` seconds before (and a minute after), of a tool call that wrote it. One pass over
    the transcripts, whatever the number of files."""
    if not whens:
        return {}
    targets = _Targets(config, list(whens))
    earliest, latest = min(whens.values()) - window(), max(whens.values()) + 60.0
    look_for = targets.needles if len(targets.needles) <= 32 else None
    best: dict[str, Record] = {}
    for path in paths if paths is not None else _recent_transcripts(Path(config.transcripts), earliest):
        fmt = formats.format_for(path)
        if fmt.layout != "lines":
            continue
        hint = fmt.tool_call_hint
        try:
            with open_regular(path) as fh:
                for number, raw in enumerate(fh, start=1):
                    if hint not in raw or (look_for is not None and not any(n in raw for n in look_for)):
                        continue
                    for rel, record, at in _matches(raw, targets, path, number, earliest, latest):
                        when = whens[rel]
                        if not when - window() <= at <= when + 60.0:
                            continue
                        if rel not in best or record.timestamp >= best[rel].timestamp:
                            best[rel] = record
        except OSError:
            continue
    return best


def find_record(config: Config, rel: str, when: float, paths: list[Path] | None = None) -> Record | None:
    """The latest transcript record, at most :func:`window` seconds before ``when`` (and a minute
    after), of a tool call that wrote ``rel`` in the memory repository."""
    return find_records(config, {rel: when}, paths).get(rel)


def _matches(
    raw: bytes, targets: _Targets, path: Path, number: int, earliest: float, latest: float
) -> list[tuple[str, Record, float]]:
    try:
        obj = json.loads(raw)
    except ValueError:
        return []
    if not isinstance(obj, dict):
        return []
    fmt = formats.format_for(path)
    where = fmt.ref(obj)
    stamp = where.timestamp or ""
    try:
        at = clock.parse_timestamp(stamp).timestamp()
    except ValueError:
        return []
    if not earliest <= at <= latest:
        return []
    cwd = where.cwd or ""
    out: list[tuple[str, Record, float]] = []
    for call in fmt.tool_calls(obj):
        hits: set[str] = set()
        if call.wrote is not None:
            rel = targets.in_path(call.wrote, cwd)
            hits = {rel} if rel else set()
        elif call.command is not None:
            hits = targets.in_command(call.command)
        if hits:
            record = Record(
                str(path), fmt.session_of(path), number, call.name, stamp, _writer_of_transcript(path)
            )
            out.extend((rel, record, at) for rel in hits if rel not in {r for r, _, _ in out})
    return out


def _recent_transcripts(root: Path, since: float) -> list[Path]:
    out = []
    for tf in formats.named(formats.FALLBACK).discover(root):  # Claude Code's memory, its sessions
        try:
            if tf.path.stat().st_mtime >= since:
                out.append(tf.path)
        except OSError:
            continue
    return out


# -- scanning ----------------------------------------------------------------------------------


def _new_id(path: str, blob: str | None) -> str:
    seed = f"{path}\0{blob}\0{time.time_ns()}\0{token_source.token_hex(4)}".encode()
    return "o" + hashlib.sha1(seed, usedforsecurity=False).hexdigest()[:9]


def _mtime(root: Path, rel: str) -> float:
    """When ``rel`` changed: its mtime, or for a deleted file its folder's (an unlink updates it)."""
    path = root / rel
    while True:
        try:
            return os.lstat(path).st_mtime
        except OSError:
            if path == root or path.parent == path:
                return clock.now().timestamp()
            path = path.parent


HASH_UNLOCKED = 32
"""A scan that must hash more files than this hashes them with the memory lock released."""


def scan(config: Config, ledger: Ledger) -> ScanReport:
    """Compare the memory repository's working tree with HEAD and bring the outside items up to date.

    Under the memory lock: interrupted decisions are recovered, the folder is listed (stat only) and
    the items updated. When many files are new to the hash cache they are hashed with the lock
    released first, then the folder is listed again under the lock. A start with nothing new (the
    same HEAD, every entry's stat and blob as at the last scan) stops after the listing."""
    report = ScanReport()
    if not gitops.repo_exists(config.memory):
        return report
    repo = gitops.open_repo(config.memory, create=False)
    root = gitops.work_tree(repo)
    cache = tree_of.HashCache(ledger)
    for attempt in range(2):
        with memory_lock(config):
            recover(config, ledger, repo, report.notices)
            tree = tree_of.walk(root)
            _remove_reject_temps(root, tree.temps)
            if attempt == 1 or cache.misses(tree) <= HASH_UNLOCKED:
                cache.fill(root, tree)
                _scan_locked(config, ledger, repo, tree, cache, report)
                agents.scan(config, ledger, repo, report)  # Codex's memories, Gemini CLI's section
                return report
        cache.fill(root, tree)  # the slow part, with the lock released: cached for the look above
    raise AssertionError("unreachable")


def _scan_locked(
    config: Config, ledger: Ledger, repo: Repo, tree: Tree, cache: tree_of.HashCache, report: ScanReport
) -> ScanReport:
    root = gitops.work_tree(repo)
    report.hashed = cache.hashed
    cache.save(tree)
    report.notices.extend(f"cannot look into {rel or '.'}: left as it is" for rel in tree.unreadable)
    settled = not intents.count(ledger)
    signature = tree_of.signature(gitops.head_sha(repo), tree) if settled else None
    if signature is not None and outside_items.signature(ledger) == signature:
        return report  # nothing new since the last scan
    pending = {i.path: i for i in items(ledger)}
    found = changes(repo, ledger, tree, None, pending)
    seen: set[str] = set()
    fresh: list[_Change] = []
    for change in found:
        seen.add(stored_text(change.path))  # the ledger holds a name with a secret in it redacted
        current = pending.get(stored_text(change.path))
        if (
            current
            and current.blob == change.blob
            and current.kind == change.kind
            and current.old_path == change.old_path
            and current.entry == change.entry
        ):
            continue
        fresh.append(change)
    batch = _batch_id(fresh)
    now = clock.now_iso()
    when = {change.path: _mtime(root, change.path) for change in fresh}
    records = find_records(config, when) if fresh else {}
    with ledger.write():
        for change in fresh:
            record = records.get(change.path)
            member = bool(batch) and (_loud(change) or change.path == memory.INDEX)
            writer = record.writer if record else ("unknown" if member else "person")
            values = {
                "path": change.path,
                "old_path": change.old_path,
                "kind": change.kind,
                "blob": change.blob,
                "head_blob": change.head.blob if change.head is not None else None,
                "writer": writer,
                "session": record.session if record else None,
                "transcript": record.transcript if record else None,
                "line": record.line if record else None,
                "tool": record.tool if record else None,
                "batch": batch if member else None,
                "detected_at": now,
                "entry": change.entry,
                "note": change.note,
                "secrets": ",".join(_secret_rules(root, change)) or None,
            }
            current = pending.get(stored_text(change.path))
            if current:
                outside_items.update(ledger, current.id, values)
                report.updated.append(current.id)
            else:
                item_id = _new_id(change.path, change.blob)
                outside_items.add(ledger, item_id, values)
                report.new.append(item_id)
        for path, item in pending.items():
            if path not in seen:
                _close(ledger, item.id, "gone", None, "the file is as committed again")
                report.gone.append(item.id)
            elif batch and path == memory.INDEX and item.batch != batch:
                # the index edited with the batch (seen in an earlier scan): its lines go with the batch
                outside_items.update(ledger, item.id, {"batch": batch})
        if signature is not None:
            outside_items.set_signature(ledger, signature)
    if batch:
        report.batches.append(batch)
    return report


def _secret_rules(root: Path, change: _Change) -> list[str]:
    """The secret scanner's rules that find a secret in a change: in a regular file's bytes (read
    within the size limit, only while they are still the change's blob) or in its names."""
    text = "\n".join(n for n in (change.path, change.old_path) if n)
    if change.entry == FILE and change.blob:
        try:
            data = tree_of.read_at(root, change.path)
        except OSError:
            data = None
        if data is not None and tree_of.blob_of_bytes(data) == change.blob:
            text = f"{text}\n{data.decode('utf-8', 'replace')}"
    return secret_scan.rules_found(text)


def _loud(change: _Change) -> bool:
    return change.kind in ("deleted", "modified", "renamed") and change.path != memory.INDEX


def _batch_id(fresh: list[_Change]) -> str | None:
    loud = [c for c in fresh if _loud(c)]
    if len(loud) < BATCH_MIN:
        return None
    return (
        "b"
        + hashlib.sha1(
            "\0".join(sorted(c.path for c in loud)).encode() + clock.now_iso().encode(), usedforsecurity=False
        ).hexdigest()[:9]
    )


def _close(
    ledger: Ledger,
    item_id: str,
    status: str,
    sha: str | None,
    reason: str | None,
    decided_as: str | None = None,
) -> None:
    outside_items.close(ledger, item_id, status, sha, reason, decided_as, clock.now_iso())


# -- showing -----------------------------------------------------------------------------------


def _blob_bytes(repo: Repo, blob: str | None) -> bytes:
    """The bytes of a blob in git (``b""`` when it is not there or over the size limit)."""
    if not blob:
        return b""
    try:
        size = int(tree_of.git_bytes(repo, "cat-file", "-s", blob).strip() or 0)
        if size > tree_of.max_bytes():
            return b""
        return tree_of.git_bytes(repo, "cat-file", "blob", blob)
    except (OSError, ValueError, subprocess.SubprocessError):
        return b""


def _reviewed_bytes(repo: Repo, item: Item) -> bytes | None:
    """The reviewed bytes of a regular-file item: from git when stored there (decided items), else
    from the working file while it still holds them (``None``: it changed since)."""
    if not item.blob:
        return b""
    if item.status != "pending":
        return _blob_bytes(repo, item.blob)
    try:
        data = tree_of.read_at(gitops.work_tree(repo), item.path)
    except OSError:
        data = None
    if data is not None and tree_of.blob_of_bytes(data) == item.blob:
        return data
    return _blob_bytes(repo, item.blob) or None


def diff(config: Config, item: Item) -> str:
    """The unified diff of the item (HEAD → the reviewed bytes); for a symlink, a special file or a
    file over the limit, a line saying what it is (its content is never read)."""
    if agents.is_snapshot(item.path):
        return agents.diff(config, item)
    repo = gitops.open_repo(config.memory, create=False)
    if item.entry in (LINK, SPECIAL, LARGE):
        what = {
            LINK: "its target is never read, and dreamtui does not commit links",
            SPECIAL: "it is not a regular file: nothing is read from it",
            LARGE: "its content is not read",
        }[item.entry]
        return f"({item.path}: {item.note}; {what})\n"
    reviewed = _reviewed_bytes(repo, item)
    if reviewed is None:
        return f"({item.path} changed since it was shown; the next scan shows it again)\n"
    before = item.old_path or item.path
    text = textdiff.unified_text(
        _shown_text(_blob_bytes(repo, item.head_blob)),
        _shown_text(reviewed),
        f"a/{before}" if item.head_blob else "/dev/null",
        f"b/{item.path}" if item.blob else "/dev/null",
    )
    head = f"({item.note})\n" if item.note else ""
    if item.secret_rules:
        head += f"(SECRET: it holds {', '.join(item.secret_rules)}; shown redacted)\n"
        if item.status == "rejected" and not reviewed:
            head += "(its bytes held a secret and were not kept in git)\n"
    return head + text


def _shown_text(data: bytes) -> str:
    """File bytes as text to show: decoded, every secret redacted (before any diff or cut, so no
    rule misses a secret split by ``+`` prefixes or a cut)."""
    return secret_scan.redact(data.decode("utf-8", "replace"))


def index_lines(config: Config, item: Item) -> tuple[list[str], list[str]]:
    """For a ``MEMORY.md`` item: the index lines it adds and those it drops."""
    if item.path != memory.INDEX or item.entry in (LINK, SPECIAL, LARGE):
        return [], []
    repo = gitops.open_repo(config.memory, create=False)
    old = [ln for ln in _shown_text(_blob_bytes(repo, item.head_blob)).splitlines() if _INDEX_LINE.match(ln)]
    new = [ln for ln in _shown_text(_reviewed_bytes(repo, item) or b"").splitlines() if _INDEX_LINE.match(ln)]
    return [ln for ln in new if ln not in old], [ln for ln in old if ln not in new]


_EXCERPT_WINDOW = 256 * 1024


_LINK_TARGET = re.compile(r"\]\(([^)\s]+)\)")
NOT_TOPICS = (memory.INDEX, "briefing.md", "promotion.md")


def _linked(lines: list[str]) -> set[str]:
    """The files index lines link to (relative to the repository)."""
    return {m.group(1).removeprefix("./") for line in lines for m in _LINK_TARGET.finditer(line)}


def _is_topic(rel: str) -> bool:
    return rel.endswith(".md") and rel not in NOT_TOPICS and not rel.startswith(("reviews/", "."))


def _index_at_head(repo: Repo) -> list[str]:
    text = (
        _shown_text(_blob_bytes(repo, _blob_at(repo, "HEAD", memory.INDEX))) if gitops.head_sha(repo) else ""
    )
    return [ln for ln in text.splitlines() if _INDEX_LINE.match(ln)]


def _reject_line(config: Config, item: Item) -> str:
    head = "as committed (HEAD)"
    if item.path == memory.INDEX and _plain(item):
        added, dropped = index_lines(config, item)
        parts = []
        if added:
            parts.append(f"the lines it added go ({', '.join(sorted(_linked(added))) or len(added)})")
        if dropped:
            parts.append(
                f"the lines it dropped come back ({', '.join(sorted(_linked(dropped))) or len(dropped)})"
            )
        return f"{item.path} is put back {head}" + (f": {'; '.join(parts)}" if parts else "")
    if item.kind == "added":
        return f"{item.path} is deleted: it is not in git"
    if item.kind == "deleted":
        return f"{item.path} comes back {head}"
    if item.kind == "renamed":
        return f"{item.path} is deleted and {item.old_path} comes back {head}"
    return f"{item.path} is put back {head}; this change to it is undone"


def _head_paths(repo: Repo) -> set[str]:
    if not gitops.head_sha(repo):
        return set()
    try:
        out = tree_of.git_bytes(repo, "ls-tree", "-r", "-z", "--name-only", "HEAD")
    except subprocess.SubprocessError:
        return set()
    return {os.fsdecode(p) for p in out.split(b"\0") if p}


def dead_after_accept(config: Config, ledger: Ledger, item: Item) -> list[str]:
    """The ``MEMORY.md`` links the commit of accepting ``item`` (its :func:`unit`) would newly leave
    dead: linking a file the commit does not have (the index invariant, :mod:`.index_check`)."""
    repo = gitops.open_repo(config.memory, create=False)
    chosen = unit(config, ledger, item, "accept")
    changes: dict[str, str | None] = {}
    for member in chosen:
        changes.update(_item_changes(member))
    head = _head_paths(repo)
    before = _blob_bytes(repo, _blob_at(repo, "HEAD", memory.INDEX)) if memory.INDEX in head else b""
    index = next((m for m in chosen if m.path == memory.INDEX), None)
    after = (_reviewed_bytes(repo, index) or b"") if index is not None and index.blob else before
    if index is not None and not index.blob:
        after = b""

    def exists_after(rel: str) -> bool:
        return changes[rel] is not None if rel in changes else rel in head

    return index_check.new_dead(
        before.decode("utf-8", "replace"), after.decode("utf-8", "replace"), head.__contains__, exists_after
    )


def dead_after_reject(config: Config, ledger: Ledger, item: Item) -> list[str]:
    """The ``MEMORY.md`` links the working tree would newly leave dead once ``item`` (its
    :func:`unit`) is rejected: a link to a file the reject deletes that no index change of the unit
    takes away."""
    repo = gitops.open_repo(config.memory, create=False)
    root = gitops.work_tree(repo)
    chosen = unit(config, ledger, item, "reject")
    head = _head_paths(repo)
    gone = {m.path for m in chosen if m.path not in head} - {memory.INDEX}
    index = memory.INDEX
    now = (memory.read_bytes(root, index) or b"").decode("utf-8", "replace")
    after = now
    if any(m.path == index for m in chosen):
        after = (
            _blob_bytes(repo, _blob_at(repo, "HEAD", index)).decode("utf-8", "replace")
            if index in head
            else ""
        )

    back = {m.path for m in chosen if m.path in head} | {m.old_path for m in chosen if m.old_path}

    def exists_now(rel: str) -> bool:
        return tree_of.identity(root, rel)[0] is not None

    def exists_after(rel: str) -> bool:
        return rel in back or (rel not in gone and exists_now(rel))

    return index_check.new_dead(now, after, exists_now, exists_after)


def reject_effect(config: Config, ledger: Ledger, item: Item) -> list[str]:
    """What rejecting ``item`` does, in lines a person reads before saying yes: every file the one
    decision puts back (:func:`unit`: a batch whole, a file with the ``MEMORY.md`` change that links
    it) and to what, whether ``u`` can bring the change back, and for a ``MEMORY.md`` change rejected
    alone the topic files its dropped lines leave out of the index."""
    if agents.is_snapshot(item.path):
        return agents.reject_effect(item)
    chosen = unit(config, ledger, item, "reject")
    lines = []
    if item.batch:
        batch = next((b for b in batches(ledger) if b.id == item.batch), None)
        what = batch.summary() if batch is not None else item.batch
        lines.append(f"One decision for the whole batch ({what}), {len(chosen)} changes:")
    elif len(chosen) > 1:
        lines.append(f"One decision for {len(chosen)} changes (MEMORY.md links {item.path}):")
    lines.extend(_reject_line(config, member) for member in chosen)
    if any(m.blob and m.secrets for m in chosen):
        lines.append("Bytes holding a secret are not kept anywhere: u cannot bring them back.")
    if any(m.blob and not m.secrets for m in chosen):
        lines.append("The rejected bytes are kept in git: u (undo) brings them back for review, in one step.")
    lines.extend(
        f"MEMORY.md would still link {rel}, which this reject deletes: a dead link (Claude Code loads "
        "nothing for it); fix the index line after"
        for rel in dead_after_reject(config, ledger, item)
    )
    left_out = index_left_out(config, ledger, item) if len(chosen) == 1 else []
    if left_out:
        lines.append(
            f"Left out of the index: {', '.join(left_out)} (their MEMORY.md lines go; Claude Code will not "
            "load them)."
        )
    return lines


def index_left_out(config: Config, ledger: Ledger, item: Item) -> list[str]:
    """For a ``MEMORY.md`` change about to be rejected: the topic files (there, or waiting as outside
    changes) whose only index line it adds, so the reject leaves them out of the index."""
    if item.path != memory.INDEX:
        return []
    repo = gitops.open_repo(config.memory, create=False)
    added, _dropped = index_lines(config, item)
    present = {i.path for i in items(ledger)} | {
        rel for rel in _linked(added) if tree_of.identity(gitops.work_tree(repo), rel)[0] is not None
    }
    return sorted(rel for rel in _linked(added) - _linked(_index_at_head(repo)) if rel in present)


def accept_caution(config: Config, ledger: Ledger, item: Item) -> list[str]:
    """Why accepting ``item`` needs a yes first (``[]``: one key is enough): it deletes a file, writes
    more than one path, is one of a batch, drops index lines, or writes a topic file that neither the
    committed index nor a waiting ``MEMORY.md`` change links (Claude Code would not load it). An item
    whose accept is refused anyway (a link, a secret) needs no yes: the refusal says why."""
    if agents.is_snapshot(item.path):
        return agents.accept_caution(item)
    try:
        _refuse_accept(item)
    except OutsideError:
        return []
    if item.secrets:
        return []
    why = [
        f"It commits MEMORY.md linking {rel}, which the commit does not have: a dead link (Claude Code "
        "loads nothing for it)."
        for rel in dead_after_accept(config, ledger, item)
    ]
    if item.kind == "deleted":
        why.append(f"It commits the deletion of {item.path}.")
    elif item.kind == "renamed":
        why.append(f"It commits two paths: {item.old_path} goes, {item.path} comes.")
    if item.batch:
        batch = next((b for b in batches(ledger) if b.id == item.batch), None)
        if batch is not None:
            chosen = unit(config, ledger, item, "accept")
            why.append(
                f"It is one of a batch ({batch.summary()}): one commit takes all {len(chosen)} changes: "
                + ", ".join(f"{m.kind} {m.path}" for m in chosen)
                + "."
            )
    if item.path == memory.INDEX:
        _added, dropped = index_lines(config, item)
        if dropped:
            why.append(
                f"It drops {len(dropped)} index line{'s' if len(dropped) != 1 else ''} from MEMORY.md."
            )
    elif item.blob and _is_topic(item.path):
        repo = gitops.open_repo(config.memory, create=False)
        waiting = [i for i in items(ledger) if i.path == memory.INDEX]
        linking = any(item.path in _linked(index_lines(config, i)[0]) for i in waiting)
        if item.path not in _linked(_index_at_head(repo)) and not linking:
            why.append(
                f"{item.path} is not in the index (MEMORY.md), and no waiting MEMORY.md change adds it: "
                "Claude Code will not load it."
            )
    return why


def transcript_excerpt(item: Item, limit: int = 2000) -> str | None:
    """The transcript record that wrote the item (its JSON line, every secret redacted, cut to
    ``limit``), when known."""
    if not item.transcript or not item.line:
        return None
    try:
        with open_regular(item.transcript) as fh:
            for number, raw in enumerate(fh, start=1):
                if number == item.line:
                    # redacted before the cut, on a window far wider than what is shown
                    window = raw[: max(limit * 4, _EXCERPT_WINDOW)]
                    return secret_scan.redact(window.decode("utf-8", "replace").rstrip("\n"))[:limit]
    except OSError:
        return None
    return None


@dataclass(slots=True)
class Batch:
    """A mass deletion/rewrite seen together."""

    id: str
    writer: str
    removed: int
    rewrote: int
    renamed: int
    pending: int

    index: bool = False
    """``MEMORY.md`` changed with it (its lines are decided with the batch)."""

    def summary(self) -> str:
        """``auto dream removed 23 files, rewrote 4, edited MEMORY.md``; the writer only when a
        transcript says who (else ``23 files removed, … together (writer not known)``)."""
        parts = [f"removed {self.removed} file{'s' if self.removed != 1 else ''}"] if self.removed else []
        if self.rewrote:
            parts.append(f"rewrote {self.rewrote}")
        if self.renamed:
            parts.append(f"renamed {self.renamed}")
        if self.index:
            parts.append("edited MEMORY.md")
        if self.writer == "unknown":
            return f"{', '.join(parts)} together (writer not known)"
        return f"{WRITER_LABELS.get(self.writer, self.writer)} {', '.join(parts)}"


def batches(ledger: Ledger) -> list[Batch]:
    """Every batch with a pending item."""
    ids = outside_items.pending_batches(ledger)
    if not ids:
        return []
    members_of: dict[str, list[Item]] = {b: [] for b in ids}
    for item in items(ledger, None):
        if item.batch in members_of:
            members_of[item.batch].append(item)
    out = []
    for batch in ids:
        members = members_of[batch]
        known = [m.writer for m in members if m.writer != "unknown"]
        writer = max(sorted(set(known)), key=known.count) if known else "unknown"
        files = [m for m in members if m.path != memory.INDEX]
        out.append(
            Batch(
                batch,
                writer,
                sum(m.kind == "deleted" for m in files),
                sum(m.kind == "modified" for m in files),
                sum(m.kind == "renamed" for m in files),
                sum(m.status == "pending" for m in members),
                index=len(files) < len(members),
            )
        )
    return out


# -- deciding ----------------------------------------------------------------------------------

CRASH_STEPS: tuple[str, ...] = (
    "accept-intent",
    "blob",
    "commit",
    "ref",
    "reject-intent",
    "aside",
    "link",
    "put",
    "ledger",
)
"""The points between the steps of a decision where the crash test dies (``DREAMTUI_CRASH_AT``)."""


def _step(name: str) -> None:
    """A point between the steps of a decision (tests put a person's edit here; the crash test dies
    here with SIGKILL when ``DREAMTUI_CRASH_AT`` names it)."""
    from dreamtui.core.memory.decisions import CRASH_ENV

    if os.environ.get(CRASH_ENV) == name:
        import signal

        os.kill(os.getpid(), signal.SIGKILL)


def unit(config: Config, ledger: Ledger, item: Item, action: str) -> list[Item]:
    """The pending items one decision on ``item`` takes together, ``item`` first: a batch's members
    (its ``MEMORY.md`` change included) for every action; for a reject (``reject``) of a file, also the
    waiting ``MEMORY.md`` change that adds or drops the file's index line, so a reject neither leaves a
    link to a file it deletes nor loses the line of a file it brings back."""
    if item.batch:
        members = [i for i in items(ledger) if i.batch == item.batch and i.id != item.id]
        return [item, *sorted(members, key=lambda i: (i.path == memory.INDEX, i.path))]
    out = [item]
    if action == "reject" and item.path != memory.INDEX:
        index = next((i for i in items(ledger) if i.path == memory.INDEX), None)
        if index is not None and _plain(index):
            added, dropped = index_lines(config, index)
            names = {n for n in (item.path, item.old_path) if n}
            if names & (_linked(added) | _linked(dropped)):
                out.append(index)
    return out


def _pending(ledger: Ledger, item_id: str) -> Item:
    item = get(ledger, item_id)
    if item.status != "pending":
        raise OutsideError(f"outside item {item.id} is already {item.status}")
    return item


def _changed(rel: str) -> OutsideError:
    return OutsideError(f"{rel} changed since it was shown; look at it again (dreamtui outside)")


def _expected(item: Item) -> tuple[str | None, str | None]:
    """What the item's path held when it was shown, as :func:`outside_tree.identity` says it."""
    if item.entry == SPECIAL:
        return SPECIAL, None
    if item.blob is None:
        return None, None
    return item.entry or FILE, item.blob


def _check_unchanged(repo: Repo, item: Item) -> None:
    root = gitops.work_tree(repo)
    old_back = item.old_path is not None and tree_of.identity(root, item.old_path) != (None, None)
    if tree_of.identity(root, item.path) != _expected(item) or old_back:
        raise _changed(item.path)


def _refuse_accept(item: Item) -> None:
    """Accept commits a regular file's bytes only; anything else gets one line saying what to do."""
    how = f"dreamtui outside reject {item.id} --reason … puts back what is committed"
    if _secret_in_name(item):
        raise OutsideError(
            f"the name {item.path} holds a secret ({', '.join(item.secret_rules) or 'redacted'}): "
            "rename the file, then dreamtui outside again — or remove it"
        )
    if item.entry == LINK:
        raise OutsideError(
            f"{item.path} is a {item.note}: dreamtui does not commit links or what they point to; "
            f"replace it with a regular file, or {how}"
        )
    if item.entry == SPECIAL:
        raise OutsideError(f"{item.path} is a {item.note}, not a regular file: nothing to commit; {how}")
    if item.entry == LARGE:
        raise OutsideError(
            f"{item.path} is {item.note.removeprefix('too large to review: ') if item.note else 'too large'}, "
            f"over the review limit ({tree_of.MAX_BYTES_ENV}): commit it with git yourself, or move it "
            "out of the memory folder"
        )


def _secret_in_name(item: Item) -> bool:
    """The item's name (or old name) held a secret: the ledger has it redacted, so it names no file."""
    return any(secret_scan.was_redacted(n) for n in (item.path, item.old_path) if n)


def refuse_secret(item: Item, data: bytes) -> None:
    """Refuse to commit ``data`` (an item's checked bytes) when the secret scanner finds a secret in
    it: nothing holding a secret reaches git. The line names the rules, never the secret."""
    rules = secret_scan.rules_found(data.decode("utf-8", "replace"))
    if rules:
        raise OutsideError(
            f"{item.path} holds a secret ({', '.join(rules)}): remove it from the file, then "
            "dreamtui outside again — or reject it"
        )


def _checked_bytes(repo: Repo, item: Item) -> bytes:
    """The reviewed bytes, read from the working file (never through a link) and checked against the
    item's blob id."""
    try:
        data = tree_of.read_at(gitops.work_tree(repo), item.path)
    except OSError:
        data = None
    if data is None or tree_of.blob_of_bytes(data) != item.blob:
        raise _changed(item.path)
    return data


def _write_blob(repo: Repo, data: bytes) -> str:
    """Put ``data`` into git's object store (only once a person decided)."""
    try:
        return gitops.run(repo, "hash-object", "-w", "--no-filters", "--stdin", input=data).strip()
    except gitops.GitFailed as exc:
        raise MemoryRepoError(f"cannot store the reviewed bytes in git: {exc}") from exc


def _mode(repo: Repo, rel: str) -> str:
    entry = repo.git.execute(["git", "ls-tree", "HEAD", "--", rel]) if gitops.head_sha(repo) else ""
    return str(entry).split(" ", 1)[0] if entry else "100644"


def _head_file(repo: Repo, rel: str) -> HeadFile | None:
    """HEAD's file at ``rel`` now (its mode, blob id and size), ``None`` when HEAD has none."""
    if not gitops.head_sha(repo):
        return None
    try:
        out = tree_of.git_bytes(repo, "ls-tree", "-l", "-z", "HEAD", "--", rel)
    except subprocess.SubprocessError:
        return None
    for line in out.split(b"\0"):
        meta, _, path = line.partition(b"\t")
        if line and os.fsdecode(path) == rel:
            mode, kind, sha, size = meta.decode().split()
            if kind == "blob":
                return HeadFile(mode, sha, int(size) if size.isdigit() else 0)
    return None


def _record_intent(ledger: Ledger, item_id: str, action: str, payload: dict[str, Any]) -> int:
    return outside_items.record_intent(ledger, item_id, action, payload, clock.now_iso())


_update_intent = outside_items.update_intent
_drop_intent = outside_items.drop_intent


def _commit_tree(
    repo: Repo, changes: dict[str, str | None], subject: str, trailers: dict[str, str], head: str | None
) -> str:
    """A commit on ``head`` of exactly ``changes`` (path → blob id, ``None`` deletes), built in a
    temporary index (inside ``.git``, removed at once): the working tree and the person's index are
    not touched. HEAD is not moved."""
    gitops.ensure_writable(repo)
    opts, _ = gitops.identity(repo)
    tmp_index = Path(repo.git_dir) / f"dreamtui-outside-index-{os.getpid()}-{token_source.token_hex(4)}"
    env = {"GIT_INDEX_FILE": str(tmp_index)}
    message = subject + "\n\n" + "\n".join(f"{k}: {v}" for k, v in trailers.items())
    try:
        if head:
            repo.git.execute(["git", "read-tree", "HEAD"], env=env)
        for rel, blob in changes.items():
            if blob is None:
                repo.git.execute(["git", "update-index", "--force-remove", "--", rel], env=env)
            else:
                repo.git.execute(
                    ["git", "update-index", "--add", "--cacheinfo", f"{_mode(repo, rel)},{blob},{rel}"],
                    env=env,
                )
        tree = str(repo.git.execute(["git", "write-tree"], env=env)).strip()
        parents = ["-p", head] if head else []
        return str(repo.git.execute(["git", *opts, "commit-tree", tree, *parents, "-m", message])).strip()
    except GitCommandError as exc:
        raise MemoryRepoError(f"cannot commit the reviewed change: {gitops._short(exc)}") from exc
    finally:
        tmp_index.unlink(missing_ok=True)


def _clear_temp_indexes(repo: Repo) -> None:
    """Remove the temporary indexes a killed accept left in ``.git`` (their process is gone)."""
    for path in Path(repo.git_dir).glob("dreamtui-outside-index-*"):
        pid = path.name.split("-")[3]
        if not (pid.isdigit() and os.path.exists(f"/proc/{pid}")) or int(pid) == os.getpid():
            path.unlink(missing_ok=True)


def _move_head(repo: Repo, sha: str, head: str | None, subject: str) -> None:
    try:
        repo.git.execute(["git", "update-ref", "-m", f"dreamtui: {subject}", "HEAD", sha, head or "0" * 40])
    except GitCommandError as exc:
        raise MemoryRepoError(f"cannot commit the reviewed change: {gitops._short(exc)}") from exc


def _follow_index(
    repo: Repo, before: dict[str, list[str]], changes: dict[str, str | None], head: str | None
) -> None:
    """Where the person's index held the old HEAD version of a path (or nothing new), make it hold the
    new commit's; a version they staged themselves stays staged."""
    lines = []
    for rel, blob in changes.items():
        entries = before.get(rel, [])
        old = _blob_at(repo, head, rel) if head else None
        held_head = (not entries and old is None) or (
            len(entries) == 1 and old is not None and entries[0].split()[1] == old
        )
        if not held_head and not (len(entries) == 1 and entries[0].split()[1] == blob):
            continue
        lines.append(f"{_mode(repo, rel)} {blob} 0\t{rel}" if blob else f"0 {'0' * 40} 0\t{rel}")
    if lines:
        gitops.run(
            repo, "update-index", "-z", "--index-info", input="".join(f"{ln}\0" for ln in lines).encode()
        )


def _blob_at(repo: Repo, rev: str, rel: str) -> str | None:
    try:
        out = tree_of.git_bytes(repo, "rev-parse", "-q", "--verify", f"{rev}:{rel}")
    except subprocess.SubprocessError:
        return None
    return out.decode().strip() or None


def _commit_items(
    config: Config,
    ledger: Ledger,
    repo: Repo,
    chosen: list[Item],
    subject: str,
    trailers: dict[str, str],
    mine: bool,
    given: list[bytes] | None = None,
) -> str:
    """One commit of exactly the chosen items' changes, crash-safe: an intent first (recorded as
    accepted at the next start when the commit reached HEAD, forgotten otherwise). ``given``: the
    bytes to commit, checked by the caller (an agent's snapshot, redacted); else the working files'."""
    datas = [] if given is None else list(given)
    for item in chosen if given is None else []:
        if item.blob:
            datas.append(_checked_bytes(repo, item))
            refuse_secret(item, datas[-1])  # the bytes about to be committed, scanned again
    change: dict[str, str | None] = {}
    for item in chosen:
        change.update(_item_changes(item))
    head = gitops.head_sha(repo)
    before = gitops.index_entries(repo, list(change))
    payload: dict[str, Any] = {
        "items": [i.id for i in chosen],
        "parent": head,
        "changes": change,
        "before": before,
        "mine": mine,
        "decided_as": "mine" if mine else "reviewed",
        "sha": None,
    }
    intent_id = _record_intent(ledger, chosen[0].id, "accept", payload)
    _step("accept-intent")
    for data in datas:
        _write_blob(repo, data)
    _step("blob")
    sha = _commit_tree(repo, change, subject, trailers, head)
    _update_intent(ledger, intent_id, {**payload, "sha": sha})
    _step("commit")
    try:
        _move_head(repo, sha, head, subject)
    except BaseException:
        _drop_intent(ledger, intent_id)
        raise
    _step("ref")
    _follow_index(repo, before, change, head)
    _step("ledger")
    with ledger.write():
        now = clock.now_iso()
        for item in chosen:
            outside_items.accepted(ledger, item.id, sha, payload["decided_as"], now, mine=mine)
        journal.record(
            ledger,
            "outside",
            "mine" if mine else "accept",
            [i.id for i in chosen],
            {"sha": sha, "changes": change, "writers": {i.id: i.writer for i in chosen}},
            now,
        )
        _drop_intent(ledger, intent_id)
    return sha


def accept(
    config: Config, ledger: Ledger, item_id: str, mine: bool = False, *, dead_links_ok: bool = False
) -> str:
    """Commit exactly the reviewed change of one item (trailer ``Dreamtui-Reviewed: outside``, or
    ``mine`` for the person's own edit); returns the commit sha. A symlink, a special file, a file
    over the size limit or bytes (or a name) holding a secret are refused with a line saying what
    to do."""
    with memory_lock(config):
        repo = gitops.open_repo(config.memory, create=False)
        recover(config, ledger, repo)
        item = _pending(ledger, item_id)
        if agents.is_snapshot(item.path):
            return agents.accept(config, ledger, repo, item, mine)
        chosen = unit(config, ledger, item, "accept")
        for member in chosen:
            _refuse_accept(member)
            _check_unchanged(repo, member)
        gitops.ensure_writable(repo)  # mid-merge: that first, the index is not what it will be
        dead = dead_after_accept(config, ledger, item)
        if dead and not dead_links_ok:
            raise OutsideError(
                f"accepting commits MEMORY.md linking {', '.join(dead)}, which the commit does not have (a "
                "dead link): reject or fix the index first, or accept with --yes; nothing was committed"
            )
        _step("checked")
        subject = _subject(item, mine) if len(chosen) == 1 else _batch_subject(ledger, item, mine)
        trailers = _trailers(item, mine)
        if len(chosen) > 1 and not mine:
            trailers[TRAILER_OUTSIDE] = ", ".join(i.id for i in chosen)
        return _commit_items(config, ledger, repo, chosen, subject, trailers, mine)


def _plain(item: Item) -> bool:
    return item.entry not in (LINK, SPECIAL, LARGE)


def accept_mine(config: Config, ledger: Ledger, item_ids: list[str] | None = None) -> str | None:
    """Commit the person's own edits (the given items, or every pending item whose writer is the
    person and that is a regular file or a deletion) in one plain commit; returns its sha, ``None``
    when there was nothing."""
    with memory_lock(config):
        repo = gitops.open_repo(config.memory, create=False)
        recover(config, ledger, repo)
        chosen = (
            [_pending(ledger, i) for i in item_ids]
            if item_ids
            else [i for i in items(ledger) if i.writer == "person" and _plain(i)]
        )
        if not chosen:
            return None
        for item in chosen:
            if agents.is_snapshot(item.path):
                raise OutsideError(
                    f"{item.id} is {item.writer_label}'s own memory: dreamtui outside accept {item.id} --mine "
                    "commits it as yours"
                )
            _refuse_accept(item)
            _check_unchanged(repo, item)
        subject = f"My edits: {', '.join(i.path for i in chosen)}"[:200]
        return _commit_items(config, ledger, repo, chosen, subject, {TRAILER_OUTSIDE: "mine"}, True)


def _item_changes(item: Item) -> dict[str, str | None]:
    change: dict[str, str | None] = {item.path: item.blob}
    if item.old_path:
        change[item.old_path] = None
    return change


def _subject(item: Item, mine: bool) -> str:
    verb = {"added": "Add", "modified": "Update", "deleted": "Remove", "renamed": "Rename"}[item.kind]
    who = "my edit" if mine else f"{item.writer_label}'s change, reviewed"
    return f"{verb} {item.path} ({who})"


def _batch_subject(ledger: Ledger, item: Item, mine: bool) -> str:
    batch = next((b for b in batches(ledger) if b.id == item.batch), None)
    what = batch.summary() if batch is not None else f"batch {item.batch}"
    return f"Accept a batch: {what} ({'my edit' if mine else 'reviewed'})"[:200]


def _trailers(item: Item, mine: bool) -> dict[str, str]:
    if mine:
        return {TRAILER_OUTSIDE: "mine"}
    trailers = {TRAILER_REVIEWED: "outside", TRAILER_OUTSIDE: item.id, "Dreamtui-Writer": item.writer}
    if item.session:
        trailers["Dreamtui-Session"] = item.session
    return trailers


# -- reject: put back from HEAD, crash-safe ----------------------------------------------------


def reject(config: Config, ledger: Ledger, item_id: str, reason: str) -> list[str]:
    """Put the file back as HEAD has it (a deleted file comes back, an added one goes), only while it
    still holds the reviewed bytes; the reason and the rejected bytes' blob stay in the ledger (and
    the bytes in git, unless they hold a secret: those are not kept anywhere). A file over the size
    limit is refused (dreamtui cannot keep a copy of it), and so is one whose name holds a secret.

    One decision covers :func:`unit`: a batch whole (its ``MEMORY.md`` lines too), a file with the
    waiting ``MEMORY.md`` change that links it; all or nothing (a member changed since it was shown:
    nothing is put back). Returns the ids rejected."""
    if not reason.strip():
        raise OutsideError("a reject needs a reason")
    with memory_lock(config):
        repo = gitops.open_repo(config.memory, create=False)
        gitops.ensure_writable(repo)  # mid-merge, HEAD's version would overwrite the conflicted file
        recover(config, ledger, repo)
        item = _pending(ledger, item_id)
        if agents.is_snapshot(item.path):
            return agents.reject(config, ledger, item, reason)
        chosen = unit(config, ledger, item, "reject")
        for member in chosen:
            if _secret_in_name(member):
                raise OutsideError(
                    f"the name {member.path} holds a secret ({', '.join(member.secret_rules) or 'redacted'}): "
                    "rename or remove the file yourself (its item then closes or changes)"
                )
            if member.entry == LARGE:
                raise OutsideError(
                    f"{member.path} is {member.note}: dreamtui cannot keep a copy of what a reject would "
                    "remove; move it out of the memory folder yourself (its item then closes or becomes a "
                    "deletion)"
                )
            _check_unchanged(repo, member)
        _step("checked")
        for member in chosen:
            if _plain(member) and member.blob:
                data = _checked_bytes(repo, member)
                if not secret_scan.has_secret(data.decode("utf-8", "replace")):
                    _write_blob(repo, data)  # the rejected bytes can always come back
                # bytes holding a secret are not kept: in git's object store the secret would stay
        payload = {
            "reason": reason.strip(),
            "token": token_source.token_hex(6),
            "steps": [step for member in chosen for step in _reject_steps(repo, member)],
            "items": [member.id for member in chosen],
        }
        intent_id = _record_intent(ledger, item.id, "reject", payload)
        _step("reject-intent")
        _finish_reject(ledger, repo, item.id, intent_id, payload)
        return [member.id for member in chosen]


def _reject_steps(repo: Repo, item: Item) -> list[dict[str, Any]]:
    """What a reject does, path by path: what must stand there now, and HEAD's file to put back."""

    def head_of(rel: str) -> dict[str, Any]:
        found = _head_file(repo, rel)
        return {"head": found.blob, "mode": found.mode} if found else {"head": None, "mode": None}

    here = {"rel": item.path, "expect": list(_expected(item)), **head_of(item.path)}
    if not item.old_path:
        return [here]
    return [here, {"rel": item.old_path, "expect": [None, None], **head_of(item.old_path)}]


def _finish_reject(ledger: Ledger, repo: Repo, item_id: str, intent_id: int, payload: dict[str, Any]) -> None:
    """Do (or, after a kill, finish) a reject's steps; every step can be run again. When a path
    changed, what was moved aside is put back, the intent is dropped and :class:`OutsideError` says so."""
    root = gitops.work_tree(repo)
    asides: list[Path] = []
    try:
        for n, step in enumerate(payload["steps"]):
            aside = _restore_step(repo, root, step, n, str(payload["token"]))
            if aside is not None:
                asides.append(aside)
    except BaseException as exc:
        if isinstance(exc, (OutsideError, MemoryRepoError, OSError)):
            for n, step in enumerate(payload["steps"]):  # an earlier step's file back where it was
                aside = _temp_of(root, step["rel"], ASIDE, str(payload["token"]), n)
                if aside is not None and os.path.lexists(aside):
                    _put_back(aside, _safe_target(root, step["rel"]), step["rel"])
            _drop_intent(ledger, intent_id)
        raise
    _step("put")
    decided = [str(i) for i in payload.get("items") or [item_id]]
    with ledger.write():
        for one in decided:
            _close(ledger, one, "rejected", None, str(payload["reason"]), "reviewed")
        journal.record(ledger, "outside", "reject", decided, {"steps": payload["steps"]}, clock.now_iso())
        _drop_intent(ledger, intent_id)
    for aside in asides:  # its bytes are the item's blob, kept in git
        aside.unlink(missing_ok=True)


def _temp_of(root: Path, rel: str, prefix: str, token: str, n: int) -> Path | None:
    folder = (Path(root) / rel).parent
    return folder / f"{prefix}{token}-{n}"


def _restore_step(repo: Repo, root: Path, step: dict[str, Any], n: int, token: str) -> Path | None:
    """Make ``step['rel']`` hold HEAD's file (``head``; ``None``: absent), only while it holds what the
    item showed (``expect``). The reviewed file is first renamed aside (atomic) and checked there,
    and HEAD's bytes are put in place with a hard link, which fails rather than replace a file that
    appeared meanwhile. Returns the aside file (removed once the ledger has the reject)."""
    rel = str(step["rel"])
    expect = (step["expect"][0], step["expect"][1])
    head, mode = step.get("head"), step.get("mode")
    target = _safe_target(root, rel)
    folder = target.parent
    aside, tmp = folder / f"{ASIDE}{token}-{n}", folder / f"{NEW}{token}-{n}"
    have_aside = os.path.lexists(aside)
    if have_aside:
        if tree_of.identity(folder, aside.name) != expect:
            _put_back(aside, target, rel)
            raise _changed(rel)
    else:
        now = tree_of.identity(root, rel)
        if os.path.isdir(target) and not os.path.islink(target):
            raise OutsideError(f"{rel} is a folder now: move it away, then reject again")
        if now != expect:
            if head is not None and now == (LINK if mode == "120000" else FILE, head):
                return None  # put back already (a run killed after its link)
            if head is None and now == (None, None):
                return None  # removed already
            raise _changed(rel)
        if expect[0] is not None:
            try:
                os.rename(target, aside)
            except FileNotFoundError:
                raise _changed(rel) from None
            _step("aside")
            have_aside = True
            if tree_of.identity(folder, aside.name) != expect:
                _put_back(aside, target, rel)
                raise _changed(rel)
    if head is not None:
        try:
            _link_head(repo, root, rel, target, tmp, str(head), mode)
        except OutsideError:
            if have_aside:
                _put_back(aside, target, rel)
            raise
    return aside if have_aside else None


def _safe_target(root: Path, rel: str) -> Path:
    """``root/rel`` when every folder on the way is a real folder (never a symlink); the last
    component may be anything (a link or a FIFO is what a reject takes away)."""
    parent, _, name = rel.rpartition("/")
    try:
        memory._check_component(name, rel)
        # every folder on the way checked as a write would check it (a name that is not there ends
        # the check at the folder itself)
        folder = memory.safe_path(root, f"{parent}/{ASIDE}" if parent else ASIDE).parent
    except MemoryRepoError as exc:
        raise OutsideError(f"cannot put {rel} back: {exc}") from None
    return folder / name


def _link_head(
    repo: Repo, root: Path, rel: str, target: Path, tmp: Path, head: str, mode: str | None
) -> None:
    memory.make_dirs(root, rel.rsplit("/", 1)[0] if "/" in rel else "")
    try:
        data = tree_of.git_bytes(repo, "cat-file", "blob", head)
    except subprocess.CalledProcessError:
        raise MemoryRepoError(f"cannot read HEAD's {rel} ({head[:10]}) from git") from None
    tmp.unlink(missing_ok=True)
    try:
        if mode == "120000":
            os.symlink(os.fsdecode(data), tmp)
        else:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            if mode == "100755":
                os.chmod(tmp, 0o755)
        _step("link")
        try:
            os.link(tmp, target, follow_symlinks=False)
        except FileExistsError:
            if tree_of.identity(root, rel)[1] != head:
                raise OutsideError(
                    f"{rel} was written again just now; nothing was put back over it "
                    "(look at it again: dreamtui outside)"
                ) from None
        memory.fsync_dir(target.parent)
    finally:
        tmp.unlink(missing_ok=True)


def _put_back(aside: Path, target: Path, rel: str) -> None:
    """Put a file renamed aside back; when something new took its place meanwhile, keep both (the
    aside one as ``<name>.kept-<time>``, which the next scan shows)."""
    try:
        os.link(aside, target, follow_symlinks=False)
        aside.unlink()
    except FileExistsError:
        os.rename(aside, target.with_name(f"{target.name}.kept-{int(time.time())}"))


# -- undo: an outside decision taken back, in the order decisions were made (issue 24) -------------

TRAILER_UNDO_OUTSIDE = "Dreamtui-Undo-Outside"


def undo_decision(config: Config, ledger: Ledger, entry: journal.Entry) -> str | None:
    """Take back a journaled outside decision; its items wait for review again. An accept (or ``m``) is
    taken back by a commit that puts its paths back as they were before it (the working tree keeps
    the change, which waits again); a reject by putting the rejected bytes back in the working tree
    (from git, where the reject kept them). Refused, with nothing changed, when a path changed since
    or another change of it waits. Returns the new commit (accepts only)."""
    with memory_lock(config):
        repo = gitops.open_repo(config.memory, create=False)
        gitops.ensure_writable(repo)
        recover(config, ledger, repo)
        decided = [get(ledger, item_id) for item_id in entry.refs]
        waiting = {i.path: i for i in items(ledger)}
        if decided and agents.is_snapshot(decided[0].path):
            if decided[0].path in waiting:
                raise OutsideError(
                    f"{decided[0].note} changed again since (outside change {waiting[decided[0].path].id} "
                    "waits): decide that one first; nothing was undone"
                )
            return agents.undo(config, ledger, repo, entry)
        for item in decided:
            for rel in filter(None, (item.path, item.old_path)):
                if rel in waiting:
                    raise OutsideError(
                        f"{rel} changed again since (outside change {waiting[rel].id} waits): decide that "
                        "one first; nothing was undone"
                    )
        sha = None
        if entry.action == "reject":
            _undo_reject(repo, entry)
        else:
            sha = _undo_accept(repo, entry)
        writers = dict(entry.payload.get("writers") or {})
        with ledger.write():
            for item in decided:
                values: dict[str, Any] = {
                    "status": "pending",
                    "commit_sha": None,
                    "reason": None,
                    "decided_as": None,
                    "decided_at": None,
                }
                if writers.get(item.id):
                    values["writer"] = writers[item.id]
                outside_items.update(ledger, item.id, values)
            journal.mark_undone(ledger, entry.id)
        return sha


def _undo_accept(repo: Repo, entry: journal.Entry) -> str:
    sha = str(entry.payload["sha"])
    changes: dict[str, str | None] = dict(entry.payload["changes"])
    if not gitops.is_ancestor(repo, sha):
        raise OutsideError(f"the accept's commit {sha[:8]} is no longer in the history; nothing was undone")
    for rel, blob in changes.items():
        if _blob_at(repo, "HEAD", rel) != blob:
            raise OutsideError(f"{rel} was committed again since that accept; nothing was undone")
    parent = f"{sha}^" if repo.commit(sha).parents else None
    back = {rel: _blob_at(repo, parent, rel) if parent else None for rel in changes}
    head = gitops.head_sha(repo)
    before = gitops.index_entries(repo, list(back))
    subject = f"Undo the accept of {', '.join(changes)} (the change waits for review again)"[:200]
    new = _commit_tree(repo, back, subject, {TRAILER_UNDO_OUTSIDE: ", ".join(entry.refs)}, head)
    _move_head(repo, new, head, subject)
    _follow_index(repo, before, back, head)
    return new


def _undo_reject(repo: Repo, entry: journal.Entry) -> None:
    root = gitops.work_tree(repo)
    steps = list(entry.payload["steps"])
    for step in steps:  # everything checked before anything is touched
        rel, head, mode = str(step["rel"]), step.get("head"), step.get("mode")
        now = tree_of.identity(root, rel)
        if now != ((LINK if mode == "120000" else FILE, head) if head else (None, None)):
            raise OutsideError(f"{rel} changed since it was put back; nothing was undone")
        kind, blob = step["expect"]
        if kind not in (None, FILE, LINK):
            raise OutsideError(f"{rel} was {kind}: dreamtui cannot make it again; nothing was undone")
        if blob:
            try:
                tree_of.git_bytes(repo, "cat-file", "-e", str(blob))
            except subprocess.CalledProcessError:
                raise OutsideError(
                    f"the rejected bytes of {rel} held a secret and were not kept: nothing can bring them "
                    "back; nothing was undone"
                ) from None
    token = token_source.token_hex(6)
    for n, step in enumerate(steps):
        rel = str(step["rel"])
        kind, blob = step["expect"]
        target = _safe_target(root, rel)
        if step.get("head"):
            target.unlink()  # HEAD's bytes: in git
        if blob:
            tmp = target.parent / f"{NEW}{token}-u{n}"
            _link_head(repo, root, rel, target, tmp, str(blob), "120000" if kind == LINK else None)


def restore_agent(config: Config, ledger: Ledger, item_id: str, reason: str) -> str:
    """Put an agent's own memory back as reviewed (Codex's file, Gemini CLI's section: HEAD's
    snapshot), crash-safe; the reason is kept and ``u`` takes it back. Returns the item's id."""
    if not reason.strip():
        raise OutsideError("a restore needs a reason")
    with memory_lock(config):
        repo = gitops.open_repo(config.memory, create=False)
        recover(config, ledger, repo)
        item = _pending(ledger, item_id)
        if not agents.is_snapshot(item.path):
            raise OutsideError(
                f"{item.id} is a change of the memory repository: reject puts it back "
                f"(dreamtui outside reject {item.id} --reason …)"
            )
        agents.restore(config, ledger, repo, item, reason)
        return item.id


def restore_batch(config: Config, ledger: Ledger, batch: str, reason: str) -> list[str]:
    """Reject a batch as one decision: every file back from HEAD and ``MEMORY.md`` with them (its index
    lines), one journal entry (one undo brings it all back); returns the ids. A member whose file
    changed again since it was seen refuses the whole restore, naming it, with nothing put back."""
    members = [i for i in items(ledger) if i.batch and i.batch.startswith(batch)]
    if not members:
        raise OutsideError(f"no pending batch {batch!r}")
    if len({i.batch for i in members}) > 1:
        raise OutsideError(f"{batch!r} names more than one batch; give more of its id")
    try:
        return reject(config, ledger, members[0].id, reason)
    except OutsideError as exc:
        raise OutsideError(f"{exc}; nothing of the batch was restored") from None


# -- recovery ----------------------------------------------------------------------------------


def recover(
    config: Config,
    ledger: Ledger,
    repo: Repo | None = None,
    notices: list[str] | None = None,
    temps: list[str] | None = None,
) -> None:
    """Finish or undo every outside decision a kill interrupted (under the memory lock): an accept
    whose commit reached HEAD is recorded, any other is forgotten; a reject is finished, or when its
    file changed meanwhile, put back. Then a reject's leftover temp files among ``temps`` (paths the
    scan listed) go: once every intent is settled, no reject needs them."""
    if not outside_items.in_flight(ledger) and repo is None:
        return
    with memory_lock(config):
        repo = repo or gitops.open_repo(config.memory, create=False)
        problem = gitops.not_writable(repo)
        if problem is not None:  # mid-merge: leave the intents for a start after the merge
            if notices is not None and outside_items.in_flight(ledger):
                notices.append(
                    f"interrupted outside decisions wait until the repository is writable: {problem}"
                )
            return
        for intent in outside_items.in_flight(ledger):
            payload = intent.payload
            if intent.action == "accept":
                _recover_accept(ledger, repo, intent.id, payload)
                continue
            if intent.action == "restore":  # an agent's memory put back (outside_agents)
                agents.recover_restore(ledger, repo, intent, notices)
                continue
            item = outside_items.with_prefix(ledger, intent.item_id)
            if not item or item[0].status != "pending":
                _drop_intent(ledger, intent.id)
                continue
            try:
                _finish_reject(ledger, repo, item[0].id, intent.id, payload)
                if notices is not None:
                    notices.append(f"finished the interrupted reject of {item[0].path}")
            except (OutsideError, MemoryRepoError, OSError) as exc:
                if notices is not None:
                    notices.append(f"an interrupted reject was undone: {exc}")
        _clear_temp_indexes(repo)
        _remove_reject_temps(gitops.work_tree(repo), temps or [])


def _recover_accept(ledger: Ledger, repo: Repo, intent_id: int, payload: dict[str, Any]) -> None:
    sha, parent = payload.get("sha"), payload.get("parent")
    head = gitops.head_sha(repo)
    if sha and head and (head == sha or gitops.is_ancestor(repo, sha, head)):
        if head == sha:
            _follow_index(repo, payload.get("before") or {}, payload.get("changes") or {}, parent)
        with ledger.write():
            now = clock.now_iso()
            recorded = []
            for item_id in payload.get("items", []):
                found = outside_items.with_prefix(ledger, item_id)
                if found and found[0].status == "pending":
                    outside_items.accepted(
                        ledger,
                        item_id,
                        sha,
                        payload.get("decided_as", "reviewed"),
                        now,
                        mine=bool(payload.get("mine")),
                    )
                    recorded.append(found[0])
            if recorded:  # journaled as the accept itself would have: one `u` takes it back
                journal.record(
                    ledger,
                    "outside",
                    "mine" if payload.get("mine") else "accept",
                    [i.id for i in recorded],
                    {
                        "sha": sha,
                        "changes": payload.get("changes") or {},
                        "writers": {i.id: i.writer for i in recorded},
                    },
                    now,
                )
            _drop_intent(ledger, intent_id)
        return
    _drop_intent(ledger, intent_id)


def _remove_reject_temps(root: Path, temps: list[str]) -> None:
    """A reject's temp files no intent names any more (all intents are settled when this runs): HEAD
    bytes never linked, or a rejected file whose bytes are in git."""
    for rel in temps:
        if rel.rsplit("/", 1)[-1].startswith((ASIDE, NEW)):
            try:
                os.unlink(Path(root) / rel)
            except OSError:
                pass


# -- statistics --------------------------------------------------------------------------------


def writer_stats(ledger: Ledger) -> dict[str, dict[str, Any]]:
    """Per writer: the person's accepts and rejects of outside items (``mine`` counts for the person)."""
    out: dict[str, dict[str, Any]] = {}
    for writer, status, n in outside_items.decided_counts(ledger):
        bucket = out.setdefault(WRITER_LABELS.get(writer, writer), {"accepted": 0, "rejected": 0})
        bucket[status] += n
    for bucket in out.values():
        total = bucket["accepted"] + bucket["rejected"]
        bucket["decisions"] = total
        bucket["accept_rate"] = round(bucket["accepted"] / total, 4) if total else None
    return out


# -- watching ----------------------------------------------------------------------------------


class OutsideWatcher:
    """Watch the memory folder (watchdog) and :func:`scan` after each burst of events (``.git`` and
    dreamtui's temp files ignored); ``on_scan`` receives each report that found something.

    A memory folder that is not there yet (the first dream creates it) is waited for: the nearest
    folder above it that exists is watched (not recursively) until it appears, then the folder itself
    is, and it is scanned at once, so what is written into it from then on is seen without a restart.
    Nothing is scanned while the folder is no git repository."""

    def __init__(
        self, config: Config, on_scan: Callable[[ScanReport], None] | None = None, settle: float = 0.3
    ) -> None:
        self.config = config
        self.on_scan = on_scan
        self.settle = settle
        self._event = threading.Event()
        self._stop = threading.Event()
        self._observer: Any = None
        self._handler: Any = None
        self._watch: Any = None
        self._watching: Path | None = None
        self._agent_watches: dict[Path, Any] = {}
        self._thread: threading.Thread | None = None
        self.errors: list[str] = []

    @property
    def watching(self) -> Path | None:
        """The folder watched now: the memory folder, or the nearest one above it while it is missing."""
        return self._watching

    def start(self) -> None:
        """Scan once, then start watching."""
        from watchdog.events import FileSystemEvent, FileSystemEventHandler
        from watchdog.observers import Observer

        watcher = self

        class Handler(FileSystemEventHandler):
            def on_any_event(self, event: FileSystemEvent) -> None:
                path = str(event.src_path)
                if (
                    f"{os.sep}.git" in path
                    or memory.TMP_PREFIX in path
                    or event.event_type in ("opened", "closed_no_write")
                ):
                    return
                watcher._event.set()

        self._handler = Handler()
        self._observer = Observer()
        self._attach()
        self._attach_agents()
        self._observer.start()
        self._thread = threading.Thread(target=self._run, name="dreamtui-outside", daemon=True)
        self._thread.start()
        self._event.set()

    def _attach(self) -> None:
        """Watch the memory folder once it is there, else the nearest existing folder above it (moved
        down as the folders between appear). From the watcher's own thread after each event."""
        root = self.config.memory
        while True:
            target = root if root.is_dir() else _nearest_folder(root)
            if target is None or target == self._watching:
                return
            if self._watch is not None:
                try:
                    self._observer.unschedule(self._watch)
                except Exception:  # noqa: BLE001 - a watch whose folder went away is gone already
                    pass
            self._watch = self._observer.schedule(self._handler, str(target), recursive=target == root)
            self._watching = target
            if target == root:
                self._event.set()  # what was written before the watch began is scanned now
                return

    def _attach_agents(self) -> None:
        """Watch the agents' own memories too: Codex's memories folder (or, until it is there, the
        folder it will be in), Gemini CLI's ``GEMINI.md`` folder (not recursively)."""
        wanted: dict[Path, bool] = {}
        for source in agents.guarded(self.config):
            if not source.on:
                continue
            if source.agent == agents.CODEX and source.where.is_dir() and not source.where.is_symlink():
                wanted[source.where] = True
            elif source.where.parent.is_dir():
                wanted.setdefault(source.where.parent, False)
        for folder in [f for f in self._agent_watches if f not in wanted]:
            try:
                self._observer.unschedule(self._agent_watches.pop(folder))
            except Exception:  # noqa: BLE001 - a watch whose folder went away is gone already
                pass
        for folder, recursive in wanted.items():
            if folder in self._agent_watches:
                continue
            try:
                self._agent_watches[folder] = self._observer.schedule(
                    self._handler, str(folder), recursive=recursive
                )
            except OSError:
                continue  # gone meanwhile: the next event looks again

    def _run(self) -> None:
        ledger = Ledger.open(self.config.state)
        try:
            while not self._stop.is_set():
                if not self._event.wait(0.2):
                    continue
                time.sleep(self.settle)  # a burst settles
                self._event.clear()
                try:
                    if self._watching != self.config.memory or not self.config.memory.is_dir():
                        self._attach()  # the folder appeared (or went away: its parent is watched again)
                    self._attach_agents()
                    if not gitops.repo_exists(self.config.memory):
                        continue  # nothing to compare with until the first commit's repository is there
                    report = scan(self.config, ledger)
                except DreamError as exc:
                    self.errors.append(str(exc))
                    continue
                except OSError as exc:  # a folder that went away between the check and the watch
                    self.errors.append(f"cannot watch {self.config.memory}: {exc.strerror or exc}")
                    continue
                if self.on_scan and (report.new or report.updated or report.gone):
                    self.on_scan(report)
        finally:
            ledger.close()

    def stop(self) -> None:
        """Stop watching."""
        self._stop.set()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(5)
        if self._thread is not None:
            self._thread.join(5)


def _nearest_folder(path: Path) -> Path | None:
    """The nearest folder above ``path`` that exists (``None`` when none does)."""
    for parent in path.parents:
        if parent.is_dir():
            return parent
    return None
