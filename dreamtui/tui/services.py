"""The app's one door into the core: read models for the screens and the decision calls.

Everything here is plain Python (no Textual), so screens stay thin and the bench can time it.
Core modules are imported where they are used (start-up stays quick); results are read through the
core's own return types, so a change there fails loudly in the tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.models import Candidate

INDEX_MAX_LINES = 200
INDEX_MAX_BYTES = 25_000


@dataclass(slots=True)
class QueueRow:
    """One pending proposal as the queue table shows it (cheap to build for 10,000 rows)."""

    id: str
    project: str
    session: str
    type: str
    claim: str
    provenance: str | None
    duplicate: bool
    corroborated: int
    secret: bool
    created_at: str


@dataclass(slots=True)
class Status:
    """What the header shows."""

    pending: int = 0
    index_lines: int = 0
    index_bytes: int = 0
    max_lines: int = INDEX_MAX_LINES
    max_bytes: int = INDEX_MAX_BYTES
    banners: list[tuple[str, str]] = field(default_factory=list)  # (level, text)

    @property
    def fraction(self) -> float:
        """How full the index is: the larger of the line and byte fractions."""
        return max(self.index_lines / self.max_lines, self.index_bytes / self.max_bytes)


def pending_rows(ledger: Ledger) -> list[QueueRow]:
    """Every pending candidate, newest first, as light rows (no JSON decoding of matches)."""
    rows = ledger.query(
        "SELECT id, project, session, type, claim, provenance, duplicate_of, corroborated, secrets, "
        "created_at FROM candidates WHERE status = 'pending' ORDER BY created_at DESC, id"
    )
    return [
        QueueRow(r["id"], r["project"], r["session"], r["type"], r["claim"], r["provenance"],
                 bool(r["duplicate_of"]), int(r["corroborated"] or 0),
                 bool(r["secrets"]) and r["secrets"] != "[]", r["created_at"] or "")
        for r in rows
    ]


def skipped_ids(ledger: Ledger) -> list[str]:
    """Pending proposals with a skip that was not undone, in the order they were skipped (the queue
    keeps them last after the app is closed and opened again)."""
    rows = ledger.query(
        "SELECT d.candidate_id, MAX(d.id) AS last FROM decisions d JOIN candidates c ON c.id = d.candidate_id "
        "WHERE d.action = 'skip' AND d.undone = 0 AND c.status = 'pending' GROUP BY d.candidate_id ORDER BY last"
    )
    return [r["candidate_id"] for r in rows]


def pending_count(ledger: Ledger) -> int:
    """How many proposals wait."""
    return int(ledger.query("SELECT COUNT(*) FROM candidates WHERE status = 'pending'")[0][0])


def index_size(config: Config) -> tuple[int, int, int, int]:
    """``(lines, bytes, max_lines, max_bytes)`` of ``MEMORY.md`` (:func:`core.memory.ceiling_status`)."""
    from dreamtui.core.memory import layout as memory

    status = memory.ceiling_status(config.memory)
    return status.lines, status.bytes, status.max_lines, status.max_bytes


def banners(config: Config, ledger: Ledger) -> list[tuple[str, str]]:
    """Yield-floor, index-ceiling and promotion/demotion banners, as ``(level, text)``."""
    from dreamtui.core.dream import cycle, promotion
    from dreamtui.core.memory import layout as memory

    out: list[tuple[str, str]] = []
    if cycle.yield_floor_active(ledger):
        out.append(("error", cycle.YIELD_FLOOR_MESSAGE))
    warning = memory.ceiling_warning(memory.ceiling_status(config.memory))
    if warning:
        out.append(("warning", warning))
    text = promotion.promotion_banner(config, ledger)
    if text:
        level = "info" if text.startswith("Auto-write is on") else "warning"
        out.append((level, text))
    return out


def status(config: Config, ledger: Ledger) -> Status:
    """Everything the header shows, in one call."""
    lines, size, max_lines, max_bytes = index_size(config)
    return Status(pending_count(ledger), lines, size, max_lines, max_bytes, banners(config, ledger))


def candidate(ledger: Ledger, cid: str) -> Candidate | None:
    """One candidate with its evidence."""
    return ledger.get_candidate(cid)


def duplicate_text(config: Config, ledger: Ledger, cand: Candidate) -> tuple[str, str] | None:
    """``(title, text)`` of the existing lesson a candidate duplicates, or ``None``."""
    if not cand.duplicate_of:
        return None
    ref = cand.duplicate_of
    if cand.duplicate_kind in ("pending", "rejected"):
        other = ledger.get_candidate(ref)
        if other is None:
            return (f"{cand.duplicate_kind} candidate {ref}", "(no longer in the ledger)")
        body = "\n\n".join(x for x in (other.claim, other.why, other.how_to_apply) if x)
        return (f"{other.status} candidate {ref}", body)
    path = Path(ref)
    if not path.is_absolute():
        path = config.memory / ref
    try:
        resolved = path.resolve()
        if not resolved.is_relative_to(config.memory.resolve()):
            return (f"memory {ref}", "(outside the memory repository)")
        return (f"memory {ref}", resolved.read_text(encoding="utf-8", errors="replace")[:8000])
    except OSError as exc:
        return (f"memory {ref}", f"(cannot read: {exc.strerror})")


# -- decisions ------------------------------------------------------------------------------------


def accept(config: Config, ledger: Ledger, cid: str, edits: dict[str, str] | None = None, *,
           allow_tool: bool = False) -> str:
    """Accept a proposal (one memory file, one index line, one commit); returns a one-line summary.

    ``allow_tool`` accepts a proposal whose quote is only in tool output (untrusted); the app passes it
    only after the person confirmed that in a dialog.
    """
    from dreamtui.core.memory import decisions

    result = decisions.accept(config, ledger, cid, edits=edits, decided_by="person", allow_tool=allow_tool)
    return " · ".join([f"accepted → {result.path} ({result.commit_sha[:8]})", *result.notices])


def reject(config: Config, ledger: Ledger, cid: str, category: str, reason: str) -> str:
    """Reject a proposal with a category and free text."""
    from dreamtui.core.memory import decisions

    decisions.reject(config, ledger, cid, category, reason)
    return f"rejected ({category})"


def skip(ledger: Ledger, cid: str) -> str:
    """Skip a proposal for now (it stays pending)."""
    from dreamtui.core.memory import decisions

    decisions.skip(ledger, cid)
    return "skipped"


def undo(config: Config, ledger: Ledger) -> tuple[str, str | None]:
    """Undo the last decision; returns ``(summary, candidate id)``."""
    from dreamtui.core.memory import decisions

    result = decisions.undo_last(config, ledger)
    sha = f" (revert {result.commit_sha[:8]})" if result.commit_sha else ""
    return " · ".join([f"undid {result.action} of {result.candidate_id}{sha}", *result.notices]), result.candidate_id


def reconcile(config: Config, ledger: Ledger) -> str | None:
    """Bring the ledger in line with the memory repo at start-up; a one-line note when it did something."""
    from dreamtui.core.memory import decisions, gitops

    if not gitops.repo_exists(config.memory):
        return None
    report = decisions.reconcile(config, ledger)
    if report.ok and not report.notices:
        return None
    parts = [f"{len(v)} {k}" for k, v in (("recorded", report.recorded), ("undone", report.undone),
                                          ("reopened", report.reopened), ("restored", report.restored)) if v]
    return "reconciled with the memory repo: " + ", ".join(parts + list(report.notices))


# -- other screens --------------------------------------------------------------------------------


def sessions(config: Config, ledger: Ledger, skipped: list[str] | None = None) -> list[dict[str, Any]]:
    """Per session: project, files, lines read and dreamed, bytes waiting, pending proposals.

    Built from the ledger's ``files`` table plus the transcript files on disk the ledger has not
    read yet (everything in those waits). Project folders that cannot be read and ``*.jsonl`` paths
    that are no regular files are left out, each with a one-line notice added to ``skipped``.
    """
    from dreamtui.core.files import Skipped, is_dir
    from dreamtui.core.ingest.transcripts import discover

    groups: dict[tuple[str, str], dict[str, Any]] = {}

    def group(project: str, session: str) -> dict[str, Any]:
        return groups.setdefault((project, session), {
            "project": project, "session": session, "files": 0, "lines": 0, "dreamed": 0, "waiting": 0,
            "updated": "", "pending": 0})

    seen: set[str] = set()
    for r in ledger.query("SELECT path, project, session, size, offset, lines, dreamed_offset, dreamed_lines, "
                          "updated_at FROM files"):
        g = group(r["project"], r["session"])
        seen.add(r["path"])
        size = r["size"] if r["size"] is not None else r["offset"]
        try:
            size = Path(r["path"]).stat().st_size
        except OSError:
            pass
        g["files"] += 1
        g["lines"] += int(r["lines"] or 0)
        g["dreamed"] += int(r["dreamed_lines"] or 0)
        g["waiting"] += max(0, int(size or 0) - int(r["dreamed_offset"] or 0))
        g["updated"] = max(g["updated"], r["updated_at"] or "")
    found: list[Skipped] = []
    if is_dir(config.transcripts):
        for tf in discover(config.transcripts, found):
            if str(tf.path) in seen:
                continue
            g = group(tf.project, tf.session)
            g["files"] += 1
            try:
                g["waiting"] += tf.path.stat().st_size
            except OSError:
                pass
    if skipped is not None:
        skipped.extend(skip.notice for skip in found)
    pending = {r["session"]: r["n"] for r in ledger.query(
        "SELECT session, COUNT(*) AS n FROM candidates WHERE status = 'pending' GROUP BY session")}
    for (_project, session), g in groups.items():
        g["pending"] = pending.get(session, 0)
    return sorted(groups.values(), key=lambda g: (g["project"], g["session"]))


def cycles(ledger: Ledger, limit: int = 200) -> list[Any]:
    """Dream cycles (:class:`core.cycle.CycleRecord`), newest first."""
    from dreamtui.core.dream import cycle

    return cycle.list_cycles(ledger, limit)


def dream_plan(config: Config, ledger: Ledger) -> Any:
    """What ``d`` (a person's dream of every project) does now (:func:`core.cycle.plan_dream`)."""
    from dreamtui.core.dream import cycle

    return cycle.plan_dream(config, ledger)


def dream_hint(plan: Any) -> str:
    """The Sessions screen's words for what ``d`` will do (never an action it then refuses)."""
    if plan.kind == "full":
        return "d runs today's full dream cycle"
    if plan.kind == "on-demand":
        return f"d dreams what is new since cycle #{plan.covering.id}, on demand (no REM)"
    return f"nothing new since cycle #{plan.covering.id}"


def waking_message(record: Any) -> str:
    """The waking message of a cycle (:func:`core.cycle.waking_message`)."""
    from dreamtui.core.dream import cycle

    return cycle.waking_message(record)


def describe_progress(phase: str, message: str, fraction: float | None) -> str:
    """A one-line progress text for the header, from ``run_cycle``'s progress callback."""
    from dreamtui.core.dream import cycle

    title = cycle.PHASE_TITLES.get(phase, phase)
    pct = f" {fraction:.0%}" if fraction is not None else ""
    return f"{title}{pct} · {message}" if message and message != title else f"{title}{pct}"


class CycleStopped(BaseException):
    """Raised from a dream cycle's progress callback to stop it at a safe point (the app is quitting).

    A ``BaseException`` on purpose: the cycle's progress wrapper swallows ``Exception`` (a broken
    display never breaks a cycle), while ``run_cycle`` records any ``BaseException`` as a failed
    cycle (retried the same date, finishing what the stopped attempt began) and lets it through.
    """


CYCLE_STOPPED = "stopped because dreamtui was closed; press d (or run `dreamtui dream`) to finish it"


def cycle_stop_point(phase: str, message: str, fraction: float | None) -> bool:
    """A progress report that comes from a place a dream cycle can stop without losing work: the start
    of Deep sleep, Branching or REM, or between two sessions of Light or Deep sleep. Never inside
    Branching (extractions already paid for are gated first) nor at Wake (the cycle is done)."""
    from dreamtui.core.dream import cycle

    if phase in ("deep", "branch", "rem") and message == cycle.PHASE_TITLES[phase] and fraction == 0.0:
        return True
    return (phase == "light" and message.startswith("reading ")) or (
        phase == "deep" and message.startswith("recalling memories"))


def stats(ledger: Ledger) -> dict[str, Any]:
    """The statistics (:func:`core.stats.compute_stats`)."""
    from dreamtui.core.dream import stats as core_stats

    return core_stats.compute_stats(ledger)


# -- briefings and memory ------------------------------------------------------------------------

BRIEFING = "briefing.md"


def briefing_versions(config: Config) -> list[Any]:
    """Every commit that changed ``briefing.md``, newest first (:class:`core.gitops.CommitInfo`)."""
    from dreamtui.core.memory import gitops

    if not gitops.repo_exists(config.memory):
        return []
    repo = gitops.open_repo(config.memory, create=False)
    return gitops.file_history(repo, BRIEFING)


def waiting_briefing(ledger: Ledger) -> Any:
    """The briefing version waiting for review (pending, or auto-written and not yet reviewed), or None."""
    from dreamtui.core.memory import briefing

    return briefing.waiting_proposal(ledger)


def briefing_diff(config: Config, proposal: Any) -> list[str]:
    """A briefing proposal as a diff against the current ``briefing.md``."""
    from dreamtui.core.memory import briefing

    return briefing.diff_lines(config, proposal)


def decide_briefing(config: Config, ledger: Ledger, bid: int, accept: bool, reason: str = "") -> str:
    """Accept (one commit) or reject (kept with ``reason``) briefing #``bid``; returns a one-line summary."""
    from dreamtui.core.memory import briefing

    if accept:
        prop = briefing.accept_briefing(config, ledger, bid)
        done = f"commit {prop.commit_sha[:8]}" if prop.commit_sha else "kept as written"
        return f"Accepted briefing #{prop.id} ({done})"
    prop, reverted = briefing.reject_briefing(config, ledger, bid, reason)
    back = f"; the version before it is back ({reverted[:8]})" if reverted else ""
    return f"Rejected briefing #{prop.id}" + (f": {prop.reason}" if prop.reason else "") + back


def file_at(config: Config, rel: str, sha: str) -> str:
    """The text of ``rel`` at commit ``sha`` ('' when it is not there)."""
    from dreamtui.core.memory import gitops

    repo = gitops.open_repo(config.memory, create=False)
    data = gitops.show_file(repo, rel, sha)
    return data.decode("utf-8", errors="replace") if data else ""


def unified_diff(old: str, new: str, old_name: str, new_name: str) -> list[str]:
    """The unified diff between two texts, as lines."""
    import difflib

    return list(difflib.unified_diff(old.splitlines(), new.splitlines(), old_name, new_name, lineterm=""))


def memory_files(config: Config) -> list[dict[str, Any]]:
    """The memory files of the repo (index, topic files, project files), each with its frontmatter name/type."""
    root = config.memory
    if not root.is_dir():
        return []
    from dreamtui.core.memory import frontmatter

    out: list[dict[str, Any]] = []
    for path in sorted(root.rglob("*.md")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith((".git/", "reviews/")) or rel in (BRIEFING,):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            meta, _body = frontmatter.parse(text)
        except frontmatter.FrontmatterError:  # a broken file is still listed
            meta = {}
        out.append({"path": rel, "name": str(meta.get("name", "")), "type": str(meta.get("type", "")),
                    "bytes": path.stat().st_size, "text": text})
    return out


def revert_memory(config: Config, ledger: Ledger, rel: str) -> tuple[str, str]:
    """Revert one accepted memory by a revert commit (:func:`core.decisions.revert_memory`).

    Returns ``(summary, candidate id)``; the candidate is pending again.
    """
    from dreamtui.core.memory import decisions

    result = decisions.revert_memory(config, ledger, rel)
    sha = f" ({result.commit_sha[:8]})" if result.commit_sha else ""
    return f"reverted {rel}{sha}: its proposal is back in the queue", result.candidate_id
