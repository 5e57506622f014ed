"""The consolidation pass of REM (issue 26), per project: the offline finders
(:mod:`~dreamtui.core.dream.consolidate_find`) and, when the extractor declares a model
(``structured()``), one request with the project's memories and the new sessions' digest
(:mod:`~dreamtui.core.extract.consolidate_prompt`). A model's update or retirement is kept only with a
quote the gate's verification finds in the newer transcripts; every proposal is stored for review in
``consolidations`` (one already made with the same evidence is not stored again)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dreamtui.core import clock
from dreamtui.core.dream.consolidate_find import MemoryFile, find_offline, project_memories, repositories_of
from dreamtui.core.errors import ExtractorError, MemoryRepoError
from dreamtui.core.extract import consolidate_prompt as prompt
from dreamtui.core.extract.base import StructuredModel, readable_answers
from dreamtui.core.gate.verify import verify_quotes
from dreamtui.core.ledger import Ledger
from dreamtui.core.ledger import consolidations as rows
from dreamtui.core.ledger.consolidations import Consolidation, evidence_key
from dreamtui.core.memory import consolidate
from dreamtui.core.memory import layout as memory
from dreamtui.core.memory.outside_tree import max_bytes
from dreamtui.core.models import Digest, Usage


@dataclass(slots=True)
class PassReport:
    """What one project's pass proposed: new proposals per kind, and what it left out and why."""

    proposed: Counter[str] = field(default_factory=Counter)
    known: int = 0
    """Proposals already made with the same evidence (pending, rejected, accepted): not stored again."""
    dropped: Counter[str] = field(default_factory=Counter)
    """Model proposals left out: ``unverified`` quote, ``invalid`` (bad numbers, missing text),
    ``memory-cut`` (an update or merge of a memory the request showed only in part), ``same-files``
    (another proposal of this pass, or a pending one, already changes one of its memory files)."""
    withdrawn: int = 0
    """Pending proposals whose memory changed since they were made: forgotten, and proposed again from
    the new text when their proof still holds."""
    model_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    error: str | None = None
    ids: list[str] = field(default_factory=list)


def request(project: str, files: Sequence[MemoryFile], digests: Sequence[Digest]) -> tuple[str, str]:
    """The consolidation request as sent: (system prompt, user message)."""
    return prompt.SYSTEM_PROMPT, prompt.user_message(project, [(f.rel, f.text) for f in files], digests)


def _seen(f: MemoryFile) -> str:
    return f.seen


def model_proposals(
    structured: StructuredModel,
    project: str,
    files: Sequence[MemoryFile],
    digests: Sequence[Digest],
    report: PassReport,
) -> list[Consolidation]:
    """Ask the model once; keep each proposal that names real memories and (update, retire) carries a
    quote verified in the sessions' transcripts. Raises :class:`ExtractorError` (one line) on failure."""
    system, user = request(project, files, digests)
    with readable_answers():
        out, usage = structured.ask(system, user, prompt.ConsolidationOut, max_tokens=prompt.MAX_TOKENS)
    report.model_calls += 1
    report.usage = report.usage + usage
    if not isinstance(out, prompt.ConsolidationOut):
        raise ExtractorError("the model returned no consolidation proposals")
    transcripts = [Path(p) for d in digests for p in d.files]
    session_of = {str(p): d.session for d in digests for p in d.files}
    wanted = [p for p in out.proposals if p.quote.strip()]
    checks = dict(
        zip([id(p) for p in wanted], verify_quotes([p.quote for p in wanted], transcripts), strict=True)
    )
    source = f"{structured.name}/{structured.model}" if structured.model else structured.name
    kept: list[Consolidation] = []
    for p in out.proposals:
        numbers = list(dict.fromkeys(p.memories))
        if not numbers or any(not 1 <= n <= len(files) for n in numbers):
            report.dropped["invalid"] += 1
            continue
        targets = [files[n - 1] for n in numbers]
        needs_text = p.kind in ("update", "merge")
        if (needs_text and not p.new_text.strip()) or (p.kind == "merge") != (len(targets) >= 2):
            report.dropped["invalid"] += 1
            continue
        if needs_text and len(p.new_text.encode("utf-8", "surrogatepass")) > max_bytes():
            # never more than a memory file may be (the outside scan's limit): it would go to git whole
            report.dropped["too-large"] += 1
            continue
        if needs_text and any(prompt.was_cut(t.text) for t in targets):
            # the model saw only the start of this memory: its new text would drop the rest
            report.dropped["memory-cut"] += 1
            continue
        check = checks.get(id(p))
        if p.kind != "merge" and (check is None or not check.verified or check.best is None):
            report.dropped["unverified"] += 1
            continue
        best = check.best if check is not None and check.verified else None
        if best is not None:
            evidence, kind_of = " ".join(p.quote.split()), "quote"
        else:
            evidence = f"{source} judged {', '.join(t.rel for t in targets)} the same: {p.reason.strip()}"
            kind_of = "check"
        keep = targets[0]
        new_text = consolidate.rewrite(keep.text, p.new_text) if needs_text else None
        rels = [t.rel for t in targets]
        kept.append(
            Consolidation(
                id=consolidate.new_id(),
                kind=p.kind,
                project=project,
                targets=rels,
                evidence_kind=kind_of,
                evidence=evidence,
                evidence_key=evidence_key(p.kind, rels, evidence),
                source=source,
                seen={t.rel: _seen(t) for t in targets},
                keep_path=keep.rel if needs_text else None,
                new_text=new_text,
                reason=memory.one_line(p.reason, 240),
                session=session_of.get(best.file) if best else None,
                transcript=best.file if best else None,
                line=best.line if best else None,
                provenance=best.provenance if best else None,
                created_at=clock.now_iso(),
            )
        )
    return kept


def run_pass(
    memory_dir: Path,
    ledger: Ledger,
    project: str,
    digests: Sequence[Digest],
    structured: StructuredModel | None = None,
    *,
    repo_path: Path | None = None,
    cycle_id: int | None = None,
) -> PassReport:
    """One project's consolidation: the offline finders (its repository: ``repo_path``, else the one
    its sessions ran in), then the model when there is one and new sessions; store what is new."""
    report = PassReport()
    for stale in rows.listed(ledger, "pending", project):
        try:
            changed = consolidate.stale(stale, memory_dir) is not None
        except (MemoryRepoError, OSError):  # a target no safe path reaches: left for the person to see
            continue
        if changed:  # its memory changed since: proposed again from the new text when the proof holds
            rows.withdraw(ledger, stale.id)
            report.withdrawn += 1
    files = project_memories(memory_dir, project, ledger)
    if not files:
        return report
    if repo_path is None:
        repos = repositories_of(d.cwd for d in digests)
        repo_path = repos[0] if repos else None
    items = find_offline(memory_dir, project, repo_path, ledger)
    if structured is not None and digests:
        try:
            items += model_proposals(structured, project, files, digests, report)
        except ExtractorError as exc:  # the offline proposals stand; the cycle goes on
            report.error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    # one proposal per memory file: the first found (the offline finders' proof before the model's),
    # and none for a file a pending proposal already changes (two diffs of one file would conflict)
    taken = {t for i in rows.listed(ledger, "pending", project) for t in i.targets}
    for item in items:
        item.cycle_id = cycle_id
        if item.kind == "merge":
            # a merge's proof is the files themselves: the same files, unchanged, are one proposal
            # whoever found it and however the model worded its reason (pending, rejected or accepted)
            same = json.dumps(sorted(item.seen.items()))
            item.evidence_key = evidence_key("merge", item.targets, same)
        if rows.known(ledger, item.evidence_key):
            report.known += 1
            continue
        if taken.intersection(item.targets):
            report.dropped["same-files"] += 1
            continue
        taken.update(item.targets)
        if rows.add(ledger, item):
            report.proposed[item.kind] += 1
            report.ids.append(item.id)
        else:
            report.known += 1
    return report
