"""``briefing.md``: the picture of the work, a proposal until auto-write is promoted.

Each full cycle's REM phase builds a new version **only from sources that can be named**, and it
reads as the big picture, not an activity log: *The work* (per project, what it is — its name and
folder —, what the person asked of it and the files changed, one line), *Decided* (the accepted
memories, the topic files of the memory repository, by path) and *To watch* (open threads: the
person's last request the transcript shows unanswered, by transcript file and line). Pending, rejected and dropped proposals
never contribute, and a session line that repeats one of them is left out. Every bullet names its
source.

``briefing.md`` is committed into the memory Claude Code imports, so until auto-write is promoted a
new version waits in the ledger's ``briefings`` table (``pending``) for a person to accept it (one
commit of ``briefing.md`` alone) or reject it (kept, with the reason). With an active promotion it is
written by itself and listed for review after the fact (``--accept`` keeps it, ``--reject`` puts the
version before it back). :func:`write_briefing` is the one place that writes the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dreamtui.core import clock
from dreamtui.core.config import Config
from dreamtui.core.errors import DreamError
from dreamtui.core.ingest import formats
from dreamtui.core.ledger import Ledger, briefings, candidates, journal
from dreamtui.core.ledger.briefings import BriefingProposal
from dreamtui.core.memory import textdiff
from dreamtui.core.models import Digest, Jsonable, Turn, Usage
from dreamtui.core.text import clean_line, shorten

BRIEFING_FILE = "briefing.md"
MAX_LINES = 80
ITEM_CHARS = 180
WORK, DECIDED, WATCH = "The work", "Decided", "To watch"
SECTIONS = (WORK, DECIDED, WATCH)
"""What the projects are and what was asked of them, what was decided, what to watch."""
SECTION_LIMITS = {WORK: 14, DECIDED: 20, WATCH: 10}
OLD_SECTIONS = {"Working on": WORK, "Open threads": WATCH}
"""The section names of briefings written before issue 24, read as today's."""
TRAILER = ("Dreamtui-Briefing", "yes")
AUTO_TRAILER = ("Dreamtui-Auto", "yes")
HEADER = (
    "# Briefing\n\n_Built by dreamtui from accepted memories and the transcripts; "
    "each line names its source._\n"
)
NOTHING = "_(nothing)_"

_ITEM = re.compile(r"^\s*[-*]\s+(.*\S)\s*$")
_HEADING = re.compile(r"^##\s+(.*\S)\s*$")
_SOURCED = re.compile(r"^- (?P<text>.*\S) — source: `(?P<source>[^`]+)`$")
_WORDS = re.compile(r"[^\w]+")
# a session's last words that close it rather than ask for something: never an open thread
_CLOSING = re.compile(
    r"^\W*(?:thanks|thank you|thx|ok(?:ay)?|great|perfect|cool|nice|bye|cheers|"
    r"good (?:night|job|work)|that'?s (?:all|it)|all good|looks good|lgtm)\b",
    re.I,
)


class BriefingError(DreamError):
    """A briefing decision that cannot be made (no such version, already decided, …)."""


@dataclass(frozen=True, slots=True)
class Item(Jsonable):
    """One line of the briefing and the source it comes from (a memory file, or ``transcript:line``)."""

    section: str
    text: str
    source: str

    @property
    def line(self) -> str:
        return f"- {self.text} — source: `{self.source}`"


@dataclass(frozen=True, slots=True)
class SessionSource:
    """What a cycle read of one session: its digest and the byte ranges read, per file
    ``(path, start_offset, start_line, end_offset)``."""

    digest: Digest
    ranges: tuple[tuple[str, int, int, int], ...] = ()


@dataclass(slots=True)
class BriefingResult:
    """What the REM phase did to the briefing: ``status`` is ``pending`` (a version waits for review),
    ``auto-written`` (promotion: committed, to review after the fact) or ``unchanged``."""

    path: Path
    text: str
    commit: str | None
    status: str
    proposal: int | None = None
    usage: Usage = field(default_factory=Usage)

    @property
    def lines(self) -> int:
        return len(self.text.splitlines())


@dataclass(frozen=True, slots=True)
class BriefingVersion(Jsonable):
    """One commit of ``briefing.md``."""

    sha: str
    date: str
    subject: str


# -- text helpers ---------------------------------------------------------------------------------


def clean(text: str, limit: int = ITEM_CHARS) -> str:
    """One printable line: escapes and control characters removed, whitespace collapsed, cut short,
    backticks made plain (they delimit a line's source)."""
    return shorten(clean_line(text).replace("`", "'"), limit)


def _safe(text: str, limit: int = ITEM_CHARS) -> str:
    from dreamtui.core.secrets import redact

    return clean(redact(text), limit)


def parse_sections(text: str) -> dict[str, list[str]]:
    """The bullet items under each ``## Section`` heading of a briefing."""
    found: dict[str, list[str]] = {}
    current: str | None = None
    for line in text.splitlines():
        h = _HEADING.match(line)
        if h:
            current = h.group(1)
            found.setdefault(current, [])
            continue
        m = _ITEM.match(line)
        if m and current is not None:
            found[current].append(m.group(1))
    return found


def parse_items(text: str) -> list[Item]:
    """The sourced items of a briefing written by :func:`render` (lines without a source are skipped)."""
    out: list[Item] = []
    current = ""
    for line in text.splitlines():
        h = _HEADING.match(line)
        if h:
            current = h.group(1)
            continue
        m = _SOURCED.match(line.rstrip())
        if m and current:
            out.append(Item(current, m.group("text"), m.group("source")))
    return out


def _words(text: str) -> str:
    return " ".join(_WORDS.sub(" ", text.lower()).split())


# -- the sources ----------------------------------------------------------------------------------


def _pointer(config: Config, file: str, line: int) -> str:
    """``<project>/<session>.jsonl:<line>``, relative to the transcripts folder when inside it."""
    path = Path(file)
    try:
        rel = path.resolve().relative_to(Path(config.transcripts).resolve()).as_posix()
    except (ValueError, OSError):
        rel = path.name
    return f"{rel}:{line}"


def project_memory_folders(ledger: Ledger | None, project: str) -> set[str]:
    """The folders below ``projects/`` holding ``project``'s memories: its own
    (``layout.project_folder``) and those its worktrees' (or subfolders') sessions wrote to under
    their own folder's name before a project was its repository (the ledger's ``project_folders``)."""
    from dreamtui.core.ledger import project_folders
    from dreamtui.core.memory import layout

    found = {layout.project_folder(project)}
    if ledger is not None:
        for row in project_folders.known(ledger).values():
            if row.project == project and row.folder != project:
                found |= {layout.project_folder(row.folder), layout.legacy_project_folder(row.folder)}
    return found


def memory_items(config: Config, project: str | None, ledger: Ledger | None = None) -> list[Item]:
    """The accepted memories (topic files in the repository): the project's (every folder of
    :func:`project_memory_folders`) and global ones first, newest first, each as its description (or
    name) with its path."""
    from dreamtui.core.memory import frontmatter
    from dreamtui.core.memory.normalize import topic_files

    folders = project_memory_folders(ledger, project) if project is not None else set()
    root = Path(config.memory)
    found: list[tuple[int, str, str, str]] = []
    for path in topic_files(config):
        rel = path.relative_to(root).as_posix()
        try:
            meta, body = frontmatter.parse(path.read_text(encoding="utf-8", errors="replace"))
        except (frontmatter.FrontmatterError, OSError):
            continue
        what = str(meta.get("description") or meta.get("name") or "").strip()
        if not what:
            continue
        parts = rel.split("/")
        mine = len(parts) == 1 or parts[1] in folders
        found.append((0 if mine else 1, str(meta.get("created") or ""), rel, what))
    found.sort(key=lambda f: f[2])
    found.sort(key=lambda f: f[1], reverse=True)  # newest first (stable: by path among equals)
    found.sort(key=lambda f: f[0])  # the project's and global ones first
    return [Item(DECIDED, _safe(what), rel) for _mine, _created, rel, what in found]


def consolidation_items(ledger: Ledger) -> list[Item]:
    """How the memory was kept true (issue 26): the updates, retirements and merges accepted so far
    (*Decided*: each was a reviewed diff), and those waiting for review (*To watch*)."""
    from dreamtui.core.ledger import consolidations

    counts = consolidations.counts(ledger)
    kinds = ("update", "retire", "merge")
    accepted = {k: counts[k]["accepted"] + counts[k]["auto_accepted"] for k in kinds}
    waiting = {k: counts[k]["pending"] for k in kinds}
    out: list[Item] = []
    if any(accepted.values()):
        summary = ", ".join(f"{accepted[k]} {k}" for k in kinds)
        out.append(Item(DECIDED, f"Memory kept true: {summary} accepted", "dreamtui consolidate --all"))
    if any(waiting.values()):
        summary = ", ".join(f"{waiting[k]} {k}" for k in kinds)
        out.append(
            Item(
                WATCH, f"Memories that may no longer hold: {summary} wait for review", "dreamtui consolidate"
            )
        )
    return out


def _edited_files(path: str, start: int, start_line: int, end: int) -> list[tuple[str, int]]:
    """The files an edit tool wrote in ``start``..``end`` of a transcript, with the line of the first
    edit, in order (paths shown relative to the session's working folder)."""
    from dreamtui.core.errors import TranscriptError
    from dreamtui.core.ingest.tail import LineScanner, decode_line, open_transcript

    fmt = formats.format_for(path)
    if fmt.layout != "lines":  # a whole-file source has no byte range to read
        return []
    seen: dict[str, int] = {}
    try:
        fh = open_transcript(path)
    except TranscriptError:
        return []
    with fh:
        for line_no, _offset, raw in LineScanner(fh, start, start_line, end=end):
            if fmt.tool_call_hint not in raw:
                continue
            obj, _err = decode_line(raw)
            calls = fmt.tool_calls(obj) if obj is not None else []
            if obj is None or not calls:
                continue
            cwd = fmt.ref(obj).cwd
            for call in calls:
                target = call.wrote
                if target is not None and target.strip():
                    if cwd and target.startswith(cwd.rstrip("/") + "/"):
                        target = target[len(cwd.rstrip("/")) + 1 :]
                    seen.setdefault(target, line_no)
    return list(seen.items())


PROJECT_CHARS = 300
"""A project's line of *The work* may be longer than an item: its folder, two requests, the files."""
REQUESTS_PER_PROJECT = 2
FILES_PER_PROJECT = 4


def _first_request(turns: Sequence[Turn], unaccepted: list[str]) -> Turn | None:
    """What a session was about: the person's first request of four words or more, as said (never one
    that repeats a proposal not accepted)."""
    return next(
        (
            t
            for t in turns
            if t.role == "person"
            and t.kind in ("prompt", "text")
            and len(t.text.split()) >= 4
            and not _repeats(t.text, unaccepted)
        ),
        None,
    )


def _open_thread(turns: Sequence[Turn], unaccepted: list[str]) -> Turn | None:
    """The person's last request when no answer of the assistant follows it (closing words are none)."""
    from dreamtui.core.ingest.goodnight import is_goodnight

    last = next(
        (
            i
            for i in range(len(turns) - 1, -1, -1)
            if turns[i].role == "person"
            and turns[i].kind in ("prompt", "text")
            and len(turns[i].text.split()) >= 4
        ),
        None,
    )
    if last is None or any(t.role == "assistant" for t in turns[last + 1 :]):
        return None
    turn = turns[last]
    if is_goodnight(turn.text) or _CLOSING.match(turn.text) or _repeats(turn.text, unaccepted):
        return None
    return turn


def _project_line(config: Config, sessions: Sequence[SessionSource], unaccepted: list[str]) -> Item | None:
    """One line of *The work* for a project: what it is (its name and folder), what the person asked of
    it in the sessions read (newest first, at most two requests) and the files changed. Its source is
    the newest request quoted (or the first file changed)."""
    newest = sorted(
        sessions, key=lambda s: max((t.timestamp or "" for t in s.digest.turns), default=""), reverse=True
    )
    requests: list[Turn] = []
    files: dict[str, tuple[str, int]] = {}
    for src in newest:
        first = _first_request(src.digest.turns, unaccepted)
        if first is not None:
            requests.append(first)
        for path, start, start_line, end in src.ranges:
            for target, line in _edited_files(path, start, start_line, end):
                files.setdefault(target, (path, line))
    if not requests and not files:
        return None
    d = newest[0].digest
    what = d.project_name + (f" ({d.cwd})" if d.cwd else "")
    if len(sessions) > 1:
        what += f", {len(sessions)} sessions"
    parts = [what]
    if requests:
        # each request redacted before it is cut: a secret cut short is no longer recognisable as one
        parts.append("; ".join(f"“{_safe(t.text, 110)}”" for t in requests[:REQUESTS_PER_PROJECT]))
    if files:
        names = list(files)[:FILES_PER_PROJECT]
        more = len(files) - len(names)
        parts.append("changed " + ", ".join(names) + (f" and {more} more" if more else ""))
    text = parts[0] + ": " + " · ".join(parts[1:])
    if requests:
        source = _pointer(config, requests[0].file, requests[0].line)
    else:
        path, line = next(iter(files.values()))
        source = _pointer(config, path, line)
    return Item(WORK, _safe(text, PROJECT_CHARS), source)


def session_items(config: Config, ledger: Ledger, sessions: Sequence[SessionSource]) -> list[Item]:
    """The big picture of the sessions read: per project one line of *The work* (what it is, what the
    person asked of it, the files changed), and *To watch*: each session's open thread — the person's
    last request when no answer of the assistant follows it. A request that repeats a proposal not
    accepted (pending, rejected, dropped) is left out."""
    unaccepted = _unaccepted_words(ledger, [s.digest.session for s in sessions])
    by_project: dict[str, list[SessionSource]] = {}
    for src in sessions:
        by_project.setdefault(src.digest.project, []).append(src)
    items: list[Item] = []
    for group in by_project.values():
        line = _project_line(config, group, unaccepted)
        if line is not None:
            items.append(line)
    for src in sessions:
        turn = _open_thread(src.digest.turns, unaccepted)
        if turn is not None:
            items.append(
                Item(
                    WATCH,
                    f"{src.digest.project_name}: unanswered: “{_safe(turn.text, 160)}”",
                    _pointer(config, turn.file, turn.line),
                )
            )
    return items


def _unaccepted_words(ledger: Ledger, sessions: Iterable[str]) -> list[str]:
    """The quotes and claims of the sessions' proposals that are not accepted, as plain words."""
    rows = candidates.unaccepted_texts(ledger, sorted(set(sessions)))
    return [w for quote, claim in rows for w in (_words(quote), _words(claim)) if len(w) >= 12]


def _repeats(text: str, unaccepted: list[str]) -> bool:
    mine = _words(text)
    return any(w in mine or (len(mine) >= 12 and mine in w) for w in unaccepted)


def _carried(config: Config, previous: str | None, fresh_projects: set[str]) -> list[Item]:
    """The previous version's sourced session lines of projects this cycle did not read, while their
    transcript is still there (what was worked on elsewhere stays in the picture)."""
    out: list[Item] = []
    for item in parse_items(previous or ""):
        section = OLD_SECTIONS.get(item.section, item.section)
        if section not in (WORK, WATCH):
            continue
        item = Item(section, item.text, item.source)
        rel = item.source.rsplit(":", 1)[0]
        project = rel.split("/", 1)[0]
        if project in fresh_projects or "/" not in rel:
            continue
        if (Path(config.transcripts) / rel).is_file():
            out.append(item)
    return out


def build_briefing(
    config: Config,
    ledger: Ledger,
    sessions: Sequence[SessionSource],
    previous: str | None = None,
    project: str | None = None,
) -> tuple[str, list[Item]]:
    """The briefing's text and its items, from accepted memories and the sessions' facts only."""
    from dreamtui.core.ingest.transcripts import project_of

    # what this cycle read, by project key and by transcript folder (a worktree's folder is its repository's)
    fresh = {s.digest.project for s in sessions} | {
        project_of(Path(f)) for s in sessions for f in s.digest.files
    }
    items = (
        session_items(config, ledger, sessions)
        + _carried(config, previous, fresh)
        + memory_items(config, project, ledger)
        + consolidation_items(ledger)
    )
    kept: list[Item] = []
    for name in SECTIONS:
        seen: set[str] = set()
        for item in (i for i in items if i.section == name):
            # two projects may read alike (the same folder name, the same request): both are kept
            key = item.text.lower() + (f"\0{item.source.split('/', 1)[0]}" if name == WORK else "")
            if key in seen or sum(1 for k in kept if k.section == name) >= SECTION_LIMITS[name]:
                continue
            seen.add(key)
            kept.append(item)
    return render(kept), kept


def render(items: Sequence[Item]) -> str:
    """The briefing's Markdown: a header, then each section's lines with their sources."""
    lines = [HEADER.rstrip("\n")]
    for name in SECTIONS:
        lines += ["", f"## {name}"]
        lines += [i.line for i in items if i.section == name] or [NOTHING]
    return "\n".join(lines[:MAX_LINES]) + "\n"


# -- reading and writing --------------------------------------------------------------------------


def briefing_path(config: Config) -> Path:
    """Where ``briefing.md`` lives."""
    return config.memory / BRIEFING_FILE


def read_briefing(config: Config) -> str | None:
    """The current briefing, or None when none was written yet."""
    try:
        return briefing_path(config).read_text(encoding="utf-8", errors="replace")
    except (FileNotFoundError, NotADirectoryError):
        return None


def write_briefing(
    config: Config, ledger: Ledger, text: str, subject: str, trailers: dict[str, str]
) -> str | None:
    """Write ``briefing.md`` and commit it alone (``git commit --only``); the commit's sha, or None
    when the file already held ``text``. Refuses to overwrite a person's uncommitted edit of it; a
    leftover of an interrupted run of dreamtui's own is replaced (see :mod:`.generated`)."""
    from dreamtui.core.memory.generated import write_generated

    committed = write_generated(config, ledger, BRIEFING_FILE, text.encode("utf-8"), subject, trailers)
    return committed.sha if committed else None


# -- proposals (the ledger's ``briefings`` table) --------------------------------------------------


def get_proposal(ledger: Ledger, bid: int) -> BriefingProposal | None:
    """One briefing proposal by id."""
    return briefings.get(ledger, bid)


def list_proposals(ledger: Ledger, limit: int = 50) -> list[BriefingProposal]:
    """Briefing proposals, newest first."""
    return briefings.listed(ledger, limit)


def waiting_proposal(ledger: Ledger) -> BriefingProposal | None:
    """The version waiting for a person: the pending one, else the latest auto-written one not yet
    reviewed after the fact."""
    return briefings.latest_pending(ledger) or briefings.latest_unreviewed_auto(ledger)


def propose_briefing(
    config: Config,
    ledger: Ledger,
    sessions: Sequence[SessionSource],
    *,
    day: str,
    project: str | None = None,
    cycle_id: int | None = None,
    auto: bool = False,
) -> BriefingResult:
    """Build the new version (REM). Until auto-write is promoted it waits in the ledger as ``pending``
    (an older pending version is superseded); with ``auto`` (an active promotion, which the dream
    cycle checks) it is committed by itself and awaits review after the fact."""
    path = briefing_path(config)
    previous = read_briefing(config)
    text, items = build_briefing(config, ledger, sessions, previous, project)
    now = clock.now_iso()
    if previous == text:
        briefings.supersede(ledger, None, now)
        return BriefingResult(path, text, None, "unchanged")
    same = briefings.pending_with_text(ledger, text)
    if same is not None:
        return BriefingResult(path, text, None, "pending", same)
    commit = None
    if auto:
        commit = write_briefing(
            config,
            ledger,
            text,
            f"Briefing of {day} ({project or 'all projects'}), auto-written",
            dict([TRAILER, AUTO_TRAILER]),
        )
    with ledger.write():
        bid = briefings.propose(
            ledger,
            cycle_id=cycle_id,
            text=text,
            sources=[i.to_json() for i in items],
            auto=auto,
            commit=commit,
            now=now,
        )
        briefings.supersede(ledger, bid, now)
    return BriefingResult(path, text, commit, "auto-written" if auto else "pending", bid)


def _pick(ledger: Ledger, bid: int | None) -> BriefingProposal:
    found = get_proposal(ledger, bid) if bid is not None else waiting_proposal(ledger)
    if found is None:
        raise BriefingError(
            f"no briefing #{bid}"
            if bid is not None
            else "no briefing waits for review: a full dream cycle proposes one"
        )
    if not found.awaits_review:
        how = f"{found.status}" + (f" ({found.reason})" if found.reason else "")
        raise BriefingError(f"briefing #{found.id} does not wait for review: it is {how}")
    return found


def accept_briefing(config: Config, ledger: Ledger, bid: int | None = None) -> BriefingProposal:
    """Accept the waiting version (or #``bid``): ``briefing.md`` becomes its text in one commit. An
    auto-written version is kept (reviewed after the fact), with no new commit."""
    prop = _pick(ledger, bid)
    now = clock.now_iso()
    before = briefings.decision_state(prop)
    if prop.status == "accepted":  # auto-written: the person keeps it
        with ledger.write():
            briefings.mark_reviewed(ledger, prop.id, now)
            _journal(ledger, "accept", prop.id, before, None, now)
        return get_proposal(ledger, prop.id) or prop
    sha = write_briefing(
        config, ledger, prop.text, f"Briefing #{prop.id} accepted", {TRAILER[0]: str(prop.id)}
    )
    with ledger.write():
        briefings.mark_accepted(ledger, prop.id, sha, now)
        _journal(ledger, "accept", prop.id, before, sha, now)
    return get_proposal(ledger, prop.id) or prop


def _journal(
    ledger: Ledger, action: str, bid: int, before: dict[str, Any], wrote: str | None, now: str
) -> None:
    """Journal a person's decision on a version: its decision columns before it and the commit it made."""
    journal.record(ledger, "briefing", action, [str(bid)], {"before": before, "wrote": wrote}, now)


def undo_decision(config: Config, ledger: Ledger, entry: journal.Entry) -> str | None:
    """Take back a journaled briefing decision: ``briefing.md`` as it was before the commit it made (a
    new commit, only while the file still holds what that commit wrote) and the version's state as it
    was (a rejected or accepted version waits for review again). Returns the new commit, if any."""
    bid = int(entry.refs[0])
    prop = get_proposal(ledger, bid)
    if prop is None:
        raise BriefingError(f"no briefing #{bid} to undo")
    wrote = entry.payload.get("wrote")
    sha = None
    if wrote:
        from dreamtui.core.memory import gitops

        repo = gitops.open_repo(config.memory, create=False)
        made = gitops.show_file(repo, BRIEFING_FILE, str(wrote))
        if (read_briefing(config) or "") != (made or b"").decode("utf-8", "replace"):
            raise BriefingError(
                f"{BRIEFING_FILE} changed since briefing #{bid} was decided; nothing was undone"
            )
        before = gitops.show_file(repo, BRIEFING_FILE, f"{wrote}^")
        subject = f"Briefing #{bid}: {entry.action} undone"
        trailers = {TRAILER[0]: str(bid), "Dreamtui-Undo-Briefing": entry.action}
        if before is None:  # there was no briefing.md before: it goes again
            from dreamtui.core.memory.decisions import memory_lock

            with memory_lock(config):
                (Path(config.memory) / BRIEFING_FILE).unlink()
                sha = gitops.commit_paths(repo, [BRIEFING_FILE], subject, trailers).sha
        else:
            sha = write_briefing(config, ledger, before.decode("utf-8", "replace"), subject, trailers)
    with ledger.write():
        briefings.restore_state(ledger, bid, dict(entry.payload.get("before") or {}))
        journal.mark_undone(ledger, entry.id)
    return sha


def reject_briefing(
    config: Config, ledger: Ledger, bid: int | None = None, reason: str = ""
) -> tuple[BriefingProposal, str | None]:
    """Reject the waiting version (or #``bid``), kept in the ledger with ``reason`` (required: an empty
    one is a one-line :class:`BriefingError`, and nothing is changed). An auto-written
    version is reverted: the version before its commit is put back in a new commit (when the file
    still holds it). Returns the proposal and that commit (None when nothing was reverted)."""
    reason = " ".join((reason or "").split())
    if not reason:
        raise BriefingError(
            "a briefing reject needs a reason (--reason …): it is what the next one learns from"
        )
    prop = _pick(ledger, bid)
    now = clock.now_iso()
    before_state = briefings.decision_state(prop)
    sha = None
    if prop.status == "accepted" and prop.commit_sha and read_briefing(config) == prop.text:
        from dreamtui.core.memory import gitops

        repo = gitops.open_repo(config.memory, create=False)
        before = gitops.show_file(repo, BRIEFING_FILE, f"{prop.commit_sha}^")
        sha = write_briefing(
            config,
            ledger,
            before.decode("utf-8", "replace") if before else "",
            f"Briefing #{prop.id} rejected after review",
            {TRAILER[0]: str(prop.id), "Dreamtui-Review": "rejected"},
        )
    with ledger.write():
        briefings.mark_rejected(ledger, prop.id, reason, now)
        _journal(ledger, "reject", prop.id, before_state, sha, now)
    return get_proposal(ledger, prop.id) or prop, sha


def diff_lines(config: Config, prop: BriefingProposal) -> list[str]:
    """The proposal as a unified diff against the current ``briefing.md`` (for an auto-written one:
    against the version before its commit)."""
    old = read_briefing(config) or ""
    if prop.status == "accepted" and prop.commit_sha:
        from dreamtui.core.memory import gitops

        before = gitops.show_file(
            gitops.open_repo(config.memory, create=False), BRIEFING_FILE, f"{prop.commit_sha}^"
        )
        old = before.decode("utf-8", "replace") if before else ""
    return textdiff.unified(
        old, prop.text, "briefing.md (current)", f"briefing.md (#{prop.id}, {prop.status})"
    )


# -- history --------------------------------------------------------------------------------------


def briefing_history(config: Config, limit: int | None = None) -> list[BriefingVersion]:
    """Every committed version of ``briefing.md``, newest first (empty without a repository)."""
    from dreamtui.core.memory import gitops

    if not gitops.repo_exists(config.memory):
        return []
    repo = gitops.open_repo(config.memory, create=False)
    return [
        BriefingVersion(c.sha, c.date, c.subject)
        for c in gitops.file_history(repo, BRIEFING_FILE, limit=limit)
    ]


def briefing_at(config: Config, sha: str) -> str | None:
    """The briefing as it was in commit ``sha`` (None when that commit has no briefing)."""
    from dreamtui.core.memory import gitops

    if not gitops.repo_exists(config.memory):
        return None
    repo = gitops.open_repo(config.memory, create=False)
    data = gitops.show_file(repo, BRIEFING_FILE, sha)
    return None if data is None else data.decode("utf-8", "replace")
