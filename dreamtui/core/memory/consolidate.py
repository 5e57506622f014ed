"""Consolidation proposals on memory already there (issue 26): update, retire and merge, as diffs.

A proposal (:class:`~dreamtui.core.ledger.consolidations.Consolidation`) names the memory files it
changes, the new text (update, merge) and its evidence. Nothing changes before a person decides:

- :func:`plan` is the change as it would be made now: every file's bytes before and after (``None``:
  absent), ``MEMORY.md`` included — an update rewrites one file and its index line, a retire deletes the
  files and drops their index lines, a merge rewrites the kept file and deletes the others;
- :func:`diff_lines` shows it (a unified diff of each file, the index too);
- :func:`accept` makes **one commit of exactly that diff** (trailer ``Dreamtui-Consolidation: <id>``)
  after checking that every target still holds the bytes it was proposed for and has no uncommitted
  change of the person's; ``decided_by="auto"`` never covers a retirement (promotion does not delete);
- :func:`reject` remembers the reason (the ledger keys proposals by their evidence, so the same one
  is not proposed again);
- :func:`undo` puts back exactly what the accept's commit changed, as one commit
  (``Dreamtui-Consolidation-Undo: <id>``, body ``This reverts commit <sha>.``), refused when a file
  changed since.

Crash-safe like a lesson's accept: a ``memory_intents`` row (action ``consolidate``) names every path
and the hash of the bytes about to be written before anything is written, so a write killed before its
commit is put back by the start-up reconcile (:func:`dreamtui.core.memory.decisions.reconcile`, which
restores an intent's paths while they hold dreamtui's bytes) and is never mistaken for an outside
change; :func:`reconcile` records a commit the ledger missed (killed after the commit) from its trailer.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import secrets as _random
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dreamtui.core import clock
from dreamtui.core.config import Config
from dreamtui.core.errors import DreamError, MemoryRepoError
from dreamtui.core.ledger import Ledger, intents, journal
from dreamtui.core.ledger import consolidations as rows
from dreamtui.core.ledger.consolidations import Consolidation
from dreamtui.core.memory import gitops
from dreamtui.core.memory import layout as memory
from dreamtui.core.memory.agents import linking
from dreamtui.core.memory.decisions import memory_lock
from dreamtui.core.memory.frontmatter import FrontmatterError, dump, parse, read_lenient

TRAILER = "Dreamtui-Consolidation"
TRAILER_UNDO = "Dreamtui-Consolidation-Undo"
CRASH_ENV = "DREAMTUI_CRASH_AT"
CRASH_STEPS: tuple[str, ...] = ("consolidate-intent", "consolidate-write", "consolidate-commit")
VERBS = {"update": "update", "retire": "retire", "merge": "merge"}
_LINK = re.compile(r"^\s*[-*]\s+\[[^\]]*\]\(([^)]*)\)")


class ConsolidationError(DreamError):
    """A consolidation decision cannot be made (unknown id, not pending, changed since proposed, …)."""


@dataclass(slots=True)
class Plan:
    """A proposal's change as it would be made now: each path's bytes before and after (None: absent)."""

    before: dict[str, bytes | None] = field(default_factory=dict)
    after: dict[str, bytes | None] = field(default_factory=dict)
    verbatim: bool = False
    """``after`` is bytes git already holds (an undo puts back the accept's parent): written as they are,
    never redacted into a different file."""

    @property
    def paths(self) -> list[str]:
        """The paths that change, in a stable order (topic files first, ``MEMORY.md`` last)."""
        changed = [p for p in self.after if self.after[p] != self.before.get(p)]
        return sorted(changed, key=lambda p: (p == memory.INDEX, p))


def sha256(data: bytes | None) -> str | None:
    """The hash a proposal remembers of a target's bytes (None for a missing file)."""
    return None if data is None else hashlib.sha256(data).hexdigest()


def new_id() -> str:
    """A fresh proposal id (``k`` and 11 hex digits: never taken for a candidate's id)."""
    return "k" + _random.token_hex(6)[:11]


def link_target(line: str) -> str | None:
    """The repository-relative path an index line links to (``- [T](path.md) — hook``), or None."""
    m = _LINK.match(line)
    if m is None:
        return None
    target = m.group(1).strip().replace("%20", " ").replace("%28", "(").replace("%29", ")")
    target = target.split("#", 1)[0]
    if not target or "://" in target or target.startswith("/"):
        return None
    return target[2:] if target.startswith("./") else target


def index_lines_of(index_text: str, rel: str) -> list[str]:
    """The lines of ``MEMORY.md`` that link to ``rel``."""
    return [line.rstrip("\r") for line in index_text.split("\n") if link_target(line) == rel]


def rewrite(old_text: str, body: str, *, description: str | None = None, name: str | None = None) -> str:
    """A memory file's text with a new body (frontmatter kept, ``modified:`` set to now; ``name`` and
    ``description`` replaced when given). A hand-written frontmatter is read leniently."""
    try:
        meta: dict[str, Any] = dict(parse(old_text)[0])
    except FrontmatterError:
        meta = dict(read_lenient(old_text)[0])
    if name:
        meta["name"] = memory.one_line(name, memory.TITLE_MAX)
    if description:
        meta["description"] = memory.one_line(description, memory.HOOK_MAX)
    meta["modified"] = clock.now_iso()
    text = "\n" + body.strip() + "\n"
    return dump(meta, text) if meta else body.strip() + "\n"


def _read(root: Path, rel: str) -> bytes | None:
    memory.safe_path(root, rel)
    return memory.read_bytes(root, rel)


def _new_index_line(old_line: str, rel: str, new_text: str) -> str:
    """The index line of an updated file: its new name and description when it has them, else as was."""
    meta = read_lenient(new_text)[0]
    name, hook = meta.get("name", ""), meta.get("description", "")
    if not name:
        return old_line
    return memory.index_line(name, rel, hook if hook != name else "")


def plan(root: Path, item: Consolidation) -> Plan:
    """What accepting ``item`` would change now (see the module docstring)."""
    root = Path(root)
    out = Plan()
    index = _read(root, memory.INDEX)
    out.before[memory.INDEX] = index
    index_text = (index or b"").decode("utf-8", "surrogateescape")
    lines = index_text.split("\n")
    for rel in item.targets:
        out.before[rel] = _read(root, rel)
        out.after[rel] = out.before[rel]
    removed = [rel for rel in item.targets if item.kind == "retire" or rel != item.keep_path]
    for rel in removed:
        out.after[rel] = None
    kept = lines
    if removed:
        kept = [line for line in lines if link_target(line) not in removed]
    if item.kind in ("update", "merge") and item.keep_path and item.new_text is not None:
        rel = item.keep_path
        if rel not in out.before:
            out.before[rel] = _read(root, rel)
        out.after[rel] = memory.storable(item.new_text.encode("utf-8", "surrogatepass"))
        kept = [
            _new_index_line(line.rstrip("\r"), rel, item.new_text) + ("\r" if line.endswith("\r") else "")
            if link_target(line) == rel
            else line
            for line in kept
        ]
    new_index = "\n".join(kept)
    out.after[memory.INDEX] = None if index is None else new_index.encode("utf-8", "surrogateescape")
    return out


def diff_lines(item: Consolidation, root: Path) -> list[str]:
    """The unified diff of what accepting ``item`` would change (each file, ``MEMORY.md`` too)."""
    change = plan(root, item)
    out: list[str] = []
    for rel in change.paths:
        old = (change.before.get(rel) or b"").decode("utf-8", "replace").splitlines()
        new = (change.after.get(rel) or b"").decode("utf-8", "replace").splitlines()
        a = f"a/{rel}" if change.before.get(rel) is not None else "/dev/null"
        b = f"b/{rel}" if change.after.get(rel) is not None else "/dev/null"
        out.extend(difflib.unified_diff(old, new, a, b, lineterm="", n=2))
    return out


def stale(item: Consolidation, root: Path) -> str | None:
    """Why ``item`` can no longer be accepted as proposed (a target changed or went away), or None."""
    for rel in item.targets:
        seen = item.seen.get(rel)
        now = sha256(_read(Path(root), rel))
        if seen is not None and now != seen:
            what = "is gone" if now is None else "changed"
            return (
                f"{rel} {what} since this was proposed; the next consolidation pass (a dream, or "
                "`dreamtui consolidate run`) proposes again from its new text if the proof still holds"
            )
    return None


def _get(ledger: Ledger, cid: str) -> Consolidation:
    item = rows.get(ledger, cid)
    if item is None:
        raise ConsolidationError(f"no consolidation proposal with id {cid!r} (see `dreamtui consolidate`)")
    return item


@dataclass(slots=True)
class ConsolidationResult:
    """What a decision made: the proposal, its new status, the commit (accept or undo) and notices."""

    id: str
    kind: str
    status: str
    commit_sha: str | None = None
    paths: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


def _subject(item: Consolidation) -> str:
    names = ", ".join(item.targets[:3]) + (" …" if len(item.targets) > 3 else "")
    return f"dreamtui: {VERBS[item.kind]} {names}"


def _crash(step: str) -> None:
    """The crash test's hook: die with SIGKILL at ``step`` when ``DREAMTUI_CRASH_AT`` names it."""
    if os.environ.get(CRASH_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)


def _missing_dirs(root: Path, paths: list[str]) -> list[str]:
    out: list[str] = []
    for rel in paths:
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            folder = "/".join(parts[:i])
            if not (root / folder).exists() and folder not in out:
                out.append(folder)
    return out


class _Staged:
    """A plan's files staged for one decision: the new bytes in temp files beside their targets, and
    each target's old bytes kept under a second name (a hard link: no space needed). Putting the tree
    back is then renames only, so it works on a full disk too."""

    def __init__(self, root: Path, change: Plan) -> None:
        self.root = root
        self.change = change
        self.temps: dict[str, Path] = {}
        self.asides: dict[str, Path] = {}
        self.applied: list[str] = []

    def prepare(self) -> None:
        """Write every new file's temp and keep every old file aside; nothing in the tree changes yet.
        A full disk or a read-only folder: one :class:`MemoryRepoError` line, nothing left behind."""
        try:
            for n, rel in enumerate(self.change.paths):
                target = memory.safe_path(self.root, rel)
                if self.change.before.get(rel) is not None and target.exists():
                    aside = target.with_name(f"{memory.TMP_PREFIX}kaside-{_random.token_hex(4)}-{n}")
                    try:
                        os.link(target, aside)
                        self.asides[rel] = aside
                    except OSError:  # no hard links here: putting back writes the old bytes instead
                        pass
                data = self.change.after[rel]
                if data is not None:
                    folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
                    memory.make_dirs(self.root, folder)
                    self.temps[rel] = memory.write_temp(self.root, rel, data, verbatim=self.change.verbatim)
        except BaseException as exc:
            self.discard()
            if isinstance(exc, OSError):
                raise MemoryRepoError(f"cannot change {self.root}: {exc.strerror or exc}") from exc
            raise

    def apply(self) -> None:
        """Move the new files into place and delete the retired ones (renames and unlinks only)."""
        for rel in self.change.paths:
            target = memory.safe_path(self.root, rel)
            self.applied.append(rel)
            try:
                if rel in self.temps:
                    os.replace(self.temps.pop(rel), target)
                elif target.exists():
                    target.unlink()
            except OSError as exc:
                raise MemoryRepoError(f"cannot change {target}: {exc.strerror or exc}") from exc
        for folder in {t.parent for t in (self.root / rel for rel in self.applied)}:
            memory.fsync_dir(folder)

    def put_back(self) -> bool:
        """Every changed file as it was (its kept old bytes renamed back, a new file deleted); True when
        the whole tree is as before."""
        whole = True
        for rel in reversed(self.applied):
            target = self.root / rel
            try:
                if rel in self.asides:
                    os.replace(self.asides.pop(rel), target)
                elif self.change.before.get(rel) is None and target.exists():
                    target.unlink()
                elif self.change.before.get(rel) is not None:
                    memory.atomic_write(self.root, rel, self.change.before[rel] or b"", verbatim=True)
            except (OSError, MemoryRepoError):
                whole = False
        self.applied.clear()
        self.discard()
        return whole

    def discard(self) -> None:
        """Delete the temps and the kept old bytes (after a commit, or when nothing was applied)."""
        for path in [*self.temps.values(), *self.asides.values()]:
            try:
                path.unlink()
            except OSError:
                pass
        self.temps.clear()
        self.asides.clear()


def _write_and_commit(
    ledger: Ledger,
    item: Consolidation,
    action: str,
    repo: Any,
    root: Path,
    change: Plan,
    subject: str,
    trailers: dict[str, str],
    body: str = "",
) -> tuple[gitops.CommitResult, int]:
    """Record the intent, write ``change.after`` and commit exactly those paths; on any failure (a full
    disk, a read-only folder, git refusing) the tree is put back whole and the intent forgotten. Returns
    the commit and the intent (to clear with the decision, in one transaction)."""
    paths = change.paths
    written = {
        rel: sha256(data if change.verbatim or data is None else memory.storable(data))
        for rel, data in ((rel, change.after[rel]) for rel in paths)
    }
    staged = _Staged(root, change)
    intent = intents.record(
        ledger,
        item.id,
        "consolidate",
        written,
        _missing_dirs(root, paths),
        {"action": action},
        clock.now_iso(),
    )
    _crash("consolidate-intent")
    try:
        staged.prepare()  # the new bytes on disk before anything in the tree changes
        staged.apply()
        _crash("consolidate-write")
        committed = gitops.commit_paths(repo, paths, subject, trailers, body, notices_shown=True)
    except BaseException:
        if staged.put_back():  # else the intent stays: the next start's reconcile finishes it
            intents.done(ledger, intent)
        raise
    staged.discard()
    _crash("consolidate-commit")
    return committed, intent


def reconcile(config: Config, ledger: Ledger, repo: Any | None = None) -> list[str]:
    """Record what git holds and the ledger missed (a decision killed between its commit and its ledger
    write): a pending proposal whose accept commit is in HEAD's history becomes accepted, an accepted one
    whose undo commit is there becomes undone. Returns one notice per proposal put right."""
    pending = {i.id: i for i in rows.listed(ledger, "pending")}
    accepted = {i.id: i for i in rows.listed(ledger, "accepted")}
    if not pending and not accepted:
        return []
    repo = repo if repo is not None else gitops.open_repo(config.memory)
    notices: list[str] = []
    for info in reversed(gitops.list_commits(repo, grep=[TRAILER])):  # oldest first
        for cid in info.trailers.get(TRAILER, []):
            if cid in pending:
                auto = info.trailers.get(gitops.TRAILER_AUTO) == ["consolidation"]
                with ledger.write():  # as the accept itself records it: `u` takes it back
                    now = clock.now_iso()
                    rows.decide(
                        ledger,
                        cid,
                        "accepted",
                        now,
                        decided_by="auto" if auto else "person",
                        commit_sha=info.sha,
                    )
                    journal.record(ledger, "consolidation", "accept", [cid], {}, now)
                accepted[cid] = pending.pop(cid)
                accepted[cid].commit_sha = info.sha
                notices.append(
                    f"consolidation {cid} was committed ({info.sha[:10]}) before a crash; recorded"
                )
        for cid in info.trailers.get(TRAILER_UNDO, []):
            if cid in accepted and accepted[cid].commit_sha != info.sha:
                with ledger.write():
                    rows.undone(ledger, cid, info.sha, clock.now_iso())
                    journal.mark_undone_for(ledger, "consolidation", cid)
                accepted.pop(cid)
                notices.append(f"the undo of consolidation {cid} was committed before a crash; recorded")
    return notices


def _refuse_dirty(repo: Any, paths: list[str]) -> None:
    dirty = gitops.status(repo, paths)
    if dirty:
        rel, code = next(iter(dirty.items()))
        raise MemoryRepoError(
            f"{rel} has uncommitted changes (git status {code.strip()}); commit or discard them first, "
            "so dreamtui commits only the reviewed change"
        )


def accept(
    config: Config, ledger: Ledger, cid: str, decided_by: str = "person", *, allow_tool: bool = False
) -> ConsolidationResult:
    """Accept a pending proposal: one commit of exactly its diff. An accepted one returns its commit.
    A proposal whose evidence is only tool output (provenance ``tool``: text anyone who can write a file
    or a page the agent read controls) needs ``allow_tool``, the person's explicit confirmation, as a
    lesson does; auto never accepts one."""
    if decided_by not in ("person", "auto"):
        raise ConsolidationError(f"decided_by must be person or auto, not {decided_by!r}")
    with memory_lock(config):
        item = _get(ledger, cid)
        if item.status == "accepted" and item.commit_sha:
            return ConsolidationResult(
                item.id,
                item.kind,
                item.status,
                item.commit_sha,
                item.targets,
                [f"{item.id} was already accepted"],
            )
        if item.status != "pending":
            raise ConsolidationError(
                f"{item.id} is {item.status}, not pending; only a pending proposal can be accepted"
            )
        if decided_by == "auto" and item.kind == "retire":
            raise ConsolidationError(f"{item.id} retires a memory: only a person can accept a retirement")
        if item.provenance == "tool" and (decided_by == "auto" or not allow_tool):
            raise ConsolidationError(
                f"{item.id}'s evidence comes from tool output (provenance: tool, untrusted); "
                "accept it only after checking it yourself, with an explicit confirmation"
            )
        repo = gitops.open_repo(config.memory)
        gitops.ensure_writable(repo)
        notices = reconcile(config, ledger, repo)
        item = _get(ledger, cid)
        if item.status == "accepted" and item.commit_sha:
            return ConsolidationResult(
                item.id, item.kind, item.status, item.commit_sha, item.targets, notices
            )
        root = gitops.work_tree(repo)
        problem = stale(item, root)
        if problem:
            raise ConsolidationError(problem)
        change = plan(root, item)
        if not change.paths:
            raise ConsolidationError(f"{item.id} changes nothing any more; reject it")
        _refuse_dirty(repo, change.paths)
        if change.after.get(memory.INDEX) is not None:
            memory.check_ceiling(change.after[memory.INDEX] or b"")
        trailers = {TRAILER: item.id}
        if decided_by == "auto":
            trailers[gitops.TRAILER_AUTO] = "consolidation"
        body = f"Evidence: {memory.one_line(item.evidence, 300)}"
        committed, intent = _write_and_commit(
            ledger, item, "accept", repo, root, change, _subject(item), trailers, body
        )
        with ledger.write():
            now = clock.now_iso()
            rows.decide(ledger, item.id, "accepted", now, decided_by=decided_by, commit_sha=committed.sha)
            intents.done(ledger, intent)
            journal.record(ledger, "consolidation", "accept", [item.id], {}, now)
        return ConsolidationResult(
            item.id,
            item.kind,
            "accepted",
            committed.sha,
            change.paths,
            [*notices, *committed.notices, *linking.refresh(config)],
        )


def reject(ledger: Ledger, cid: str, reason: str) -> ConsolidationResult:
    """Reject a pending proposal with a reason; it is never proposed again for the same evidence."""
    item = _get(ledger, cid)
    if item.status != "pending":
        raise ConsolidationError(
            f"{item.id} is {item.status}, not pending; only a pending proposal can be rejected"
        )
    text = " ".join(reason.split())
    if not text:
        raise ConsolidationError("a rejection needs a reason (--reason TEXT)")
    with ledger.write():
        now = clock.now_iso()
        rows.decide(ledger, item.id, "rejected", now, decided_by="person", reason=text)
        journal.record(ledger, "consolidation", "reject", [item.id], {}, now)
    return ConsolidationResult(item.id, item.kind, "rejected")


def undo(config: Config, ledger: Ledger, cid: str) -> ConsolidationResult:
    """Undo an accepted proposal: put back exactly what its commit changed, as one new commit. A
    rejected proposal goes back to pending. Refused when a file changed since the accept."""
    with memory_lock(config):
        item = _get(ledger, cid)
        if item.status == "rejected":
            with ledger.write():
                rows.decide(ledger, item.id, "pending", clock.now_iso())
                journal.mark_undone_for(ledger, "consolidation", item.id)
            return ConsolidationResult(item.id, item.kind, "pending")
        if item.status != "accepted" or not item.commit_sha:
            raise ConsolidationError(
                f"{item.id} is {item.status}: only an accepted or rejected proposal can be undone"
            )
        repo = gitops.open_repo(config.memory)
        gitops.ensure_writable(repo)
        notices = reconcile(config, ledger, repo)
        item = _get(ledger, cid)
        if item.status == "undone":
            return ConsolidationResult(item.id, item.kind, item.status, item.undo_sha, item.targets, notices)
        root = gitops.work_tree(repo)
        sha = item.commit_sha or ""
        if not gitops.commit_exists(repo, sha) or not gitops.is_ancestor(repo, sha):
            raise ConsolidationError(
                f"the commit of {item.id} ({sha[:10]}) is no longer in the memory history"
            )
        change = Plan(verbatim=True)
        for rel in gitops.changed_paths(repo, sha):
            written = gitops.show_file(repo, rel, sha)
            current = _read(root, rel)
            if current != written or gitops.show_file(repo, rel) != written:
                raise ConsolidationError(
                    f"{rel} changed since {item.id} was accepted; undo it by hand (git revert {sha[:10]})"
                )
            change.before[rel] = current
            change.after[rel] = gitops.show_file(repo, rel, f"{sha}^")
        _refuse_dirty(repo, change.paths)
        subject = f"dreamtui: undo {_subject(item)[10:]}"
        committed, intent = _write_and_commit(
            ledger,
            item,
            "undo",
            repo,
            root,
            change,
            subject,
            {TRAILER_UNDO: item.id},
            f"This reverts commit {sha}.",
        )
        with ledger.write():
            rows.undone(ledger, item.id, committed.sha, clock.now_iso())
            intents.done(ledger, intent)
            journal.mark_undone_for(ledger, "consolidation", item.id)
        return ConsolidationResult(
            item.id,
            item.kind,
            "undone",
            committed.sha,
            change.paths,
            [*notices, *committed.notices, *linking.refresh(config)],
        )
