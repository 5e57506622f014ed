"""Extractors: plug-ins that read one session's digest and propose lessons.

``make_extractor(config)`` builds the one ``choose(config)`` names (``core/extract/choose.py``):
``heuristic`` (offline rules), ``anthropic`` (Claude via the SDK), ``claude-code`` (the person's
Claude Code login via the Claude Agent SDK), ``openai`` (a local model behind an OpenAI-compatible
server) or ``command`` (any program); ``auto`` picks the best one available.
"""

from __future__ import annotations

from dreamtui.core.config import Config, choices
from dreamtui.core.errors import ConfigError
from dreamtui.core.extract.base import ExtractContext, Extractor
from dreamtui.core.extract.choose import choose
from dreamtui.core.extract.heuristic import HeuristicExtractor
from dreamtui.core.extract.runner import extract_many

__all__ = ["ExtractContext", "Extractor", "HeuristicExtractor", "choose", "extract_many", "make_extractor"]


def make_extractor(config: Config, *, base_url: str | None = None) -> Extractor:
    """The extractor the config asks for (``auto``: the best one available, see ``choose``)."""
    kind = choose(config).kind
    if kind == "heuristic":
        return HeuristicExtractor()
    if kind == "anthropic":
        from dreamtui.core.extract.anthropic_ext import AnthropicExtractor

        return AnthropicExtractor.from_config(config, base_url=base_url)
    if kind == "claude-code":
        from dreamtui.core.extract.claude_code import ClaudeCodeExtractor

        return ClaudeCodeExtractor.from_config(config)
    if kind == "openai":
        from dreamtui.core.extract.openai_ext import OpenAIExtractor

        return OpenAIExtractor.from_config(config, base_url=base_url)
    if kind == "command":
        from dreamtui.core.extract.command import CommandExtractor

        return CommandExtractor(config.command, timeout=config.command_timeout)
    raise ConfigError(f"unknown extractor {kind!r}: choose one of {', '.join(choices('extractor'))}")
