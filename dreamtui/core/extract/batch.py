"""Batch mode: back-fill many sessions through the Message Batches API (half the price, slower).

``submit`` sends one request per digest part and records the batch id and its request map
(``custom_id`` → session, project, files, part) in the ledger ``batches`` table before returning, so
a new process can find an unfinished batch (``unfinished``), ``poll`` it and ``collect`` its results
after a restart. Results are parsed exactly like the synchronous extractor's answers.

Content is extracted once, whoever submits it. A dream cycle's batch (``dreamtui dream --batch``)
and an ad-hoc batch over files named on the command line (:meth:`BatchRunner.submit_files`) both
keep, per session, the byte ranges their digests cover that were not dreamed yet
(``extra["ranges"]``), mark those ranges dreamed in the transaction that records the batch (so no
cycle extracts them while the batch runs), record them in ``extractions`` in the transaction that
stores the collected candidates (:func:`record_extracted`), and give a failed request's ranges back
to the undreamed part (:func:`give_back`). Ad-hoc batches carry ``extra["origin"] = "cli"``.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from dreamtui.core.clock import now_iso
from dreamtui.core.errors import ExtractorError
from dreamtui.core.extract.anthropic_ext import explain_api_error, text_of, usage_of
from dreamtui.core.extract.base import ExtractContext, Extractor, candidate_from_mapping
from dreamtui.core.extract.prompt import ExtractionOut
from dreamtui.core.ingest.digest import digest_increment, digest_session, persist, shared_reads
from dreamtui.core.ingest.projects import ProjectMap
from dreamtui.core.ingest.tail import LineScanner, Tailer, open_transcript
from dreamtui.core.ingest.transcripts import describe
from dreamtui.core.ledger import Ledger, batches, offsets, record_extraction, record_failed_extraction
from dreamtui.core.models import Digest, DigestStats, ExtractionResult, RawCandidate, Usage

OPEN_STATES = ("in_progress", "canceling", "ended")  # ``ended`` = results ready but not yet collected
ADHOC = "cli"
"""``extra["origin"]`` of a batch submitted outside the dream cycle (``dreamtui batch submit``)."""
RANGE_KEYS = ("path", "start_offset", "start_line", "end_offset", "end_line", "content_hash")
"""The keys of one byte range in ``extra["ranges"]`` (the fields of ``dream.sessions.FileRange``)."""


@runtime_checkable
class BatchSource(Protocol):
    """What the batch runner needs of an extractor whose capabilities say ``batches`` (the anthropic
    one): its client, how it explains an API error, and the request params of a digest."""

    name: str
    model: str
    client: Any
    """The anthropic SDK client (``messages.batches`` submits, polls and collects)."""
    max_retries: int
    timeout: float
    base_url: str | None

    def requests(self, digest: Digest, context: ExtractContext) -> tuple[list[dict[str, Any]], list[str]]:
        """The Messages API params of every call ``digest`` needs, and notes about splitting."""
        ...


def runner_for(extractor: Extractor, ledger: Ledger) -> BatchRunner:
    """The batch runner of ``extractor``, whose capabilities say it ``batches``; an ExtractorError
    for one that cannot."""
    if not extractor.capabilities.batches or not isinstance(extractor, BatchSource):
        raise ExtractorError(f"the {extractor.name} extractor cannot extract through the Message Batches API")
    return BatchRunner(extractor, ledger)


@dataclass
class Collected:
    """One session's result from a batch, with what the gate needs to verify it."""

    batch_id: str
    session: str
    project: str
    files: list[str]
    result: ExtractionResult
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class BatchStatus:
    """Where a batch stands."""

    id: str
    status: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def ended(self) -> bool:
        return self.status == "ended"


@dataclass
class SessionRanges:
    """The not-yet-dreamed part of each file of one session, as read when a batch is prepared.

    ``ranges`` are plain dicts (:data:`RANGE_KEYS`) kept in the batch's request map; ``reads`` are
    the tail reads (and digest dedup state) to store when the ranges are reserved.
    """

    project: str
    session: str
    files: list[Path]
    ranges: list[dict[str, Any]] = field(default_factory=list)
    reads: list[tuple[Any, Any]] = field(default_factory=list)


def undreamed_ranges(
    ledger: Ledger, files: Sequence[Path | str], project: str, session: str
) -> SessionRanges:
    """Read (without storing anything) the part of each file of a session past its ``dreamed_offset``.

    Like the dream cycle's light sleep: a file that was truncated or replaced counts from 0; bytes
    another reader consumed but no cycle dreamed are included. A partial last line is left out.
    """
    out = SessionRanges(project, session, [Path(f) for f in files])
    for path in out.files:
        _digest, read, state = digest_increment(ledger, path, project, session, commit=False)
        start, start_line = read.start_offset, read.start_line
        hasher = hashlib.blake2b(digest_size=16)
        dreamed = offsets.dreamed_point(ledger, read.path)
        if dreamed and not read.reset and dreamed[0] < read.start_offset:
            start, start_line = dreamed
            with open_transcript(path) as fh:
                for _n, _o, raw in LineScanner(fh, start, start_line, end=read.start_offset):
                    hasher.update(raw + b"\n")
        for _n, _o, raw in read.lines:
            hasher.update(raw + b"\n")
        out.reads.append((read, state))
        if read.end_offset > start:
            out.ranges.append(
                {
                    "path": read.path,
                    "start_offset": start,
                    "start_line": start_line,
                    "end_offset": read.end_offset,
                    "end_line": read.end_line,
                    "content_hash": hasher.hexdigest(),
                    "keys": reserved_keys(read, state),
                }
            )
    return out


def reserved_keys(read: Any, state: Any) -> list[str]:
    """The keys a whole-file (records) read stores when its range is reserved: the records it took and
    the digest's dedup keys. A failed request forgets them again (:func:`give_back`): a records source
    has no byte offset to rewind, and a record remembered as seen is never read again. ``[]`` for a
    lines read (rewinding ``dreamed_offset`` gives its bytes back)."""
    if read is None or state is None or not getattr(read, "records", False):
        return []
    return sorted(state.pending())


def reserve(ledger: Ledger, sessions: Sequence[SessionRanges]) -> None:
    """Mark the sessions' ranges dreamed (joins the caller's transaction): store each tail read, then
    advance ``dreamed_offset`` to the end of the range (never backwards)."""
    tailer = Tailer(ledger)
    with ledger.write():
        for sess in sessions:
            for read, state in sess.reads:
                persist(ledger, tailer, read, state, DigestStats())
            for r in sess.ranges:
                offsets.advance_dreamed(ledger, r["path"], r["end_offset"], r["end_line"])


def _ranges(item: Collected) -> list[dict[str, Any]]:
    return [r for r in (item.extra.get("ranges") or []) if isinstance(r, dict) and set(RANGE_KEYS) <= set(r)]


def record_extracted(
    ledger: Ledger,
    item: Collected,
    candidates: int,
    *,
    extractor: str,
    model: str | None,
    cycle_id: int | None = None,
) -> int:
    """Record a collected session's ranges in ``extractions`` (joins the caller's transaction, e.g.
    the gate's), with the request's usage and candidate count on the first range. Returns the number
    of ranges recorded. Their ``dreamed_offset`` already moved when the batch was submitted."""
    now = now_iso()
    usage = item.result.usage
    ranges = _ranges(item)
    with ledger.write():
        for i, r in enumerate(ranges):
            if r["end_offset"] <= r["start_offset"]:
                continue
            first = i == 0
            record_extraction(
                ledger,
                session=item.session,
                project=item.project,
                path=r["path"],
                start_offset=r["start_offset"],
                end_offset=r["end_offset"],
                content_hash=r["content_hash"],
                extractor=extractor,
                model=model,
                cycle_id=cycle_id,
                usage=usage if first else Usage(),
                candidates=candidates if first else 0,
                now=now,
            )
    return len(ranges)


def give_back(
    ledger: Ledger, item: Collected, *, extractor: str, model: str | None, cycle_id: int | None = None
) -> None:
    """A failed request: record its error on the first range and return every range to the
    undreamed part, so the next dream cycle extracts that content."""
    ranges = _ranges(item)
    if not ranges:
        return
    usage = item.result.usage
    first = ranges[0]
    with ledger.write():
        record_failed_extraction(
            ledger,
            session=item.session,
            project=item.project,
            path=first["path"],
            start_offset=first["start_offset"],
            end_offset=first["end_offset"],
            content_hash=first["content_hash"],
            extractor=extractor,
            model=model,
            cycle_id=cycle_id,
            usage=usage,
            error=item.result.error,
            now=now_iso(),
        )
        for r in ranges:
            offsets.give_back(ledger, r["path"], r["start_offset"], r["start_line"])
            if r.get("keys"):  # a whole-file source's records (and dedup keys): offered again
                offsets.remove_blocks(ledger, r["path"], list(r["keys"]))


def _custom_id(index: int, session: str, part: int) -> str:
    tag = hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"r{index:05d}-{tag}-p{part}"


class BatchRunner:
    """Submits, polls and collects extraction batches, keeping their state in the ledger."""

    def __init__(self, extractor: BatchSource, ledger: Ledger) -> None:
        self.extractor = extractor
        self.ledger = ledger
        self.client = extractor.client

    def _api(self, call: Callable[[], Any]) -> Any:
        import anthropic

        try:
            return call()
        except anthropic.APIError as exc:
            raise explain_api_error(
                exc,
                model=self.extractor.model,
                retries=self.extractor.max_retries,
                timeout=self.extractor.timeout,
                base_url=self.extractor.base_url,
            ) from None

    # -- submit ----------------------------------------------------------------------------------

    def submit(
        self,
        digests: Sequence[Digest],
        context_for: Callable[[Digest], ExtractContext],
        *,
        extra_for: Callable[[Digest], dict[str, Any]] | None = None,
        on_recorded: Callable[[], None] | None = None,
    ) -> str:
        """Send every digest (split into parts as needed) as one batch; returns the batch id.

        ``extra_for(digest)`` adds keys to that session's request map (the dream cycle keeps the byte
        ranges it submitted there; they come back as ``Collected.extra``); ``on_recorded`` runs inside
        the transaction that records the batch, so a caller's own bookkeeping commits with it.
        """
        import anthropic

        if not digests:
            raise ExtractorError("nothing to submit: no sessions")
        requests: list[dict[str, Any]] = []
        mapping: dict[str, dict[str, Any]] = {}
        schema = anthropic.transform_schema(ExtractionOut)
        for index, digest in enumerate(digests):
            context = context_for(digest)
            params, notes = self.extractor.requests(digest, context)
            for part, call in enumerate(params, start=1):
                cid = _custom_id(index, digest.session, part)
                call = {**call, "output_config": {"format": {"type": "json_schema", "schema": schema}}}
                requests.append({"custom_id": cid, "params": call})
                mapping[cid] = {
                    "session": digest.session,
                    "project": context.project or digest.project,
                    "files": list(digest.files),
                    "part": part,
                    "parts": len(params),
                    "notes": notes,
                    "extra": extra_for(digest) if extra_for else {},
                }
        # plain dicts are what the SDK sends; its TypedDicts describe the same shape
        batch = self._api(lambda: self.client.messages.batches.create(requests=requests))  # type: ignore[arg-type]
        stamp = now_iso()
        with self.ledger.write():
            batches.record(
                self.ledger, batch.id, batch.processing_status, mapping, self.extractor.model, stamp
            )
            if on_recorded is not None:
                on_recorded()
        return str(batch.id)

    def submit_files(
        self, sessions: Sequence[Sequence[Path]], context_for: Callable[[Digest], ExtractContext]
    ) -> tuple[str, list[SessionRanges]]:
        """Submit whole sessions named outside the dream cycle (``dreamtui batch submit``).

        ``sessions`` holds each session's files (main file first, then its sub-agent files). Each
        session is digested whole; the part of it no cycle has dreamed yet is kept with its request
        and marked dreamed in the transaction that records the batch. Returns the batch id and the
        ranges reserved per session.
        """
        prepared: list[tuple[Digest, SessionRanges]] = []
        seen: set[tuple[str, str]] = set()
        with shared_reads():  # the sessions of one database read through one connection
            for files in sessions:
                tf = describe(Path(files[0]))
                if (tf.project, tf.session) in seen:
                    continue  # the same session named twice (e.g. its main and a sub-agent file)
                seen.add((tf.project, tf.session))
                # a worktree's session is its repository's project (the folder holding its folder is the root)
                project = ProjectMap(Path(files[0]).parent.parent, self.ledger, remember=True).key(
                    tf.project, Path(files[0])
                )
                ranges = undreamed_ranges(self.ledger, files, project, tf.session)  # before digesting:
                digest = digest_session(list(files))  # the digest covers them
                digest.project = project
                prepared.append((digest, ranges))
        by_digest = {id(d): r for d, r in prepared}

        def extra_for(digest: Digest) -> dict[str, Any]:
            return {"origin": ADHOC, "ranges": by_digest[id(digest)].ranges}

        batch_id = self.submit(
            [d for d, _r in prepared],
            context_for,
            extra_for=extra_for,
            on_recorded=lambda: reserve(self.ledger, [r for _d, r in prepared]),
        )
        return batch_id, [r for _d, r in prepared]

    # -- state -----------------------------------------------------------------------------------

    def unfinished(self) -> list[str]:
        """Batch ids in the ledger whose results have not been collected yet, oldest first."""
        return batches.with_status(self.ledger, OPEN_STATES)

    def from_cycle(self, batch_id: str) -> bool:
        """The batch was submitted by a dream cycle (it carries byte ranges and is not ad-hoc): only a
        cycle collects it."""
        return any(
            (info.get("extra") or {}).get("ranges") and (info.get("extra") or {}).get("origin") != ADHOC
            for info in self._mapping(batch_id).values()
        )

    def _set_status(self, batch_id: str, status: str) -> None:
        batches.set_status(self.ledger, batch_id, status, now_iso())

    def poll(self, batch_id: str) -> BatchStatus:
        """Ask the API how the batch is doing and record it in the ledger."""
        batch = self._api(lambda: self.client.messages.batches.retrieve(batch_id))
        counts = batch.request_counts.model_dump() if batch.request_counts is not None else {}
        self._set_status(batch_id, batch.processing_status)
        return BatchStatus(batch_id, batch.processing_status, counts)

    def _mapping(self, batch_id: str) -> dict[str, dict[str, Any]]:
        mapping = batches.requests(self.ledger, batch_id)
        if mapping is None:
            raise ExtractorError(f"batch {batch_id} is not in the ledger")
        return mapping

    # -- collect ---------------------------------------------------------------------------------

    def collect(self, batch_id: str, *, mark: bool = True) -> list[Collected]:
        """Parse an ended batch's results into one ExtractionResult per session.

        With ``mark`` the batch is recorded as ``collected`` so it is not collected again; a caller
        that stores the candidates itself may pass ``mark=False`` and call :meth:`mark_collected`
        in the same transaction.
        """
        mapping = self._mapping(batch_id)
        by_session: dict[str, Collected] = {}
        for request in mapping.values():
            if request["session"] not in by_session:
                res = ExtractionResult(session=request["session"], notes=list(request.get("notes") or []))
                by_session[request["session"]] = Collected(
                    batch_id,
                    request["session"],
                    request["project"],
                    list(request.get("files") or []),
                    res,
                    dict(request.get("extra") or {}),
                )
        results = self._api(lambda: list(self.client.messages.batches.results(batch_id)))
        seen: set[str] = set()
        for item in results:
            info = mapping.get(item.custom_id)
            if info is None:
                continue
            seen.add(item.custom_id)
            entry = by_session[info["session"]]
            self._apply(entry, info, item.result)
        for cid, info in mapping.items():
            if cid not in seen:
                entry = by_session[info["session"]]
                entry.result.error = (
                    entry.result.error or f"batch {batch_id} returned no result for part {info['part']}"
                )
        if mark:
            self.mark_collected(batch_id)
        return list(by_session.values())

    def _apply(self, entry: Collected, info: dict[str, Any], outcome: Any) -> None:
        res = entry.result
        kind = getattr(outcome, "type", None)
        if kind != "succeeded":
            detail = ""
            err = getattr(outcome, "error", None)
            inner = getattr(err, "error", None)
            if inner is not None and getattr(inner, "message", None):
                detail = f": {inner.message}"
            res.error = res.error or f"batch request for part {info['part']} {kind or 'failed'}{detail}"
            return
        message = outcome.message
        res.usage = res.usage + usage_of(message)
        try:
            out = ExtractionOut.model_validate_json(text_of(message))
        except ValueError:
            res.error = (
                res.error or "the model's output is not valid JSON for the schema; nothing was kept from it"
            )
            return
        res.malformed += out.malformed
        for lesson in out.candidates:
            cand = candidate_from_mapping(
                lesson.model_dump(),
                session=entry.session,
                project=entry.project,
                extractor=self.extractor.name,
                model=self.extractor.model,
            )
            if isinstance(cand, RawCandidate):
                res.candidates.append(cand)

    def mark_collected(self, batch_id: str) -> None:
        """Record that the batch's results were collected."""
        self._set_status(batch_id, "collected")

    # -- all together ----------------------------------------------------------------------------

    def wait(
        self,
        batch_id: str,
        *,
        interval: float = 30.0,
        timeout: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> BatchStatus:
        """Poll until the batch has ended (or ``timeout`` seconds passed: the batch stays resumable)."""
        start = time.monotonic()
        while True:
            status = self.poll(batch_id)
            if status.ended:
                return status
            if timeout is not None and time.monotonic() - start >= timeout:
                return status
            sleep(interval)

    def resume(
        self,
        *,
        interval: float = 30.0,
        timeout: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> list[Collected]:
        """Collect every unfinished batch recorded in the ledger that has ended (waiting up to ``timeout``)."""
        collected: list[Collected] = []
        for batch_id in self.unfinished():
            status = self.wait(batch_id, interval=interval, timeout=timeout, sleep=sleep)
            if status.ended:
                collected.extend(self.collect(batch_id))
        return collected
