"""Open the Textual review app: ``dreamtui`` (configured folders) or ``dreamtui --demo``."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from dreamtui.core.config import Config
from dreamtui.core.errors import DreamError
from dreamtui.demo import prepare_demo
from dreamtui.services import memory_repo


def run_app(config: Config, demo: bool = False, demo_dir: Path | None = None) -> None:
    """Open the review app on ``config``, or on the bundled demo data in a temporary folder.

    With ``demo``, the demo's transcripts, memory repo and state live in ``demo_dir`` (else
    ``$DREAMTUI_DEMO_DIR``, else a new temporary folder); their paths are printed before the app opens
    and again when it closes, so a person can look at the memory repo afterwards. (Do not redirect
    stdout: Textual measures the terminal through it. Set ``DREAMTUI_DEMO_DIR`` to choose the folder.)
    """
    if not demo:
        refuse_missing_transcripts(config)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        # Textual would draw escape codes into a pipe or file and wait for keys that never come
        raise DreamError(
            "the review app needs a terminal (standard input and output); in scripts use "
            "`dreamtui candidates`, `accept`, `reject`, `dream` …"
        )
    temporary: Path | None = None  # the demo's own temporary folder, removed when the app closes
    settings_file = config.config_file  # the demo keeps the theme chosen in it there (and nothing else)
    if demo:
        if demo_dir is None and os.environ.get("DREAMTUI_DEMO_DIR"):
            demo_dir = Path(os.environ["DREAMTUI_DEMO_DIR"])
        if demo_dir is None:
            temporary = demo_dir = Path(tempfile.mkdtemp(prefix="dreamtui-demo-"))
        print("dreamtui: preparing the demo (one dream cycle with the offline extractor)…", file=sys.stderr)
        try:
            config = prepare_demo(demo_dir, config)
        except BaseException:
            remove_demo(temporary)
            raise
        print(
            f"dreamtui demo: transcripts {config.transcripts}\n"
            f"dreamtui demo: memory repo {config.memory}\n"
            f"dreamtui demo: state {config.state}",
            flush=True,
        )
    from dreamtui.tui.app import DreamApp  # deferred: Textual loads only when the app opens

    try:
        app = DreamApp(config, theme_file=settings_file if demo else None)  # its Workspace opens the ledger
        try:
            app.run()
        finally:
            app.workspace.close()
    finally:
        if temporary is not None:
            remove_demo(temporary)
            print(
                f"dreamtui demo: removed its temporary folder {temporary} "
                "(set DREAMTUI_DEMO_DIR to keep the demo's memory repo)"
            )
        elif demo:
            print(f"dreamtui demo: memory repo {config.memory}")
    if not demo:  # the first run: installed agents that do not load the memory yet, told once, on quitting
        offer = memory_repo.link_offer(config)
        if offer:
            print(f"dreamtui: {offer}", file=sys.stderr)


def refuse_missing_transcripts(config: Config) -> None:
    """The app never opens on a transcripts folder that is not there: it would show the proposals the
    ledger kept (those of the folder it read before) as if they were this one's. One line instead."""
    folder = config.transcripts
    if folder.is_dir():
        return
    what = "is not a folder" if folder.exists() else "does not exist"
    raise DreamError(
        f"the transcripts folder {folder} {what}: point --transcripts (or DREAMTUI_TRANSCRIPTS) at Claude "
        "Code's transcripts (default ~/.claude/projects), or try `dreamtui --demo`"
    )


def remove_demo(folder: Path | None) -> None:
    """Remove the demo's temporary folder (and only a folder the demo made: ``dreamtui-demo-*``)."""
    if folder is not None and folder.name.startswith("dreamtui-demo-"):
        shutil.rmtree(folder, ignore_errors=True)
