"""``dreamtui link``: offer each installed agent its way to the memory, as a diff the person confirms;
undo exactly what was added; keep every generated block current when a lesson is accepted or undone.

Nothing is written without the person's yes (:func:`plan` only reads; :func:`apply` writes one change
the person saw). A per-project file (a project's own repository) is only ever planned for a project
named with ``--project``, and never committed. After an accept or an undo, :func:`refresh` rewrites
the block of every file linked so (never one the person edited inside the markers: that is said), and
a failure there is a notice, never a failed decision.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from dreamtui.core.config import Config
from dreamtui.core.memory import textdiff
from dreamtui.core.memory.agents import AGENTS, claude_code, content, named
from dreamtui.core.memory.agents import sections as sec
from dreamtui.core.memory.agents.base import BLOCK, GLOBAL, IMPORT, PROJECT, Target, shown
from dreamtui.core.repository import repository_root
from dreamtui.core.text import without_surrogates

MEMORY = "memory"
IMPORTS = "imports"
PROJECTS_FILE = "linked-projects.json"
OFFERED_FILE = "link-offered.json"

# what a change does, as the plan lists it
LINKED = "linked"  # nothing to do: the agent already reaches the memory
ADD = "add"
UPDATE = "update"  # the block is behind what memory holds
EDITED = "edited"  # the person changed the text inside the markers: writing replaces that
REMOVE = "remove"
ABSENT = "absent"  # undo: nothing of dreamtui's there
FOREIGN = "foreign"  # undo: the import lines are there, but not written by dreamtui link
ERROR = "error"
WRITES = (ADD, UPDATE, EDITED, REMOVE)


@dataclass(slots=True)
class Change:
    """What linking (or unlinking) does to one file."""

    target: Target
    state: str
    old: str | None = None
    """The file's text as planned (``None``: no file)."""
    new: str | None = None
    """The text to write (``None`` with :data:`REMOVE`: the file goes, dreamtui made it)."""
    message: str = ""
    dirs: int = 0
    """Removing the file: folders dreamtui made for it, removed when empty."""

    @property
    def needed(self) -> bool:
        return self.state in WRITES

    def diff(self) -> list[str]:
        """The unified diff the person reads before saying yes."""
        if not self.needed:
            return []
        name = shown(self.target.path)
        old_name = name if self.old is not None else "/dev/null"
        new_name = name if self.new is not None else "/dev/null"
        lines = textdiff.unified(self.old or "", self.new or "", old_name, new_name)
        return [without_surrogates(line) for line in lines]  # bytes that are not UTF-8, shown as �

    def to_json(self) -> dict[str, object]:
        return {
            "path": str(self.target.path),
            "scope": self.target.scope,
            "how": self.target.how,
            "state": self.state,
            "message": self.message,
            "note": self.target.note,
            "diff": self.diff(),
        }


@dataclass(slots=True)
class AgentPlan:
    """One agent: is it installed, and what linking or unlinking would change."""

    name: str
    agent: str
    installed: bool
    folder: Path
    way: str
    changes: list[Change] = field(default_factory=list)
    note: str = ""

    @property
    def needed(self) -> list[Change]:
        return [c for c in self.changes if c.needed]

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "agent": self.agent,
            "installed": self.installed,
            "folder": str(self.folder),
            "way": self.way,
            "note": self.note,
            "changes": [c.to_json() for c in self.changes],
        }


def project_root(path: Path) -> Path:
    """The repository ``path`` lies in (its main worktree), else ``path`` itself; a missing folder or a
    file is a one-line error."""
    path = path.expanduser()
    if not path.is_dir():
        raise sec.LinkError(f"{path} is not a folder (--project names a project's folder)")
    return Path(repository_root(str(path.resolve())))


def plan(
    config: Config,
    agents: Iterable[str] | None = None,
    project: Path | None = None,
    *,
    undo: bool = False,
    claude_md: Path | None = None,
    chosen: bool | None = None,
) -> list[AgentPlan]:
    """What linking (``undo``: unlinking) would change, agent by agent: every known agent (``agents``
    None) or the ones named. An agent that is not installed gets no change unless the person chose it
    (``chosen``; by default: ``agents`` was given); ``claude_md`` puts another file in place of
    ``~/.claude/CLAUDE.md``."""
    modules = [named(n) for n in agents] if agents is not None else list(AGENTS)
    if chosen is None:
        chosen = agents is not None
    plans = []
    for module in modules:
        installed = bool(module.installed()) or (module is claude_code and claude_md is not None)
        item = AgentPlan(module.name, module.agent, installed, module.folder(), module.way)
        if installed or chosen:
            for target in _targets(module, config.memory, project, claude_md):
                item.changes.append(plan_target(config, target, undo=undo))
            if not item.changes:
                item.note = "per project only: name one with --project PATH"
        plans.append(item)
    return plans


def _targets(module: ModuleType, memory: Path, project: Path | None, claude_md: Path | None) -> list[Target]:
    found: list[Target] = list(module.targets(memory, project))
    if module is claude_code and claude_md is not None:
        found = [Target(t.agent, claude_md, t.how, t.scope, t.project, t.prefix, t.note) for t in found]
    return found


def plan_target(config: Config, target: Target, *, undo: bool = False) -> Change:
    """The change linking (``undo``: unlinking) makes to one target's file."""
    try:
        text = sec.read_text(target.path)
        if target.how == IMPORT:
            return _unlink_imports(target, text, config) if undo else _link_imports(target, text, config)
        return _unlink_block(target, text) if undo else _link_block(target, text, config)
    except sec.LinkError as exc:
        return Change(target, ERROR, message=_with_path(str(exc), target.path))


def _with_path(message: str, path: Path) -> str:
    return message if str(path) in message else f"{shown(path)}: {message}"


def _link_imports(target: Target, text: str | None, config: Config) -> Change:
    wanted = claude_code.import_lines(config.memory)
    present = {line.strip() for line in (text or "").splitlines()}
    missing = [line for line in wanted if line not in present]
    if not missing:
        return Change(target, LINKED, text, text, "imports the memory index and briefing")
    inner = "\n".join([claude_code.HEADER, *missing]) + "\n"
    found = sec.find(text or "", IMPORTS)
    if found is not None:
        new = sec.replaced(text or "", found, "\n".join([claude_code.HEADER, *wanted]) + "\n")
        return Change(target, UPDATE, text, new, "the import lines name another memory folder")
    new = sec.added(text, IMPORTS, inner, target.prefix, sec.missing_dirs(target.path) if text is None else 0)
    return Change(
        target, ADD, text, new, f"adds {len(missing)} import line{'s' if len(missing) != 1 else ''}"
    )


def _unlink_imports(target: Target, text: str | None, config: Config) -> Change:
    if text is None:
        return Change(target, ABSENT, None, None, "no file")
    found = sec.find(text, IMPORTS)
    if found is not None:
        new = sec.removed(text, found, target.prefix)
        return Change(target, REMOVE, text, new, "removes the import lines", found.dirs if new is None else 0)
    legacy = _legacy_block(text, claude_code.import_lines(config.memory))
    if legacy is not None:
        return Change(target, REMOVE, text, legacy, "removes the import lines an earlier dreamtui link added")
    present = {line.strip() for line in text.splitlines()}
    if any(line in present for line in claude_code.import_lines(config.memory)):
        return Change(
            target, FOREIGN, text, text, "its import lines were not added by dreamtui link: left alone"
        )
    return Change(target, ABSENT, text, text, "nothing of dreamtui's there")


def _legacy_block(text: str, wanted: list[str]) -> str | None:
    """``text`` without the block earlier versions appended (a blank line, the header, import lines)."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line != claude_code.HEADER:
            continue
        j = i + 1
        while j < len(lines) and lines[j] in wanted:
            j += 1
        if j == i + 1:
            continue
        start = i - 1 if i > 0 and lines[i - 1] == "" else i
        return "\n".join(lines[:start] + lines[j:])
    return None


def _link_block(target: Target, text: str | None, config: Config) -> Change:
    inner = content.block(config.memory, target.project if target.scope == PROJECT else None)
    found = sec.find(text or "", MEMORY)
    if found is None:
        dirs = sec.missing_dirs(target.path) if text is None else 0
        return Change(
            target, ADD, text, sec.added(text, MEMORY, inner, target.prefix, dirs), "adds the lessons block"
        )
    if found.edited:
        return Change(
            target,
            EDITED,
            text,
            sec.replaced(text or "", found, inner),
            "you changed the text between dreamtui's markers: linking again replaces it",
        )
    if found.inner == inner:
        return Change(target, LINKED, text, text, "holds the lessons block")
    return Change(
        target, UPDATE, text, sec.replaced(text or "", found, inner), "brings the lessons block up to date"
    )


def _unlink_block(target: Target, text: str | None) -> Change:
    found = sec.find(text or "", MEMORY)
    if text is None or found is None:
        return Change(target, ABSENT, text, text, "nothing of dreamtui's there")
    note = "removes the lessons block" + (" (with your edits inside it)" if found.edited else "")
    new = sec.removed(text, found, target.prefix)
    return Change(target, REMOVE, text, new, note, found.dirs if new is None else 0)


def apply(config: Config, change: Change) -> None:
    """Write one change the person said yes to; the file must still be as planned."""
    if not change.needed:
        return
    now = sec.read_text(change.target.path)
    if now != change.old:
        raise sec.LinkError(
            f"{shown(change.target.path)} changed since it was shown; run dreamtui link again"
        )
    sec.write(change.target.path, change.new, change.dirs)
    if change.target.scope == PROJECT and change.target.project is not None:
        try:
            _remember_project(config, change.target.project, keep=change.state != REMOVE)
        except OSError as exc:
            raise sec.LinkError(
                f"{shown(change.target.path)} was written, but the state folder could not remember its "
                f"project, so accepts will not refresh it: {exc.strerror or exc}"
            ) from exc


# -- the projects linked, and the one offer ---------------------------------------------------------


def _state_file(config: Config, name: str) -> Path:
    return Path(config.state) / name


def _read_json_list(path: Path) -> list[str]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def _write_json_list(path: Path, values: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(sorted(set(values)), indent=1), encoding="utf-8")
    os.replace(tmp, path)


def linked_projects(config: Config) -> list[Path]:
    """The projects whose own files were linked (their blocks are refreshed with the global ones)."""
    return [Path(p) for p in _read_json_list(_state_file(config, PROJECTS_FILE))]


def _remember_project(config: Config, project: Path, keep: bool) -> None:
    path = _state_file(config, PROJECTS_FILE)
    known = set(_read_json_list(path))
    if keep:
        known.add(str(project))
    else:
        still = any(
            (found := _section_of(t)) is not None and found.kind == MEMORY
            for module in AGENTS
            for t in module.targets(config.memory, project)
            if t.scope == PROJECT
        )
        if not still:
            known.discard(str(project))
    _write_json_list(path, list(known))


def _section_of(target: Target) -> sec.Section | None:
    try:
        text = sec.read_text(target.path)
        return sec.find(text, MEMORY) if text is not None else None
    except sec.LinkError:
        return None


def refresh(config: Config) -> list[str]:
    """Rewrite the lessons block of every linked file whose block is behind the memory's last commit:
    after an accept or an undo. Never one the person edited inside the markers (one notice says so),
    never a file without dreamtui's block; a failure is a notice, never an exception."""
    notices: list[str] = []
    try:
        targets = _linked_targets(config)
    except Exception as exc:  # a listing problem never fails a decision
        return [f"linked agents' files not refreshed: {exc}"]
    blocks: dict[Path | None, str] = {}
    seen: set[str] = set()
    for target in targets:
        try:
            where = os.path.realpath(target.path)
            if where in seen:
                continue
            seen.add(where)
            text = sec.read_text(target.path)
            found = sec.find(text, MEMORY) if text is not None else None
            if text is None or found is None:
                continue
            if found.edited:
                notices.append(
                    f"{shown(target.path)}: you changed the lessons between dreamtui's markers, so they were "
                    f"not rewritten (dreamtui link --agent {target.agent} shows the difference)"
                )
                continue
            key = target.project if target.scope == PROJECT else None
            if key not in blocks:
                blocks[key] = content.block(config.memory, key)
            if found.inner != blocks[key]:
                sec.write(target.path, sec.replaced(text, found, blocks[key]))
        except Exception as exc:
            notices.append(f"{shown(target.path)} not refreshed: {exc}")
    return notices


def _linked_targets(config: Config) -> list[Target]:
    found = [t for module in AGENTS for t in module.targets(config.memory, None) if t.how == BLOCK]
    for project in linked_projects(config):
        found += [
            t for module in AGENTS for t in module.targets(config.memory, project) if t.scope == PROJECT
        ]
    return found


def unlinked(config: Config) -> list[str]:
    """The installed agents (with a file of their own in the home folder) that do not reach the memory."""
    missing = []
    for item in plan(config):
        if item.installed and any(
            c.target.scope == GLOBAL and c.state in (ADD, UPDATE) for c in item.changes
        ):
            missing.append(item.agent)
    return missing


def offer(config: Config) -> str | None:
    """The one line that tells of ``dreamtui link``, once per agent newly found unlinked (remembered in
    the state folder); ``None`` when there is nothing new to tell. Never writes an agent's file."""
    try:
        path = _state_file(config, OFFERED_FILE)
        told = set(_read_json_list(path))
        if all(module.agent in told or not module.installed() for module in AGENTS):
            return None  # the usual case: nothing new to look at, no file read
        missing = unlinked(config)
        new = [a for a in missing if a not in told]
        if not new:
            return None
        _write_json_list(path, [*told, *new])
    except Exception:
        return None
    names = ", ".join(missing[:-1]) + (" and " if len(missing) > 1 else "") + missing[-1]
    verb = "does" if len(missing) == 1 else "do"
    return (
        f"{names} {verb} not load the lessons you accept yet: `dreamtui link` shows what it would add "
        "(nothing is written without your yes)"
    )
