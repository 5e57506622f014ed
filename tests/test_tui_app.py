"""The app as a whole: behaviour a person notices."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.usefixtures("git_home")
def test_the_app_without_a_terminal_is_a_one_line_error(tmp_path: Path) -> None:
    env = {**os.environ, "DREAMTUI_TRANSCRIPTS": str(tmp_path / "t"), "DREAMTUI_MEMORY": str(tmp_path / "m"),
           "DREAMTUI_STATE": str(tmp_path / "s")}
    proc = subprocess.run([sys.executable, "-c", "from dreamtui.cli.main import main; main()"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith("dreamtui: the review app needs a terminal")
    assert "\x1b" not in proc.stdout + proc.stderr and not (tmp_path / "s").exists()
