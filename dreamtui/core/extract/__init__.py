"""Extractors: plug-ins that read one session's digest and propose lessons.

``make_extractor(config)`` picks one by ``config.resolved_extractor()``: ``heuristic`` (offline,
the default without an API key), ``anthropic`` (Claude via the SDK), ``claude-code`` (the person's
Claude Code login via the Claude Agent SDK), or ``command`` (any program).
"""

from __future__ import annotations

from dreamtui.core.config import Config
from dreamtui.core.errors import ConfigError
from dreamtui.core.extract.base import ExtractContext, Extractor
from dreamtui.core.extract.heuristic import HeuristicExtractor
from dreamtui.core.extract.runner import extract_many

__all__ = ["ExtractContext", "Extractor", "HeuristicExtractor", "extract_many", "make_extractor"]


def make_extractor(config: Config, *, base_url: str | None = None) -> Extractor:
    """The extractor the config asks for (``auto``: anthropic when ANTHROPIC_API_KEY is set)."""
    kind = config.resolved_extractor()
    if kind == "heuristic":
        return HeuristicExtractor()
    if kind == "anthropic":
        from dreamtui.core.extract.anthropic_ext import AnthropicExtractor

        return AnthropicExtractor.from_config(config, base_url=base_url)
    if kind == "claude-code":
        from dreamtui.core.extract.claude_code import ClaudeCodeExtractor

        return ClaudeCodeExtractor.from_config(config)
    if kind == "command":
        from dreamtui.core.extract.command import CommandExtractor

        return CommandExtractor(config.command, timeout=config.command_timeout)
    raise ConfigError(f"unknown extractor {kind!r}: choose heuristic, anthropic, claude-code or command")
