"""The agents' own memory writes as outside changes (issue 31 item 4): Codex CLI's memories and Gemini
CLI's ``save_memory`` section, reviewed like Claude Code's auto memory.

Both live outside the memory repository, so the reviewed state of each is kept **in** it, as a
snapshot in git (the one repository, every decision a commit):

* **Codex CLI** (``$CODEX_HOME/memories``, ``CODEX_HOME`` defaulting to ``~/.codex``): its memory
  pipeline (``codex-rs/core/src/memories``) writes Markdown there at the start of a session, in the
  background: a consolidation agent keeps ``MEMORY.md``, ``memory_summary.md`` (loaded into every
  session's prompt) and ``skills/<name>/…``. Each such file is snapshotted at
  ``agents/codex/memories/<same path>``. ``raw_memories.md`` and ``rollout_summaries/`` are left
  out: Codex rebuilds them from its own database at every consolidation (a restore would be undone by
  the next start).
* **Gemini CLI**: its ``save_memory`` tool (``packages/core/src/tools/memoryTool.ts``) appends
  ``- <fact>`` lines under the heading ``## Gemini Added Memories`` of the global
  ``~/.gemini/GEMINI.md`` (``GEMINI_CLI_HOME`` moves ``~``). Only that section is the agent's write:
  it runs from the heading to the next ``\\n## `` (or the end), found as the tool finds it, and is
  snapshotted at ``agents/gemini/GEMINI-added-memories.md``. The rest of ``GEMINI.md`` is the
  person's: never read into git, never shown as a change, never touched by a restore.

A difference between what the agent has now and the snapshot in ``HEAD`` is an outside item whose
writer is the agent (``codex``, ``gemini-cli``), kept in ``outside_items`` under the snapshot's path.
The agent's bytes pass :func:`dreamtui.core.memory.layout.storable` first (every secret redacted,
invalid UTF-8 kept byte for byte): the item's blob, its diff and what an accept commits are the
redacted bytes, so nothing holding a secret reaches git or the ledger.

* **Accept** commits the snapshot (the crash-safe commit of :mod:`.outside`: an intent, a commit
  from a temporary index, ``update-ref``; recorded at the next start when HEAD has it), then puts the
  snapshot in the working tree too (:func:`sync_snapshots`).
* **Reject** records the reason; the agent's file is left as it is, and the same version is not shown
  again (the agent's next write is).
* **Restore** puts the reviewed state back into the agent's file — for Gemini CLI only the section,
  every other byte of ``GEMINI.md`` as it was — crash-safe like a reject of :mod:`.outside`: an
  intent, the file renamed aside (atomic) and checked there, the new bytes written beside it (mode
  kept) and hard-linked into place (which fails rather than replace a file written meanwhile).
  Never through a symlink: a symlinked file or folder is a one-line notice and is not guarded.
* **Undo** takes back each: an accept by a commit, a reject by forgetting it, a restore by putting
  the agent's version back (from git, where the restore kept it, unless it held a secret).

The snapshot folder ``agents/`` is dreamtui's: the scan of the memory repository leaves it out, and
each scan puts back a snapshot file that differs from ``HEAD`` (a kill between the commit and the
working-tree write) when its bytes are a version git has; a hand edit is left alone, with a notice.
"""

from __future__ import annotations

import os
import re
import secrets as token_source
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from git import Repo

from dreamtui.core import clock
from dreamtui.core import secrets as secret_scan
from dreamtui.core.config import GUARD_AGENTS, Config
from dreamtui.core.errors import MemoryRepoError
from dreamtui.core.files import kind_of_mode
from dreamtui.core.ingest.formats import codex as codex_format
from dreamtui.core.ingest.formats import gemini as gemini_format
from dreamtui.core.ledger import Ledger, journal
from dreamtui.core.ledger import outside as outside_items
from dreamtui.core.ledger.outside import Item
from dreamtui.core.memory import gitops, textdiff
from dreamtui.core.memory import layout as memory
from dreamtui.core.memory import outside as base
from dreamtui.core.memory import outside_tree as tree_of
from dreamtui.core.memory.agents import sections
from dreamtui.core.memory.outside_tree import FILE, LINK, HeadFile

CODEX, GEMINI = GUARD_AGENTS
SNAPSHOTS = "agents"
CODEX_SNAPSHOT = "agents/codex/memories"
GEMINI_SNAPSHOT = "agents/gemini/GEMINI-added-memories.md"
GEMINI_HEADER = b"## Gemini Added Memories"
"""``MEMORY_SECTION_HEADER`` of gemini-cli's ``memoryTool.ts``."""
CODEX_REBUILT = ("raw_memories.md", "rollout_summaries")
"""What Codex rebuilds from its own database at each consolidation: not guarded."""
MAX_FILES = 2000
"""A Codex memory folder with more files than this is a notice, not a scan."""
CRASH_STEPS = ("restore-intent", "agent-aside", "agent-link", "restore-ledger")
"""The points of a restore (and of its undo) where the crash test dies (``DREAMTUI_CRASH_AT``)."""
LABELS = {CODEX: "Codex CLI memories", GEMINI: "Gemini CLI save_memory"}


def is_snapshot(rel: str | None) -> bool:
    """``rel`` (a memory-repository path) is an agent's snapshot, not the person's memory."""
    return bool(rel) and (rel == GEMINI_SNAPSHOT or str(rel).startswith(CODEX_SNAPSHOT + "/"))


def agent_of(rel: str) -> str:
    """The agent whose snapshot ``rel`` is."""
    return GEMINI if rel == GEMINI_SNAPSHOT else CODEX


# -- what is guarded ---------------------------------------------------------------------------


@dataclass(slots=True)
class Guarded:
    """One agent's memory as the configuration guards it: where it is, whether it is guarded, why."""

    agent: str
    where: Path
    """Codex: the memories folder; Gemini CLI: the ``GEMINI.md`` file."""
    on: bool
    why: str


def guarded(config: Config) -> list[Guarded]:
    """Each agent, guarded or not: ``[guard] agents`` when set, else each agent whose folder exists."""
    chosen = config.guard.get("agents")
    out = []
    for agent, home, where in (
        (CODEX, codex_format.codex_home(), codex_format.codex_home() / "memories"),
        (GEMINI, gemini_format.gemini_dir(), gemini_format.gemini_dir() / "GEMINI.md"),
    ):
        if chosen is not None:
            on = agent in chosen
            why = "[guard] agents names it" if on else "not in [guard] agents"
        else:
            on = home.is_dir()
            why = f"{home} exists" if on else f"{home} does not exist"
        out.append(Guarded(agent, where, on, why))
    return out


def where_of(config: Config, rel: str) -> tuple[Path, str]:
    """The agent's folder and the path inside it of the snapshot ``rel`` (Gemini: ``GEMINI.md``'s
    folder and ``GEMINI.md``)."""
    source = next(g for g in guarded(config) if g.agent == agent_of(rel))
    if source.agent == GEMINI:
        return source.where.parent, source.where.name
    return source.where, rel.removeprefix(CODEX_SNAPSHOT + "/")


# -- reading the agents' files -----------------------------------------------------------------


_LINK_BLOCK = re.compile(
    rb"^"
    + re.escape(sections.BEGIN.encode())
    + rb" [^\n]*-->[ \t]*\r?\n.*?^"
    + re.escape(sections.END.encode())
    + rb"[ \t]*(?:\r?\n|\Z)",
    re.M | re.S,
)
"""dreamtui's own block in ``GEMINI.md`` (``dreamtui link``, :mod:`.agents.sections`): never the agent's."""


_LEAD = re.compile(rb" lead=(\d)")
_SHA = re.compile(rb" sha=([0-9a-f]{16})")


def _blocks(data: bytes) -> list[tuple[int, int]]:
    """dreamtui's blocks, each with the line breaks it says it put before itself (``lead=``)."""
    out = []
    for m in _LINK_BLOCK.finditer(data):
        begin_end = data.find(b"\n", m.start()) + 1
        inner = data[begin_end : data.rfind(sections.END.encode(), m.start(), m.end())]
        sha = _SHA.search(data, m.start(), begin_end)
        if sha is None or sections.digest(inner.decode("utf-8", "surrogateescape")) != sha.group(1).decode():
            continue  # edited inside its markers (by the agent, too): not only dreamtui's any more
        start = m.start()
        lead = _LEAD.search(data, m.start(), data.find(b"\n", m.start()))
        n = int(lead.group(1)) if lead else 0
        if n and data[start - n : start] == b"\n" * n:
            start -= n
        out.append((start, m.end()))
    return out


def _outside_blocks(data: bytes, needle: bytes, start: int, blocks: list[tuple[int, int]]) -> int:
    """The first ``needle`` from ``start`` that is not inside one of dreamtui's blocks (-1: none)."""
    at = data.find(needle, start)
    while at >= 0:
        inside = next((b for b in blocks if b[0] <= at < b[1] - 1), None)
        if inside is None:
            return at
        at = data.find(needle, inside[1] - 1)
    return -1


def section_span(data: bytes) -> tuple[int, int] | None:
    """Where the ``## Gemini Added Memories`` section is, as gemini-cli's ``memoryTool.ts`` finds it:
    from the first occurrence of the heading to the next ``\\n## `` after it (or the end); dreamtui's
    own ``dreamtui link`` block is looked past (its lines are never the agent's)."""
    blocks = _blocks(data)
    at = _outside_blocks(data, GEMINI_HEADER, 0, blocks)
    if at < 0:
        return None
    end = _outside_blocks(data, b"\n## ", at + len(GEMINI_HEADER), blocks)
    return at, len(data) if end < 0 else end


def agent_part(section: bytes) -> tuple[bytes, bytes]:
    """A section's bytes without dreamtui's own blocks (the agent's), and those blocks (with the line
    breaks before them that ``dreamtui link`` added)."""
    spans = _blocks(section)
    if not spans:
        return section, b""
    kept, ours, pos = [], [], 0
    for start, end in spans:
        kept.append(section[pos:start])
        ours.append(section[start:end])
        pos = end
    kept.append(section[pos:])
    return b"".join(kept), b"".join(ours)


def _separation(before: bytes) -> bytes:
    """``ensureNewlineSeparation`` of ``memoryTool.ts``: what goes between text and a new section."""
    if not before or before.endswith((b"\n\n", b"\r\n\r\n")):
        return b""
    return b"\n" if before.endswith((b"\n", b"\r\n")) else b"\n\n"


def splice(data: bytes, section: bytes | None) -> bytes:
    """``GEMINI.md``'s bytes with its section replaced by ``section`` (``None``: taken out), every
    other byte as it was; a section where there was none is appended as the tool appends it."""
    span = section_span(data)
    if span is None:
        return data if section is None else data + _separation(data) + section
    start, end = span
    _agent, ours = agent_part(data[start:end])  # dreamtui's own block stays, after the agent's lines
    return data[:start] + (section or b"") + ours + data[end:]


@dataclass(slots=True)
class Unit:
    """What the agent wrote at one snapshot path: a Codex file, Gemini CLI's section."""

    raw: bytes
    stored: bytes
    """``raw`` with every secret redacted (what git and the ledger may hold)."""

    @property
    def blob(self) -> str:
        return tree_of.blob_of_bytes(self.stored)

    @property
    def rules(self) -> list[str]:
        if self.stored == self.raw:
            return []
        return secret_scan.rules_found(self.raw.decode("utf-8", "surrogateescape"))


def _unit(raw: bytes) -> Unit:
    return Unit(raw, memory.storable(raw))


@dataclass(slots=True)
class Observed:
    """One agent's memory as read now: its units by snapshot path, what could not be looked at."""

    agent: str
    ok: bool = True
    """False: nothing can be said about it (a symlinked folder…): its items are left as they are."""
    units: dict[str, Unit] = field(default_factory=dict)
    skipped: set[str] = field(default_factory=set)
    skipped_under: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)

    def speaks_for(self, rel: str) -> bool:
        """Whether a snapshot path missing from :attr:`units` was deleted (not skipped, not unknown)."""
        if rel in self.skipped or any(rel.startswith(p) for p in self.skipped_under):
            return False
        if self.agent == GEMINI:
            return rel == GEMINI_SNAPSHOT
        inside = rel.removeprefix(CODEX_SNAPSHOT + "/")
        return rel.startswith(CODEX_SNAPSHOT + "/") and not _rebuilt(inside)


def _rebuilt(inside: str) -> bool:
    return inside.split("/", 1)[0] in CODEX_REBUILT


def _shown(path: Path) -> str:
    home = str(Path.home())
    text = str(path)
    return "~" + text[len(home) :] if home not in ("", "/") and text.startswith(home + "/") else text


def observe(config: Config, agent: str) -> Observed:
    """Read one agent's memory (never through a symlink; regular files within the size limit)."""
    source = next(g for g in guarded(config) if g.agent == agent)
    return _observe_codex(source.where) if agent == CODEX else _observe_gemini(source.where)


def _observe_codex(root: Path) -> Observed:
    seen = Observed(CODEX)
    label = LABELS[CODEX]
    try:
        st = os.lstat(root)
    except FileNotFoundError:
        return seen  # no memories (yet, or cleared): every snapshot file is a deletion
    except OSError as exc:
        seen.ok = False
        seen.notices.append(f"{label}: cannot look at {_shown(root)} ({exc.strerror}): not guarded now")
        return seen
    if not stat.S_ISDIR(st.st_mode):
        seen.ok = False
        what = f"a symlink → {_readlink(root)}" if stat.S_ISLNK(st.st_mode) else kind_of_mode(st.st_mode)
        seen.notices.append(f"{label}: {_shown(root)} is {what}: not guarded (it is never followed)")
        return seen
    tree = tree_of.walk(root)
    if len(tree.entries) > MAX_FILES:
        seen.ok = False
        seen.notices.append(
            f"{label}: {_shown(root)} holds {len(tree.entries)} files (more than {MAX_FILES}): not guarded now"
        )
        return seen
    for rel in tree.unreadable:
        seen.skipped_under.append(f"{CODEX_SNAPSHOT}/{rel}/" if rel else f"{CODEX_SNAPSHOT}/")
        seen.notices.append(f"{label}: cannot list {_shown(root / rel)}: left as it is")
    for inside, entry in sorted(tree.entries.items()):
        if _rebuilt(inside):
            continue
        rel = f"{CODEX_SNAPSHOT}/{inside}"
        try:
            memory.safe_path(Path("/nonexistent-dreamtui-root"), rel)  # a name git and dreamtui can hold
        except MemoryRepoError:
            seen.skipped.add(rel)
            seen.notices.append(
                f"{label}: {_shown(root / inside)} has a name dreamtui cannot keep: not guarded"
            )
            continue
        problem = None
        if entry.kind == LINK:
            problem = f"a symlink → {entry.target} (never followed)"
        elif entry.kind == FILE:
            try:
                data = tree_of.read_at(root, inside)
            except tree_of.NotPlain as exc:
                problem = exc.strerror or "not a regular file"
            except FileNotFoundError:
                continue  # gone since the listing: a deletion
            except OSError as exc:
                problem = f"unreadable ({exc.strerror})"
            else:
                if data is None:
                    problem = f"too large to review ({tree_of.human_size(entry.size)}, limit {tree_of.human_size(tree_of.max_bytes())})"
                else:
                    seen.units[rel] = _unit(data)
                    continue
        else:
            problem = (entry.special or "not a regular file").removeprefix("a ").removeprefix("an ")
        seen.skipped.add(rel)
        seen.notices.append(f"{label}: {_shown(root / inside)} is {_article(problem)}: not guarded")
    return seen


def _article(what: str) -> str:
    return what if what.startswith(("a ", "an ", "too ", "unreadable")) else f"a {what}"


def _readlink(path: Path) -> str:
    try:
        return os.readlink(path)
    except OSError:
        return "?"


def _observe_gemini(path: Path) -> Observed:
    seen = Observed(GEMINI)
    label = LABELS[GEMINI]
    try:
        data = tree_of.read_plain(path)
    except FileNotFoundError:
        return seen  # no GEMINI.md: no section
    except tree_of.NotPlain as exc:
        seen.ok = False
        what = (
            f"a symlink → {_readlink(path)}"
            if exc.errno != 22
            else (exc.strerror or "").removeprefix("it is ")
        )
        seen.notices.append(f"{label}: {_shown(path)} is {what}: not guarded (it is never followed)")
        return seen
    except OSError as exc:
        seen.ok = False
        seen.notices.append(f"{label}: cannot read {_shown(path)} ({exc.strerror}): not guarded now")
        return seen
    if data is None:
        seen.ok = False
        seen.notices.append(
            f"{label}: {_shown(path)} is too large to review (limit {tree_of.human_size(tree_of.max_bytes())}): "
            "not guarded now"
        )
        return seen
    span = section_span(data)
    if span is not None:
        seen.units[GEMINI_SNAPSHOT] = _unit(agent_part(data[span[0] : span[1]])[0])
    return seen


# -- the snapshots in the memory repository's working tree ---------------------------------------


def _known_blob(repo: Repo, blob: str) -> bool:
    try:
        tree_of.git_bytes(repo, "cat-file", "-e", blob)
    except subprocess.CalledProcessError:
        return False
    return True


def any_in_head(repo: Repo) -> bool:
    """Whether HEAD holds an agent's snapshot."""
    if not gitops.head_sha(repo):
        return False
    try:
        out = tree_of.git_bytes(repo, "ls-tree", "--name-only", "HEAD", "--", SNAPSHOTS)
    except subprocess.CalledProcessError:
        return False
    return bool(out.strip())


def sync_snapshots(
    repo: Repo, head: dict[str, HeadFile] | None = None, notices: list[str] | None = None
) -> None:
    """Make the working tree's ``agents/`` snapshots what HEAD has (after an accept, an undo, or a
    kill between the commit and the write). A file there whose bytes git does not know (a hand
    edit) is left alone, with a notice."""
    root = gitops.work_tree(repo)
    head = tree_of.head_tree(repo) if head is None else head
    wanted = {rel: f for rel, f in head.items() if is_snapshot(rel)}
    present: dict[str, str | None] = {}
    for top in (CODEX_SNAPSHOT, GEMINI_SNAPSHOT.rsplit("/", 1)[0]):
        if not tree_of.real_folders(root, f"{top}/x"):
            continue
        sub = tree_of.walk(root / top) if (root / top).is_dir() else tree_of.Tree()
        for temp in sub.temps:  # a write of a snapshot a kill interrupted (under the lock: none runs)
            (root / top / temp).unlink(missing_ok=True)
        for inside, entry in sub.entries.items():
            rel = f"{top}/{inside}"
            if is_snapshot(rel):
                present[rel] = entry.kind
    for rel in sorted(set(wanted) | set(present)):
        want = wanted.get(rel)
        kind, blob = tree_of.identity(root, rel)
        if want is not None and kind == FILE and blob == want.blob:
            continue
        if kind not in (None, FILE) or (blob is not None and not _known_blob(repo, blob)):
            if notices is not None:
                notices.append(
                    f"{rel} was edited in the memory repository: it is the agent's reviewed copy; left as it is"
                )
            continue
        if want is None:
            (root / rel).unlink(missing_ok=True)
            continue
        memory.make_dirs(root, rel.rsplit("/", 1)[0])
        memory.atomic_write(root, rel, tree_of.git_bytes(repo, "cat-file", "blob", want.blob), verbatim=True)


# -- scanning ----------------------------------------------------------------------------------


def scan(config: Config, ledger: Ledger, repo: Repo, report: base.ScanReport) -> None:
    """Bring the agents' items up to date (under the memory lock, after the repository's scan)."""
    sources = [g for g in guarded(config) if g.on]
    head = tree_of.head_tree(repo)
    if any(is_snapshot(rel) for rel in head) or (gitops.work_tree(repo) / SNAPSHOTS).is_dir():
        sync_snapshots(repo, head, report.notices)
    if not sources:
        return
    pending = {i.path: i for i in outside_items.items(ledger) if is_snapshot(i.path)}
    clear_temps(config, ledger)
    now = clock.now_iso()
    for source in sources:
        seen = observe(config, source.agent)
        report.notices.extend(seen.notices)
        if not seen.ok:
            continue
        paths = {rel for rel in head if seen.speaks_for(rel)} | set(seen.units)
        paths |= {rel for rel in pending if agent_of(rel) == source.agent and seen.speaks_for(rel)}
        with ledger.write():
            for rel in sorted(paths):
                _scan_one(
                    ledger, source, rel, seen.units.get(rel), head.get(rel), pending.get(rel), now, report
                )


def clear_temps(config: Config, ledger: Ledger) -> None:
    """Remove what a killed restore left in the agents' folders (its aside copy: its bytes are in git
    or back in place; its new bytes: linked or never used), once no decision is in flight."""
    if outside_items.in_flight(ledger):
        return
    for source in guarded(config):
        if not source.on:
            continue
        if source.agent == GEMINI:
            folders = [source.where.parent]
        else:
            folders = [source.where] if source.where.is_dir() and not source.where.is_symlink() else []
            folders += [source.where / d for d in tree_of.walk(source.where).dirs] if folders else []
        for folder in folders:
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            for name in names:
                if name.startswith((base.ASIDE, base.NEW)):
                    (folder / name).unlink(missing_ok=True)


def _scan_one(
    ledger: Ledger,
    source: Guarded,
    rel: str,
    unit: Unit | None,
    old: HeadFile | None,
    current: Item | None,
    now: str,
    report: base.ScanReport,
) -> None:
    blob = unit.blob if unit is not None else None
    head_blob = old.blob if old is not None else None
    if blob == head_blob:
        if current is not None:
            base._close(ledger, current.id, "gone", None, "the agent's memory is as reviewed again")
            report.gone.append(current.id)
        return
    kind = "added" if old is None else "deleted" if unit is None else "modified"
    if current is not None and (current.blob, current.kind, current.head_blob) == (blob, kind, head_blob):
        return
    if current is None and _kept_after_reject(ledger, rel, blob, head_blob):
        return
    where = source.where if source.agent == GEMINI else source.where / rel.removeprefix(CODEX_SNAPSHOT + "/")
    values = {
        "path": rel,
        "old_path": None,
        "kind": kind,
        "blob": blob,
        "head_blob": head_blob,
        "writer": source.agent,
        "session": None,
        "transcript": None,
        "line": None,
        "tool": None,
        "batch": None,
        "detected_at": now,
        "entry": FILE if unit is not None else None,
        "note": f"{_shown(where)}{' § ## Gemini Added Memories' if source.agent == GEMINI else ''}",
        "secrets": ",".join(unit.rules) if unit is not None and unit.rules else None,
    }
    if current is not None:
        outside_items.update(ledger, current.id, values)
        report.updated.append(current.id)
    else:
        item_id = base._new_id(rel, blob)
        outside_items.add(ledger, item_id, values)
        report.new.append(item_id)


def _kept_after_reject(ledger: Ledger, rel: str, blob: str | None, head_blob: str | None) -> bool:
    """The person rejected exactly this version and left the agent's file as it was."""
    last = outside_items.last_decided(ledger, rel)
    return (
        last is not None
        and last.status == "rejected"
        and last.decided_as == "kept"
        and (last.blob, last.head_blob) == (blob, head_blob)
    )


# -- showing -----------------------------------------------------------------------------------


def _now_unit(config: Config, item: Item) -> Unit | None | bool:
    """The agent's unit at ``item``'s path now (``None``: absent; ``False``: it cannot be read)."""
    seen = observe(config, agent_of(item.path))
    if not seen.ok or not seen.speaks_for(item.path):
        return False
    return seen.units.get(item.path)


def diff(config: Config, item: Item) -> str:
    """The item's diff: the reviewed snapshot (HEAD when seen) → what the agent has (redacted)."""
    repo = gitops.open_repo(config.memory, create=False)
    before = base._blob_bytes(repo, item.head_blob)
    if item.status == "accepted" or not item.blob:
        after = base._blob_bytes(repo, item.blob)
    else:
        unit = _now_unit(config, item)
        if not isinstance(unit, Unit) or unit.blob != item.blob:
            return f"({item.note} changed since it was shown; the next scan shows it again)\n"
        after = unit.stored
    head = f"(the agent's {'section of ' if item.writer == GEMINI else ''}file: {item.note})\n"
    if item.secrets:
        head += f"(SECRET: it holds {', '.join(item.secret_rules)}; redacted here and in what an accept commits)\n"
    return head + textdiff.unified_text(
        base._shown_text(before),
        base._shown_text(after),
        f"a/{item.path}" if item.head_blob else "/dev/null",
        f"b/{item.path}" if item.blob else "/dev/null",
    )


def reject_effect(item: Item) -> list[str]:
    """What the choices on an agent's item do, in lines read before saying yes."""
    where = item.note or item.path
    section = " (only its ## Gemini Added Memories section; the rest of GEMINI.md stays byte for byte)"
    lines = [
        f"Reject: {where} is left as the agent wrote it; your reason is kept, and this version is not "
        "shown again (the agent's next write is).",
        f"Restore: {where} is put back as reviewed{section if item.writer == GEMINI else ''}: "
        + ("the file is deleted." if not item.head_blob else "the reviewed version comes back."),
    ]
    if item.blob and item.secrets:
        lines.append("Its bytes hold a secret: they are not kept, so u cannot bring a restored version back.")
    else:
        lines.append("u (undo) takes either back.")
    return lines


def accept_caution(item: Item) -> list[str]:
    """Why accepting an agent's item asks first: it commits a deletion."""
    if item.kind == "deleted":
        return [f"It commits the deletion of {item.path} (the agent removed {item.note})."]
    return []


# -- deciding ----------------------------------------------------------------------------------


def _checked_unit(config: Config, item: Item) -> Unit | None:
    unit = _now_unit(config, item)
    if unit is False:
        raise base.OutsideError(f"{item.note} cannot be read now (see dreamtui outside); nothing was decided")
    blob = unit.blob if isinstance(unit, Unit) else None
    if blob != item.blob:
        raise base._changed(item.note or item.path)
    return unit if isinstance(unit, Unit) else None


def accept(config: Config, ledger: Ledger, repo: Repo, item: Item, mine: bool) -> str:
    """Commit what the agent has (redacted) as the reviewed snapshot (under the memory lock)."""
    unit = _checked_unit(config, item)
    gitops.ensure_writable(repo)
    subject = base._subject(item, mine)
    sha = base._commit_items(
        config, ledger, repo, [item], subject, base._trailers(item, mine), mine, [unit.stored] if unit else []
    )
    sync_snapshots(repo)
    return sha


def reject(config: Config, ledger: Ledger, item: Item, reason: str) -> list[str]:
    """Record the reject and its reason; the agent's file is left as it is."""
    with ledger.write():
        now = clock.now_iso()
        base._close(ledger, item.id, "rejected", None, reason.strip(), "kept")
        journal.record(ledger, "outside", "reject", [item.id], {"agent": item.writer, "kept": True}, now)
    return [item.id]


def restore(config: Config, ledger: Ledger, repo: Repo, item: Item, reason: str) -> None:
    """Put the agent's file back as reviewed (HEAD's snapshot), crash-safe (under the memory lock)."""
    unit = _checked_unit(config, item)
    folder, inside = where_of(config, item.path)
    kept = None
    if unit is not None and not secret_scan.has_secret(unit.raw.decode("utf-8", "surrogateescape")):
        kept = base._write_blob(repo, unit.raw)  # what the agent had: u brings it back
    payload = {
        "agent": agent_of(item.path),
        "rel": item.path,
        "folder": str(folder),
        "inside": inside,
        "expect": item.blob,
        "put": item.head_blob,
        "before": item.blob,
        "kept": kept,
        "reason": reason.strip(),
        "token": token_source.token_hex(6),
    }
    intent_id = base._record_intent(ledger, item.id, "restore", payload)
    base._step("restore-intent")
    finish(ledger, repo, item.id, intent_id, payload)


def finish(ledger: Ledger, repo: Repo, item_id: str, intent_id: int, payload: dict[str, Any]) -> None:
    """Do (or after a kill, finish) a restore or its undo; a changed file drops the intent and says so."""
    try:
        aside = _swap(repo, payload)
    except BaseException as exc:
        if isinstance(exc, (base.OutsideError, MemoryRepoError, OSError)):
            base._drop_intent(ledger, intent_id)
        if isinstance(exc, OSError):  # a read-only or full folder: one line, never a traceback
            where = _shown(Path(str(payload["folder"])) / str(payload["inside"]))
            raise base.OutsideError(
                f"cannot put {where} back: {exc.strerror or exc}; nothing was decided"
            ) from exc
        raise
    base._step("restore-ledger")
    with ledger.write():
        now = clock.now_iso()
        undo_of = payload.get("undo_of")
        if undo_of:
            outside_items.update(
                ledger,
                item_id,
                {
                    "status": "pending",
                    "commit_sha": None,
                    "reason": None,
                    "decided_as": None,
                    "decided_at": None,
                },
            )
            journal.mark_undone(ledger, int(undo_of))
        else:
            base._close(ledger, item_id, "rejected", None, str(payload["reason"]), "restored")
            journal.record(ledger, "outside", "restore", [item_id], payload, now)
        base._drop_intent(ledger, intent_id)
    if aside is not None:
        aside.unlink(missing_ok=True)  # the agent's bytes: kept in git (unless a secret), or put back
    try:  # the new bytes' temp file, when a kill came between the link and its removal
        target = _target(payload)
        (target.parent / f"{base.NEW}{payload['token']}-0").unlink(missing_ok=True)
    except (base.OutsideError, OSError):
        pass


def _target(payload: dict[str, Any]) -> Path:
    """The agent's file, when every folder between its agent folder and it is a real folder."""
    folder, inside = Path(str(payload["folder"])), str(payload["inside"])
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISDIR(st.st_mode):
        raise base.OutsideError(f"{_shown(folder)} is not a plain folder now: nothing was put back")
    if not tree_of.real_folders(folder, inside):
        raise base.OutsideError(
            f"a folder on the way to {_shown(folder / inside)} is a symlink: nothing was put back"
        )
    return folder / inside


def _unit_blob(agent: str, data: bytes | None) -> str | None:
    """The snapshot blob of a file's bytes (Gemini CLI: of its section); ``None``: no unit."""
    if data is None:
        return None
    if agent == GEMINI:
        span = section_span(data)
        if span is None:
            return None
        data = agent_part(data[span[0] : span[1]])[0]
    return tree_of.blob_of_bytes(memory.storable(data))


def _read(path: Path) -> bytes | None:
    try:
        data = tree_of.read_plain(path)
    except FileNotFoundError:
        return None
    if data is None:
        raise base.OutsideError(f"{_shown(path)} is over the size limit now: nothing was put back")
    return data


def _swap(repo: Repo, payload: dict[str, Any]) -> Path | None:
    """Make the agent's unit ``put`` (a blob in git; ``None``: absent) where it is ``expect`` now:
    the file renamed aside and checked there, the new bytes linked into place. Returns the aside
    file. Every step can be run again after a kill."""
    agent, token = str(payload["agent"]), str(payload["token"])
    expect, put = payload.get("expect"), payload.get("put")
    target = _target(payload)
    aside, tmp = target.parent / f"{base.ASIDE}{token}-0", target.parent / f"{base.NEW}{token}-0"
    changed = base._changed(_shown(target))
    if os.path.lexists(aside):
        old = _read(aside)
        if _unit_blob(agent, old) != expect:
            base._put_back(aside, target, str(target))
            raise changed
        if os.path.lexists(target):  # linked already (a run killed before the ledger), or written anew
            try:
                linked = _unit_blob(agent, _read(target))
            except tree_of.NotPlain:
                linked = "?"
            if linked == put and put is not None:
                return aside
            base._put_back(aside, target, str(target))
            raise changed
    else:
        try:
            old = _read(target)
        except tree_of.NotPlain:
            raise changed from None
        now = _unit_blob(agent, old)
        if now != expect:
            if now == put:
                return None  # done already (a run killed after its link)
            raise changed
        if old is not None:
            os.rename(target, aside)
            base._step("agent-aside")
            if _unit_blob(agent, _read(aside)) != expect:
                base._put_back(aside, target, str(target))
                raise changed
    unit = tree_of.git_bytes(repo, "cat-file", "blob", str(put)) if put else None
    data = splice(old or b"", unit) if agent == GEMINI else unit
    if data is not None and not (agent == GEMINI and old is None and unit is None):
        try:
            _link_new(target, tmp, data, aside if old is not None else None, str(payload["folder"]))
        except BaseException:  # a file written meanwhile, a full disk: the agent's file back as it was
            if old is not None and os.path.lexists(aside):
                base._put_back(aside, target, str(target))
            raise
    return aside if old is not None else None


def _link_new(target: Path, tmp: Path, data: bytes, aside: Path | None, folder: str) -> None:
    """Write ``data`` beside ``target`` (the aside file's mode, else a new file's) and hard-link it into
    place: a file written there meanwhile is never replaced."""
    if not os.path.lexists(folder):  # the agent's own folder went (a restore brings its memory back)
        Path(folder).mkdir(parents=True, exist_ok=True)
    inside = os.path.relpath(target.parent, folder)
    if inside != ".":
        memory.make_dirs(Path(folder), inside.replace(os.sep, "/"))
    mode = stat.S_IMODE(os.lstat(aside).st_mode) if aside is not None else memory.file_mode(target)
    tmp.unlink(missing_ok=True)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fchmod(fh.fileno(), mode)
            os.fsync(fh.fileno())
        base._step("agent-link")
        try:
            os.link(tmp, target, follow_symlinks=False)
        except FileExistsError:
            raise base.OutsideError(
                f"{_shown(target)} was written again just now; nothing was put back over it "
                "(look at it again: dreamtui outside)"
            ) from None
        memory.fsync_dir(target.parent)
    finally:
        tmp.unlink(missing_ok=True)


def undo(config: Config, ledger: Ledger, repo: Repo, entry: journal.Entry) -> str | None:
    """Take back an agent item's decision (the journal entry ``entry``); the item waits again."""
    item = base.get(ledger, entry.refs[0])
    if entry.action == "restore":
        payload = dict(entry.payload)
        if payload.get("before") and not payload.get("kept"):
            raise base.OutsideError(
                f"what the agent had in {item.note} held a secret and was not kept: nothing can bring it "
                "back; nothing was undone"
            )
        back = {
            **payload,
            "expect": payload.get("put"),
            "put": payload.get("kept"),
            "token": token_source.token_hex(6),
            "undo_of": entry.id,
        }
        intent_id = base._record_intent(ledger, item.id, "restore", back)
        finish(ledger, repo, item.id, intent_id, back)
        return None
    sha = None
    if entry.action in ("accept", "mine"):
        sha = base._undo_accept(repo, entry)
        sync_snapshots(repo)
    with ledger.write():
        values: dict[str, Any] = {
            "status": "pending",
            "commit_sha": None,
            "reason": None,
            "decided_as": None,
            "decided_at": None,
            "writer": item.writer if entry.action != "mine" else agent_of(item.path),
        }
        outside_items.update(ledger, item.id, values)
        journal.mark_undone(ledger, entry.id)
    return sha


def recover_restore(
    ledger: Ledger, repo: Repo, intent: outside_items.Intent, notices: list[str] | None
) -> None:
    """Finish a restore (or its undo) a kill interrupted, or undo it when the agent's file changed."""
    found = outside_items.with_prefix(ledger, intent.item_id)
    if not found:
        base._drop_intent(ledger, intent.id)
        return
    try:
        finish(ledger, repo, found[0].id, intent.id, intent.payload)
        if notices is not None:
            notices.append(f"finished the interrupted restore of {found[0].note}")
    except (base.OutsideError, MemoryRepoError, OSError) as exc:
        if notices is not None:
            notices.append(f"an interrupted restore was given up: {exc}")


def describe(config: Config) -> list[tuple[str, str]]:
    """For ``dreamtui config``: each agent and what of it is guarded."""
    out = []
    for source in guarded(config):
        what = "its memories folder" if source.agent == CODEX else "the ## Gemini Added Memories section of"
        if source.on:
            out.append((source.agent, f"{what} {_shown(source.where)} (guarded: {source.why})"))
        else:
            out.append((source.agent, f"{what} {_shown(source.where)} (not guarded: {source.why})"))
    return out
