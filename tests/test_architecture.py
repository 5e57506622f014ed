"""The core runs headless: importing every core module (and the CLI) never loads Textual."""

from __future__ import annotations

import subprocess
import sys


def test_core_and_cli_never_import_textual() -> None:
    code = (
        "import pkgutil, importlib, sys\n"
        "import dreamtui.core\n"
        "for m in pkgutil.walk_packages(dreamtui.core.__path__, 'dreamtui.core.'):\n"
        "    importlib.import_module(m.name)\n"
        "import dreamtui.cli.main\n"
        "loaded = sorted(n for n in sys.modules if n == 'textual' or n.startswith('textual.'))\n"
        "print(len(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0", out.stdout + out.stderr
