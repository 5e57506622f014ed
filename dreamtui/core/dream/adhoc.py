"""Extraction outside a dream cycle: one session now (``dreamtui extract``) and collecting the batches
``dreamtui batch submit`` sent. Both go through the one collect → gate → record step
(:func:`dreamtui.core.gate.pipeline.gate` with ``record``), as a cycle's branch does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dreamtui.core.config import Config
from dreamtui.core.dream.lock import CycleLock
from dreamtui.core.extract import make_extractor
from dreamtui.core.extract.base import readable_answers
from dreamtui.core.extract.batch import BatchRunner, Collected, give_back, record_extracted
from dreamtui.core.gate.context import context_maker
from dreamtui.core.gate.dedup import DedupIndex
from dreamtui.core.gate.pipeline import GateReport, gate
from dreamtui.core.ingest.digest import digest_session
from dreamtui.core.ingest.projects import ProjectMap
from dreamtui.core.ledger import Ledger, open_ledger
from dreamtui.core.models import Digest, ExtractionResult


@dataclass(slots=True)
class SessionExtraction:
    """One session extracted and gated now: its digest, what the extractor said, what the gate kept."""

    files: list[Path]
    digest: Digest
    extractor: str
    model: str | None
    result: ExtractionResult
    report: GateReport

    @property
    def dropped(self) -> dict[str, int]:
        """Dropped proposals by reason, the extractor's malformed ones included."""
        dropped = dict(self.report.dropped)
        if self.result.malformed:
            dropped["malformed"] = dropped.get("malformed", 0) + self.result.malformed
        return dropped


def extract_session(config: Config, files: list[Path]) -> SessionExtraction:
    """Digest the session ``files`` (main first), extract with the configured extractor, gate and store."""
    digest = digest_session(files)
    extractor = make_extractor(config)
    with open_ledger(config) as ledger:
        # a worktree's (or subfolder's) session is filed under its repository's project
        digest.project = ProjectMap(config.transcripts, ledger, remember=True).key(digest.project, files[0])
        index = DedupIndex.build(config.memory, ledger)  # the gate tells projects apart
        with readable_answers():
            result = extractor.extract(digest, context_maker(config, index)(digest))
        report = gate(
            result.candidates, config=config, ledger=ledger, project=digest.project, files=files, index=index
        )
    return SessionExtraction(files, digest, extractor.name, extractor.model, result, report)


@dataclass(slots=True)
class BatchOutcome:
    """One collected session of a batch, or a batch still running (``status`` not ``collected``)."""

    batch: str
    status: str
    counts: dict[str, int] = field(default_factory=dict)
    session: str = ""
    project: str = ""
    error: str | None = None
    report: GateReport | None = None
    dropped: dict[str, int] = field(default_factory=dict)
    result: ExtractionResult | None = None
    ranges_recorded: int = 0
    given_back: bool = False

    def to_json(self) -> dict[str, Any]:
        """The row ``dreamtui batch collect --json`` prints."""
        # hand-written: the row's shape depends on the status, and it flattens the report and result
        if self.status != "collected":
            return {"batch": self.batch, "status": self.status, "counts": self.counts}
        assert self.result is not None
        return {
            "batch": self.batch,
            "status": self.status,
            "session": self.session,
            "project": self.project,
            "error": self.error,
            "kept": [c.to_json() for c in self.report.kept] if self.report else [],
            "dropped": self.dropped,
            "usage": self.result.usage.to_json(),
            "notes": self.result.notes,
            "ranges_recorded": self.ranges_recorded,
            "given_back": self.given_back,
        }


def collect_batches(
    config: Config,
    ledger: Ledger,
    runner: BatchRunner,
    *,
    wait_seconds: float,
    interval: float,
    on_left: Callable[[int], None] | None = None,
) -> list[BatchOutcome]:
    """Collect every ended ad-hoc batch in the ledger (also after a restart) and gate its candidates.

    Batches a dream cycle submitted are left to the next cycle (``on_left`` hears how many). A batch
    not ended after ``wait_seconds`` of polling is reported as still running. What a session's request
    extracted is recorded in the transaction that stores its candidates; a failed request gives its
    content back to the next cycle.
    """
    pending = [b for b in runner.unfinished() if not runner.from_cycle(b)]
    left = len(runner.unfinished()) - len(pending)
    if left and on_left is not None:
        on_left(left)
    out: list[BatchOutcome] = []
    for batch_id in pending:
        status = runner.wait(batch_id, interval=interval, timeout=wait_seconds)
        if not status.ended:
            out.append(BatchOutcome(batch_id, status.status, dict(status.counts)))
            continue
        with CycleLock(config.lock_path):  # a dream cycle collects open batches too: never both at once
            if batch_id not in runner.unfinished():
                continue  # a cycle collected it while we were waiting
            index = DedupIndex.build(config.memory, ledger)
            out.extend(_collect_one(config, ledger, runner, batch_id, index))
    return out


def _collect_one(
    config: Config, ledger: Ledger, runner: BatchRunner, batch_id: str, index: DedupIndex
) -> list[BatchOutcome]:
    """Per session of one ended batch: gate its candidates and record what it extracted (or give a
    failed request's content back), in one transaction."""
    name, model = runner.extractor.name, runner.extractor.model
    out: list[BatchOutcome] = []
    for item in runner.collect(batch_id, mark=False):
        res = item.result
        recorded = [0]
        report = gate(
            res.candidates,
            config=config,
            ledger=ledger,
            project=item.project,
            files=item.files,
            index=index,
            record=_recorder(ledger, item, len(res.candidates), name, model, recorded),
        )
        dropped = dict(report.dropped)
        if res.malformed:
            dropped["malformed"] = res.malformed
        out.append(
            BatchOutcome(
                batch_id,
                "collected",
                session=item.session,
                project=item.project,
                error=res.error,
                report=report,
                dropped=dropped,
                result=res,
                ranges_recorded=recorded[0],
                given_back=bool(res.error and item.extra.get("ranges")),
            )
        )
    runner.mark_collected(batch_id)
    return out


def _recorder(
    ledger: Ledger, item: Collected, candidates: int, name: str, model: str | None, recorded: list[int]
) -> Callable[[], None]:
    """What a collected session records beside its candidates: its ranges as extracted, or (a failed
    request) its content given back to the next dream cycle."""

    def record() -> None:
        if item.result.error:
            give_back(ledger, item, extractor=name, model=model)
        else:
            recorded[0] = record_extracted(ledger, item, candidates, extractor=name, model=model)

    return record
