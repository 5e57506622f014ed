"""The ledger: behaviour a person notices."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from fakes.cli_world import unprivileged

from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger


@pytest.mark.usefixtures("git_home")
def test_read_only_ledger_is_a_one_line_error(config: Config, tmp_path: Path) -> None:
    Ledger.open(config.state).close()
    ledger_file = config.state / "ledger.sqlite3"
    for name in os.listdir(config.state):
        (config.state / name).chmod(0o444)
    config.state.chmod(0o555)
    try:
        env = {
            **os.environ,
            "DREAMTUI_STATE": str(config.state),
            "DREAMTUI_MEMORY": str(config.memory),
            "DREAMTUI_TRANSCRIPTS": str(config.transcripts),
        }
        for args in (["candidates"], ["stats"], ["dream"]):
            proc = subprocess.run(
                [*unprivileged(), sys.executable, "-c", "from dreamtui.cli.main import main; main()", *args],
                capture_output=True,
                text=True,
                env=env,
                timeout=60,
            )
            assert proc.returncode == 2, proc.stderr
            assert "Traceback" not in proc.stderr
            assert proc.stderr.startswith(f"dreamtui: cannot write the ledger {ledger_file}")
            assert len(proc.stderr.strip().splitlines()) == 1
    finally:
        config.state.chmod(0o755)
        for name in os.listdir(config.state):
            (config.state / name).chmod(0o644)
