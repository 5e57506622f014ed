"""The dream cycle's live progress on a terminal 80 columns wide: every bar's counts and time whole
(they were cut to ``12/…`` and ``0:00:…``), the step cut with an ellipsis instead, no line too long."""

from __future__ import annotations

import io
import re

import pytest

from dreamtui.cli.progress import LiveDisplay

ESCAPES = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")


@pytest.mark.parametrize("columns", [80, 100, 200])
def test_the_progress_bars_fit_the_terminal(columns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))  # what Rich measures a file that is not a terminal by
    monkeypatch.delenv("LINES", raising=False)
    out = io.StringIO()
    display = LiveDisplay(out)
    display("light", "reading payments-api/3f2a9c41-7d1e-4b8a-9c2e-5a1d0e6b7f10 (session 12/120)", 0.1)
    display("branch", "extracting dreamboard-web/c91d3b7e with the offline heuristic (branch 3/40)", 0.5)
    display.close()
    shown = [ESCAPES.sub("", line).rstrip() for line in out.getvalue().replace("\r", "\n").split("\n")]
    last = [line for line in shown if line.startswith(("Light sleep", "Branching"))][-2:]
    assert len(last) == 2, shown
    for line in last:
        assert len(line) <= columns, line
        assert re.search(r"\b\d+/\d+\b", line) and re.search(r"\d+:\d\d:\d\d$", line), line
        assert "/…" not in line and ":…" not in line, line
    assert "120/120" in last[0] and "40/40" in last[1]
