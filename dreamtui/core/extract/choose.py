"""Which extractor runs: ``auto`` picks the best one the person has, and says why in one line.

The order, best first: an Anthropic API key (``anthropic``), a logged-in Claude Code (``claude-code``),
a configured local model server (``openai``), else the offline rules (``heuristic``). Nothing here
touches the network: a configured server counts as there (a down server is one clear error when
extraction runs).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from dreamtui.core.config import Config
from dreamtui.core.extract.claude_code import claude_code_status

THIN_QUEUE = (
    "offline rules: expect few proposals — log in to Claude Code, set ANTHROPIC_API_KEY, "
    "or configure a local model (see docs/extractors.md)"
)
"""What the header and the waking message say when the heuristic runs."""
THIN_QUEUE_SHORT = "offline rules: expect few proposals — see docs/extractors.md to connect a model"
"""The same, for a narrow terminal."""


@dataclass(frozen=True, slots=True)
class Choice:
    """The extractor that runs (``kind``, a name ``make_extractor`` knows) and, in one line, why."""

    kind: str
    reason: str
    auto: bool = False
    """Whether ``auto`` chose it (else the person named it)."""

    @property
    def note(self) -> str | None:
        """What a person should know about it: the heuristic's thin queue, else nothing."""
        return extractor_note(self.kind)


def extractor_note(name: str) -> str | None:
    """What a person should know about the extractor ``name`` (a choice, or the one a cycle ran): the
    heuristic's thin queue, else nothing."""
    return THIN_QUEUE if name == "heuristic" else None


def claude_code_problem() -> str | None:
    """None when the ``claude-code`` extractor can run (a ``claude`` CLI is found and a login is likely
    present), else a one-line reason."""
    try:
        problem: str | None = claude_code_status()
    except Exception as exc:  # noqa: BLE001 - a probe that fails means Claude Code cannot be used now
        return f"cannot tell whether Claude Code is logged in: {' '.join(str(exc).split())[:120]}"
    return problem


def choose(config: Config) -> Choice:
    """The extractor ``config`` asks for; for ``auto`` the best one available, with the reason."""
    if config.extractor != "auto":
        return Choice(config.extractor, f"extractor = {config.extractor!r} in the configuration")
    if os.environ.get("ANTHROPIC_API_KEY"):
        return Choice("anthropic", "auto: ANTHROPIC_API_KEY is set", auto=True)
    if claude_code_problem() is None:
        return Choice("claude-code", "auto: Claude Code is installed and logged in", auto=True)
    if config.openai_base_url:
        model = config.openai_model or "the model it serves"
        return Choice(
            "openai",
            f"auto: a local model server is configured ({config.openai_base_url}, {model})",
            auto=True,
        )
    return Choice(
        "heuristic", "auto: no ANTHROPIC_API_KEY, no Claude Code login, no local model configured", auto=True
    )


def resolved_extractor(config: Config) -> str:
    """The name of the extractor that runs for ``config`` (``choose(config).kind``)."""
    return choose(config).kind
