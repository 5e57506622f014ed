"""The gate every proposed lesson must pass: valid fields, a verified quote, no duplicate, no secret.

``gate(raws, ...)`` stores every candidate it sees in the ledger, either ``pending`` (kept, for a
person to decide) or ``dropped`` with a ``drop_reason``:

- ``invalid``: type not one of ``MEMORY_TYPES``, or an empty claim;
- ``unverified``: the quote is not inside one string of the session's transcript (invented or
  altered, too short, or hiding invisible characters);
- ``duplicate``: the same lesson is already in memory (score at least ``dedup.DUPLICATE``);
- ``duplicate-pending``: the same lesson is already pending; when it came from another session the
  pending one is corroborated (``corroborated += 1``, once per session). Two proposals of one session
  in one batch (two parts of a long session) that state the same lesson (``dedup.SAME_SESSION``) are
  one: the best-quoted is kept (a quote of the person's over the agent's, then the quote that holds
  more of the claim's terms, then the first), the other dropped as its ``duplicate-pending``;
- ``previously-rejected``: the same lesson was rejected before, from the same session (from another
  session it is new evidence: kept, marked ``duplicate_kind='rejected'``);
- ``same-turn``: :data:`MAX_PER_TURN` proposals quoting one turn (one record of the transcript) were
  already kept: a pasted rule set or a long spec is a few lessons, not one per sentence, and the
  proposals beyond the first :data:`MAX_PER_TURN` (in the extractor's order) are counted, not queued.

A kept candidate that resembles a lesson (score between ``dedup.SUSPECT`` and ``dedup.DUPLICATE``)
carries ``duplicate_of``/``duplicate_kind``/``duplicate_score`` so the person sees both side by side.

Scope: a lesson already known **globally** (a top-level memory file, ``scope: global`` in its
frontmatter, a pending global candidate) or **in this project** (``projects/<this>/…``, a pending
candidate of this project) is a duplicate. A lesson known only in **another project** never drops
or corroborates this project's candidate, whatever the candidate's scope: the candidate is kept
and the other project's lesson is shown beside it (``report.related``). A rejection counts only in
the project where it was made: a lesson rejected in project A does not silence it in project B.
Secrets never reach the ledger in clear: every stored text is redacted, and the rules found are
listed in ``Candidate.secrets`` (such a candidate cannot be accepted until edited).

Model judge (``judge.py``): after the lexical decisions, when the extractor in use is model-backed
(its ``capabilities``; ``dedup_judge = "auto"``), each kept candidate and its closest in-scope memories and pending
lessons (top :data:`JUDGE_TOP`, lexical score above :data:`JUDGE_FLOOR`) go to the model in one call.
"Same" marks the candidate a suspected duplicate of that lesson; "distinct" clears a lexical suspect
the model saw. The judge never drops anything, and when it fails the gate stays lexical and says so
(``report.judge_error``).
"""

from __future__ import annotations

import glob
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from dreamtui.core import clock, secrets
from dreamtui.core.config import Config
from dreamtui.core.extract.choose import resolved_extractor
from dreamtui.core.gate import dedup
from dreamtui.core.gate.dedup import DedupIndex, Doc
from dreamtui.core.gate.judge import Existing, Judge, JudgeError, JudgeItem, judge_for
from dreamtui.core.gate.verify import verify_quotes
from dreamtui.core.ingest import formats
from dreamtui.core.ledger import Ledger, candidates, project_folders
from dreamtui.core.ledger import decisions as decision_rows
from dreamtui.core.memory import layout as memory
from dreamtui.core.memory.frontmatter import FrontmatterError
from dreamtui.core.memory.frontmatter import split as split_frontmatter
from dreamtui.core.models import MEMORY_TYPES, Candidate, DedupHit, Jsonable, RawCandidate, candidate_id
from dreamtui.core.text import clean_text, without_surrogates

DUPLICATE_REASONS = frozenset({"duplicate", "duplicate-pending", "previously-rejected"})

MAX_PER_TURN = 3
"""At most this many kept proposals quote one turn of a session (chosen on the tuning data, prompt v7:
see docs/evaluation.md, "One turn, three proposals")."""


@dataclass(slots=True)
class GateReport(Jsonable):
    """What the gate did with one batch of raw candidates."""

    kept: list[Candidate] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)
    duplicates: int = 0
    """Candidates dropped because they repeat a lesson (in memory, pending, or rejected)."""
    flagged_secrets: int = 0
    suspected_duplicates: int = 0
    corroborated: list[str] = field(default_factory=list)
    """Ids of pending candidates corroborated by this batch."""
    related: int = 0
    """Kept candidates shown beside a lesson of another project (which does not make them duplicates)."""
    judged: int = 0
    """Kept candidates the model dedup judge gave a verdict on."""
    judged_same: int = 0
    """…of which it said repeat an existing lesson (now suspected duplicates of it)."""
    judged_distinct: int = 0
    """…of which it said repeat none of the closest lessons (a lexical suspect among them is cleared)."""
    judge_error: str | None = None
    """One line when the judge failed; dedup then stayed lexical for this batch."""

    @property
    def invented(self) -> int:
        """Quotes that were not found in the transcript."""
        return self.dropped.get("unverified", 0)

    JSON_KEYS = (
        "kept",
        "dropped",
        "duplicates",
        "invented",
        "flagged_secrets",
        "suspected_duplicates",
        "corroborated",
        "related",
        "judged",
        "judged_same",
        "judged_distinct",
        "judge_error",
    )  # as printed


def _text(value: Any) -> str:
    """A field as a string that SQLite and UTF-8 accept (lone surrogates become U+FFFD)."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    return without_surrogates(text)


def _prose(value: Any) -> str:
    """A claim/why/how field: :func:`_text` without ANSI/OSC escapes or control characters."""
    return clean_text(_text(value)).strip()


def _set_duplicate(cand: Candidate, hit: DedupHit) -> None:
    cand.duplicate_of = hit.ref
    cand.duplicate_kind = hit.kind
    cand.duplicate_score = round(hit.score, 4)


GLOBAL_SCOPES = frozenset({"global", "user", ""})
"""Scope values that mean every project (as :func:`memory.topic_rel_path` reads them)."""
_REF = re.compile(r"\A(?P<path>.*?\.md)(?::\d+)?\Z", re.I)
_SCOPE_LINE = re.compile(r"^scope[ \t]*:[ \t]*(.*?)[ \t]*$", re.M)


def project_key(name: str | None) -> str:
    """The folder name a project's memories live in (``projects/<key>/``, :func:`memory.project_folder`:
    distinct projects, distinct keys), used to compare projects."""
    return memory.project_folder(name or "")


class Scopes:
    """Where each indexed lesson applies: every project (``None``) or one project (its key).

    A memory file's scope is its frontmatter ``scope:`` when it has one (``global``, or a project
    name), else its place: ``projects/<p>/…`` is project ``p``, anything else is global. A pending or
    rejected candidate's scope is its ``scope`` field (``global``) or its project. Answers are cached.
    """

    def __init__(self, memory_dir: Path | None, ledger: Ledger | None = None) -> None:
        self.root = Path(memory_dir) if memory_dir is not None else None
        self.ledger = ledger
        self._memory: dict[str, str | None] = {}
        self._cands: dict[str, Candidate | None] = {}
        self._folders: dict[str, str] = {}
        self._lossy: set[str] = set()  # keys of folders read as the first versions read them
        self._moved: dict[str, str] | None = None

    def remember(self, cand: Candidate) -> None:
        """Know ``cand`` before it reaches the ledger (a candidate the gate just kept)."""
        self._cands[cand.id] = cand

    def candidate(self, cid: str) -> Candidate | None:
        """The pending or rejected candidate ``cid`` (None when it is not in the ledger)."""
        if cid not in self._cands:
            self._cands[cid] = self.ledger.get_candidate(cid) if self.ledger is not None else None
        return self._cands[cid]

    def of_memory(self, ref: str) -> str | None:
        """The project a memory ``ref`` (a path, or ``MEMORY.md:<line>``) belongs to, or None for global."""
        if ref not in self._memory:
            self._memory[ref] = self._memory_scope(ref)
        return self._memory[ref]

    def _memory_scope(self, ref: str) -> str | None:
        m = _REF.match(ref)
        rel = (m.group("path") if m else ref).replace("\\", "/")
        parts = [p for p in rel.split("/") if p]
        place = self.of_folder(parts[1]) if len(parts) >= 3 and parts[0] == memory.PROJECTS else None
        if self.root is None:
            return place
        path = self.root / rel
        if place is None and len(parts) == 1 and not path.is_file():
            # an index line of projects/<p>/MEMORY.md links relative to its own folder
            found = sorted(self.root.glob(f"{memory.PROJECTS}/*/{glob.escape(parts[0])}"))
            if len(found) == 1:
                return self.of_folder(found[0].parent.name)
        declared = self._declared(path) if path.name != memory.INDEX else None
        if declared is None:
            return place
        if declared.lower() in GLOBAL_SCOPES:
            return None
        return place if declared.lower() == "project" else project_key(declared)

    def of_folder(self, folder: str) -> str:
        """The project key of the folder ``projects/<folder>/``.

        A folder named by :func:`memory.project_folder` with a hash (``…--<hash>``) is its own key. A
        folder without one may come from the first versions, whose folder names were lossy slugs
        (:func:`memory.legacy_project_folder`; ``-home-u-日本語`` and ``-home-u-中文`` both wrote to
        ``home-u``): when the ledger says one project accepted every memory in it, it is that project's
        (its old memories stay its own, nobody else's); otherwise (made by hand, or shared) it is read
        as the first versions read it, belonging to every project whose old slug it is.
        """
        if folder not in self._folders:
            self._folders[folder] = self._folder_key(folder)
        return self._folders[folder]

    def _folder_key(self, folder: str) -> str:
        moved = self._worktree_folders().get(folder)
        if moved is not None:
            return moved
        if "--" in folder:
            return folder
        slug = memory.slugify(folder)
        owner = self._single_owner(folder)
        if owner is not None and memory.legacy_project_folder(owner) == slug:
            return project_key(owner)
        self._lossy.add(slug)
        return slug

    def _worktree_folders(self) -> dict[str, str]:
        """Memory folders a worktree's (or subfolder's) sessions wrote to before projects were
        repositories (``projects/<its transcript folder>/``) → the key of the repository's project they
        belong to (the ledger's ``project_folders``): their lessons are that project's."""
        if self._moved is None:
            self._moved = {}
            if self.ledger is not None:
                for row in project_folders.known(self.ledger).values():
                    if row.project != row.folder:
                        for old in {
                            memory.project_folder(row.folder),
                            memory.legacy_project_folder(row.folder),
                        }:
                            self._moved.setdefault(old, project_key(row.project))
        return self._moved

    def _single_owner(self, folder: str) -> str | None:
        """The one project whose accepted memories are in ``projects/<folder>/`` (None: none or several)."""
        if self.ledger is None:
            return None
        owners = decision_rows.projects_accepted_under(self.ledger, f"{memory.PROJECTS}/{folder}")
        return owners.pop() if len(owners) == 1 else None

    @staticmethod
    def _declared(path: Path) -> str | None:
        """The ``scope:`` value of a topic file's frontmatter, when it declares one."""
        try:
            with path.open(encoding="utf-8", errors="replace") as fh:
                head = fh.read(16_384)
            block, _body = split_frontmatter(head)
        except (OSError, FrontmatterError):
            return None
        m = _SCOPE_LINE.search(block or "")
        return m.group(1).strip("'\"").strip() if m else None

    def of_doc(self, doc: Doc) -> str | None:
        """The project an indexed lesson belongs to, or None when it holds everywhere."""
        if doc.kind == "memory":
            return self.of_memory(doc.ref)
        cand = self.candidate(doc.ref)
        if cand is None or cand.scope.strip().lower() in GLOBAL_SCOPES:
            return None
        return project_key(cand.project or cand.scope)

    def applies(self, doc: Doc, project: str) -> bool:
        """Whether ``doc`` makes a lesson proposed in ``project`` a duplicate: it is global, or this
        project's. (A rejected candidate only counts in the project where it was rejected.)"""
        if doc.kind == "rejected":
            cand = self.candidate(doc.ref)
            return cand is None or project_key(cand.project) == project_key(project)
        where = self.of_doc(doc)
        if where is None or where == project_key(project):
            return True
        return where in self._lossy and where == memory.legacy_project_folder(project)


def split_hits(
    index: DedupIndex,
    text: str,
    kind: str,
    *,
    project: str,
    scopes: Scopes,
    exclude: Iterable[str] = (),
    floor: float | None = None,
) -> tuple[DedupHit | None, DedupHit | None]:
    """The closest lesson of ``kind`` that applies to ``project`` (global or this project's) and the
    closest one that does not (another project's), each None when nothing scores above ``floor``
    (default ``dedup.SUSPECT``)."""
    low = dedup.SUSPECT if floor is None else floor
    same: DedupHit | None = None
    other: DedupHit | None = None
    for score, doc in index.ranked(text, kinds=(kind,), exclude=exclude):
        if score <= 0 or score < low:
            break
        hit = DedupHit(doc.kind, doc.ref, score, doc.text)
        if scopes.applies(doc, project):
            same = same or hit
        else:
            other = other or hit
        if same is not None and other is not None:
            break
    return same, other


def closest_in_scope(
    index: DedupIndex,
    text: str,
    *,
    project: str,
    memory_dir: Path | None,
    kinds: Iterable[str] = ("memory",),
    scopes: Scopes | None = None,
) -> DedupHit | None:
    """The closest lesson that applies to ``project`` (global, or this project's), or None.

    For callers outside the gate (e.g. deciding whether memory already covers a session)."""
    scopes = scopes or Scopes(memory_dir)
    best: DedupHit | None = None
    for kind in kinds:
        hit, _other = split_hits(index, text, kind, project=project, scopes=scopes, floor=0.0)
        if hit is not None and (best is None or hit.score > best.score):
            best = hit
    return best


JUDGE_TOP = 5
"""Existing lessons offered to the model judge per kept candidate."""
JUDGE_FLOOR = 0.10
"""Only lessons scoring above this (lexically) are offered to the judge."""


def judge_options(
    index: DedupIndex, text: str, *, project: str, scopes: Scopes, exclude: Iterable[str] = ()
) -> list[DedupHit]:
    """The closest memories and pending lessons that apply to ``project`` (never another project's,
    never a rejection), at most :data:`JUDGE_TOP` distinct refs scoring above :data:`JUDGE_FLOOR`."""
    found: dict[str, DedupHit] = {}
    for score, doc in index.ranked(text, kinds=("memory", "pending"), exclude=exclude):
        if score <= JUDGE_FLOOR or len(found) >= JUDGE_TOP:
            break
        if doc.ref in found or not scopes.applies(doc, project):
            continue
        found[doc.ref] = DedupHit(doc.kind, doc.ref, score, doc.text)
    return list(found.values())


def _judge_kept(
    report: GateReport,
    judge: Judge | None | Literal["auto"],
    *,
    config: Config,
    index: DedupIndex,
    scopes: Scopes,
    project: str,
    related_ids: set[str],
) -> None:
    """Ask the model judge about the kept candidates and change what the person is shown (never
    what is kept). On a judge failure, record ``report.judge_error`` and leave the lexical result."""
    auto = judge == "auto"
    if judge is None or (auto and config.dedup_judge != "auto"):
        return
    # auto: the extractor in use judges its own proposals, if it declares a model (judge_for); it is
    # asked for it once a proposal of its own is kept, and one that declares none costs no ranking
    own = resolved_extractor(config) if auto else None
    judge_obj: Judge | None = None if isinstance(judge, str) else judge
    resolved, failure = not auto, ""
    kept_ids = [c.id for c in report.kept]
    todo: list[tuple[Candidate, list[DedupHit]]] = []
    for i, cand in enumerate(report.kept):
        if (own is not None and cand.extractor != own) or cand.duplicate_kind == "rejected":
            continue  # only the model's own proposals; a rejected lesson's new evidence stays as it is
        if not resolved:
            resolved = True
            try:
                judge_obj = judge_for(config)
            except JudgeError as exc:
                failure = str(exc)  # reported only if there is something to judge
            if judge_obj is None and not failure:
                return  # heuristic, command: no model, dedup stays lexical
        # never the candidate itself or one kept after it in this batch (they would mark each other)
        options = judge_options(index, cand.claim, project=project, scopes=scopes, exclude=kept_ids[i:])
        if options:
            todo.append((cand, options))
    if not todo:
        return
    try:
        if failure:
            raise JudgeError(failure)
        if judge_obj is None:
            return
        verdicts = judge_obj.judge(
            [JudgeItem(c.claim, tuple(Existing(h.text, h.ref) for h in hits)) for c, hits in todo]
        )
    except JudgeError as exc:
        report.judge_error = f"dedup judge failed, dedup stayed lexical: {exc}"
        return
    for (cand, hits), verdict in zip(todo, verdicts, strict=False):
        if verdict is None or (verdict.same is not None and not 0 <= verdict.same < len(hits)):
            continue  # no answer, or one naming a lesson that was not offered: the lexical result stays
        report.judged += 1
        cand.duplicate_reason = verdict.reason
        if verdict.same is not None:
            if cand.duplicate_of is None:
                report.suspected_duplicates += 1
            elif cand.id in related_ids:
                report.related -= 1
                related_ids.discard(cand.id)
            _set_duplicate(cand, hits[verdict.same])
            cand.duplicate_judged = "same"
            report.judged_same += 1
            continue
        cand.duplicate_judged = "distinct"
        report.judged_distinct += 1
        if cand.duplicate_of is not None and cand.duplicate_of in {h.ref for h in hits}:
            cand.duplicate_of = cand.duplicate_kind = None
            cand.duplicate_score = None
            cand.duplicate_judged = "cleared"  # lexical dedup suspected it; only the model says it is new
            report.suspected_duplicates -= 1


def _quote_rank(claim: str, quote: str, provenance: str | None) -> tuple[int, int]:
    """How well a quote backs its claim: the person's words first, then shared terms."""
    shared = len(set(dedup.terms(claim)) & set(dedup.terms(quote)))
    return ({"person": 2, "assistant": 1}.get(provenance or "", 0), shared)


def session_merges(raws: Sequence[RawCandidate], verified: dict[str, Any]) -> dict[int, tuple[int, float]]:
    """Which proposals repeat another proposal of the same session: index -> (index kept, score).

    Only valid, verified proposals take part. Within each session the proposals are taken best-quoted
    first (:func:`_quote_rank`, then the order given); one whose claim scores at least
    ``dedup.SAME_SESSION`` against an already kept one is merged into it. Deterministic.
    """
    ranked: list[tuple[tuple[int, int], int, str, str]] = []
    seen: set[tuple[str, str, str]] = set()
    for i, raw in enumerate(raws):
        claim, quote = _prose(raw.claim), _text(raw.quote).strip()
        session = _text(raw.session) or "unknown"
        key = (session, claim, quote)
        result = verified.get(quote)
        if key in seen or not claim or _text(raw.type).strip() not in MEMORY_TYPES:
            continue
        if result is None or not result.verified:
            continue
        seen.add(key)
        provenance = result.best.provenance if result.best else None
        ranked.append((_quote_rank(claim, quote, provenance), i, session, claim))
    ranked.sort(key=lambda r: (-r[0][0], -r[0][1], r[1]))
    kept: dict[str, list[tuple[int, str]]] = {}
    merged: dict[int, tuple[int, float]] = {}
    for _rank, i, session, claim in ranked:
        winners = kept.setdefault(session, [])
        best = max(((dedup.similarity(claim, c), j) for j, c in winners), default=(0.0, -1))
        if best[0] >= dedup.SAME_SESSION:
            merged[i] = (best[1], best[0])
        else:
            winners.append((i, claim))
    return merged


def _already_corroborated(ledger: Ledger, target: str, project: str, session: str) -> bool:
    return candidates.repeated_in_session(ledger, target, session, project)


@dataclass
class CheckedGate:
    """What :func:`check` decided, not yet written: the report, every candidate row, and the pending
    candidates to corroborate (target id → sessions)."""

    report: GateReport
    rows: list[Candidate]
    bumps: dict[str, set[str]]
    now: str


def gate(
    raws: Sequence[RawCandidate],
    *,
    config: Config,
    ledger: Ledger,
    project: str,
    files: Sequence[Path | str],
    cycle_id: int | None = None,
    index: DedupIndex | None = None,
    corroborate: bool = True,
    judge: Judge | None | Literal["auto"] = "auto",
    record: Callable[[], object] | None = None,
) -> GateReport:
    """Check each raw candidate, store it in the ledger (kept ``pending`` or ``dropped``), and report.

    The one collect → gate → record step of every path (a dream cycle's branch, a collected batch,
    ``dreamtui extract``): ``record`` (what the caller made of the session: its extracted ranges and
    offsets) runs in the same ledger transaction that stores the candidates.

    ``files`` are the session's transcript files (main first, then sub-agents) the quotes must be
    found in. ``project`` is the project the session belongs to: lessons of other projects never
    make its candidates duplicates (see the module docstring). ``index`` may be passed to reuse one
    dedup index across sessions; the gate adds the candidates it keeps to it. ``corroborate=False``
    leaves ``corroborated`` alone (for a caller that counts corroboration itself from
    ``duplicate_of``). ``judge``: ``"auto"`` asks the model dedup judge when the config says so
    (``dedup_judge``, a model-backed extractor); None never does; a
    :class:`~dreamtui.core.gate.judge.Judge` is asked about every kept candidate. Everything is
    written in one ledger transaction, after the judge answered (the judge is a network call: the
    ledger's write lock is never held across it).
    """
    checked = check(
        raws,
        config=config,
        ledger=ledger,
        project=project,
        files=files,
        cycle_id=cycle_id,
        index=index,
        corroborate=corroborate,
        judge=judge,
    )
    with ledger.write():
        report = store(ledger, checked)
        if record is not None:
            record()
    return report


def check(
    raws: Sequence[RawCandidate],
    *,
    config: Config,
    ledger: Ledger,
    project: str,
    files: Sequence[Path | str],
    cycle_id: int | None = None,
    index: DedupIndex | None = None,
    corroborate: bool = True,
    judge: Judge | None | Literal["auto"] = "auto",
) -> CheckedGate:
    """Everything :func:`gate` decides (verification, dedup, secrets, the model judge), reading the
    ledger but writing nothing to it; :func:`store` writes the result."""
    report = GateReport()
    if index is None:
        index = DedupIndex.build(config.memory, ledger)
    scopes = Scopes(config.memory, ledger)
    now = clock.now_iso()
    transcript = str(files[0]) if files else ""
    rows: list[Candidate] = []
    bumps: dict[str, set[str]] = {}
    seen_ids: set[str] = set()
    related_ids: set[str] = set()
    # every quote of the session verified in one pass over its files (each file read once)
    quotes = list(dict.fromkeys(_text(raw.quote).strip() for raw in raws))
    verified = dict(zip(quotes, verify_quotes(quotes, files), strict=True))
    merged = session_merges(raws, verified)
    per_turn: Counter[tuple[str, int]] = Counter()

    for i, raw in enumerate(raws):
        claim_raw = _prose(raw.claim)
        quote_raw = _text(raw.quote).strip()
        why_raw, how_raw = _prose(raw.why), _prose(raw.how_to_apply)
        session = _text(raw.session) or "unknown"
        found = list(
            dict.fromkeys(r for t in (claim_raw, why_raw, how_raw, quote_raw) for r in secrets.rules_found(t))
        )
        claim, why, how, quote = (secrets.redact(t) for t in (claim_raw, why_raw, how_raw, quote_raw))
        cid = candidate_id(session, quote, claim, project)
        if cid in seen_ids:
            report.dropped["duplicate-pending"] += 1
            report.duplicates += 1
            continue
        seen_ids.add(cid)
        existing = ledger.get_candidate(cid)
        if existing is not None and existing.status in ("accepted", "rejected", "pending"):
            # the very same proposal was seen before: never undo a decision or reset a pending one
            report.dropped["already-decided" if existing.status != "pending" else "duplicate-pending"] += 1
            if existing.status == "pending":
                report.duplicates += 1
            continue
        cand = Candidate(
            id=cid,
            session=session,
            project=project,
            transcript=transcript,
            claim=claim,
            why=why,
            how_to_apply=how,
            type=_text(raw.type).strip(),
            scope=_text(raw.scope).strip() or "global",
            quote=quote,
            extractor=_text(raw.extractor) or "unknown",
            model=raw.model if isinstance(raw.model, str) else None,
            secrets=found,
            cycle_id=cycle_id,
            created_at=now,
            updated_at=now,
        )
        rows.append(cand)

        if cand.type not in MEMORY_TYPES or not claim:
            _drop(cand, "invalid", report)
            continue
        result = verified[quote_raw]
        if not result.verified:
            _drop(cand, "unverified", report)
            continue
        cand.matches = result.matches
        cand.provenance = result.best.provenance if result.best else None
        if cand.provenance == "meta" and _harness_marker(quote):
            _drop(cand, "unverified", report)  # the harness's own words prove no lesson
            continue
        if i in merged:
            j, score = merged[i]
            winner = raws[j]
            winner_claim = secrets.redact(_prose(winner.claim))
            winner_id = candidate_id(
                session, secrets.redact(_text(winner.quote).strip()), winner_claim, project
            )
            _set_duplicate(cand, DedupHit("pending", winner_id, score, winner_claim))
            _drop(cand, "duplicate-pending", report)
            continue

        # a lesson known globally or in this project is a duplicate; one known only in another
        # project is shown beside it (``related``) but never drops or corroborates it
        memory_hit, memory_other = split_hits(index, claim, "memory", project=project, scopes=scopes)
        if memory_hit is not None and memory_hit.score >= dedup.DUPLICATE:
            _set_duplicate(cand, memory_hit)
            _drop(cand, "duplicate", report)
            continue
        rejected_hit, _elsewhere = split_hits(
            index, claim, "rejected", project=project, scopes=scopes, exclude=(cid,)
        )
        if rejected_hit is not None and rejected_hit.score >= dedup.DUPLICATE:
            _set_duplicate(cand, rejected_hit)
            if index.source_of(rejected_hit.ref) == (project, session):
                _drop(cand, "previously-rejected", report)
                continue
        pending_hit, pending_other = split_hits(
            index, claim, "pending", project=project, scopes=scopes, exclude=(cid,)
        )
        if (
            pending_hit is not None
            and pending_hit.score >= dedup.DUPLICATE
            and cand.duplicate_kind != "rejected"
        ):
            _set_duplicate(cand, pending_hit)
            other = index.source_of(pending_hit.ref)
            if (
                corroborate
                and other[1] is not None
                and other != (project, session)
                and not _already_corroborated(ledger, pending_hit.ref, project, session)
            ):
                bumps.setdefault(pending_hit.ref, set()).add(f"{project}\x00{session}")
            _drop(cand, "duplicate-pending", report)
            continue
        if cand.duplicate_of is None:
            elsewhere = [h for h in (memory_other, pending_other) if h is not None]  # never a rejection
            suspects = [
                h
                for h in (memory_hit, rejected_hit, pending_hit, *elsewhere)
                if h is not None and h.score >= dedup.SUSPECT
            ]
            if suspects:
                shown = max(suspects, key=lambda h: h.score)
                _set_duplicate(cand, shown)
                report.suspected_duplicates += 1
                if any(shown is h for h in elsewhere):
                    report.related += 1
                    related_ids.add(cid)
        if cand.matches:
            turn = (cand.matches[0].file, cand.matches[0].line)
            per_turn[turn] += 1
            if per_turn[turn] > MAX_PER_TURN:
                _drop(cand, "same-turn", report)
                continue
        cand.status = "pending"
        report.kept.append(cand)
        scopes.remember(cand)
        if found:
            report.flagged_secrets += 1
        index.add(Doc.of("pending", cid, claim, session, project))

    _judge_kept(
        report, judge, config=config, index=index, scopes=scopes, project=project, related_ids=related_ids
    )
    return CheckedGate(report, rows, bumps, now)


def store(ledger: Ledger, checked: CheckedGate) -> GateReport:
    """Write what :func:`check` decided: every candidate row and the corroboration counts, in one
    transaction (joining the caller's, if any). Returns the report."""
    report = checked.report
    with ledger.write():
        for cand in checked.rows:
            ledger.put_candidate(cand)
        for target, sessions in checked.bumps.items():
            candidates.corroborate(ledger, target, len(sessions), checked.now)
            report.corroborated.append(target)
    return report


def _harness_marker(quote: str) -> bool:
    """``quote`` is (a part of) a fixed text the agent's harness writes, such as Claude Code's
    ``[Request interrupted by user for tool use]``."""
    said = " ".join(re.sub(r"[^\w]+", " ", quote.lower()).split())
    if not said:
        return False
    markers = [m for f in formats.FORMATS.values() for m in getattr(f, "HARNESS_MARKERS", ())]
    return any(said in " ".join(re.sub(r"[^\w]+", " ", m.lower()).split()) for m in markers)


def _drop(cand: Candidate, reason: str, report: GateReport) -> None:
    cand.status = "dropped"
    cand.drop_reason = reason
    report.dropped[reason] += 1
    if reason in DUPLICATE_REASONS:
        report.duplicates += 1
