"""Open the Textual review app: ``dreamtui`` (configured folders) or ``dreamtui --demo``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from dreamtui.core.config import Config
from dreamtui.core.errors import DreamError


def run_app(config: Config, demo: bool = False, demo_dir: Path | None = None) -> None:
    """Open the review app on ``config``, or on the bundled demo data in a temporary folder.

    With ``demo``, the demo's transcripts, memory repo and state live in ``demo_dir`` (else
    ``$DREAMTUI_DEMO_DIR``, else a new temporary folder); their paths are printed before the app opens
    and again when it closes, so a person can look at the memory repo afterwards. (Do not redirect
    stdout: Textual measures the terminal through it. Set ``DREAMTUI_DEMO_DIR`` to choose the folder.)
    """
    from dreamtui.core.ledger import Ledger

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        # Textual would draw escape codes into a pipe or file and wait for keys that never come
        raise DreamError("the review app needs a terminal (standard input and output); in scripts use "
                         "`dreamtui candidates`, `accept`, `reject`, `dream` …")
    if demo:
        from dreamtui.demo import prepare_demo

        if demo_dir is None and os.environ.get("DREAMTUI_DEMO_DIR"):
            demo_dir = Path(os.environ["DREAMTUI_DEMO_DIR"])
        print("dreamtui: preparing the demo (one dream cycle with the offline extractor)…", file=sys.stderr)
        config = prepare_demo(demo_dir, config)
        print(f"dreamtui demo: transcripts {config.transcripts}\n"
              f"dreamtui demo: memory repo {config.memory}\n"
              f"dreamtui demo: state {config.state}", flush=True)
    from dreamtui.tui.app import DreamApp

    ledger = Ledger.open(config.state)
    try:
        DreamApp(config, ledger).run()
    finally:
        ledger.close()
    if demo:
        print(f"dreamtui demo: memory repo {config.memory}")
