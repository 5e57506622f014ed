"""A person's decisions on candidates: accept (a git commit), reject, skip, undo, and reconcile.

Accept, step by step (each step boundary is a place a crash may happen):

1. ``intent``: the ledger records what is about to be written (paths and the hash of their bytes);
2. ``topic``: the topic file is written atomically (temp file in the same folder, fsync, replace);
3. ``index``: its line is added to ``MEMORY.md`` (atomically);
4. ``commit``: one commit of exactly those two paths (``git commit --only``) whose trailer
   ``Dreamtui-Candidate: <id>`` names the candidate;
5. ``ledger``: the decision (with the commit sha) and the candidate's status, in one transaction,
   which also clears the intent.

:func:`reconcile` (run on start-up and before every accept or undo) reads the trailers from git and
puts ledger and repository back in agreement: a commit the ledger missed is recorded, an accept with
no commit goes back to pending, and files written but never committed are restored to HEAD (only the
paths the intent names, and only while they still hold the bytes dreamtui wrote). A retry after a
crash therefore never makes a second commit.
"""

from __future__ import annotations

import hashlib
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from git import GitCommandError, Repo

from dreamtui.core import clock, secrets
from dreamtui.core.config import Config
from dreamtui.core.errors import DreamError, MemoryRepoError
from dreamtui.core.ingest.projects import ProjectMap, rekey_old_rows
from dreamtui.core.ledger import Ledger, candidates, intents
from dreamtui.core.ledger import decisions as decision_rows
from dreamtui.core.ledger.db import LedgerStorageError
from dreamtui.core.ledger.decisions import Decision
from dreamtui.core.ledger.intents import Intent
from dreamtui.core.memory import gitops
from dreamtui.core.memory import layout as memory
from dreamtui.core.memory.agents import linking
from dreamtui.core.memory.frontmatter import FrontmatterError
from dreamtui.core.memory.frontmatter import dump as dump_frontmatter
from dreamtui.core.memory.frontmatter import parse as parse_frontmatter
from dreamtui.core.models import MEMORY_TYPES, REJECT_CATEGORIES, Candidate, Jsonable
from dreamtui.core.text import clean_text

CRASH_ENV = "DREAMTUI_CRASH_AT"
CRASH_STEPS: tuple[str, ...] = ("intent", "topic-tmp", "topic", "index", "commit", "ledger")
UNDO_CRASH_STEPS: tuple[str, ...] = ("undo-intent", "undo-write", "undo-commit")
LOCK_WAIT = 30.0
TITLE_LEN = 70
EDIT_KEYS = {"claim": "claim", "why": "why", "how": "how_to_apply", "how_to_apply": "how_to_apply"}
PLACEMENT_KEYS = ("type", "scope")  # edits that change where and as what the memory is written


class DecisionError(DreamError):
    """A decision cannot be made (unknown candidate, wrong status, secret, untrusted, bad category)."""


@dataclass(slots=True)
class AcceptResult:
    """What an accept made: the commit, the topic file (relative to the repo), and notices."""

    commit_sha: str
    path: str
    notices: list[str] = field(default_factory=list)
    candidate_id: str = ""


@dataclass(slots=True)
class UndoResult:
    """What ``undo_last`` undid: the candidate (for an outside change or a briefing: its ids), the action
    undone, the revert commit (for an accept), and the kind of decision (``proposal``, ``outside``,
    ``briefing``)."""

    candidate_id: str
    action: str
    commit_sha: str | None = None
    notices: list[str] = field(default_factory=list)
    kind: str = "proposal"


@dataclass(slots=True)
class ReconcileReport(Jsonable):
    """What reconcile found and fixed. ``ok`` when ledger and git already agreed."""

    recorded: list[str] = field(default_factory=list)  # accepts found in git, now in the ledger
    undone: list[str] = field(default_factory=list)  # undos found in git, now in the ledger
    reopened: list[str] = field(default_factory=list)  # ledger said accepted, git had no commit
    restored: list[str] = field(default_factory=list)  # paths put back to HEAD after a crash
    notices: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Nothing needed fixing."""
        return not (self.recorded or self.undone or self.reopened or self.restored)

    JSON_EXTRA = ("ok",)


# -- helpers -----------------------------------------------------------------------------------


def _crash(step: str) -> None:
    """The crash test's hook: die with SIGKILL at ``step`` when ``DREAMTUI_CRASH_AT`` names it."""
    if os.environ.get(CRASH_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)


def _text(value: str | bytes) -> str:
    """A git field as text (GitPython types a commit summary as ``str | bytes``)."""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def _sha(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


_lock_state = threading.local()


@contextmanager
def memory_lock(config: Config) -> Iterator[None]:
    """One memory write at a time across processes (``flock`` on ``<state>/memory.lock``); re-entrant."""
    depth = getattr(_lock_state, "depth", 0)
    if depth:
        _lock_state.depth = depth + 1
        try:
            yield
        finally:
            _lock_state.depth -= 1
        return
    path = Path(config.state) / "memory.lock"
    lock = FileLock(path, timeout=LOCK_WAIT, poll_interval=0.05)  # flock: the OS frees it if we are killed
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except Timeout:
        raise MemoryRepoError(
            "another dreamtui is writing to the memory repository; try again in a moment"
        ) from None
    except OSError as exc:
        raise MemoryRepoError(f"cannot open the memory lock {path}: {exc.strerror}") from exc
    try:
        _lock_state.depth = 1
        try:
            yield
        finally:
            _lock_state.depth = 0
    finally:
        lock.release()


def _candidate(ledger: Ledger, cid: str) -> Candidate:
    cand = ledger.get_candidate(cid)
    if cand is None:
        raise DecisionError(f"no candidate with id {cid!r} (see `dreamtui candidates`)")
    return cand


def _live_accept(ledger: Ledger, cid: str) -> Decision | None:
    return decision_rows.live_accept(ledger, cid)


def _insert_decision(
    ledger: Ledger,
    cand: Candidate,
    action: str,
    decided_by: str,
    *,
    category: str | None = None,
    reason: str | None = None,
    commit_sha: str | None = None,
    memory_path: str | None = None,
) -> None:
    decision_rows.record(
        ledger,
        cand,
        action,
        decided_by,
        clock.now_iso(),
        category=category,
        reason=reason,
        commit_sha=commit_sha,
        memory_path=memory_path,
    )


def _set_status(ledger: Ledger, cid: str, status: str) -> None:
    candidates.set_status(ledger, cid, status, clock.now_iso())


def _check_decided_by(decided_by: str) -> None:
    if decided_by not in ("person", "auto"):
        raise DecisionError(f"decided_by must be 'person' or 'auto', not {decided_by!r}")


# -- the topic file ----------------------------------------------------------------------------


def apply_edits(cand: Candidate, edits: dict[str, str] | None) -> tuple[str, str, str]:
    """(claim, why, how_to_apply) after a person's edits (keys ``claim``, ``why``, ``how``)."""
    values = {"claim": cand.claim, "why": cand.why, "how_to_apply": cand.how_to_apply}
    for key, value in (edits or {}).items():
        if key in PLACEMENT_KEYS:
            continue  # see apply_placement
        if key not in EDIT_KEYS:
            raise DecisionError(f"cannot edit {key!r}: only claim, why, how, type and scope can be edited")
        if value is not None:
            values[EDIT_KEYS[key]] = str(value)
    if not memory.one_line(values["claim"]):
        raise DecisionError("the claim is empty: a memory needs a claim")
    return values["claim"], values["why"], values["how_to_apply"]


def placement(cand: Candidate, edits: dict[str, str] | None) -> tuple[str, str]:
    """(type, scope) after a person's edits: ``type`` one of :data:`MEMORY_TYPES`; ``scope`` ``global``
    (the top of the memory repo) or ``project`` (``projects/<folder>/``, stored as the project)."""
    kind = (edits or {}).get("type") or cand.type
    if kind not in MEMORY_TYPES:
        raise DecisionError(f"type {kind!r} is not one of {', '.join(MEMORY_TYPES)}")
    scope = (edits or {}).get("scope") or cand.scope
    if scope == "project":
        scope = cand.project
    if scope not in ("global", cand.project, cand.scope):
        raise DecisionError(f"scope {scope!r} is neither global nor this proposal's project")
    return kind, scope


def apply_placement(ledger: Ledger, cand: Candidate, edits: dict[str, str] | None) -> None:
    """Store a changed type or scope in the candidate before it is written (the file lands where the
    scope says: global at the top level, a project's under ``projects/<folder>/``)."""
    kind, scope = placement(cand, edits)
    if (kind, scope) != (cand.type, cand.scope):
        candidates.set_placement(ledger, cand.id, kind, scope, clock.now_iso())


def is_edited(ledger: Ledger, cid: str) -> bool:
    """A person edited this candidate's text (its claim/why/how are theirs, see :func:`original_text`)."""
    return candidates.is_edited(ledger, cid)


def original_text(ledger: Ledger, cid: str) -> dict[str, str] | None:
    """The claim, why and how_to_apply as extracted, for a candidate a person edited (else ``None``)."""
    return candidates.original_text(ledger, cid)


def _keep_edit(ledger: Ledger, cand: Candidate, claim: str, why: str, how: str) -> None:
    """Store a person's edited text in the candidate, so an undone, refused or failed accept never loses
    it (the proposal comes back as they wrote it); the extracted text is kept in ``candidate_edits``.
    A text that holds a secret is never stored (the ledger only keeps redacted text)."""
    if _secret_rules([claim, why, how]) != []:
        return
    candidates.keep_edit(ledger, cand, claim, why, how, clock.now_iso())


def render_topic(cand: Candidate, claim: str, why: str, how: str) -> tuple[dict[str, Any], str]:
    """The frontmatter (the one schema) and body of a candidate's topic file."""
    meta: dict[str, Any] = {
        "name": memory.one_line(claim, TITLE_LEN),
        "description": memory.one_line(claim, memory.HOOK_MAX),
        "type": cand.type if cand.type in MEMORY_TYPES else "project",
        "source_session": cand.session,
        "quote": cand.quote,
        "verified_line": cand.verified_line,
        "candidate": cand.id,
        "created": clock.now_iso(),
        "extractor": f"{cand.extractor}/{cand.model}" if cand.model else cand.extractor,
    }
    parts = [clean_text(claim).strip()]
    if clean_text(why).strip():
        parts.append(f"**Why:** {clean_text(why).strip()}")
    if clean_text(how).strip():
        parts.append(f"**How to apply:** {clean_text(how).strip()}")
    return meta, "\n" + "\n\n".join(parts) + "\n"


def index_hook(claim: str, why: str, how: str) -> str:
    """The index line's hook: the rest of the claim when the title cuts it, else why (or how)."""
    if len(memory.one_line(claim)) > TITLE_LEN:
        return memory.one_line(claim, memory.HOOK_MAX)
    return memory.one_line(why or how, memory.HOOK_MAX)


def _secret_rules(texts: list[str]) -> list[str] | None:
    """Secret rule names found in ``texts``; ``None`` when the scanner is not available."""
    try:
        from dreamtui.core import secrets
    except ImportError:  # pragma: no cover - only while issue 3 is being written
        return None
    found: list[str] = []
    for text in texts:
        found += [f.rule for f in secrets.scan(text)]
    return list(dict.fromkeys(found))


def _check_acceptable(
    cand: Candidate, claim: str, why: str, how: str, edited: bool, decided_by: str, allow_tool: bool
) -> None:
    if decided_by == "auto" and (cand.provenance == "tool" or cand.secrets or cand.duplicate_of):
        raise DecisionError(
            f"{cand.id} is untrusted, secret-flagged or a duplicate: only a person may accept it"
        )
    if cand.provenance == "tool" and not allow_tool:
        raise DecisionError(
            f"{cand.id}'s quote comes from tool output (provenance: tool, untrusted); "
            "accept it only after checking it yourself, with an explicit confirmation"
        )
    rules = _secret_rules([claim, why, how])
    if cand.secrets and not edited:
        raise DecisionError(
            f"{cand.id} was flagged for a secret ({', '.join(cand.secrets)}); edit the text so the secret "
            "is gone, then accept"
        )
    if cand.secrets and any(secrets.was_redacted(text) for text in (claim, why, how)):
        raise DecisionError(
            f"{cand.id}'s text still shows where a secret was ([REDACTED:…]); rewrite that part, then accept"
        )
    if rules is None and cand.secrets:
        raise DecisionError(f"{cand.id} was flagged for a secret and the secret scanner is not available")
    if rules:
        raise DecisionError(f"{cand.id}'s text holds a secret ({', '.join(rules)}); edit it out, then accept")


# -- accept ------------------------------------------------------------------------------------


def accept(
    config: Config,
    ledger: Ledger,
    cid: str,
    edits: dict[str, str] | None = None,
    decided_by: str = "person",
    allow_tool: bool = False,
    trailers: dict[str, str] | None = None,
) -> AcceptResult:
    """Accept a pending candidate: write its topic file and index line, commit exactly those two paths
    with the trailer ``Dreamtui-Candidate: <id>`` (plus any extra ``trailers``, e.g. ``Dreamtui-Auto``),
    record the decision. Crash-safe and idempotent: accepting an already accepted candidate returns
    its existing commit."""
    _check_decided_by(decided_by)
    with memory_lock(config):
        repo = gitops.open_repo(config.memory)
        gitops.ensure_writable(repo)
        report = _reconcile_locked(ledger, repo)
        notices = list(report.notices)
        cand = _candidate(ledger, cid)
        if cand.status == "accepted":
            live = _live_accept(ledger, cid)
            if live is not None and live.commit_sha:
                return AcceptResult(
                    live.commit_sha, live.memory_path or "", [*notices, f"{cid} was already accepted"], cid
                )
        if cand.status != "pending":
            raise DecisionError(
                f"{cid} is {cand.status}, not pending; only a pending candidate can be accepted"
            )
        claim, why, how = apply_edits(cand, edits)
        placement(cand, edits)  # a bad type or scope is refused before anything is stored
        if edits:  # the person's work is kept, whatever happens to this accept (unless it holds a secret)
            _keep_edit(ledger, cand, claim, why, how)
            apply_placement(ledger, cand, edits)
        _check_acceptable(
            cand, claim, why, how, bool(edits) or is_edited(ledger, cid), decided_by, allow_tool
        )
        cand = _candidate(ledger, cid)
        result = _write_accept(config, ledger, repo, cand, claim, why, how, decided_by, trailers)
        result.notices[:0] = notices
        result.notices += linking.refresh(config)  # the agents' generated blocks: rewritten on accept only
        return result


def _target(repo: Repo, root: Path, cand: Candidate, claim: str) -> str:
    base = memory.topic_rel_path(cand.scope, cand.project, "x").rsplit("/", 1)
    folder = base[0] if len(base) == 2 else ""
    taken: set[str] = set()
    slug = memory.slugify(claim)
    for _ in range(50):
        name = memory.unique_slug(root / folder if folder else root, slug, taken)
        rel = f"{folder}/{name}.md" if folder else f"{name}.md"
        if gitops.show_file(repo, rel) is None and not gitops.status(repo, [rel]):
            return rel
        taken.add(name)
    raise MemoryRepoError(f"cannot find a free file name for {slug!r}")


def _write_accept(
    config: Config,
    ledger: Ledger,
    repo: Repo,
    cand: Candidate,
    claim: str,
    why: str,
    how: str,
    decided_by: str,
    trailers: dict[str, str] | None = None,
) -> AcceptResult:
    root = Path(repo.working_tree_dir or config.memory)
    dirty = gitops.status(repo, [memory.INDEX])
    if dirty:
        raise MemoryRepoError(
            f"{memory.INDEX} has uncommitted changes (git status {next(iter(dirty.values())).strip()}); commit or "
            "discard them first, so dreamtui commits only its own line"
        )
    rel = _target(repo, root, cand, claim)
    meta, body = render_topic(cand, claim, why, how)
    topic_bytes = memory.storable(dump_frontmatter(meta, body).encode("utf-8", "surrogatepass"))
    old_index = (memory.read_bytes(root, memory.INDEX) or b"").decode("utf-8", "surrogateescape")
    line = memory.index_line(meta["name"], rel, index_hook(claim, why, how))
    index_bytes = memory.storable(memory.add_index_line(old_index, line).encode("utf-8", "surrogateescape"))
    memory.safe_path(root, memory.INDEX)
    memory.safe_path(root, rel)
    memory.check_ceiling(index_bytes)
    folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
    missing = _missing_dirs(root, folder)
    paths = {rel: _sha(topic_bytes), memory.INDEX: _sha(index_bytes)}
    intent = _record_intent(
        ledger, cand.id, "accept", paths, missing, {"decided_by": decided_by, "memory_path": rel}
    )
    _crash("intent")
    try:
        memory.make_dirs(root, folder)
        memory.atomic_write(root, rel, topic_bytes, crash_hook=lambda: _crash("topic-tmp"))
        _crash("topic")
        memory.atomic_write(root, memory.INDEX, index_bytes)
        _crash("index")
        committed = gitops.commit_paths(
            repo,
            [rel, memory.INDEX],
            f"dreamtui: remember {meta['name']}",
            {**(trailers or {}), gitops.TRAILER_CANDIDATE: cand.id},
            notices_shown=True,  # an accept's notices reach the person (the CLI prints them, the app shows them)
        )
    except BaseException:
        _rollback(ledger, repo, intent)
        raise
    _crash("commit")
    with _recorded_later(committed.sha, f"accepted {cand.id}"), ledger.write():
        _insert_decision(ledger, cand, "accept", decided_by, commit_sha=committed.sha, memory_path=rel)
        _set_status(ledger, cand.id, "accepted")
        intents.done(ledger, intent)
    _crash("ledger")
    notices = list(committed.notices)
    status = memory.ceiling_of(index_bytes)
    warning = memory.ceiling_warning(status)
    if warning:
        notices.append(warning)
    return AcceptResult(committed.sha, rel, notices, cand.id)


@contextmanager
def _recorded_later(sha: str, done: str) -> Iterator[None]:
    """Around the ledger write that follows a commit: a full ledger disk then does not undo the commit;
    the one-line error says it stands and that reconcile (at the next start) records it."""
    try:
        yield
    except LedgerStorageError as exc:
        raise LedgerStorageError(
            f"{done} in git (commit {sha[:10]}), but the ledger could not record it: {exc}; "
            "it is recorded from git at the next start once there is room"
        ) from exc


def _missing_dirs(root: Path, folder: str) -> list[str]:
    if not folder:
        return []
    parts = folder.split("/")
    return [p for p in ("/".join(parts[:i]) for i in range(1, len(parts) + 1)) if not (root / p).exists()]


def _record_intent(
    ledger: Ledger,
    cid: str,
    action: str,
    paths: dict[str, str | None],
    dirs: list[str],
    payload: dict[str, Any],
) -> int:
    return intents.record(ledger, cid, action, paths, dirs, payload, clock.now_iso())


def _rollback(ledger: Ledger, repo: Repo, intent_id: int) -> None:
    """After a failed write (not a crash): put the intent's paths back; keep the intent if that fails."""
    intent = intents.get(ledger, intent_id)
    if intent is None:
        return
    try:
        _restore_intent(repo, intent, ReconcileReport())
    except DreamError:
        return  # reconcile will finish the job once git is free again
    intents.done(ledger, intent_id)


def _restore_intent(repo: Repo, intent: Intent, report: ReconcileReport) -> None:
    """Put every path of an uncommitted intent back to HEAD, if it still holds what dreamtui wrote."""
    root = gitops.work_tree(repo)
    paths = intent.paths
    to_reset: list[str] = []
    for rel, written in paths.items():
        current = memory.read_bytes(root, rel)
        head = gitops.show_file(repo, rel)
        if current != head:
            ours = (written is None and current is None) or (current is not None and _sha(current) == written)
            if not ours:
                report.notices.append(f"{rel} changed after dreamtui's interrupted write; left as it is")
                continue
            if head is None:
                memory.safe_path(root, rel).unlink()
            else:
                folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
                memory.make_dirs(root, folder)
                memory.atomic_write(root, rel, head, verbatim=True)  # put back what git holds
            report.restored.append(rel)
        code = gitops.status(repo, [rel]).get(rel, "  ")
        if code[0] not in (" ", "?"):
            to_reset.append(rel)
    if to_reset:
        gitops.restore_paths(repo, to_reset)
        for rel in to_reset:
            if rel not in report.restored:
                report.restored.append(rel)
    folders = [rel.rsplit("/", 1)[0] if "/" in rel else "" for rel in paths]
    memory.remove_temp_files(root, folders)
    for folder in sorted(intent.created_dirs, key=len, reverse=True):
        try:
            (root / folder).rmdir()
        except OSError:
            pass


# -- reject, skip ------------------------------------------------------------------------------


def normalize_category(category: str) -> str:
    """``not-a-lesson``/``Not_A_Lesson`` → ``not a lesson``; raises on an unknown category."""
    value = " ".join(str(category).replace("-", " ").replace("_", " ").lower().split())
    if value not in REJECT_CATEGORIES:
        raise DecisionError(
            f"unknown reject category {category!r}: choose one of {', '.join(REJECT_CATEGORIES)}"
        )
    return value


def reject(
    ledger: Ledger, cid: str, category: str = "other", reason: str = "", decided_by: str = "person"
) -> None:
    """Reject a pending candidate with a category (wrong, duplicate, not a lesson, too specific, secret,
    other) and a free-text reason (the memory repository is not touched: no config needed)."""
    if not cid:
        raise DecisionError("reject needs a candidate id")
    _check_decided_by(decided_by)
    cat = normalize_category(category)
    with ledger.write():
        cand = _candidate(ledger, cid)
        if cand.status != "pending":
            raise DecisionError(
                f"{cid} is {cand.status}, not pending; only a pending candidate can be rejected"
            )
        _insert_decision(
            ledger, cand, "reject", decided_by, category=cat, reason=clean_text(reason or "").strip()
        )
        _set_status(ledger, cid, "rejected")


def skip(ledger: Ledger, cid: str, decided_by: str = "person") -> None:
    """Skip a pending candidate: it stays pending; the skip is recorded (and can be undone)."""
    _check_decided_by(decided_by)
    with ledger.write():
        cand = _candidate(ledger, cid)
        if cand.status != "pending":
            raise DecisionError(
                f"{cid} is {cand.status}, not pending; only a pending candidate can be skipped"
            )
        _insert_decision(ledger, cand, "skip", decided_by)


# -- undo --------------------------------------------------------------------------------------


def undo_last(config: Config, ledger: Ledger) -> UndoResult:
    """Undo the latest decision not yet undone: an accept by a revert commit (its topic file and
    index line removed, trailer ``Dreamtui-Undo``), a reject or skip by returning it to pending."""
    with memory_lock(config):
        notices: list[str] = []
        if gitops.repo_exists(config.memory):
            repo = gitops.open_repo(config.memory)
            notices += _reconcile_locked(ledger, repo).notices
        row = decision_rows.last_undoable(ledger)
        if row is None:
            raise DecisionError("nothing to undo")
        cand = _candidate(ledger, row.candidate_id)
        if row.action != "accept":
            with ledger.write():
                decision_rows.mark_undone(ledger, row.id)
                _insert_decision(ledger, cand, "undo", "person", reason=f"undo {row.action}")
                if cand.status == "rejected":
                    _set_status(ledger, cand.id, "pending")
            return UndoResult(cand.id, row.action, None, notices)
        repo = gitops.open_repo(config.memory)
        gitops.ensure_writable(repo)
        sha = _write_undo(ledger, repo, cand, row, notices)
        notices += _edit_notice(ledger, cand.id)
        notices += linking.refresh(config)
        return UndoResult(cand.id, "accept", sha, notices)


def revert_memory(config: Config, ledger: Ledger, ref: str) -> UndoResult:
    """Revert one accepted memory, named by its path in the repo or its candidate id, by a revert
    commit (as :func:`undo_last` does for the latest accept); the candidate goes back to pending."""
    with memory_lock(config):
        repo = gitops.open_repo(config.memory, create=False)
        gitops.ensure_writable(repo)
        notices = _reconcile_locked(ledger, repo).notices
        row = decision_rows.live_accept_of(ledger, ref)
        if row is None:
            raise DecisionError(f"no accepted memory {ref!r} to revert")
        cand = _candidate(ledger, row.candidate_id)
        notices = list(notices)
        sha = _write_undo(ledger, repo, cand, row, notices)
        notices += _edit_notice(ledger, cand.id)
        notices += linking.refresh(config)
        return UndoResult(cand.id, "accept", sha, notices)


def _edit_notice(ledger: Ledger, cid: str) -> list[str]:
    if not is_edited(ledger, cid):
        return []
    return [f"{cid} keeps your edited text; accepting it again writes that text"]


def _added_index_lines(repo: Repo, sha: str) -> list[str]:
    after = (gitops.show_file(repo, memory.INDEX, sha) or b"").decode("utf-8", "surrogateescape").split("\n")
    before_raw = gitops.show_file(repo, memory.INDEX, f"{sha}^") if _has_parent(repo, sha) else None
    before = (before_raw or b"").decode("utf-8", "surrogateescape").split("\n")
    remaining = list(before)
    added = []
    for line in after:
        if line in remaining:
            remaining.remove(line)
        elif line.strip():
            added.append(line)
    return added


def _has_parent(repo: Repo, sha: str) -> bool:
    return bool(repo.commit(sha).parents)


def _write_undo(
    ledger: Ledger, repo: Repo, cand: Candidate, row: Decision, notices: list[str] | None = None
) -> str:
    root = gitops.work_tree(repo)
    rel = row.memory_path
    sha = row.commit_sha or ""  # every accept names its commit
    paths = [p for p in (rel, memory.INDEX) if p]
    dirty = gitops.status(repo, paths)
    if dirty:
        raise MemoryRepoError(
            f"{', '.join(dirty)} has uncommitted changes; commit or discard them first, then undo"
        )
    if rel and gitops.commit_exists(repo, sha):
        accepted = gitops.show_file(repo, rel, sha)
        current = memory.read_bytes(root, rel)
        if accepted is not None and current is not None and current != accepted:
            raise MemoryRepoError(
                f"{rel} was edited after it was accepted; undoing would delete those edits. "
                "Remove the memory yourself (file and its MEMORY.md line), or revert with git"
            )
    index = (memory.read_bytes(root, memory.INDEX) or b"").decode("utf-8", "surrogateescape")
    for line in _added_index_lines(repo, sha):
        index = memory.remove_index_line(index, line)
    index_bytes = memory.storable(index.encode("utf-8", "surrogateescape"))
    changes: dict[str, str | None] = {}
    if rel and memory.read_bytes(root, rel) is not None:
        memory.safe_path(root, rel)
        changes[rel] = None
    if index_bytes != memory.read_bytes(root, memory.INDEX):
        changes[memory.INDEX] = _sha(index_bytes)
    intent = _record_intent(ledger, cand.id, "undo", changes, [], {"decision": row.id})
    _crash("undo-intent")
    try:
        if rel in changes:
            memory.safe_path(root, rel).unlink()
        if memory.INDEX in changes:
            memory.atomic_write(root, memory.INDEX, index_bytes)
        _crash("undo-write")
        # Even with nothing left to remove, the (then empty) commit carries the trailer for reconcile.
        subject = (
            _text(repo.commit(sha).summary)
            if gitops.commit_exists(repo, sha)
            else f"dreamtui: remember {cand.id}"
        )
        committed = gitops.commit_paths(
            repo,
            list(changes),
            f'Revert "{subject}"',
            {gitops.TRAILER_UNDO: cand.id},
            body=f"This reverts commit {sha}.",
            notices_shown=True,
        )
        revert_sha = committed.sha
        if notices is not None:  # e.g. no git identity: committed as dreamtui, and how to set yours
            notices.extend(committed.notices)
    except BaseException:
        _rollback(ledger, repo, intent)
        raise
    _crash("undo-commit")
    with _recorded_later(revert_sha, f"undid {cand.id}"), ledger.write():
        _record_undo(ledger, cand, row.id, revert_sha)
        intents.done(ledger, intent)
    if rel:
        folder = Path(root) / rel.rsplit("/", 1)[0] if "/" in rel else None
        while folder is not None and folder != root:
            try:
                folder.rmdir()
            except OSError:
                break
            folder = folder.parent
    return revert_sha


def _record_undo(ledger: Ledger, cand: Candidate, decision_id: int | None, revert_sha: str | None) -> None:
    with ledger.write():
        if decision_id is not None:
            decision_rows.mark_undone(ledger, decision_id)
        else:
            decision_rows.mark_accepts_undone(ledger, cand.id)
        _insert_decision(ledger, cand, "undo", "person", reason="undo accept", commit_sha=revert_sha)
        _set_status(ledger, cand.id, "pending")


# -- reconcile ---------------------------------------------------------------------------------


def reconcile(config: Config, ledger: Ledger) -> ReconcileReport:
    """Make the ledger agree with the memory repository's ``Dreamtui-*`` trailers, and undo any
    interrupted write. Safe to run any time; does nothing when the repository does not exist yet.
    First files the rows a worktree's folder got under its own name under its repository's project
    (:func:`file_under_repositories`, a notice per folder, once)."""
    with memory_lock(config):
        moved = file_under_repositories(config, ledger)
        if not gitops.repo_exists(config.memory):
            pending = intents.count(ledger)
            report = ReconcileReport(notices=moved)
            if pending:
                report.notices.append(
                    f"{pending} interrupted memory write(s) but no repository at {config.memory}"
                )
            return report
        report = _reconcile_locked(ledger, gitops.open_repo(config.memory))
        report.notices[:0] = moved
        return report


def file_under_repositories(config: Config, ledger: Ledger, projects: ProjectMap | None = None) -> list[str]:
    """File the ledger's rows of a worktree's (or a subfolder's) transcript folder, stored under the
    folder's own name before a project was its repository, under the repository's project: pending
    proposals then go to the repository's memory folder when accepted. Memories already accepted into
    the folder's own ``projects/<folder>/`` stay where they are (the index links them, their commits
    stay undoable) and count as the repository's project's in the dedup scope; the notice names them.
    One line per folder moved; nothing once every row is filed under its repository."""
    projects = projects or ProjectMap(config.transcripts, ledger, remember=True)
    lines = []
    for old, new, count in rekey_old_rows(ledger, projects):
        line = f"filed {count} proposal(s) of {old} under its repository's project {new}"
        kept = Path(config.memory) / memory.PROJECTS / memory.project_folder(old)
        if kept.is_dir():
            line += (
                f"; the memories in {memory.PROJECTS}/{kept.name}/ stay there and count as {new}'s, "
                f"new ones go to {memory.PROJECTS}/{memory.project_folder(new)}/"
            )
        lines.append(line)
    return lines


def _events(repo: Repo) -> dict[str, list[tuple[str, str]]]:
    """Per candidate: its (``accept``|``undo``, sha) commits, newest first."""
    commits = gitops.dreamtui_commits(repo)
    accepted_by: dict[str, str] = {}
    for info in commits:
        for cid in info.trailers.get(gitops.TRAILER_CANDIDATE, []):
            accepted_by[info.sha] = cid
    events: dict[str, list[tuple[str, str]]] = {}
    for info in commits:
        for cid in info.trailers.get(gitops.TRAILER_CANDIDATE, []):
            events.setdefault(cid, []).append(("accept", info.sha))
        undos = info.trailers.get(gitops.TRAILER_UNDO, [])
        for cid in undos:
            events.setdefault(cid, []).append(("undo", info.sha))
        if not undos and info.reverts in accepted_by:  # a person's own `git revert` of an accept
            events.setdefault(accepted_by[info.reverts], []).append(("undo", info.sha))
    return events


def _reconcile_locked(ledger: Ledger, repo: Repo) -> ReconcileReport:
    report = ReconcileReport()
    in_flight = intents.listed(ledger)
    if in_flight:  # an interrupted write may have left a git process running: let it finish first
        gitops.wait_for_index(repo, notices=report.notices)
    frozen = gitops.not_writable(repo) if in_flight else None
    events = _events(repo)
    for intent in in_flight:
        cid, action = intent.candidate_id, intent.action
        known = decision_rows.commits_of(ledger, cid)
        history = events.get(cid)
        latest = history[0] if history else None
        payload = intent.payload
        cand = ledger.get_candidate(cid)
        found = latest[1] if latest is not None and latest[0] == action and latest[1] not in known else None
        if found is None and action == "accept" and cand is not None and cand.status == "pending":
            # committed, then the commit lost its trailer (a person's `git commit --amend`) before the
            # ledger heard of it: the memory file in HEAD says the accept stands
            rel = payload.get("memory_path")
            found = _standing_accept(repo, cid, rel, written=intent.paths.get(rel or ""))
            if found is not None and found not in known:
                report.notices.append(_no_trailer_notice(cid, rel, found))
            else:
                found = None
        if found is not None and cand is not None:
            with ledger.write():
                if action == "accept":
                    _insert_decision(
                        ledger,
                        cand,
                        "accept",
                        payload.get("decided_by", "person"),
                        commit_sha=found,
                        memory_path=payload.get("memory_path"),
                    )
                    _set_status(ledger, cid, "accepted")
                    report.recorded.append(cid)
                else:
                    _record_undo(ledger, cand, payload.get("decision"), found)
                    report.undone.append(cid)
                intents.done(ledger, intent.id)
            root = gitops.work_tree(repo)
            memory.remove_temp_files(root, [p.rsplit("/", 1)[0] if "/" in p else "" for p in intent.paths])
            continue
        if frozen is not None:  # mid-merge: put nothing back now, the intent waits for the next run
            report.notices.append(f"an interrupted write of {cid} is left as it is until then: {frozen}")
            continue
        _restore_intent(repo, intent, report)
        intents.done(ledger, intent.id)
    _agree_with_git(ledger, repo, events, report)
    return report


def _adding_commit(repo: Repo, rel: str) -> str | None:
    """The newest commit in HEAD's history that added ``rel``."""
    try:
        out = repo.git.execute(["git", "log", "--diff-filter=A", "--format=%H", "-n1", "--", rel])
    except GitCommandError:
        return None
    return out.strip() or None


def _standing_accept(
    repo: Repo, cid: str, rel: str | None, old_sha: str | None = None, written: str | None = None
) -> str | None:
    """The commit that holds candidate ``cid``'s accepted memory ``rel`` in HEAD although no commit
    carries its ``Dreamtui-Candidate`` trailer (a person's ``git commit --amend`` rewrote the message):
    ``rel`` is in HEAD with the accepted bytes (those at ``old_sha``, or of sha256 ``written``) or with
    ``candidate: <cid>`` in its frontmatter. ``None`` when the memory is not in HEAD (really gone)."""
    if not rel:
        return None
    head = gitops.show_file(repo, rel)
    if head is None:
        return None
    same = (written is not None and _sha(head) == written) or (
        bool(old_sha)
        and gitops.commit_exists(repo, str(old_sha))
        and gitops.show_file(repo, rel, str(old_sha)) == head
    )
    if not same:
        try:
            meta, _body = parse_frontmatter(head.decode("utf-8", "surrogateescape"))
        except (FrontmatterError, ValueError):
            return None
        if str(meta.get("candidate", "")) != cid:
            return None
    if old_sha and gitops.commit_exists(repo, old_sha) and gitops.is_ancestor(repo, old_sha):
        return old_sha
    return _adding_commit(repo, rel)


def _no_trailer_notice(cid: str, rel: str | None, sha: str) -> str:
    return (
        f"{cid}'s memory {rel} is in HEAD (commit {sha[:10]}) although its commit lost the "
        f"{gitops.TRAILER_CANDIDATE} trailer (amended?); the accept stands"
    )


def _accept_stands(
    ledger: Ledger, repo: Repo, cand: Candidate, live: Decision, report: ReconcileReport
) -> bool:
    """An accept the trailers no longer show stands when its memory file is still in HEAD; the ledger
    then points at the commit that now holds it (so an undo reverts the right one)."""
    sha = _standing_accept(repo, cand.id, live.memory_path, old_sha=live.commit_sha)
    if sha is None:
        return False
    if sha != live.commit_sha:
        decision_rows.set_commit(ledger, live.id, sha)
        report.recorded.append(cand.id)
        report.notices.append(_no_trailer_notice(cand.id, live.memory_path, sha))
    return True


def _is_auto(repo: Repo, sha: str) -> bool:
    """The commit was auto-written (trailer ``Dreamtui-Auto``), not a person's accept."""
    message = repo.commit(sha).message
    text = message if isinstance(message, str) else message.decode("utf-8", "replace")
    return any(line.startswith(f"{gitops.TRAILER_AUTO}:") for line in text.splitlines())


def _agree_with_git(
    ledger: Ledger, repo: Repo, events: dict[str, list[tuple[str, str]]], report: ReconcileReport
) -> None:
    for cid, evs in events.items():
        kind, sha = evs[0]
        cand = ledger.get_candidate(cid)
        if cand is None:
            report.notices.append(f"commit {sha[:10]} names candidate {cid}, which this ledger does not know")
            continue
        live = _live_accept(ledger, cid)
        if kind == "accept":
            if cand.status == "accepted" and live is not None and live.commit_sha == sha:
                continue
            with ledger.write():
                if live is not None:
                    decision_rows.set_commit(ledger, live.id, sha)
                else:
                    path = next(iter(p for p in gitops.changed_paths(repo, sha) if p != memory.INDEX), None)
                    by = "auto" if _is_auto(repo, sha) else "person"
                    _insert_decision(
                        ledger,
                        cand,
                        "accept",
                        by,
                        commit_sha=sha,
                        memory_path=path,
                        reason="recorded by reconcile from git",
                    )
                _set_status(ledger, cid, "accepted")
            report.recorded.append(cid)
        elif cand.status == "accepted":
            if live is not None and _accept_stands(ledger, repo, cand, live, report):
                continue  # re-accepted after that undo; the new commit lost its trailer
            _record_undo(ledger, cand, live.id if live is not None else None, sha)
            report.undone.append(cid)
    orphans = [c for c in ledger.list_candidates(status="accepted") if c.id not in events]
    orphans = [
        c
        for c in orphans
        if (live := _live_accept(ledger, c.id)) is None or not _accept_stands(ledger, repo, c, live, report)
    ]
    if not orphans:
        return
    shas = decision_rows.live_accept_commits(ledger)
    if shas and not events and not any(gitops.commit_exists(repo, s) for s in shas[:50]):
        report.notices.append(
            f"the memory repository {repo.working_tree_dir} holds none of the ledger's accept commits; is --memory "
            "pointing at the right repository? (nothing changed)"
        )
        return
    for cand in orphans:
        live = _live_accept(ledger, cand.id)
        with ledger.write():
            if live is not None:
                decision_rows.mark_undone(ledger, live.id)
            _set_status(ledger, cand.id, "pending")
        report.reopened.append(cand.id)
        report.notices.append(
            f"{cand.id} was accepted in the ledger but has no commit in git; back to pending"
        )
