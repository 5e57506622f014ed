"""The hand-written days of transcripts the dream-cycle tests run on (``tests/fixtures/cycle``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from dreamtui.core.config import Config

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cycle"
ACME = "-home-kim-acme"
QUIET = "-home-kim-quiet"
DAY = "2026-03-10"
NOW = "2026-03-10T23:00:00Z"
WRITTEN = 1773180000.0  # 2026-03-10T22:00:00Z: an hour before NOW, past the quiet period
RULES = FIXTURES / "rules_extractor.py"
"""A deterministic ``command`` extractor: its rules say which lessons each fixture session yields."""


def install(config: Config, name: str) -> None:
    """Copy a fixture day into the transcripts folder, files last written an hour before NOW."""
    shutil.copytree(FIXTURES / name, config.transcripts, dirs_exist_ok=True)
    for p in config.transcripts.rglob("*.jsonl"):
        os.utime(p, (WRITTEN, WRITTEN))
