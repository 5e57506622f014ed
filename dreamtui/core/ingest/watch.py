"""Watch the transcripts folders: coalesced change events, goodnight detection, a rescan safety net.

A watchdog observer (inotify where available; ``PollingObserver`` with ``poll=True`` for file systems
without it) watches the transcripts root recursively, and every other agent's folder given
(``extra``: Codex's date-nested ``sessions``, …); an event counts when its path is a transcript some
format claims (``formats.claimed``), or a file that belongs to one (``formats.source_of``: OpenCode's
older layout writes a new message as files of its own, the session's file unchanged), and each file is
read by its own format. Files kept elsewhere, one
here and one there (``singles``: the histories Aider keeps at the top of each project), are watched one
by one: each one's folder alone, never what lies below it (a project's ``node_modules``), and only the
files named count there. Which files those are is asked when watching begins, at each rescan (a file
no longer named, or whose folder is gone, stops being watched) and after each batch (the files a new
session leads to: a new project's); at most :data:`MAX_ALONE` folders are watched so (the most recently
changed; the rest are seen by the rescan). Events are coalesced: a burst of appends is one
``on_change(paths)`` call once the folder has been still for ``debounce`` seconds (or after at most
``max_delay`` seconds of continuous writing). Events can be lost, so every ``rescan_seconds`` the folder
is walked and any file whose size or mtime changed is reported as if an event had come; the walk reads
nothing, and besides the transcripts it keeps the size and mtime of the files that belong to a session
without being its transcript (``formats.belongs``: OpenCode's older layout's message and part files),
one such file added, changed or removed reported as its session (``formats.source_of``).

After each ``on_change``, the new complete lines of the changed main-session files are scanned for a
person saying good night; ``on_goodnight(project)`` is called once per project that did. Content that
was already in a file when the watcher started is not "new": an old goodnight does not start a cycle.
A whole-file source (a ``records`` format: a rewritten JSON document, a markdown history, an agent's
SQLite database) has no appended lines: its records are read whole, and a good night counts when a
person's record saying it was not there before (when watching began, or at the last look), known by
its record key (:func:`~dreamtui.core.ingest.records.record_key`). Only sources whose bytes hold a
good-night word are parsed when watching begins. A file watched alone that is first named while
watching (a new project's) counts as there already: what it holds then is not new.

Never through a symlink (:data:`~dreamtui.core.files.LINK_REASON`): a transcript file or a folder
below a watched folder that is a symlink is named once (``on_skip``) and no change is ever reported
through it (the observer does not follow links below a folder; the walk and every reported path are
checked with ``lstat``). A watched folder itself may be a link (into a dotfiles folder): the folder it
points at is watched and its events are named by the path as given.

Callbacks run on the watcher's own thread. A Textual app forwards them with ``post_message``; the CLI
puts them on a queue. The watcher never writes anything.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import orjson
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver, ObservedWatch
from watchdog.observers.polling import PollingObserverVFS

from dreamtui.core.errors import TranscriptError
from dreamtui.core.files import (
    LINK_REASON,
    NotRegularFile,
    Skipped,
    error_reason,
    is_dir,
    link_below,
    not_regular_reason,
    open_regular,
)
from dreamtui.core.ingest import formats
from dreamtui.core.ingest.formats.protocol import TranscriptFormat
from dreamtui.core.ingest.goodnight import is_goodnight
from dreamtui.core.ingest.records import record_key
from dreamtui.core.ingest.tail import LineScanner

DEFAULT_DEBOUNCE = 1.0
MAX_DELAY_FACTOR = 5.0
_GOODNIGHT_HINTS = (b"night", b"sleep well", b"sweet dreams")
_TAIL_PROBE = 64 * 1024
SCAN_MAX_LINE = 1024 * 1024
"""A line longer than this is not searched for a good night (a person's good night is short); it is
skipped without being held, so memory stays bounded however large the new region is."""
MAX_ALONE = 32
"""At most this many folders are watched alone (``singles``): each is one more watch and, with inotify,
one more of the 128 inotify instances a user has by default (``fs.inotify.max_user_instances``)."""

ChangeCallback = Callable[[list[Path]], None]
GoodnightCallback = Callable[[str], None]
ErrorCallback = Callable[[BaseException], None]
SkipCallback = Callable[[str], None]
SinglesCallback = Callable[[Sequence[Path] | None], Iterable[Path]]


class _Handler(FileSystemEventHandler):
    """Forwards every transcript path (a path some format claims) an event names to the watcher."""

    def __init__(self, watcher: Watcher, folder: Path) -> None:
        self.watcher = watcher
        self.shown = str(folder)
        """The watched folder as given (a symlink, when it is one)."""
        self.real = os.path.realpath(folder)
        """The folder the observer watches: where ``shown`` points (events name paths below it)."""

    def _as_shown(self, path: str) -> str:
        """An event's path as below the folder as given (its link, when it is one)."""
        if self.real == self.shown or not path.startswith(self.real):
            return path
        rest = path[len(self.real) :]
        return self.shown + rest if rest == "" or rest.startswith(os.sep) else path

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        paths = [
            self._as_shown(os.fsdecode(p))
            for p in (event.src_path, getattr(event, "dest_path", "") or "")
            if p
        ]
        found: list[Path] = []
        belonging: list[Path] = []
        for p in paths:
            if not event.is_directory and formats.claimed(p) is not None:
                found.append(Path(p))
            elif (source := formats.source_of(p)) is not None:  # a new message's file, not the session's
                found.append(source)
                if not event.is_directory and formats.belongs(p):
                    belonging.append(Path(p))
        if found:
            self.watcher.notify(found, belonging)
        elif event.is_directory and event.event_type in ("created", "moved"):
            self.watcher.request_rescan()


class _AloneHandler(FileSystemEventHandler):
    """Forwards the files watched alone in one folder that an event names; the folder itself gone or
    moved asks for a rescan (which stops watching it). Nothing else of the folder counts."""

    def __init__(self, watcher: Watcher, folder: Path) -> None:
        self.watcher = watcher
        self.folder = str(folder)

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        paths = [os.fsdecode(p) for p in (event.src_path, getattr(event, "dest_path", "") or "") if p]
        if event.is_directory:
            if event.event_type in ("deleted", "moved") and self.folder in paths:
                self.watcher.request_rescan()
            return
        alone = self.watcher._alone
        found = [Path(p) for p in paths if Path(p) in alone]
        if found:
            self.watcher.notify(found)


class Watcher:
    """Watch ``root`` for transcript changes; see the module docstring.

    ``start()`` begins watching (raises :class:`TranscriptError` when ``root`` is not a folder);
    ``stop()`` ends it and joins the threads. Usable as a context manager.
    """

    def __init__(
        self,
        root: Path,
        *,
        on_change: ChangeCallback | None = None,
        on_goodnight: GoodnightCallback | None = None,
        on_error: ErrorCallback | None = None,
        on_skip: SkipCallback | None = None,
        poll: bool = False,
        debounce: float = DEFAULT_DEBOUNCE,
        rescan_seconds: float = 60.0,
        poll_interval: float = 1.0,
        extra: Sequence[Path] = (),
        project_of: Callable[[Path], str] | None = None,
        singles: SinglesCallback | None = None,
    ) -> None:
        self.root = Path(root)
        self.extra = [Path(p) for p in extra if Path(p) != Path(root)]
        """Other agents' folders watched besides ``root`` (those that are folders when watching starts)."""
        self.singles = singles
        """The files watched one by one besides ``root`` and ``extra`` (the module docstring):
        ``singles(None)`` names every such file now, ``singles(paths)`` those the transcripts ``paths``
        just delivered lead to. Called on the watcher's thread (and by :meth:`start`)."""
        self.project_of = project_of
        """The project a good night is reported for (default: the file's transcript folder, as its
        format names it)."""
        self.on_change = on_change
        self.on_goodnight = on_goodnight
        self.on_error = on_error
        self.on_skip = on_skip
        self.poll = poll
        self.debounce = max(0.0, debounce)
        self.max_delay = max(self.debounce * MAX_DELAY_FACTOR, self.debounce)
        self.rescan_seconds = max(0.1, rescan_seconds)
        self.poll_interval = poll_interval
        self._cond = threading.Condition()
        self._pending: set[Path] = set()
        self._first_event = 0.0
        self._last_event = 0.0
        self._rescan_requested = False
        self._stopping = False
        self._snapshot: dict[Path, tuple[int, int]] = {}
        self._belonging: dict[Path, tuple[int, int]] = {}
        """Size and mtime of each file that belongs to a session without being its transcript
        (``formats.belongs``) at the last walk or delivery: what the rescan compares them with."""
        self._pending_belonging: set[Path] = set()
        self._scanned: dict[Path, int] = {}
        self._said: dict[Path, set[str]] | None = None
        """Per whole-file source, the records saying good night already there (None: not primed yet)."""
        self.primed = threading.Event()
        """Set once the whole-file sources' good nights already there are known (the worker thread
        looks first thing; a good night written before that counts as already there)."""
        self._observer: BaseObserver | None = None
        self._thread: threading.Thread | None = None
        self._noticed: set[str] = set()
        self._wal_seen: dict[Path, tuple[tuple[int, int] | None, tuple[int, int] | None]] = {}
        """Per write-ahead log, its database's and its own size and mtime at the last look."""
        self._alone: frozenset[Path] = frozenset()
        """The files watched alone (read by the observer's thread: replaced whole, never changed)."""
        self._alone_watches: dict[Path, ObservedWatch] = {}
        self.initial: dict[Path, tuple[int, int]] = {}
        """Size and mtime of each regular transcript when watching began (FIFOs and devices left out)."""
        self.skipped: list[Skipped] = []
        self.batches = 0
        self.checked = 0
        """How many delivered batches have had their good nights looked for (and told) as well."""
        self.rescans = 0
        """How many rescans of the whole folder have finished (the safety net for lost events)."""

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """The watcher has been started and not stopped."""
        return self._thread is not None and self._thread.is_alive()

    @property
    def alone(self) -> list[Path]:
        """The files watched one by one (``singles``), sorted."""
        return sorted(self._alone)

    @property
    def alone_folders(self) -> list[Path]:
        """The folders watched alone (not recursively) for them, sorted."""
        return sorted(self._alone_watches)

    def start(self) -> Watcher:
        """Prime the offsets with what is already there, start the observer and the worker thread."""
        if self.running:
            return self
        if not is_dir(self.root):
            raise TranscriptError(f"cannot watch {self.root}: not a folder")
        self._stopping = False
        self.extra = [p for p in self.extra if is_dir(p)]
        # polled with lstat: never into a linked folder below a watched one (inotify never follows one)
        observer = (
            PollingObserverVFS(os.lstat, os.scandir, polling_interval=self.poll_interval)
            if self.poll
            else Observer()
        )
        for folder in (self.root, *self.extra):
            handler = _Handler(self, folder)
            observer.schedule(handler, handler.real, recursive=True)  # a linked folder: where it points
        observer.daemon = True
        observer.start()
        self._observer = observer
        self._alone, self._alone_watches = frozenset(), {}
        self._watch_alone(self._ask_singles(None), replace=True)
        self._snapshot, self._belonging = self._walk()
        self.initial = dict(self._snapshot)
        self._wal_seen = {}
        for p in self.initial:  # each database's state now: a reader's own -wal is no change of it
            if formats.format_for(p).claims(Path(f"{p}-wal")):
                self._wal_unchanged(Path(f"{p}-wal"))
        self._scanned = {p: _last_line_end(p, size) for p, (size, _) in self._snapshot.items()}
        self._thread = threading.Thread(target=self._run, name="dreamtui-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching; pending changes are dropped. Safe to call twice."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        observer, self._observer = self._observer, None
        if observer is not None:
            observer.stop()
            observer.join(timeout)
        self._alone_watches = {}
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def __enter__(self) -> Watcher:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- input -------------------------------------------------------------------------------

    def notify(self, paths: Iterable[Path], belonging: Iterable[Path] = ()) -> None:
        """Record changed paths (called by the observer; callable by anyone); ``belonging``: the files
        heard that are not transcripts but belong to one of ``paths`` (``formats.belongs``; the rescan
        does not report them again once delivered)."""
        now = time.monotonic()
        with self._cond:
            if not self._pending:
                self._first_event = now
            self._pending.update(Path(p) for p in paths)
            self._pending_belonging.update(Path(p) for p in belonging)
            self._last_event = now
            self._cond.notify_all()

    def request_rescan(self) -> None:
        """Walk the folder at the next opportunity (a new folder appeared, or a caller asks)."""
        with self._cond:
            self._rescan_requested = True
            self._cond.notify_all()

    # -- the worker thread -------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._prime_records()
        except Exception as exc:  # never stops the watcher: good nights in such sources go unheard
            if self.on_error is not None:
                self.on_error(exc)
        finally:
            self.primed.set()
        next_rescan = time.monotonic() + self.rescan_seconds
        while True:
            with self._cond:
                if self._stopping:
                    return
                now = time.monotonic()
                waits = [next_rescan - now]
                if self._pending:
                    waits.append(
                        min(self._last_event + self.debounce, self._first_event + self.max_delay) - now
                    )
                if not self._rescan_requested and min(waits) > 0:
                    self._cond.wait(min(waits))
                if self._stopping:
                    return
                now = time.monotonic()
                rescan = self._rescan_requested or now >= next_rescan
                self._rescan_requested = False
                batch: list[Path] = []
                if self._pending and (
                    now - self._last_event >= self.debounce or now - self._first_event >= self.max_delay
                ):
                    batch = sorted(self._pending)
                    self._pending.clear()
                    for p in self._pending_belonging:  # delivered now: the rescan's look is now too
                        st = _stat(p)
                        if st is None:
                            self._belonging.pop(p, None)
                        else:
                            self._belonging[p] = st
                    self._pending_belonging.clear()
            try:
                if rescan:
                    next_rescan = time.monotonic() + self.rescan_seconds
                    self._look_alone(None)
                    batch = sorted(set(batch) | set(self._changed_since_snapshot()))
                if batch:
                    self._deliver(batch)
                    self._look_alone(batch)
                if rescan:
                    self.rescans += 1
            except Exception as exc:  # a callback failed: report it, keep watching
                if self.on_error is not None:
                    self.on_error(exc)

    def _deliver(self, paths: list[Path]) -> None:
        for p in paths:
            self._snapshot[p] = _stat(p) or (0, 0)
        paths = [p for p in paths if self._regular(p) and not self._wal_unchanged(p)]
        if not paths:
            return
        self.batches += 1
        if self.on_change is not None:
            self.on_change(paths)
        projects: list[str] = []
        for p in paths:
            fmt = formats.format_for(p)
            root = self._root_of(p)
            if fmt.layout == "records":
                said = self._records_goodnight(p, fmt, root)
                if said:
                    project = self.project_of(said) if self.project_of is not None else fmt.project_of(said)
                    if project not in projects:
                        projects.append(project)
                continue
            if not fmt.is_main_file(root, p):
                continue
            if self._scan_for_goodnight(p, fmt):
                project = self.project_of(p) if self.project_of is not None else fmt.project_of(p)
                if project not in projects:
                    projects.append(project)
        if self.on_goodnight is not None:
            for project in projects:
                self.on_goodnight(project)
        self.checked += 1

    # -- files watched alone -------------------------------------------------------------------

    def _ask_singles(self, changed: Sequence[Path] | None) -> list[Path]:
        """``singles(changed)``, never raising (a failure is reported; nothing more is watched)."""
        if self.singles is None:
            return []
        try:
            return [Path(p) for p in self.singles(changed)]
        except Exception as exc:
            if self.on_error is not None:
                self.on_error(exc)
            return []

    def _look_alone(self, changed: Sequence[Path] | None) -> None:
        """Ask which files to watch alone (every one: ``None``; those ``changed`` leads to) and watch
        them; one first named now counts as there already (its good nights are not new)."""
        if self.singles is None:
            return
        new = self._watch_alone(self._ask_singles(changed), replace=changed is None)
        for p in sorted(new):
            st = _stat(p)
            if st is None:
                continue
            self._snapshot[p] = st
            fmt = formats.format_for(p)
            if fmt.layout != "records":
                self._scanned[p] = _last_line_end(p, st[0])
            elif self._said is not None:
                for source, keys in self._goodnights_in(None, fmt, p, prime=True).items():
                    self._said.setdefault(source, set()).update(keys)

    def _watch_alone(self, files: Iterable[Path], *, replace: bool) -> set[Path]:
        """Watch ``files`` one by one (with ``replace``: only them), each folder alone; the files that
        were not watched before. A file inside ``root`` or ``extra`` is watched there already."""
        whole = (self.root, *self.extra)
        named = {p for p in files if not any(p.is_relative_to(r) for r in whole)}
        new = named - self._alone
        if not replace:
            if not new:
                return new
            named |= self._alone
        named = {p for p in named if is_dir(p.parent)}  # a folder gone: its files are not watched
        new &= named
        self._alone = frozenset(named)
        newest: dict[Path, int] = {}
        for p in named:
            st = _stat(p)
            newest[p.parent] = max(newest.get(p.parent, 0), st[1] if st is not None else 0)
        keep = sorted(newest, key=lambda folder: (-newest[folder], str(folder)))[:MAX_ALONE]
        if len(newest) > MAX_ALONE:
            self._skip(
                f"{len(newest) - MAX_ALONE} of the {len(newest)} folders holding a transcript kept in a project",
                f"not watched (at most {MAX_ALONE} are, the most recently changed); the rescan every "
                f"{self.rescan_seconds:g} s sees their changes",
            )
        observer = self._observer
        if observer is None:
            return new
        for folder in list(self._alone_watches):
            if folder not in keep or not is_dir(folder):
                watch = self._alone_watches.pop(folder)
                with contextlib.suppress(Exception):  # its folder is gone: its watch ended already
                    observer.unschedule(watch)
        for folder in keep:
            if folder in self._alone_watches or not is_dir(folder):
                continue
            try:
                handler = _AloneHandler(self, folder)
                self._alone_watches[folder] = observer.schedule(handler, str(folder), recursive=False)
            except OSError as exc:  # gone meanwhile, or no watch left (inotify's limits): the rescan sees it
                self._skip(
                    folder, f"cannot watch this folder ({error_reason(exc)}); the rescan sees its changes"
                )
        return new

    def _root_of(self, path: Path) -> Path:
        """The folder ``path``'s format reads it under: the ``extra`` folder holding it, else ``root``;
        a file watched alone is its own (its format discovers that one file)."""
        for folder in self.extra:
            if path.is_relative_to(folder):
                return folder
        if path in self._alone:
            return path
        return self.root

    # -- whole-file sources --------------------------------------------------------------------

    def _prime_records(self) -> None:
        """Remember the good nights already in every whole-file source when watching began (they are
        not new); a source none of whose bytes holds a good-night word is not parsed."""
        said: dict[Path, set[str]] = {}
        looked: set[tuple[str, Path]] = set()  # each format's folder is listed once, not once per file
        for p in sorted(self.initial):
            fmt = formats.format_for(p)
            root = self._root_of(p)
            if fmt.layout != "records" or self._stopping or (fmt.name, root) in looked:
                continue
            looked.add((fmt.name, root))
            for source, keys in self._goodnights_in(None, fmt, root, prime=True).items():
                said.setdefault(source, set()).update(keys)
        self._said = said

    def _records_goodnight(self, path: Path, fmt: TranscriptFormat, root: Path) -> Path | None:
        """The session (an address) in whose records a person said good night since the last look at
        the whole-file source ``path`` changed, else None."""
        if self._said is None:
            return None
        heard: Path | None = None
        for source, keys in self._goodnights_in(path, fmt, root).items():
            before = self._said.setdefault(source, set())
            new = keys - before
            before.update(keys)
            if new and heard is None:
                heard = Path(sorted(new)[0].split("\0", 1)[0])
        return heard

    def _goodnights_in(
        self, path: Path | None, fmt: TranscriptFormat, root: Path, prime: bool = False
    ) -> dict[Path, set[str]]:
        """Per source file, the keys (``<address>\\0<record key>``) of the main sessions' records of
        ``path``'s source (``None``: every source in the format's folder ``root``) in which a person
        says good night. Never raises."""
        try:
            sessions = [
                tf
                for tf in fmt.discover(root)
                if tf.kind == "main"
                and (
                    path is None
                    or tf.path == path
                    or (tf.path.parent == path.parent and path.name.startswith(tf.path.name))
                )
            ]
        except Exception:  # an odd folder or format: nothing heard
            return {}
        out: dict[Path, set[str]] = {}
        for source in {tf.path for tf in sessions}:
            out[source] = set()
            if prime and not _bytes_hint(source):
                continue
            for tf in (t for t in sessions if t.path == source):
                try:
                    for rec in fmt.records(tf.path, tf.member):
                        if _record_says_goodnight(rec.obj, fmt):
                            out[source].add(f"{tf.address}\0{record_key(rec)}")
                except Exception:  # half written, locked, odd: the next change looks again
                    continue
        return out

    # -- helpers -----------------------------------------------------------------------------

    def _skip(self, path: Path | str, reason: str) -> None:
        """Report a path that is left out, once (``on_skip`` gets the one-line notice)."""
        skip = Skipped(str(path), reason)
        if skip.notice in self._noticed:
            return
        self._noticed.add(skip.notice)
        self.skipped.append(skip)
        if self.on_skip is not None:
            try:
                self.on_skip(skip.notice)
            except Exception:  # a broken display never stops the watcher
                pass

    def _regular(self, path: Path) -> bool:
        """Whether ``path`` is a regular file to read, never through a symlink (the file itself or a
        folder on the way below its watched folder: the link is named once); a FIFO, device or socket
        is reported once."""
        root = next((r for r in (self.root, *self.extra) if path.is_relative_to(r)), None)
        link = link_below(root, path) if root is not None else None
        if link is not None:
            self._skip(link, LINK_REASON)
            return False
        try:
            st = os.lstat(path)
        except OSError:
            return True  # vanished or unreadable: the read says so (or finds nothing)
        if stat.S_ISREG(st.st_mode):
            return True
        self._skip(path, LINK_REASON if stat.S_ISLNK(st.st_mode) else not_regular_reason(st.st_mode))
        return False

    def _wal_unchanged(self, path: Path) -> bool:
        """Whether ``path`` is a database's write-ahead log (``<db>-wal``, claimed by the format that
        claims ``<db>``) and neither it nor its database changed since the last look; the look is
        remembered. A reader of a WAL database that no writer has open makes the log (a read-only one
        leaves it empty, another deletes it on closing): the watcher's own read of a
        delivered database (its good nights), the app's and every other reader's would otherwise be
        heard as a change, read again, and so on every debounce, forever. The look is taken before
        anything reads the database, so a row an agent commits meanwhile changes the log after it."""
        if not path.name.endswith("-wal"):
            return False
        db = path.with_name(path.name[: -len("-wal")])
        fmt = formats.claimed(path)
        if fmt is None or formats.claimed(db) is not fmt:
            return False
        log = _stat(path)
        now = (_stat(db), log if log is not None and log[0] > 0 else None)  # an empty log holds no rows
        before = self._wal_seen.get(path)
        self._wal_seen[path] = now
        return before == now

    def _walk(self) -> tuple[dict[Path, tuple[int, int]], dict[Path, tuple[int, int]]]:
        """Size and mtime of every regular transcript file below the watched folders (each may be a
        link; nothing below one is followed), and of every regular file that belongs to a session
        without being its transcript (``formats.belongs``: by its name, one ``lstat`` each, never
        opened). Folders that cannot be listed or searched, FIFOs, devices or sockets, and symlinked
        transcripts and folders are reported once and left out."""
        found: dict[Path, tuple[int, int]] = {}
        belonging: dict[Path, tuple[int, int]] = {}
        folders = [str(f) for f in (self.root, *self.extra)]
        while folders:
            dirpath = folders.pop()
            try:
                with os.scandir(dirpath) as it:
                    entries = list(it)
            except (FileNotFoundError, NotADirectoryError):
                continue  # gone since it was listed
            except OSError as exc:
                self._skip(dirpath, f"cannot list this folder ({error_reason(exc)})")
                continue
            for entry in entries:
                try:
                    if entry.is_symlink():  # the listing says so: no call of its own
                        if formats.claimed(entry.path) is not None or _is_dir_or_loop(entry):
                            self._skip(entry.path, LINK_REASON)
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
                        continue
                    if formats.claimed(entry.path) is None:
                        if formats.belongs(p := Path(entry.path)):
                            st = entry.stat(follow_symlinks=False)
                            if stat.S_ISREG(st.st_mode):
                                belonging[p] = (st.st_size, st.st_mtime_ns)
                        continue
                    st = entry.stat(follow_symlinks=False)
                except PermissionError as exc:  # listed but not searchable: say it once, for the folder
                    self._skip(dirpath, f"cannot open the files in this folder ({error_reason(exc)})")
                    break
                except OSError:
                    continue
                p = Path(entry.path)
                if not stat.S_ISREG(st.st_mode):
                    self._skip(p, LINK_REASON if stat.S_ISLNK(st.st_mode) else not_regular_reason(st.st_mode))
                    continue
                found[p] = (st.st_size, st.st_mtime_ns)
        for p in self._alone:  # each file watched alone: looked at, its folder never listed
            try:
                st = os.lstat(p)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                self._skip(p, LINK_REASON if stat.S_ISLNK(st.st_mode) else not_regular_reason(st.st_mode))
                continue
            found[p] = (st.st_size, st.st_mtime_ns)
        return found, belonging

    def _changed_since_snapshot(self) -> list[Path]:
        """The transcripts whose size or mtime changed since the last look, and those a file that
        belongs to them (``formats.belongs``) was added to, changed in or removed from (its session,
        ``formats.source_of``: only such files are mapped, and only they may be opened to do it)."""
        current, belonging = self._walk()
        changed = {p for p, st in current.items() if self._snapshot.get(p) != st}
        self._snapshot = current
        before, self._belonging = self._belonging, belonging
        moved = [p for p, st in belonging.items() if before.get(p) != st]
        moved += [p for p in before if p not in belonging]
        for p in moved:
            source = formats.source_of(p)
            if source is not None:
                changed.add(source)
        return sorted(changed)

    def _scan_for_goodnight(self, path: Path, fmt: TranscriptFormat | None = None) -> bool:
        """Read the new complete lines of ``path`` and say whether a person said good night.

        The new region is read in bounded chunks (:class:`LineScanner`): memory stays at one chunk
        plus one line however much was appended, and lines over :data:`SCAN_MAX_LINE` are skipped.
        """
        fmt = fmt or formats.format_for(path)
        start = self._scanned.get(path, 0)
        found = False
        try:
            with open_regular(path) as fh:
                size = os.fstat(fh.fileno()).st_size
                if size < start:  # truncated or replaced: read it again from the start
                    start = 0
                scanner = LineScanner(fh, start, max_line=SCAN_MAX_LINE, end=size, keep=_may_say_goodnight)
                for _line, _offset, raw in scanner:
                    if not found and _line_says_goodnight(raw, fmt):
                        found = True
        except NotRegularFile as exc:
            self._skip(path, exc.strerror or "not a regular file")
            return False
        except OSError:
            return False
        self._scanned[path] = scanner.offset
        return found


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns)


def _is_dir_or_loop(entry: os.DirEntry[str]) -> bool:
    """Whether a symlink met in the walk points at a folder, or cannot be followed (a loop)."""
    try:
        return entry.is_dir()
    except OSError:
        return True


def _last_line_end(path: Path, size: int) -> int:
    """The offset just after the last newline at or before ``size`` (a partial last line waits)."""
    if size <= 0:
        return 0
    try:
        with open_regular(path) as fh:
            pos = size
            while pos > 0:
                start = max(0, pos - _TAIL_PROBE)
                fh.seek(start)
                chunk = fh.read(pos - start)
                idx = chunk.rfind(b"\n")
                if idx >= 0:
                    return start + idx + 1
                pos = start
    except OSError:
        return size
    return 0


def _may_say_goodnight(buf: bytes, start: int, end: int) -> bool:
    """A cheap byte test: the line holds one of the good-night words (any case)."""
    lowered = buf[start:end].lower()
    return any(hint in lowered for hint in _GOODNIGHT_HINTS)


def _bytes_hint(source: Path) -> bool:
    """Whether the bytes of ``source`` (and of its write-ahead log beside it, for a database) hold a
    good-night word, read in chunks: a source without one says no good night."""
    overlap = max(len(h) for h in _GOODNIGHT_HINTS)
    for path in (source, source.with_name(source.name + "-wal")):
        try:
            with open_regular(path) as fh:
                tail = b""
                while chunk := fh.read(1 << 20):
                    buf = (tail + chunk).lower()
                    if any(h in buf for h in _GOODNIGHT_HINTS):
                        return True
                    tail = buf[-overlap:]
        except (OSError, NotRegularFile):
            continue
    return False


def _record_says_goodnight(obj: object, fmt: TranscriptFormat) -> bool:
    """A whole-file source's record is a person's words saying good night (never tool output, never a
    sub-agent's record)."""
    if not isinstance(obj, dict):
        return False
    try:
        if fmt.ref(obj).sidechain:
            return False
        return any(p.role == "person" and is_goodnight(p.text) for p in fmt.pieces(obj))
    except Exception:  # an odd record never stops the watcher
        return False


def _line_says_goodnight(raw: bytes, fmt: TranscriptFormat) -> bool:
    """One raw JSONL line is a person's prompt that says good night (never tool output, never a
    sub-agent's record)."""
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            obj = json.loads(raw.decode("utf-8", "replace"))
        except ValueError:
            return False
    if not isinstance(obj, dict) or fmt.ref(obj).sidechain:
        return False
    try:
        return any(p.role == "person" and is_goodnight(p.text) for p in fmt.pieces(obj))
    except Exception:  # an odd record never stops the watcher
        return False
