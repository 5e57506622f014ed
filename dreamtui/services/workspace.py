"""One workspace: a config, its ledger and memory repository, and every read and decision the front
ends need, as typed results.

``with Workspace(config) as ws:`` opens the ledger and closes it on the way out (a ledger passed in
stays the caller's). Plain Python, no Textual or click: the app and the CLI call it, the bench times
it. All SQL stays in :class:`~dreamtui.core.ledger.Ledger`.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import TracebackType
from typing import Any

from dreamtui.core import clock
from dreamtui.core.config import Config
from dreamtui.core.dream import banners, promotion, sessions
from dreamtui.core.dream import stats as core_stats
from dreamtui.core.dream.consolidate_find import project_memories
from dreamtui.core.dream.consolidation import PassReport, request, run_pass
from dreamtui.core.dream.plan import DreamPlan, plan_dream
from dreamtui.core.extract import make_extractor
from dreamtui.core.extract.choose import Choice, choose
from dreamtui.core.files import Skipped
from dreamtui.core.ingest.formats import format_for
from dreamtui.core.ingest.formats.protocol import split_address
from dreamtui.core.ingest.line_count import LineCounter
from dreamtui.core.ingest.projects import ProjectMap
from dreamtui.core.ingest.records import address_key
from dreamtui.core.ingest.sources import discover_all
from dreamtui.core.ingest.transcripts import agent_of, label_of
from dreamtui.core.ledger import Ledger, changes, cycles, offsets, open_ledger
from dreamtui.core.ledger import consolidations as consolidation_rows
from dreamtui.core.ledger import decisions as decision_rows
from dreamtui.core.ledger import outside as outside_items
from dreamtui.core.ledger.consolidations import Consolidation
from dreamtui.core.ledger.cycles import CycleRecord
from dreamtui.core.memory import (
    briefing,
    consolidate,
    decisions,
    frontmatter,
    gitops,
    index_check,
    outside_tree,
    startup,
    textdiff,
    undo,
)
from dreamtui.core.memory import layout as memory
from dreamtui.core.memory.briefing import BriefingProposal
from dreamtui.core.memory.decisions import ReconcileReport
from dreamtui.core.memory.gitops import CommitInfo
from dreamtui.core.memory.review import write_review
from dreamtui.core.models import Candidate, QueueRow

BRIEFING = memory.BRIEFING


@dataclass(frozen=True, slots=True)
class Banner:
    """A line shown above everything: ``level`` is ``error``, ``warning`` or ``info``."""

    level: str
    text: str


@dataclass(slots=True)
class Status:
    """What a header shows: pending proposals, how full ``MEMORY.md`` is, the banners."""

    pending: int = 0
    """Proposals waiting: lessons and consolidations (each a row of the queue)."""
    index_lines: int = 0
    index_bytes: int = 0
    max_lines: int = memory.MAX_INDEX_LINES
    max_bytes: int = memory.MAX_INDEX_BYTES
    banners: list[Banner] = field(default_factory=list)
    extractor: str = ""
    """The extractor a dream cycle would run (``""``: not known)."""
    extractor_note: str | None = None
    """What to know about it in one line (the heuristic's thin queue), else None."""
    outside: int = 0
    """Outside changes waiting for review (counted apart from the proposals)."""

    @property
    def fraction(self) -> float:
        """How full the index is: the larger of the line and byte fractions."""
        return max(self.index_lines / self.max_lines, self.index_bytes / self.max_bytes)


@dataclass(frozen=True, slots=True)
class DecisionResult:
    """What a decision did: a one-line summary (the app's words), the candidate it concerned, its
    commit and memory file (if any), the action (for an undo: the action undone) and notices."""

    summary: str
    candidate_id: str | None = None
    commit_sha: str | None = None
    action: str = ""
    path: str | None = None
    notices: tuple[str, ...] = ()
    category: str | None = None
    """A rejection's category as recorded (``not-a-lesson`` → ``not a lesson``)."""


@dataclass(slots=True)
class SessionRow:
    """One session: its files, lines read and dreamed, bytes waiting, pending proposals."""

    project: str
    session: str
    files: int = 0
    lines: int = 0
    dreamed: int = 0
    waiting: int = 0
    updated: str = ""
    pending: int = 0
    agent: str = ""
    """The agent whose session it is (``Codex CLI``)."""
    agent_label: str = ""
    """The same in one short word (``Codex``): Sessions' agent column."""
    quiet: int = 0
    """Bytes a dream cycle read and found too quiet to dream (too few of a person's words); they wait
    for more words and are not counted in ``waiting``."""

    @property
    def status(self) -> str:
        """``waiting`` (content not yet dreamed), ``too quiet`` (all a cycle found too quiet, nothing
        new since), ``dreamed``, or ``not read yet``."""
        if self.waiting:
            return "waiting" if self.lines or self.dreamed or self.quiet else "not read yet"
        return "too quiet" if self.quiet else "dreamed"


@dataclass(frozen=True, slots=True)
class PromotionView:
    """What the promotion page shows: the pair most decided on, its gates, and auto-write's state."""

    pair: promotion.Pair | None
    gates: list[promotion.Gate]
    status: promotion.PromotionStatus


@dataclass(frozen=True, slots=True)
class MemoryFile:
    """One markdown file of the memory repository with its frontmatter name and type."""

    path: str
    name: str
    type: str
    bytes: int
    text: str


class Workspace:
    """The config's ledger and memory repository, and what the front ends do with them."""

    def __init__(self, config: Config, ledger: Ledger | None = None) -> None:
        self.config = config
        self._owns_ledger = ledger is None
        self.ledger = ledger if ledger is not None else open_ledger(config)
        self._choice: Choice | None = None
        self._line_counter = LineCounter()  # the lines appended to transcripts since they were read

    @classmethod
    def if_exists(cls, config: Config) -> Workspace | None:
        """The workspace of ``config`` when its ledger exists, else ``None`` (nothing is created)."""
        return cls(config) if config.ledger_path.is_file() else None

    def __enter__(self) -> Workspace:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the ledger when this workspace opened it."""
        if self._owns_ledger:
            self.ledger.close()

    # -- the queue ---------------------------------------------------------------------------------

    def queue_rows(self) -> list[QueueRow]:
        """Every pending proposal, newest first, each marked with the agent whose session it came from."""
        rows = self.ledger.queue_rows()
        agents: dict[str, tuple[str, str]] = {}
        for row in rows:
            if row.transcript not in agents:
                agents[row.transcript] = (
                    (agent_of(row.transcript), label_of(row.transcript)) if row.transcript else ("", "")
                )
            row.agent, row.agent_label = agents[row.transcript]
        return rows

    def skipped_ids(self) -> list[str]:
        """Pending proposals skipped and not undone, in the order they were skipped."""
        return self.ledger.skipped_ids()

    def candidates(self, status: str | None = None) -> list[Candidate]:
        """Candidates of ``status`` (``"all"``: every one; ``None``: all but the dropped ones)."""
        if status in (None, "all"):
            return [c for c in self.ledger.list_candidates() if status == "all" or c.status != "dropped"]
        return self.ledger.list_candidates(status=status)

    def candidate(self, cid: str) -> Candidate | None:
        """One candidate with its evidence."""
        return self.ledger.get_candidate(cid)

    def duplicate_text(self, cand: Candidate) -> tuple[str, str] | None:
        """``(title, text)`` of the existing lesson a candidate duplicates, or ``None``."""
        if not cand.duplicate_of:
            return None
        ref = cand.duplicate_of
        if cand.duplicate_kind in ("pending", "rejected"):
            other = self.ledger.get_candidate(ref)
            if other is None:
                return (f"{cand.duplicate_kind} candidate {ref}", "(no longer in the ledger)")
            body = "\n\n".join(x for x in (other.claim, other.why, other.how_to_apply) if x)
            return (f"{other.status} candidate {ref}", body)
        path = Path(ref)
        if not path.is_absolute():
            path = self.config.memory / ref
        try:
            resolved = path.resolve()
            if not resolved.is_relative_to(self.config.memory.resolve()):
                return (f"memory {ref}", "(outside the memory repository)")
            return (f"memory {ref}", resolved.read_text(encoding="utf-8", errors="replace")[:8000])
        except OSError as exc:
            return (f"memory {ref}", f"(cannot read: {exc.strerror})")

    # -- the header --------------------------------------------------------------------------------

    def index_size(self) -> memory.CeilingStatus:
        """Lines and bytes of ``MEMORY.md`` against its ceiling."""
        return memory.ceiling_status(self.config.memory)

    def banners(self) -> list[Banner]:
        """Yield-floor, index-ceiling and promotion/demotion banners."""
        out: list[Banner] = []
        if banners.yield_floor_active(self.ledger):
            out.append(Banner("error", banners.YIELD_FLOOR_MESSAGE))
        warning = memory.ceiling_warning(memory.ceiling_status(self.config.memory))
        if warning:
            out.append(Banner("warning", warning))
        text = promotion.promotion_banner(self.config, self.ledger)
        if text:
            out.append(Banner("info" if text.startswith("Auto-write is on") else "warning", text))
        return out

    def extractor_choice(self) -> Choice:
        """The extractor a dream cycle would run and why (decided once per workspace: it looks for
        Claude Code on disk)."""
        if self._choice is None:
            self._choice = choose(self.config)
        return self._choice

    def status(self) -> Status:
        """Everything the header shows, in one call."""
        size = self.index_size()
        choice = self.extractor_choice()
        return Status(
            # lessons and consolidation proposals (update, retire, merge): both are rows of the queue
            self.ledger.pending_count() + sum(self.consolidations_waiting().values()),
            size.lines,
            size.bytes,
            size.max_lines,
            size.max_bytes,
            self.banners(),
            extractor=choice.kind,
            extractor_note=choice.note,
            outside=outside_items.pending_count(self.ledger),
        )

    # -- decisions ---------------------------------------------------------------------------------

    def index_problems(self) -> list[str]:
        """What breaks the index invariant now (a dead ``MEMORY.md`` link, a memory dreamtui wrote that
        no line links), one line each; checked after every decision and at start."""
        if not gitops.repo_exists(self.config.memory):
            return []
        if gitops.not_writable(gitops.open_repo(self.config.memory, create=False)) is not None:
            return []  # mid-merge: the index is checked once the merge is over
        return index_check.problems(self.config.memory, self.ledger)

    def _checked(self, result: DecisionResult) -> DecisionResult:
        """``result`` with the index invariant's problems after it added (summary and notices)."""
        found = self.index_problems()
        if not found:
            return result
        return replace(
            result, summary=" · ".join([result.summary, *found]), notices=(*result.notices, *found)
        )

    def accept(
        self,
        cid: str,
        edits: dict[str, str] | None = None,
        *,
        allow_tool: bool = False,
        decided_by: str = "person",
    ) -> DecisionResult:
        """Accept a proposal (one memory file, one index line, one commit).

        ``allow_tool`` accepts a proposal whose quote is only in tool output (untrusted), only after
        the person confirmed it.
        """
        result = decisions.accept(
            self.config, self.ledger, cid, edits=edits, decided_by=decided_by, allow_tool=allow_tool
        )
        summary = " · ".join([f"accepted → {result.path} ({result.commit_sha[:8]})", *result.notices])
        return self._checked(
            DecisionResult(summary, cid, result.commit_sha, "accept", result.path, tuple(result.notices))
        )

    def reject(self, cid: str, category: str, reason: str) -> DecisionResult:
        """Reject a proposal with a category and free text."""
        decisions.reject(self.ledger, cid, category, reason)
        return DecisionResult(
            f"rejected ({category})", cid, action="reject", category=decisions.normalize_category(category)
        )

    def skip(self, cid: str) -> DecisionResult:
        """Skip a proposal for now (it stays pending)."""
        decisions.skip(self.ledger, cid)
        return DecisionResult("skipped", cid, action="skip")

    def undo(self) -> DecisionResult:
        """Undo the most recent decision of any kind: a proposal's, an outside change's or a briefing's."""
        result = undo.undo_last(self.config, self.ledger)
        if result.kind != "proposal":
            sha = f" (commit {result.commit_sha[:8]})" if result.commit_sha else ""
            after = (
                "the memory is as before, and the next dream may propose it again"
                if result.kind == "consolidation"
                else "it waits for review again"
            )
            return self._checked(
                DecisionResult(
                    " · ".join([f"undid the {result.action}{sha}: {after}", *result.notices]),
                    None,
                    result.commit_sha,
                    "undo",
                    notices=tuple(result.notices),
                )
            )
        sha = f" (revert {result.commit_sha[:8]})" if result.commit_sha else ""
        summary = " · ".join([f"undid {result.action} of {result.candidate_id}{sha}", *result.notices])
        return self._checked(
            DecisionResult(
                summary, result.candidate_id, result.commit_sha, result.action, notices=tuple(result.notices)
            )
        )

    def revert_refusal(self, rel: str) -> str | None:
        """Why the memory file ``rel`` cannot be reverted (``None``: it can): Revert takes back an
        accepted proposal; a file that came as an outside change (or by hand) has none."""
        if decision_rows.live_accept_of(self.ledger, rel) is not None:
            return None
        came = [i for i in outside_items.items(self.ledger, "accepted") if i.path == rel]
        if came:
            return (
                f"{rel} came as an outside change you accepted (commit {(came[-1].commit_sha or '')[:8]}), not "
                "from a proposal: there is no proposal to revert. u undoes your latest decision; or edit the file"
            )
        return f"{rel} was not written by an accepted proposal: there is nothing to revert (edit the file yourself)"

    def revert_memory(self, rel: str) -> DecisionResult:
        """Revert one accepted memory by a revert commit; its proposal is pending again."""
        result = decisions.revert_memory(self.config, self.ledger, rel)
        sha = f" ({result.commit_sha[:8]})" if result.commit_sha else ""
        return DecisionResult(
            f"reverted {rel}{sha}: its proposal is back in the queue", result.candidate_id, result.commit_sha
        )

    def reconcile_report(self) -> ReconcileReport | None:
        """Bring the ledger in line with the memory repo (``None``: there is no repo yet): what it found
        and fixed."""
        if not gitops.repo_exists(self.config.memory):
            return None
        return startup.reconcile(self.config, self.ledger)

    def reconcile(self) -> str | None:
        """Bring the ledger in line with the memory repo; a one-line note when it did something."""
        report = self.reconcile_report()
        if report is None or (report.ok and not report.notices):
            return None
        parts = [
            f"{len(v)} {k}"
            for k, v in (
                ("recorded", report.recorded),
                ("undone", report.undone),
                ("reopened", report.reopened),
                ("restored", report.restored),
            )
            if v
        ]
        return "reconciled with the memory repo: " + ", ".join(parts + list(report.notices))

    # -- sessions, cycles, stats -------------------------------------------------------------------

    def sessions(self, skipped: list[str] | None = None) -> list[SessionRow]:
        """Per session: files, lines read and dreamed, bytes waiting, pending proposals.

        Built from the ledger's files plus the transcript files on disk it has not read yet
        (everything in those waits). Folders that cannot be read and ``*.jsonl`` paths that are no
        regular files are left out, each with a one-line notice added to ``skipped``.
        """
        groups: dict[tuple[str, str], SessionRow] = {}
        projects = sessions.project_map(self.config, self.ledger)  # a worktree's sessions: its repository's

        def group(project: str, session: str, path: str) -> SessionRow:
            known = projects.known(project)
            project = known.project if known is not None else project
            row = groups.get((project, session))
            if row is None:
                row = groups[(project, session)] = SessionRow(
                    project, session, agent=agent_of(path), agent_label=label_of(path)
                )
            return row

        seen: set[str] = set()
        quiet = offsets.quiet_offsets(self.ledger)
        quiet_whole = offsets.quiet_stats(self.ledger)  # whole-file sources found too quiet, as they were
        for f in self.ledger.file_rows():
            g = group(f.project, f.session, f.path)
            seen.add(f.path)
            if format_for(f.path).layout == "records":
                self._whole_file_row(g, f, quiet, quiet_whole)
                continue
            size = int(f.size or 0)
            try:
                size = Path(f.path).stat().st_size
            except OSError:
                pass
            g.files += 1
            # the lines read, and those appended since (the live tail reads them; a cycle has not yet)
            g.lines += self._line_counter.lines(f.path, f.offset, f.lines, size) if f.offset else f.lines
            g.dreamed += f.dreamed_lines
            found_quiet = min(size, quiet.get(f.path, 0))
            g.quiet += max(0, found_quiet - f.dreamed_offset)
            g.waiting += max(0, size - max(f.dreamed_offset, found_quiet))
            g.updated = max(g.updated, f.updated_at)
        found: list[Skipped] = []
        for tf in discover_all(self.config, found):  # every agent's sessions not read yet
            if address_key(tf.address) in seen:
                continue
            g = group(projects.key(tf.project, tf.path), tf.session, tf.address)
            g.files += 1
            try:
                st = tf.path.stat()
            except OSError:
                continue
            size = st.st_size
            if quiet_whole.get(address_key(tf.address)) == (size, st.st_mtime):
                # a whole-file source a cycle read and found too quiet, unchanged since (its offsets
                # count records' bytes, never the file's size: it would wait for ever)
                g.quiet += quiet.get(address_key(tf.address), 0) or size
                continue
            found_quiet = min(size, quiet.get(address_key(tf.address), 0))  # a cycle read it, storing nothing
            g.quiet += found_quiet
            g.waiting += size - found_quiet
        if skipped is not None:
            skipped.extend(skip.notice for skip in found)
        pending = self.ledger.pending_by_session()
        for (_project, session), g in groups.items():
            g.pending = pending.get(session, 0)
        return sorted(groups.values(), key=lambda g: (g.project, g.session))

    @staticmethod
    def _whole_file_row(
        g: SessionRow, f: offsets.FileState, quiet: dict[str, int], quiet_whole: dict[str, tuple[int, float]]
    ) -> None:
        """A whole-file (records) source's part of its session's row: its offsets count the records'
        bytes, so what waits is the records read and not yet dreamed, plus the file's growth when it
        changed since it was read (and since a cycle found it too quiet)."""
        g.files += 1
        g.lines += f.lines
        g.dreamed += f.dreamed_lines
        g.updated = max(g.updated, f.updated_at)
        try:
            st = os.stat(split_address(f.path)[0])
            now: tuple[int, float] | None = (st.st_size, st.st_mtime)
        except OSError:
            now = None
        found_quiet = quiet.get(f.path, 0)
        g.quiet += max(0, found_quiet - f.dreamed_offset)
        g.waiting += max(0, f.offset - max(f.dreamed_offset, found_quiet))
        if now is not None and now != (f.size, f.mtime) and now != quiet_whole.get(f.path):
            g.waiting += max(1, now[0] - int(f.size or 0))  # changed since read: new records may be there

    def cycles(self, limit: int = 200) -> list[CycleRecord]:
        """Dream cycles, newest first."""
        return cycles.listed(self.ledger, limit)

    def interrupted(self, record: CycleRecord) -> bool:
        """Whether a cycle whose row says ``running`` was interrupted: the process running it has ended
        (killed, or stopped at once) and no cycle since has marked it failed."""
        pid = record.stats.pid
        if record.status != "running" or not pid:
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        except OSError:  # it runs as another user: alive
            return False
        return False

    def ledger_version(self) -> int:
        """SQLite's ``data_version`` on this thread's connection (it changes when another one commits)."""
        return changes.data_version(self.ledger)

    def ledger_mark(self) -> tuple[object, ...]:
        """What a person sees of the ledger, in a few numbers (:func:`changes.mark`)."""
        return changes.mark(self.ledger)

    def dream_plan(self) -> DreamPlan:
        """What a person's dream of every project does now."""
        return plan_dream(self.config, self.ledger)

    def promotion(self) -> PromotionView:
        """The gates auto-write must pass for the most-decided extractor/model pair, and its state."""
        pair = promotion.choose_pair(self.ledger)
        return PromotionView(
            pair,
            promotion.compute_gates(self.config, self.ledger, pair),
            promotion.promotion_status(self.config, self.ledger),
        )

    def stats(self) -> dict[str, Any]:
        """The statistics (:func:`dreamtui.core.dream.stats.compute_stats`)."""
        return core_stats.compute_stats(self.ledger)

    def write_review(self, day: str | None = None) -> Path:
        """Write (regenerate) ``reviews/review-<day>.md`` (default: today) and commit it; its path."""
        return write_review(self.config, self.ledger, day or clock.today())

    # -- briefings and memory files ----------------------------------------------------------------

    def briefing_versions(self) -> list[CommitInfo]:
        """Every commit that changed ``briefing.md``, newest first."""
        if not gitops.repo_exists(self.config.memory):
            return []
        repo = gitops.open_repo(self.config.memory, create=False)
        return gitops.file_history(repo, BRIEFING)

    def waiting_briefing(self) -> BriefingProposal | None:
        """The briefing version waiting for review, or ``None``."""
        return briefing.waiting_proposal(self.ledger)

    def briefing_diff(self, proposal: BriefingProposal) -> list[str]:
        """A briefing proposal as a diff against the current ``briefing.md``."""
        return briefing.diff_lines(self.config, proposal)

    def briefing_proposal(self, bid: int | None = None) -> BriefingProposal | None:
        """Briefing proposal #``bid`` (``None``: the one waiting for review), or ``None``."""
        if bid is None:
            return self.waiting_briefing()
        return briefing.get_proposal(self.ledger, bid)

    def accept_briefing(self, bid: int | None = None) -> BriefingProposal:
        """Accept briefing #``bid`` (``None``: the waiting one): ``briefing.md`` becomes it, one commit."""
        return briefing.accept_briefing(self.config, self.ledger, bid)

    def reject_briefing(self, bid: int | None, reason: str) -> tuple[BriefingProposal, str | None]:
        """Reject briefing #``bid`` (``None``: the waiting one), kept with ``reason``; the proposal and
        the commit that put the version before it back (``None``: none was needed)."""
        return briefing.reject_briefing(self.config, self.ledger, bid, reason)

    def decide_briefing(self, bid: int, accept: bool, reason: str = "") -> DecisionResult:
        """Accept (one commit) or reject (kept with ``reason``) briefing #``bid``."""
        if accept:
            prop = self.accept_briefing(bid)
            done = f"commit {prop.commit_sha[:8]}" if prop.commit_sha else "kept as written"
            return DecisionResult(f"Accepted briefing #{prop.id} ({done})", None, prop.commit_sha)
        prop, reverted = self.reject_briefing(bid, reason)
        back = f"; the version before it is back ({reverted[:8]})" if reverted else ""
        text = f"Rejected briefing #{prop.id}" + (f": {prop.reason}" if prop.reason else "") + back
        return DecisionResult(text, None, reverted)

    def file_at(self, rel: str, sha: str) -> str:
        """The text of ``rel`` at commit ``sha`` ('' when it is not there)."""
        repo = gitops.open_repo(self.config.memory, create=False)
        data = gitops.show_file(repo, rel, sha)
        return data.decode("utf-8", errors="replace") if data else ""

    def memory_files(self) -> list[MemoryFile]:
        """The memory files of the repo (index, topic files, project files) with frontmatter name/type."""
        root = self.config.memory
        if not root.is_dir():
            return []
        out: list[MemoryFile] = []
        for path in sorted(root.rglob("*.md")):
            rel = path.relative_to(root).as_posix()
            if rel.startswith((".git/", "reviews/")) or rel == BRIEFING:
                continue
            text = _listed_text(path)
            try:
                meta, _body = frontmatter.parse(text)
            except frontmatter.FrontmatterError:  # a broken file is still listed
                meta = {}
            out.append(
                MemoryFile(
                    rel, str(meta.get("name", "")), str(meta.get("type", "")), path.lstat().st_size, text
                )
            )
        return out

    # -- consolidation: update, retire and merge proposals (issue 26) -----------------------------

    def consolidations(self, status: str | None = "pending") -> list[Consolidation]:
        """Consolidation proposals of ``status`` (None: all), oldest first."""
        return consolidation_rows.listed(self.ledger, status)

    def consolidations_waiting(self) -> dict[str, int]:
        """Pending consolidation proposals per kind (every kind, zeros too)."""
        return {kind: n["pending"] for kind, n in consolidation_rows.counts(self.ledger).items()}

    def consolidation(self, cid: str) -> Consolidation:
        """One proposal (an id or a unique prefix); a one-line error when there is none."""
        item = consolidation_rows.get(self.ledger, cid)
        if item is None:
            raise consolidate.ConsolidationError(
                f"no consolidation proposal with id {cid!r} (see `dreamtui consolidate`)"
            )
        return item

    def consolidation_diff(self, item: Consolidation) -> list[str]:
        """The memory as it is and as it would be: the unified diff of each file and of ``MEMORY.md``."""
        return consolidate.diff_lines(item, self.config.memory)

    def consolidation_stale(self, item: Consolidation) -> str | None:
        """Why a pending proposal can no longer be accepted as shown (a target changed), or None."""
        return consolidate.stale(item, self.config.memory) if item.status == "pending" else None

    def accept_consolidation(self, cid: str, *, allow_tool: bool = False) -> DecisionResult:
        """Accept a proposal: one commit of exactly its diff (a retirement deletes only now). One whose
        evidence is tool output needs ``allow_tool``, given only after the person confirmed it."""
        result = consolidate.accept(self.config, self.ledger, cid, allow_tool=allow_tool)
        sha = result.commit_sha or ""
        summary = " · ".join(
            [f"{result.kind} accepted → {', '.join(result.paths)} ({sha[:8]})", *result.notices]
        )
        return self._checked(DecisionResult(summary, result.id, sha, "accept", None, tuple(result.notices)))

    def reject_consolidation(self, cid: str, reason: str) -> DecisionResult:
        """Reject a proposal; it is not proposed again for the same evidence."""
        result = consolidate.reject(self.ledger, cid, reason)
        return DecisionResult(f"{result.kind} {result.id} rejected", result.id, None, "reject")

    def undo_consolidation(self, cid: str) -> DecisionResult:
        """Undo an accepted proposal (one commit putting back what it changed) or a rejection."""
        result = consolidate.undo(self.config, self.ledger, cid)
        sha = result.commit_sha
        what = f"undone ({sha[:8]})" if sha else "back to pending"
        return self._checked(
            DecisionResult(
                f"{result.kind} {result.id} {what}", result.id, sha, "undo", None, tuple(result.notices)
            )
        )

    def consolidation_request(self, project: str, digests: list[Any]) -> tuple[str, str]:
        """The consolidation request REM would send for ``project`` with ``digests``: (system, user)."""
        return request(project, project_memories(self.config.memory, project, self.ledger), digests)

    def project_key(self, folder: str, probe: Path | None = None) -> str:
        """The project (its repository's key) of transcript folder ``folder``, as the dream cycle files it."""
        return ProjectMap(self.config.transcripts, self.ledger).key(folder, probe)

    def consolidate_now(
        self, project: str, *, repo: Path | None = None, digests: list[Any] | None = None, model: bool = False
    ) -> PassReport:
        """Run one project's consolidation pass now: the offline finders (its repository: ``repo``, else
        the one ``digests`` ran in) and, with ``model`` and ``digests``, the model pass."""
        structured = None
        if model and digests:
            structured = make_extractor(self.config).structured()
        return run_pass(self.config.memory, self.ledger, project, digests or [], structured, repo_path=repo)


def unified_diff(old: str, new: str, old_name: str, new_name: str) -> list[str]:
    """The unified diff between two texts, as lines."""
    return textdiff.unified(old, new, old_name, new_name)


def _listed_text(path: Path) -> str:
    """What the memory listing shows of a file: its text, read as the outside scan reads (never through
    a symlink, never past the size limit); for anything else one line saying why it is not shown."""
    try:
        st = path.lstat()
    except OSError as exc:
        return f"(not readable: {exc.strerror})"
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        return f"(a symlink to {target}: dreamtui never reads a linked memory file)"
    if stat.S_ISREG(st.st_mode) and st.st_size > outside_tree.max_bytes():
        limit = outside_tree.human_size(outside_tree.max_bytes())
        return f"(too large to show: {outside_tree.human_size(st.st_size)}, limit {limit})"
    text = outside_tree.read_memory(path)
    return "(not a regular file or not readable)" if text is None else text
