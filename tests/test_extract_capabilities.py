"""Each extractor declares what it can do besides extracting (``Capabilities``); the cycle, the gate and
the CLI read that, never its name. The declaration agrees with what the extractor gives."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dreamtui.core.errors import ExtractorError
from dreamtui.core.extract.anthropic_ext import AnthropicExtractor
from dreamtui.core.extract.base import OFFLINE, Capabilities, Extractor
from dreamtui.core.extract.batch import BatchSource, runner_for
from dreamtui.core.extract.command import CommandExtractor
from dreamtui.core.extract.heuristic import HeuristicExtractor
from dreamtui.core.extract.openai_ext import OpenAIExtractor
from dreamtui.core.ledger import Ledger


def extractors() -> list[Extractor]:
    return [
        HeuristicExtractor(),
        CommandExtractor([sys.executable, "-c", "pass"]),
        AnthropicExtractor(model="claude-test", api_key="sk-ant-test-key"),
        OpenAIExtractor(base_url="http://127.0.0.1:9/v1", model="qwen3:4b", max_retries=0),
    ]


@pytest.mark.parametrize("extractor", extractors(), ids=lambda e: e.name)
def test_the_declared_capabilities_agree_with_what_the_extractor_gives(extractor: Extractor) -> None:
    caps = extractor.capabilities
    assert isinstance(caps, Capabilities)
    assert (extractor.structured() is not None) == caps.model_backed
    assert isinstance(extractor, BatchSource) or not caps.batches


def test_only_an_extractor_that_declares_batches_gets_a_batch_runner(tmp_path: Path) -> None:
    ledger = Ledger(tmp_path / "ledger.sqlite")
    try:
        anthropic = AnthropicExtractor(model="claude-test", api_key="sk-ant-test-key")
        assert runner_for(anthropic, ledger).extractor is anthropic
        heuristic = HeuristicExtractor()
        assert heuristic.capabilities == OFFLINE
        with pytest.raises(ExtractorError, match="the heuristic extractor cannot extract through"):
            runner_for(heuristic, ledger)
    finally:
        ledger.close()
