"""Extract many sessions at once: a bounded thread pool, one result per digest.

:func:`extract_iter` yields each result as it ends (so the caller stores an answer before the next
one arrives: an interrupted run loses no answer it was given); :func:`extract_many` collects them in
input order.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

from dreamtui.core.errors import ExtractorAuthError, ExtractorError
from dreamtui.core.extract.base import TOO_DEEP, ExtractContext, Extractor
from dreamtui.core.models import Digest, ExtractionResult, Usage

ContextFor = Callable[[Digest], ExtractContext]
MayStart = Callable[[Digest], "str | None"]
"""Asked (under the runner's lock) before a session is sent: None to send it, else why not (it is
then returned ``unsent`` with that reason as its error, and nothing is spent on it)."""


def extract_iter(
    digests: Sequence[Digest],
    extractor: Extractor,
    context_for: ContextFor,
    concurrency: int = 4,
    on_result: Callable[[ExtractionResult], None] | None = None,
    may_start: MayStart | None = None,
    stops: list[ExtractorAuthError] | None = None,
) -> Iterator[tuple[int, ExtractionResult]]:
    """Run ``extractor`` over every digest, at most ``concurrency`` at once, yielding
    ``(index, result)`` in the calling thread as each ends.

    A failure of one session becomes that result's ``error`` (a one-line message) and the others go
    on; an authentication failure or a usage limit (:class:`ExtractorAuthError`) stops the sessions
    not yet started: they come back ``unsent`` with the same error, since every call would fail the
    same way. ``may_start`` may hold a session back (a token budget). ``on_result`` is called (from a
    worker thread) as each ends. The error that stopped the run (a usage limit says when it resets)
    is appended to ``stops`` when given.
    """
    stop: list[ExtractorAuthError] = stops if stops is not None else []
    lock = threading.Lock()
    done: queue.Queue[tuple[int, ExtractionResult]] = queue.Queue()

    def one(index: int, digest: Digest) -> None:
        with lock:
            fatal = stop[0] if stop else None
            held = None if fatal is not None or may_start is None else may_start(digest)
        if fatal is not None:
            result = ExtractionResult(session=digest.session, error=str(fatal), unsent=True)
        elif held is not None:
            result = ExtractionResult(session=digest.session, error=held, unsent=True)
        else:
            try:
                result = extractor.extract(digest, context_for(digest))
            except ExtractorAuthError as exc:
                with lock:
                    if not stop:
                        stop.append(exc)
                result = ExtractionResult(session=digest.session, error=str(exc))
            except ExtractorError as exc:
                result = ExtractionResult(session=digest.session, error=str(exc))
                if isinstance(exc.usage, Usage):  # what the model did before it failed still counts
                    result.usage = exc.usage
            except RecursionError:
                result = ExtractionResult(session=digest.session, error=TOO_DEEP)
            except Exception as exc:  # an extractor bug must not lose the other sessions
                result = ExtractionResult(
                    session=digest.session,
                    error=f"{extractor.name} extractor failed: {type(exc).__name__}: {exc}",
                )
        if on_result is not None:
            try:
                on_result(result)
            finally:
                done.put((index, result))
        else:
            done.put((index, result))

    if not digests:
        return
    workers = max(1, min(int(concurrency or 1), len(digests)))
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="dreamtui-extract")
    try:
        futures = [pool.submit(one, i, d) for i, d in enumerate(digests)]
        for _ in digests:
            yield done.get()
        for f in futures:
            f.result()  # a bug in ``on_result`` is not swallowed
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def extract_many(
    digests: Sequence[Digest],
    extractor: Extractor,
    context_for: ContextFor,
    concurrency: int = 4,
    on_result: Callable[[ExtractionResult], None] | None = None,
) -> list[ExtractionResult]:
    """Run ``extractor`` over every digest, at most ``concurrency`` at once; the results in input order
    (see :func:`extract_iter`)."""
    results: list[ExtractionResult | None] = [None] * len(digests)
    for index, result in extract_iter(digests, extractor, context_for, concurrency, on_result):
        results[index] = result
    return [r for r in results if r is not None]
