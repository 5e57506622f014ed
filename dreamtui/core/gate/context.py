"""What an extraction is told about existing memory: the memories closest to what the person said in a
session, from the gate's dedup index and in the session's scope, so the model does not propose them
again (``dreamtui extract``, ``dreamtui batch submit``; the dream cycle's deep sleep recalls its own)."""

from __future__ import annotations

from collections.abc import Callable

from dreamtui.core.config import Config
from dreamtui.core.extract.base import ExtractContext
from dreamtui.core.extract.runner import ContextFor
from dreamtui.core.gate.dedup import DedupIndex, Doc
from dreamtui.core.gate.pipeline import Scopes
from dreamtui.core.models import Digest

MAX_CONTEXT_MEMORIES = 12
PROBE_CHARS = 6000


def closest_memories(
    index: DedupIndex,
    digest: Digest,
    limit: int = MAX_CONTEXT_MEMORIES,
    applies: Callable[[Doc], bool] | None = None,
) -> tuple[str, ...]:
    """The texts of the existing memories closest to what the person said in ``digest``.

    ``index`` is the gate's dedup index; the probe is the person's words (or,
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
    """A ``context_for`` for :func:`~dreamtui.core.extract.runner.extract_many`: project, closest memories, digest budget."""
    scopes = Scopes(config.memory)

    def context_for(digest: Digest) -> ExtractContext:
        memories = (
            closest_memories(index, digest, applies=lambda doc: scopes.applies(doc, digest.project))
            if index is not None
            else ()
        )
        return ExtractContext(project=digest.project, memories=memories, max_chars=config.max_digest_chars)

    return context_for
