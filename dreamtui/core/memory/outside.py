"""Outside changes: what others wrote into the memory repository, as review items.

Claude Code writes memory by itself (auto memory saves files during a session; its background
consolidation, "auto dream", merges, rewrites and deletes them). A person edits files by hand. None
of this passes through dreamtui's queue, so :func:`scan` (run at every start and by
:class:`OutsideWatcher` on file events) compares the working tree with ``HEAD`` and makes one item per
changed file (``added``, ``modified``, ``deleted``, ``renamed``; ``MEMORY.md`` index lines added or
dropped are listed on its item).

dreamtui's own writes never become items: what it commits is in ``HEAD``; a write in flight is
named by a ``memory_intents`` row or a ``generated_writes`` blob, its temp files are skipped, and a
scan holds the memory lock, so it never sees an accept half-way.

Who wrote a change is read from the transcripts: a ``Write``/``Edit``/``MultiEdit`` tool call (or a
``Bash`` command naming the file) whose path is the file, in a transcript record at most
:func:`window` seconds before the change. A record from a sub-agent whose meta says it dreams, or one
under ``subagents/workflows/``, is **auto dream**; any other is **auto memory**. With no record, a
change that came with several other deletions or rewrites (:data:`BATCH_MIN`) is **auto dream**, and
anything else is the **person**'s own.

Nothing of anyone's is lost: the bytes of every reviewed version are stored as a git object when the
item is made (``blob``). Accept commits exactly those bytes (a commit built from a temporary index,
trailer ``Dreamtui-Reviewed: outside``): the working file is never touched, so an edit made meanwhile
stays and becomes the next item. Reject puts the file back from ``HEAD`` only while it still holds the
reviewed bytes, and keeps the rejected bytes' blob id with the reason in the ledger.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from git import GitCommandError, Repo

from dreamtui.core import clock
from dreamtui.core.config import Config, env_seconds
from dreamtui.core.errors import DreamError, MemoryRepoError
from dreamtui.core.ledger import Ledger, intents
from dreamtui.core.ledger import generated as generated_writes
from dreamtui.core.ledger import outside as outside_items
from dreamtui.core.ledger.outside import WRITER_LABELS, Item
from dreamtui.core.memory import gitops
from dreamtui.core.memory import layout as memory
from dreamtui.core.memory.decisions import memory_lock
from dreamtui.core.memory.generated import blob_id

TRAILER_REVIEWED = "Dreamtui-Reviewed"
TRAILER_OUTSIDE = "Dreamtui-Outside"
WINDOW_ENV = "DREAMTUI_OUTSIDE_WINDOW"
DEFAULT_WINDOW = 600.0
BATCH_MIN = 3
"""Deletions and rewrites seen together from this many files on are one loud batch."""

_EDIT_TOOLS = {"Write", "Edit", "MultiEdit", "NotebookEdit"}
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
    """What one scan found: new items, items whose file changed again, items gone, batches."""

    new: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    batches: list[str] = field(default_factory=list)


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


def _changed(repo: Repo) -> list[str]:
    out = repo.git.execute(
        [
            "git",
            "--no-optional-locks",
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
        ],
        strip_newline_in_stdout=False,
    )
    return [e[3:] for e in str(out).split("\0") if len(e) > 3]


def _ours_in_flight(ledger: Ledger, root: Path) -> set[str]:
    """Paths whose working bytes are a write dreamtui has in flight (an intent, a generated file)."""
    ours: set[str] = set()
    for intent in intents.listed(ledger):
        for rel, digest in intent.paths.items():
            data = memory.read_bytes(root, rel)
            if (data is None and digest is None) or (
                data is not None and hashlib.sha256(data).hexdigest() == digest
            ):
                ours.add(rel)
    for rel, blob in generated_writes.blobs(ledger):
        data = memory.read_bytes(root, rel)
        if data is not None and blob_id(data) == blob:
            ours.add(rel)
    return ours


@dataclass(slots=True)
class _Change:
    path: str
    kind: str
    work: bytes | None
    head: bytes | None
    old_path: str | None = None


def changes(repo: Repo, ledger: Ledger) -> list[_Change]:
    """Every file whose working bytes differ from HEAD, less dreamtui's own writes in flight; a deleted
    file and a new one with (nearly) the same text are one rename."""
    root = gitops.work_tree(repo)
    ours = _ours_in_flight(ledger, root)
    found: list[_Change] = []
    for rel in _changed(repo):
        name = rel.rsplit("/", 1)[-1]
        if rel in ours or name.startswith(memory.TMP_PREFIX) or rel.endswith("/"):
            continue
        work, head = memory.read_bytes(root, rel), gitops.show_file(repo, rel)
        if work == head:
            continue
        kind = "added" if head is None else "deleted" if work is None else "modified"
        found.append(_Change(rel, kind, work, head))
    return _pair_renames(found)


def _similar(a: bytes, b: bytes) -> bool:
    if a == b:
        return True
    ta, tb = a.decode("utf-8", "replace"), b.decode("utf-8", "replace")
    return (
        difflib.SequenceMatcher(None, ta, tb, autojunk=False).quick_ratio() >= 0.6
        and difflib.SequenceMatcher(None, ta, tb, autojunk=False).ratio() >= 0.6
    )


def _pair_renames(found: list[_Change]) -> list[_Change]:
    deleted = [c for c in found if c.kind == "deleted"]
    added = [c for c in found if c.kind == "added"]
    out = [c for c in found if c.kind == "modified"]
    for new in added:
        match = next(
            (
                d
                for d in deleted
                if d.head is not None
                and new.work is not None
                and d.path.rsplit("/", 1)[0:-1] == new.path.rsplit("/", 1)[0:-1]
                and _similar(d.head, new.work)
            ),
            None,
        ) or next(
            (d for d in deleted if d.head is not None and new.work is not None and d.head == new.work), None
        )
        if match is None:
            out.append(new)
            continue
        deleted.remove(match)
        out.append(_Change(new.path, "renamed", new.work, match.head, old_path=match.path))
    return sorted(out + deleted, key=lambda c: c.path)


# -- who wrote it ------------------------------------------------------------------------------


def _meta_of(transcript: Path) -> dict[str, Any]:
    from dreamtui.core.ingest.transcripts import agent_meta

    return agent_meta(transcript) or {}


def _writer_of_transcript(transcript: Path) -> str:
    parts = transcript.parts
    if "subagents" in parts and "workflows" in parts[parts.index("subagents") :]:
        return "auto-dream"
    meta = _meta_of(transcript)
    said = " ".join(str(meta.get(k, "")) for k in ("agentType", "description")).lower()
    return "auto-dream" if "dream" in said else "auto-memory"


def _names_path(value: str, cwd: str, target: str) -> bool:
    path = value if os.path.isabs(value) else os.path.join(cwd or "/", value)
    return os.path.normpath(path) == target


def _tool_calls(obj: dict[str, Any]) -> Iterator[dict[str, Any]]:
    message = obj.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                yield block


def find_record(config: Config, rel: str, when: float, paths: list[Path] | None = None) -> Record | None:
    """The latest transcript record, at most :func:`window` seconds before ``when`` (and a minute
    after), of a tool call that wrote ``rel`` in the memory repository."""
    root = os.path.normpath(os.path.realpath(config.memory))
    targets = {
        os.path.normpath(os.path.join(root, rel)),
        os.path.normpath(os.path.join(str(config.memory), rel)),
    }
    needle = rel.rsplit("/", 1)[-1].encode()
    earliest, latest = when - window(), when + 60.0
    best: Record | None = None
    for path in paths if paths is not None else _recent_transcripts(Path(config.transcripts), earliest):
        try:
            with open(path, "rb") as fh:
                for number, raw in enumerate(fh, start=1):
                    if needle not in raw:
                        continue
                    record = _match(raw, targets, path, number, earliest, latest)
                    if record and (best is None or record.timestamp >= best.timestamp):
                        best = record
        except OSError:
            continue
    return best


def _match(
    raw: bytes, targets: set[str], path: Path, number: int, earliest: float, latest: float
) -> Record | None:
    try:
        obj = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    stamp = str(obj.get("timestamp") or "")
    try:
        at = clock.parse_timestamp(stamp).timestamp()
    except ValueError:
        return None
    if not earliest <= at <= latest:
        return None
    cwd = str(obj.get("cwd") or "")
    for call in _tool_calls(obj):
        name, args = call.get("name"), call.get("input")
        if not isinstance(args, dict):
            continue
        hit = False
        if name in _EDIT_TOOLS:
            value = args.get("file_path") or args.get("notebook_path")
            hit = isinstance(value, str) and any(_names_path(value, cwd, t) for t in targets)
        elif name == "Bash" and isinstance(args.get("command"), str):
            hit = any(t in args["command"] for t in targets)
        if hit:
            from dreamtui.core.ingest.transcripts import session_of

            return Record(str(path), session_of(path), number, str(name), stamp, _writer_of_transcript(path))
    return None


def _recent_transcripts(root: Path, since: float) -> list[Path]:
    from dreamtui.core.ingest.transcripts import discover

    out = []
    for tf in discover(root):
        try:
            if tf.path.stat().st_mtime >= since:
                out.append(tf.path)
        except OSError:
            continue
    return out


# -- scanning ----------------------------------------------------------------------------------


def _store_blob(repo: Repo, data: bytes) -> str:
    """Write ``data`` into the repository's object store (so it can always be brought back)."""
    with tempfile.NamedTemporaryFile(delete=False) as fh:
        fh.write(data)
    try:
        return str(repo.git.execute(["git", "hash-object", "-w", "--no-filters", fh.name])).strip()
    finally:
        os.unlink(fh.name)


def _new_id(path: str, blob: str | None) -> str:
    seed = f"{path}\0{blob}\0{time.time_ns()}".encode()
    return "o" + hashlib.sha1(seed, usedforsecurity=False).hexdigest()[:9]


def _mtime(root: Path, rel: str) -> float:
    """When ``rel`` changed: its mtime, or for a deleted file its folder's (an unlink updates it)."""
    for path in (root / rel, (root / rel).parent):
        try:
            return os.lstat(path).st_mtime
        except OSError:
            continue
    return clock.now().timestamp()


def scan(config: Config, ledger: Ledger) -> ScanReport:
    """Compare the memory repository's working tree with HEAD and bring the outside items up to date."""
    report = ScanReport()
    if not gitops.repo_exists(config.memory):
        return report
    with memory_lock(config):
        repo = gitops.open_repo(config.memory, create=False)
        root = gitops.work_tree(repo)
        found = changes(repo, ledger)
        pending = {i.path: i for i in items(ledger)}
        seen: set[str] = set()
        fresh: list[tuple[_Change, str | None]] = []
        for change in found:
            blob = blob_id(change.work) if change.work is not None else None
            seen.add(change.path)
            current = pending.get(change.path)
            if current and current.blob == blob and current.kind == change.kind:
                continue
            if change.work is not None:
                _store_blob(repo, change.work)  # the reviewed bytes, kept in git from now on
            fresh.append((change, blob))
        batch = _batch_id(fresh)
        now = clock.now_iso()
        when = {change.path: _mtime(root, change.path) for change, _ in fresh}
        recent = _recent_transcripts(Path(config.transcripts), min(when.values()) - window()) if fresh else []
        for change, blob in fresh:
            record = find_record(config, change.path, when[change.path], recent)
            writer = record.writer if record else ("auto-dream" if batch and _loud(change) else "person")
            values = {
                "path": change.path,
                "old_path": change.old_path,
                "kind": change.kind,
                "blob": blob,
                "head_blob": blob_id(change.head) if change.head is not None else None,
                "writer": writer,
                "session": record.session if record else None,
                "transcript": record.transcript if record else None,
                "line": record.line if record else None,
                "tool": record.tool if record else None,
                "batch": batch if _loud(change) else None,
                "detected_at": now,
            }
            current = pending.get(change.path)
            if current:
                outside_items.update(ledger, current.id, values)
                report.updated.append(current.id)
            else:
                item_id = _new_id(change.path, blob)
                outside_items.add(ledger, item_id, values)
                report.new.append(item_id)
        for path, item in pending.items():
            if path not in seen:
                _close(ledger, item.id, "gone", None, "the file is as committed again")
                report.gone.append(item.id)
        if batch:
            report.batches.append(batch)
    return report


def _loud(change: _Change) -> bool:
    return change.kind in ("deleted", "modified", "renamed") and change.path != memory.INDEX


def _batch_id(fresh: list[tuple[_Change, str | None]]) -> str | None:
    loud = [c for c, _ in fresh if _loud(c)]
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
    if not blob:
        return b""
    try:
        out = repo.git.execute(["git", "cat-file", "blob", blob], stdout_as_string=False)
    except GitCommandError:
        return b""
    return out if isinstance(out, bytes) else str(out).encode()


def diff(config: Config, item: Item) -> str:
    """The unified diff of the item (HEAD → the reviewed bytes)."""
    repo = gitops.open_repo(config.memory, create=False)
    old = _blob_bytes(repo, item.head_blob).decode("utf-8", "replace").splitlines(keepends=True)
    new = _blob_bytes(repo, item.blob).decode("utf-8", "replace").splitlines(keepends=True)
    before = item.old_path or item.path
    return "".join(
        difflib.unified_diff(
            old,
            new,
            f"a/{before}" if item.head_blob else "/dev/null",
            f"b/{item.path}" if item.blob else "/dev/null",
        )
    )


def index_lines(config: Config, item: Item) -> tuple[list[str], list[str]]:
    """For a ``MEMORY.md`` item: the index lines it adds and those it drops."""
    if item.path != memory.INDEX:
        return [], []
    repo = gitops.open_repo(config.memory, create=False)
    old = [
        ln
        for ln in _blob_bytes(repo, item.head_blob).decode("utf-8", "replace").splitlines()
        if _INDEX_LINE.match(ln)
    ]
    new = [
        ln
        for ln in _blob_bytes(repo, item.blob).decode("utf-8", "replace").splitlines()
        if _INDEX_LINE.match(ln)
    ]
    return [ln for ln in new if ln not in old], [ln for ln in old if ln not in new]


def transcript_excerpt(item: Item, limit: int = 2000) -> str | None:
    """The transcript record that wrote the item (raw JSON line, cut to ``limit``), when known."""
    if not item.transcript or not item.line:
        return None
    try:
        with open(item.transcript, "rb") as fh:
            for number, raw in enumerate(fh, start=1):
                if number == item.line:
                    return raw.decode("utf-8", "replace").rstrip("\n")[:limit]
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

    def summary(self) -> str:
        """``auto dream removed 23 files, rewrote 4``."""
        parts = [f"removed {self.removed} file{'s' if self.removed != 1 else ''}"] if self.removed else []
        if self.rewrote:
            parts.append(f"rewrote {self.rewrote}")
        if self.renamed:
            parts.append(f"renamed {self.renamed}")
        return f"{WRITER_LABELS.get(self.writer, self.writer)} {', '.join(parts)}"


def batches(ledger: Ledger) -> list[Batch]:
    """Every batch with a pending item."""
    out = []
    for batch in outside_items.pending_batches(ledger):
        members = [i for i in items(ledger, None) if i.batch == batch]
        writers = [m.writer for m in members]
        writer = max(set(writers), key=writers.count)
        out.append(
            Batch(
                batch,
                writer,
                sum(m.kind == "deleted" for m in members),
                sum(m.kind == "modified" for m in members),
                sum(m.kind == "renamed" for m in members),
                sum(m.status == "pending" for m in members),
            )
        )
    return out


# -- deciding ----------------------------------------------------------------------------------


def _step(name: str) -> None:
    """A point between the steps of a decision (tests put a person's edit here)."""


def _pending(ledger: Ledger, item_id: str) -> Item:
    item = get(ledger, item_id)
    if item.status != "pending":
        raise OutsideError(f"outside item {item.id} is already {item.status}")
    return item


def _check_unchanged(repo: Repo, item: Item) -> None:
    root = gitops.work_tree(repo)
    work = memory.read_bytes(root, item.path)
    now = None if work is None else blob_id(work)
    old_back = item.old_path is not None and memory.read_bytes(root, item.old_path) is not None
    if now != item.blob or old_back:
        raise OutsideError(f"{item.path} changed since it was shown; look at it again (dreamtui outside)")


def _mode(repo: Repo, rel: str) -> str:
    entry = repo.git.execute(["git", "ls-tree", "HEAD", "--", rel]) if gitops.head_sha(repo) else ""
    return str(entry).split(" ", 1)[0] if entry else "100644"


def _commit_exact(repo: Repo, changes: dict[str, str | None], subject: str, trailers: dict[str, str]) -> str:
    """One commit on HEAD of exactly ``changes`` (path → blob id, ``None`` deletes), built in a
    temporary index: the working tree is never touched, and the person's index only where it held
    HEAD's version of a path."""
    gitops.ensure_writable(repo)
    opts, _ = gitops.identity(repo)
    head = gitops.head_sha(repo)
    before = gitops.index_entries(repo, list(changes))
    fd, tmp_index = tempfile.mkstemp(prefix="dreamtui-index-")
    os.close(fd)
    os.unlink(tmp_index)
    env = {"GIT_INDEX_FILE": tmp_index}
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
        sha = str(repo.git.execute(["git", *opts, "commit-tree", tree, *parents, "-m", message])).strip()
        _step("commit")
        repo.git.execute(["git", "update-ref", "-m", f"dreamtui: {subject}", "HEAD", sha, head or "0" * 40])
    except GitCommandError as exc:
        raise MemoryRepoError(f"cannot commit the reviewed change: {gitops._short(exc)}") from exc
    finally:
        Path(tmp_index).unlink(missing_ok=True)
    _follow_index(repo, before, changes, head)
    return sha


def _follow_index(
    repo: Repo, before: dict[str, list[str]], changes: dict[str, str | None], head: str | None
) -> None:
    """Where the person's index held the old HEAD version of a path (or nothing new), make it hold the
    new commit's; a version they staged themselves stays staged."""
    lines = []
    for rel, blob in changes.items():
        entries = before.get(rel, [])
        old = gitops.show_file(repo, rel, head) if head else None
        held_head = (not entries and old is None) or (
            len(entries) == 1 and old is not None and entries[0].split()[1] == blob_id(old)
        )
        if not held_head and not (len(entries) == 1 and entries[0].split()[1] == blob):
            continue
        lines.append(f"{_mode(repo, rel)} {blob} 0\t{rel}" if blob else f"0 {'0' * 40} 0\t{rel}")
    if lines:
        gitops.run(
            repo, "update-index", "-z", "--index-info", input="".join(f"{ln}\0" for ln in lines).encode()
        )


def accept(config: Config, ledger: Ledger, item_id: str, mine: bool = False) -> str:
    """Commit exactly the reviewed change of one item (trailer ``Dreamtui-Reviewed: outside``, or
    ``mine`` for the person's own edit); returns the commit sha."""
    with memory_lock(config):
        item = _pending(ledger, item_id)
        repo = gitops.open_repo(config.memory, create=False)
        _check_unchanged(repo, item)
        _step("checked")
        sha = _commit_exact(repo, _item_changes(item), _subject(item, mine), _trailers(item, mine))
        outside_items.accepted(
            ledger, item.id, sha, "mine" if mine else "reviewed", clock.now_iso(), mine=mine
        )
    return sha


def accept_mine(config: Config, ledger: Ledger, item_ids: list[str] | None = None) -> str | None:
    """Commit the person's own edits (the given items, or every pending item whose writer is the
    person) in one plain commit; returns its sha, ``None`` when there was nothing."""
    with memory_lock(config):
        chosen = (
            [_pending(ledger, i) for i in item_ids]
            if item_ids
            else [i for i in items(ledger) if i.writer == "person"]
        )
        if not chosen:
            return None
        repo = gitops.open_repo(config.memory, create=False)
        for item in chosen:
            _check_unchanged(repo, item)
        change: dict[str, str | None] = {}
        for item in chosen:
            change.update(_item_changes(item))
        subject = f"My edits: {', '.join(i.path for i in chosen)}"[:200]
        sha = _commit_exact(repo, change, subject, {TRAILER_OUTSIDE: "mine"})
        with ledger.write():
            for item in chosen:
                outside_items.accepted(ledger, item.id, sha, "mine", clock.now_iso(), mine=True)
    return sha


def _item_changes(item: Item) -> dict[str, str | None]:
    change: dict[str, str | None] = {item.path: item.blob}
    if item.old_path:
        change[item.old_path] = None
    return change


def _subject(item: Item, mine: bool) -> str:
    verb = {"added": "Add", "modified": "Update", "deleted": "Remove", "renamed": "Rename"}[item.kind]
    who = "my edit" if mine else f"{item.writer_label}'s change, reviewed"
    return f"{verb} {item.path} ({who})"


def _trailers(item: Item, mine: bool) -> dict[str, str]:
    if mine:
        return {TRAILER_OUTSIDE: "mine"}
    trailers = {TRAILER_REVIEWED: "outside", TRAILER_OUTSIDE: item.id, "Dreamtui-Writer": item.writer}
    if item.session:
        trailers["Dreamtui-Session"] = item.session
    return trailers


def reject(config: Config, ledger: Ledger, item_id: str, reason: str) -> None:
    """Put the file back as HEAD has it (a deleted file comes back, an added one goes), only while it
    still holds the reviewed bytes; the reason and the rejected bytes' blob stay in the ledger."""
    if not reason.strip():
        raise OutsideError("a reject needs a reason")
    with memory_lock(config):
        item = _pending(ledger, item_id)
        repo = gitops.open_repo(config.memory, create=False)
        gitops.ensure_writable(repo)  # mid-merge, HEAD's version would overwrite the conflicted file
        _restore(repo, item)
        _close(ledger, item.id, "rejected", None, reason.strip(), "reviewed")


def _restore(repo: Repo, item: Item) -> None:
    root = gitops.work_tree(repo)
    _check_unchanged(repo, item)
    _step("checked")
    if item.old_path:  # a rename: the old file back, the new one away
        _put(repo, root, item.old_path, None, gitops.show_file(repo, item.old_path))
        _put(repo, root, item.path, item.blob, None)
    else:
        _put(repo, root, item.path, item.blob, gitops.show_file(repo, item.path))


def _put(repo: Repo, root: Path, rel: str, expected: str | None, data: bytes | None) -> None:
    """Make ``rel`` hold ``data`` (``None``: absent), only while it holds the blob ``expected``
    (``None``: absent). Never overwrites anything else, even written a moment ago: the file is first
    renamed aside (atomic) and checked there, and the new bytes are put in place with a hard link,
    which fails rather than replace a file that appeared meanwhile."""
    target = memory.safe_path(root, rel)
    folder = target.parent
    aside: Path | None = None
    if expected is not None:
        aside = folder / f"{memory.TMP_PREFIX}aside-{os.getpid()}-{time.monotonic_ns()}"
        try:
            os.rename(target, aside)
        except FileNotFoundError:
            raise OutsideError(
                f"{rel} changed since it was shown; look at it again (dreamtui outside)"
            ) from None
        _step("aside")
        held = aside.read_bytes()
        if blob_id(held) != expected:
            _store_blob(repo, held)
            _put_back(aside, target, rel)
            raise OutsideError(f"{rel} changed since it was shown; look at it again (dreamtui outside)")
    try:
        if data is not None:
            memory.make_dirs(root, rel.rsplit("/", 1)[0] if "/" in rel else "")
            fd, tmp = tempfile.mkstemp(prefix=memory.TMP_PREFIX, dir=folder)
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                _step("link")
                os.link(tmp, target)
            except FileExistsError:
                raise OutsideError(
                    f"{rel} was written again just now; nothing was put back over it "
                    "(look at it again: dreamtui outside)"
                ) from None
            finally:
                os.unlink(tmp)
    except BaseException:
        if aside is not None:
            _put_back(aside, target, rel)
        raise
    if aside is not None:
        aside.unlink()  # its bytes are the item's blob, kept in git


def _put_back(aside: Path, target: Path, rel: str) -> None:
    """Put a file renamed aside back; when something new took its place meanwhile, keep both (the
    aside one as ``<name>.kept-<time>``, which the next scan shows)."""
    try:
        os.link(aside, target)
        aside.unlink()
    except FileExistsError:
        os.rename(aside, target.with_name(f"{target.name}.kept-{int(time.time())}"))


def restore_batch(config: Config, ledger: Ledger, batch: str, reason: str) -> list[str]:
    """Reject every pending item of a batch in one step (each file back from HEAD); returns their ids.
    An item whose file changed again since it was seen is left pending (named in the error)."""
    members = [i for i in items(ledger) if i.batch and i.batch.startswith(batch)]
    if not members:
        raise OutsideError(f"no pending batch {batch!r}")
    done, changed = [], []
    for item in members:
        try:
            reject(config, ledger, item.id, reason)
            done.append(item.id)
        except OutsideError:
            changed.append(item.path)
    if changed:
        raise OutsideError(
            f"restored {len(done)} files; left alone because they changed again: {', '.join(changed)}"
        )
    return done


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
    dreamtui's temp files ignored); ``on_scan`` receives each report that found something."""

    def __init__(
        self, config: Config, on_scan: Callable[[ScanReport], None] | None = None, settle: float = 0.3
    ) -> None:
        self.config = config
        self.on_scan = on_scan
        self.settle = settle
        self._event = threading.Event()
        self._stop = threading.Event()
        self._observer: Any = None
        self._thread: threading.Thread | None = None
        self.errors: list[str] = []

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

        self._observer = Observer()
        self._observer.schedule(Handler(), str(self.config.memory), recursive=True)
        self._observer.start()
        self._thread = threading.Thread(target=self._run, name="dreamtui-outside", daemon=True)
        self._thread.start()
        self._event.set()

    def _run(self) -> None:
        ledger = Ledger.open(self.config.state)
        try:
            while not self._stop.is_set():
                if not self._event.wait(0.2):
                    continue
                time.sleep(self.settle)  # a burst settles
                self._event.clear()
                try:
                    report = scan(self.config, ledger)
                except DreamError as exc:
                    self.errors.append(str(exc))
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
