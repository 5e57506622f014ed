"""Where transcripts are read: every format's folders, several agents in one dream.

Each format finds its own default folders (:meth:`~.formats.protocol.TranscriptFormat.default_roots`,
``CODEX_HOME`` and the like honoured there); the config's ``[formats.<name>]`` table replaces them
(``folders``) or turns the format off (``enabled = false``). Claude Code's folder is the config's
``transcripts`` (plus any ``[formats.claude-code] folders``). :func:`discover_all` lists every
transcript of every format, each :class:`~.formats.protocol.TranscriptFile` naming its format.

What a watcher watches: every format's folder whole (:func:`watch_roots`), except the folders of a
format that keeps its transcripts inside the projects (:func:`looks_in_projects`, Aider): those are
trees of projects, never watched whole; each file such a format keeps is watched alone, its folder
and nothing below it (:class:`ProjectFiles`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from dreamtui.core.config import Config
from dreamtui.core.files import Skipped, is_dir
from dreamtui.core.ingest import formats
from dreamtui.core.ingest.formats.protocol import TranscriptFile, TranscriptFormat


@dataclass(frozen=True, slots=True)
class Root:
    """One folder one format reads."""

    format: TranscriptFormat
    folder: Path


def roots(config: Config) -> list[Root]:
    """Every (format, folder) to read, Claude Code's first, each folder once."""
    out: list[Root] = []
    seen: set[Path] = set()
    for fname, fmt in formats.FORMATS.items():
        table = config.formats.get(fname, {})
        if table.get("enabled", True) is False:
            continue
        given = [Path(f) for f in table.get("folders", [])]
        if fname == formats.FALLBACK:
            folders = [Path(config.transcripts), *given]
        else:
            folders = given or fmt.default_roots()
        for folder in folders:
            if folder not in seen:
                seen.add(folder)
                out.append(Root(fmt, folder))
    return out


def looks_in_projects(fmt: TranscriptFormat) -> bool:
    """Whether ``fmt`` keeps its transcripts inside the projects themselves (it has
    ``discover_in_projects``: Aider's history at each project's top); the folders the config names for
    it are trees of projects, searched a few folders deep."""
    return hasattr(fmt, "discover_in_projects")


def watch_roots(config: Config) -> list[Path]:
    """The folders a watcher watches whole (recursively): :func:`roots`, except those of a format that
    keeps its transcripts inside the projects (:func:`looks_in_projects`): such a folder is a tree of
    projects, ``node_modules`` and all, never watched whole; the files found in it are watched one by
    one (:class:`ProjectFiles`)."""
    return [r.folder for r in roots(config) if not looks_in_projects(r.format)]


def existing_roots(config: Config) -> list[Root]:
    """:func:`roots` that are folders now."""
    return [r for r in roots(config) if is_dir(r.folder)]


def discover_all(
    config: Config, skipped: list[Skipped] | None = None, cwds: dict[tuple[str, str], str] | None = None
) -> list[TranscriptFile]:
    """Every transcript of every format read (:func:`roots`), then those a format keeps inside the
    projects themselves (:func:`in_projects`, ``cwds`` its cache); never raises (one bad folder or
    format never hides the others: what cannot be read is named in ``skipped``)."""
    found: list[TranscriptFile] = []
    for root in roots(config):
        try:
            found.extend(root.format.discover(root.folder, skipped))
        except Exception as exc:  # a format's bug or an odd folder never stops the other formats
            if skipped is not None:
                skipped.append(
                    Skipped(str(root.folder), f"cannot read {root.format.agent}'s sessions ({exc})")
                )
    found.extend(in_projects(config, found, skipped, cwds))
    return found


@dataclass(frozen=True, slots=True)
class FormatFolder:
    """One folder an agent's transcripts are (or would be) read from, as ``dreamtui config`` lists it."""

    name: str
    agent: str
    folder: Path | None
    state: str
    """``read`` (a folder now), ``absent`` (not there: nothing to read yet), ``off`` (``enabled = false``),
    ``projects`` (no folder: looked for inside the projects other agents' sessions ran in), ``found``
    (a file such a format was found at, inside a project)."""
    sessions: int | None = None
    """How many sessions were found there (``None``: not counted)."""


def format_folders(config: Config, found: list[TranscriptFile] | None = None) -> list[FormatFolder]:
    """Every format with each of its folders and whether it is read (``off`` formats: one row, no
    folder). With ``found`` (:func:`discover_all`'s answer), each folder says how many sessions were
    found in it, and a format looked for inside the projects gets one ``found`` row per file found."""
    out: list[FormatFolder] = []
    read = {(r.format.name, r.folder) for r in roots(config)}
    sessions: dict[tuple[str, str], set[str]] = {}  # (format, file) -> its sessions
    for tf in found or ():
        sessions.setdefault((tf.format, str(tf.path)), set()).add(tf.session)

    def count(fname: str, folder: Path) -> int | None:
        if found is None:
            return None
        inside = {
            s
            for (name, path), ss in sessions.items()
            if name == fname and Path(path).is_relative_to(folder)
            for s in ss
        }
        return len(inside)

    for fname, fmt in formats.FORMATS.items():
        folders = [folder for name, folder in read if name == fname]
        if not folders:
            enabled = config.formats.get(fname, {}).get("enabled", True) is not False
            inside = enabled and looks_in_projects(fmt)
            out.append(FormatFolder(fname, fmt.agent, None, "projects" if inside else "off"))
            if inside:
                for name, path in sorted(sessions):
                    if name == fname:
                        # one file holds every session of the project (Aider's): named, not counted
                        out.append(FormatFolder(fname, fmt.agent, Path(path), "found"))
        for folder in sorted(folders):
            state = "read" if is_dir(folder) else "absent"
            out.append(
                FormatFolder(
                    fname, fmt.agent, folder, state, count(fname, folder) if state == "read" else None
                )
            )
    return out


def in_projects(
    config: Config,
    found: list[TranscriptFile],
    skipped: list[Skipped] | None = None,
    cwds: dict[tuple[str, str], str] | None = None,
) -> list[TranscriptFile]:
    """The transcripts a format keeps inside each project (Aider's ``.aider.chat.history.md``: a format
    with ``discover_in_projects``), looked for in the working directories of the sessions found, one
    per project and format; those found already are not repeated. ``cwds`` (``(format, project)`` ->
    working directory) is a cache kept between calls: a project's directory is read once."""
    seekers = [
        (fname, fmt)
        for fname, fmt in formats.FORMATS.items()
        if looks_in_projects(fmt) and config.formats.get(fname, {}).get("enabled", True) is not False
    ]
    if not seekers:
        return []
    cwds = {} if cwds is None else cwds
    tried: set[tuple[str, str]] = set()
    for tf in found:
        key = (tf.format, tf.project)
        if cwds.get(key) or key in tried:  # one read per project in a call; none named yet: read again
            continue
        tried.add(key)
        try:
            cwds[key] = formats.of_file(tf).cwd_of(tf.path)
        except Exception:  # an unreadable head: no working directory
            cwds[key] = ""
    folders = sorted({cwds.get((tf.format, tf.project), "") for tf in found} - {""})
    have = {tf.path for tf in found}
    out: list[TranscriptFile] = []
    for fname, fmt in seekers:
        try:
            extra = fmt.discover_in_projects(folders, skipped)  # type: ignore[attr-defined]
        except Exception as exc:  # a format's bug never stops the others
            if skipped is not None:
                skipped.append(
                    Skipped(fname, f"cannot look in the projects for {fmt.agent}'s sessions ({exc})")
                )
            continue
        out.extend(tf for tf in extra if tf.path not in have)
        have.update(tf.path for tf in extra)
    return out


class ProjectFiles:
    """The files formats keep inside the projects (Aider's histories), for a watcher to watch one by
    one, each in its folder alone (the watcher's ``singles``). Called with ``None``: every such file
    found now (:func:`discover_all`: in the folders the config names for such a format and in the
    working directories of every session found); with the paths of changed transcripts: those in the
    working directories of the ones not asked about before (a new session, perhaps in a new project).
    A project's working directory is read once (``in_projects``' cache). Never raises."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._cwds: dict[tuple[str, str], str] = {}
        self._asked: set[Path] = set()

    def __call__(self, changed: Sequence[Path] | None = None) -> list[Path]:
        try:
            if changed is None:
                found = discover_all(self.config, cwds=self._cwds)
            else:
                described = self._described(changed)
                found = in_projects(self.config, [tf for _, tf in described], cwds=self._cwds)
                # a file whose project's directory is known is not asked about again (one still being
                # written, its directory not named yet, is)
                self._asked.update(p for p, tf in described if self._cwds.get((tf.format, tf.project)))
            return sorted({tf.path for tf in found if looks_in_projects(formats.of_file(tf))})
        except Exception:  # a format's bug: nothing more is watched, the rescan looks again
            return []

    def _described(self, changed: Sequence[Path]) -> list[tuple[Path, TranscriptFile]]:
        out: list[tuple[Path, TranscriptFile]] = []
        for path in changed:
            fmt = formats.claimed(path)
            if path in self._asked or fmt is None or looks_in_projects(fmt):
                continue
            try:
                out.append((path, fmt.describe(path)))
            except Exception:  # an odd path: no project
                continue
        return out
