"""Extract many sessions at once: a bounded thread pool, one result per digest, in input order."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from dreamtui.core.errors import ExtractorAuthError, ExtractorError
from dreamtui.core.extract.base import ExtractContext, Extractor
from dreamtui.core.models import Digest, ExtractionResult

if TYPE_CHECKING:
    from dreamtui.core.config import Config
    from dreamtui.core.gate.dedup import DedupIndex, Doc

ContextFor = Callable[[Digest], ExtractContext]


def extract_many(
    digests: Sequence[Digest],
    extractor: Extractor,
    context_for: ContextFor,
    concurrency: int = 4,
    on_result: Callable[[ExtractionResult], None] | None = None,
) -> list[ExtractionResult]:
    """Run ``extractor`` over every digest, at most ``concurrency`` at once.

    A failure of one session becomes that result's ``error`` (a one-line message) and the others go
    on; an authentication failure stops the sessions not yet started (they get the same error) since
    every call would fail the same way. ``on_result`` is called (from a worker thread) as each ends.
    """
    stop: list[str] = []
    lock = threading.Lock()

    def one(digest: Digest) -> ExtractionResult:
        with lock:
            fatal = stop[0] if stop else None
        if fatal is not None:
            result = ExtractionResult(session=digest.session, error=fatal)
        else:
            try:
                result = extractor.extract(digest, context_for(digest))
            except ExtractorAuthError as exc:
                with lock:
                    stop.append(str(exc))
                result = ExtractionResult(session=digest.session, error=str(exc))
            except ExtractorError as exc:
                result = ExtractionResult(session=digest.session, error=str(exc))
            except Exception as exc:  # an extractor bug must not lose the other sessions
                result = ExtractionResult(
                    session=digest.session,
                    error=f"{extractor.name} extractor failed: {type(exc).__name__}: {exc}",
                )
        if on_result is not None:
            on_result(result)
        return result

    if not digests:
        return []
    workers = max(1, min(int(concurrency or 1), len(digests)))
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="dreamtui-extract") as pool:
        return list(pool.map(one, digests))


MAX_CONTEXT_MEMORIES = 12
PROBE_CHARS = 6000


def closest_memories(
    index: DedupIndex,
    digest: Digest,
    limit: int = MAX_CONTEXT_MEMORIES,
    applies: Callable[[Doc], bool] | None = None,
) -> tuple[str, ...]:
    """The texts of the existing memories closest to what the person said in ``digest``.

    ``index`` is a :class:`dreamtui.core.gate.dedup.DedupIndex`; the probe is the person's words (or,
    without any, the whole digest), capped at a few thousand characters. ``applies`` keeps only the
    memories that hold in the digest's project (global ones and this project's), so the model is not
    told to avoid another project's lessons.
    """
    said = " ".join(t.text for t in digest.turns if t.role == "person") or " ".join(
        t.text for t in digest.turns
    )
    probe = said[:PROBE_CHARS]
    if not probe.strip():
        return ()
    texts: list[str] = []
    seen: set[str] = set()
    for score, doc in index.ranked(probe, kinds=("memory",)):
        if score <= 0 or len(texts) >= limit:
            break
        if doc.ref in seen or (applies is not None and not applies(doc)):
            continue
        seen.add(doc.ref)
        texts.append(doc.text)
    return tuple(texts)


def context_maker(config: Config, index: DedupIndex | None = None) -> ContextFor:
    """A ``context_for`` for :func:`extract_many`: project, closest memories, digest budget."""
    from dreamtui.core.gate.pipeline import Scopes

    scopes = Scopes(config.memory)

    def context_for(digest: Digest) -> ExtractContext:
        memories = (
            closest_memories(index, digest, applies=lambda doc: scopes.applies(doc, digest.project))
            if index is not None
            else ()
        )
        return ExtractContext(project=digest.project, memories=memories, max_chars=config.max_digest_chars)

    return context_for
