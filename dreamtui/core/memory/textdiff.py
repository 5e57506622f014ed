"""The one diff dreamtui shows (issue 24): git's own, with line semantics that never lie.

Every diff a person reads — an outside change, a briefing, a normalisation, two briefing versions —
comes from :func:`unified` (or :func:`unified_text`). The hunks are git's: ``git diff --no-index`` (its
Myers algorithm with the indent heuristic, what ``git diff`` shows by default) on the two texts,
run without the person's or the system's git configuration so a ``diff.algorithm``, a colour or an
external diff tool never changes what dreamtui shows.

Lines are split on ``\\n`` only (as git does; a ``\\r`` or a form feed stays inside its line and is drawn
visibly) and compared without their terminator: a file whose last line has no final newline is not
a different last line. So a line appended to such a ``MEMORY.md`` is one added line (``git diff``
would show the unchanged last line removed and added again), and a removed and an added line are
never joined on one line (what ``difflib`` with ``keepends`` did when the last line changed). Whether
a side ends without a final newline is said once, after the hunks, in a ``\\`` line (git's marker),
and is the whole diff when nothing else changed.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from dreamtui.core.errors import MemoryRepoError

NO_NEWLINE = "\\ No newline at end of file"
CONTEXT = 3
_GIT_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_COUNT": "0",
    "LC_ALL": "C",
}


def _lines(text: str) -> list[str]:
    """``text`` split on ``\\n`` only, without terminators (a final newline ends the last line)."""
    if not text:
        return []
    return (text[:-1] if text.endswith("\n") else text).split("\n")


def _hunks(old: list[str], new: list[str], context: int) -> list[str]:
    """git's hunks (``@@`` lines and their ``' '``/``-``/``+`` lines) between two line lists."""
    if old == new:
        return []
    with tempfile.TemporaryDirectory(prefix="dreamtui-diff-") as tmp:
        a, b = Path(tmp, "a"), Path(tmp, "b")
        for path, lines in ((a, old), (b, new)):
            path.write_bytes("".join(f"{line}\n" for line in lines).encode("utf-8", "surrogateescape"))
        try:
            proc = subprocess.run(
                [
                    "git",
                    "diff",
                    "--no-index",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-textconv",
                    "--text",
                    "--diff-algorithm=myers",
                    "--indent-heuristic",
                    f"-U{context}",
                    "--",
                    str(a),
                    str(b),
                ],
                capture_output=True,
                env={**os.environ, **_GIT_ENV},
                cwd=tmp,
                timeout=60,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise MemoryRepoError(f"git diff could not run: {exc}") from exc
    if proc.returncode not in (0, 1):
        said = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise MemoryRepoError(f"git diff failed: {said[0] if said else f'exit {proc.returncode}'}")
    out = proc.stdout.decode("utf-8", "surrogateescape").split("\n")
    if out and out[-1] == "":
        out.pop()
    start = next((i for i, line in enumerate(out) if line.startswith("@@")), len(out))
    return out[start:]


def unified(
    old: str, new: str, old_name: str = "a", new_name: str = "b", *, context: int = CONTEXT
) -> list[str]:
    """The unified diff between two texts as lines (no terminators): ``--- old_name``, ``+++ new_name``,
    git's hunks, then a ``\\ No newline at end of file`` line naming the side that lacks one when the
    two differ in that; ``[]`` when the texts are equal."""
    if old == new:
        return []
    hunks = _hunks(_lines(old), _lines(new), context)
    notes = []
    old_bare, new_bare = bool(old) and not old.endswith("\n"), bool(new) and not new.endswith("\n")
    if old_bare != new_bare:
        notes.append(f"{NO_NEWLINE} ({'before' if old_bare else 'after'} this change)")
    if not hunks and not notes:
        return []
    return [f"--- {old_name}", f"+++ {new_name}", *hunks, *notes]


def unified_text(old: str, new: str, old_name: str = "a", new_name: str = "b") -> str:
    """:func:`unified` as one text, each line ending in ``\\n`` (``""`` when the texts are equal)."""
    return "".join(f"{line}\n" for line in unified(old, new, old_name, new_name))
