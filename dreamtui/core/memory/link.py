"""Make Claude Code load the memory repo: the ``@…/MEMORY.md`` import line in ``~/.claude/CLAUDE.md``.

Nothing is written without the person's consent: :func:`plan_link` says what would change,
:func:`apply_link` appends the lines only when called.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from dreamtui.core.errors import DreamError
from dreamtui.core.files import replace_where_it_points


class LinkError(DreamError):
    """CLAUDE.md cannot be read or written (a folder, unreadable, a broken symlink…)."""


@dataclass(frozen=True)
class LinkPlan:
    """What linking would do: the CLAUDE.md file and the import lines it still lacks."""

    claude_md: Path
    missing: tuple[str, ...]

    @property
    def needed(self) -> bool:
        """True when at least one import line is missing."""
        return bool(self.missing)


def import_target(path: Path) -> str:
    """The ``@`` import form of ``path``, written with ``~`` when it is under the home folder."""
    path = path.expanduser().resolve()
    home = Path.home().resolve()
    try:
        return "@~/" + path.relative_to(home).as_posix()
    except ValueError:
        return "@" + path.as_posix()


def plan_link(memory_dir: Path, claude_md: Path | None = None) -> LinkPlan:
    """Which import lines (index and briefing) ``claude_md`` lacks for ``memory_dir``."""
    claude_md = claude_md or Path.home() / ".claude" / "CLAUDE.md"
    wanted = [import_target(memory_dir / "MEMORY.md"), import_target(memory_dir / "briefing.md")]
    existing = {line.strip() for line in _read(claude_md).splitlines()}
    return LinkPlan(claude_md, tuple(w for w in wanted if w not in existing))


def _read(path: Path) -> str:
    """The text of ``path`` ("" when missing); bytes that are not UTF-8 survive a rewrite unchanged."""
    try:
        return path.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return ""
    except OSError as exc:
        raise LinkError(f"cannot read {path}: {exc.strerror or exc}") from exc


def apply_link(plan: LinkPlan) -> None:
    """Append the missing import lines to the CLAUDE.md file (atomically; the rest kept as is)."""
    if not plan.needed:
        return
    # a symlinked CLAUDE.md (kept in a dotfiles repo, say) is edited where it points, never replaced
    target = Path(os.path.realpath(plan.claude_md))
    old = _read(target)
    block = "\n# Long-term memory curated by dreamtui\n" + "\n".join(plan.missing) + "\n"
    new = old + ("" if not old or old.endswith("\n") else "\n") + block
    try:
        replace_where_it_points(target, new.encode("utf-8", "surrogateescape"))
    except OSError as exc:
        raise LinkError(f"cannot write {target}: {exc.strerror or exc}") from exc
