"""Extractors: plug-ins that read one session's digest and propose lessons.

``make_extractor(config)`` builds the one ``choose(config)`` names (``core/extract/choose.py``):
``heuristic`` (offline rules), ``anthropic`` (Claude via the SDK), ``claude-code`` (the person's
Claude Code login via the Claude Agent SDK), ``openai`` (a local model behind an OpenAI-compatible
server) or ``command`` (any program); ``auto`` picks the best one available. What each can do besides
extracting (batches, a model for the dedup judge) it declares itself: ``base.Capabilities``.
"""

from __future__ import annotations

from collections.abc import Callable

from dreamtui.core.config import Config, choices
from dreamtui.core.errors import ConfigError
from dreamtui.core.extract.anthropic_ext import AnthropicExtractor
from dreamtui.core.extract.base import ExtractContext, Extractor
from dreamtui.core.extract.choose import choose
from dreamtui.core.extract.claude_code import ClaudeCodeExtractor
from dreamtui.core.extract.command import CommandExtractor
from dreamtui.core.extract.heuristic import HeuristicExtractor
from dreamtui.core.extract.openai_ext import OpenAIExtractor
from dreamtui.core.extract.runner import extract_many

__all__ = [
    "ExtractContext",
    "Extractor",
    "HeuristicExtractor",
    "choose",
    "extract_many",
    "make_extractor",
]

_BUILDERS: dict[str, Callable[[Config, str | None], Extractor]] = {
    "heuristic": lambda config, base_url: HeuristicExtractor(),
    "anthropic": lambda config, base_url: AnthropicExtractor.from_config(config, base_url=base_url),
    "claude-code": lambda config, base_url: ClaudeCodeExtractor.from_config(config),
    "openai": lambda config, base_url: OpenAIExtractor.from_config(config, base_url=base_url),
    "command": lambda config, base_url: CommandExtractor(config.command, timeout=config.command_timeout),
}
"""How each extractor ``choose`` may name is built from the config (``base_url``: a test server's)."""


def make_extractor(config: Config, *, base_url: str | None = None) -> Extractor:
    """The extractor the config asks for (``auto``: the best one available, see ``choose``)."""
    kind = choose(config).kind
    build = _BUILDERS.get(kind)
    if build is None:
        raise ConfigError(f"unknown extractor {kind!r}: choose one of {', '.join(choices('extractor'))}")
    return build(config, base_url)
