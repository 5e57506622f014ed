"""Issue 34's kill loops: at least 200 SIGKILLs during consolidation decisions and 200 during outside
decisions, each followed by a start, with the ledger and git compared at once (0 disagreements)::

    python3 tests/bench/kill_agreement.py [KILLS]     # default 200 of each

It runs ``tests/test_kill_agreement.py`` (the suite runs the same loops with 12 kills each) with
``AGREEMENT_KILLS`` set, and prints each loop's line (kills, runs, seconds).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    kills = sys.argv[1] if len(sys.argv) > 1 else "200"
    env = {**os.environ, "AGREEMENT_KILLS": kills}
    test = HERE.parent / "test_kill_agreement.py"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", str(test)],
        env=env,
        check=False,
    )
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
