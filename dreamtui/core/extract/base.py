"""The extractor protocol every extractor follows, and the context it receives.

An extractor reads one session's :class:`~dreamtui.core.models.Digest` and proposes
:class:`~dreamtui.core.models.RawCandidate` lessons. It never writes anything: the gate
verifies, dedups and stores what it proposes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from dreamtui.core.errors import ExtractorError
from dreamtui.core.models import MEMORY_TYPES, Digest, ExtractionResult, RawCandidate, Usage

DEFAULT_MAX_CHARS = 120_000


@dataclass(frozen=True, slots=True)
class ExtractContext:
    """What an extractor knows besides the digest.

    ``memories`` are short texts of the closest existing memories (so the extractor can avoid
    proposing them again); ``max_chars`` is the digest budget of one model call.
    """

    project: str
    memories: tuple[str, ...] = field(default_factory=tuple)
    max_chars: int = DEFAULT_MAX_CHARS
    progress: Callable[[str], None] | None = field(default=None, compare=False, repr=False)
    """Told, in a few words, how a long model call advances (``part 1/3: 120 tokens received, 35 s``)
    so a person sees a slow model working; an extractor that cannot tell never calls it."""

    def tell(self, message: str) -> None:
        """Pass ``message`` to ``progress`` (a broken display never breaks an extraction)."""
        if self.progress is not None:
            try:
                self.progress(message)
            except Exception:  # noqa: BLE001 - a display's failure is not the extraction's
                pass


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What an extractor can do besides extracting, declared by the extractor itself (its
    ``capabilities``): the dream cycle, the gate and the CLI read these, never the extractor's name."""

    batches: bool = False
    """It can extract through the Message Batches API (half the price, results collected by a later
    cycle): with ``batch`` on, the cycle branches through :func:`dreamtui.core.extract.batch.runner_for`."""
    model_backed: bool = False
    """It asks a model, which :meth:`Extractor.structured` lends to the dedup judge and REM's
    consolidation; without one, ``structured()`` is None and dedup stays lexical."""


OFFLINE = Capabilities()
"""No model, no batches: the heuristic rules, a command."""


@runtime_checkable
class StructuredModel(Protocol):
    """One structured call to a model: a system prompt, a user message, a pydantic schema."""

    @property
    def name(self) -> str:
        """The extractor name, e.g. ``anthropic``, ``claude-code``, ``openai``."""
        ...

    @property
    def model(self) -> str | None:
        """The model it asks."""
        ...

    def ask(
        self, system: str, user: str, schema: type[BaseModel], *, max_tokens: int = 4096
    ) -> tuple[BaseModel | None, Usage]:
        """The model's answer validated against ``schema`` (None when it gave no structured answer)
        and the usage of the call; a failure raises a one-line
        :class:`~dreamtui.core.errors.ExtractorError` (an ``ExtractorAuthError`` when every further
        call would fail the same way)."""
        ...


@runtime_checkable
class Extractor(Protocol):
    """Proposes lessons for one session. ``name`` is stored with every candidate.

    What it can do besides extracting is declared by it, never guessed from its name elsewhere:
    ``capabilities`` (:class:`Capabilities`: batches, model-backed) and ``structured()`` (the model
    the dedup judge and consolidation may ask; None for the heuristic and command extractors)."""

    @property
    def capabilities(self) -> Capabilities:
        """What it can do besides extracting."""
        ...

    @property
    def name(self) -> str:
        """Stored with every candidate."""
        ...

    @property
    def model(self) -> str | None:
        """The model it asks (``None`` when it asks none)."""
        ...

    def extract(self, digest: Digest, context: ExtractContext) -> ExtractionResult:
        """Return the candidates for ``digest`` (errors go in ``ExtractionResult.error``
        or are raised as :class:`~dreamtui.core.errors.ExtractorError`)."""
        ...

    def structured(self) -> StructuredModel | None:
        """The model the dedup judge and consolidation may ask (the extractor's own), or None; not None
        exactly when ``capabilities.model_backed``."""
        ...


def concurrency_for(extractor: Any, wanted: int) -> int:
    """How many sessions to extract at once: ``wanted`` (the ``concurrency`` setting), capped by what the
    extractor says its model runs at once (an optional ``max_concurrency()``: a local server's slots)."""
    wanted = max(1, int(wanted or 1))
    limit = getattr(extractor, "max_concurrency", None)
    if not callable(limit):
        return wanted
    try:
        most = int(limit())
    except Exception:  # noqa: BLE001 - a server that cannot say: one at a time is safe
        most = 1
    return max(1, min(wanted, most))


def normalise_scope(scope: Any, project: str) -> str:
    """``global`` stays global; anything else (``project``, the project name, empty) is the project."""
    text = str(scope or "").strip()
    return "global" if text.lower() == "global" else project


def candidate_from_mapping(
    item: Any, *, session: str, project: str, extractor: str, model: str | None
) -> RawCandidate | str:
    """Turn one JSON object into a RawCandidate, or return why it is malformed (a short reason)."""
    if not isinstance(item, dict):
        return "not an object"
    values: dict[str, str] = {}
    for key in ("claim", "quote"):
        value = item.get(key)
        if not isinstance(value, str) or not value.strip():
            return f"missing {key}"
        values[key] = value
    for key in ("why", "how_to_apply"):
        value = item.get(key, "")
        values[key] = value if isinstance(value, str) else ""
    kind = str(item.get("type") or "").strip().lower()
    if kind not in MEMORY_TYPES:
        return f"bad type {kind or '(none)'}"
    return RawCandidate(
        claim=values["claim"].strip(),
        why=values["why"].strip(),
        how_to_apply=values["how_to_apply"].strip(),
        type=kind,
        scope=normalise_scope(item.get("scope"), project),
        quote=values["quote"].strip(),
        session=session,
        extractor=extractor,
        model=model,
    )


TOO_DEEP = (
    "the model's answer is nested too deeply to read (a broken or hostile answer); nothing was taken from it"
)


@contextmanager
def readable_answers() -> Iterator[None]:
    """Around a model call: an answer nested too deeply for Python's parsers (a ``RecursionError`` in the
    SDK's or our JSON reading, at any depth of 100,000 brackets) is a one-line :class:`ExtractorError`."""
    try:
        yield
    except RecursionError:
        raise ExtractorError(TOO_DEEP) from None
