"""Extract many sessions at once: a bounded thread pool, one result per digest, in input order."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from dreamtui.core.errors import ExtractorAuthError, ExtractorError
from dreamtui.core.extract.base import TOO_DEEP, ExtractContext, Extractor
from dreamtui.core.models import Digest, ExtractionResult

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
            except RecursionError:
                result = ExtractionResult(session=digest.session, error=TOO_DEEP)
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
