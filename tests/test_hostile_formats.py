"""Issue 31's conformance matrix of bad files, for every registered format (``formats.FORMATS``: a new
format is covered by adding its good session and its slot below, which the first test demands).

For each format, a hostile file takes the place of its session (its *slot*: where the agent writes
one, under the agent's default folder in a HOME of the test's own) beside one good session of every
other format; the real CLI dreams them offline. The dream succeeds; the bad file is named by exactly
one one-line notice (the cycle record's ``skipped_paths`` and ``unreadable_files``); every good session
of every other format is read (its row in the ledger); nothing of the bad file is proposed. Then one
watcher over what the app watches hears a live session of each appended to or rewritten, through
real watchdog events alone (no rescan)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.agent_dbs import build_opencode_storage
from fakes.cli_world import folder_args
from fakes.every_agent import CURSOR_CWD, DOCUMENT, SQLITE, agent_env, homes, live_changes, touch
from fakes.every_agent import write_good as write_agents_good
from fakes.waiting import wait_for

from dreamtui.cli.main import cli
from dreamtui.core.config import Config
from dreamtui.core.files import LINK_REASON
from dreamtui.core.gate.verify import verify_quotes
from dreamtui.core.ingest import formats, sources
from dreamtui.core.ingest.formats import aider, copilot, copilot_history, cursor, gemini, opencode
from dreamtui.core.ingest.records import address_key
from dreamtui.core.ingest.tail import DEFAULT_MAX_LINE
from dreamtui.core.ledger import Ledger, offsets
from dreamtui.core.repository import encode_path
from dreamtui.services.workspace import Workspace

NOW = "2026-03-10T23:00:00Z"


LESSONS = [
    "Never push to the release branch without a green CI run, it deploys straight to customers.",
    "Always run the database migrations against the throwaway container before touching them.",
    "Never commit the generated client folder, the build step rebuilds it every single time.",
    "Always commit the lockfile together with the manifest, the deploy script refuses a mismatch.",
    "Never deploy on a Friday afternoon, nobody from the on-call rotation is around then.",
    "Always keep changelog entries in the imperative mood, the release tooling parses them.",
    "Never run the integration suite without the compose stack up, the tests hang forever.",
    "Always pin container images by digest in the manifests, tags get overwritten upstream.",
]


def lesson_of(name: str) -> str:
    """A lesson of its own for each format's good session (none a near-duplicate of another)."""
    return LESSONS[list(formats.FORMATS).index(name) % len(LESSONS)]


MAX_LINE = DEFAULT_MAX_LINE


@dataclass
class World:
    tmp: Path
    config: Config
    repo: Path
    good: dict[str, list[str]]
    """Each format's good session addresses (a SQLite source: every session inside it)."""


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DREAMTUI_NOW", NOW)
    for key, value in agent_env(tmp_path).items():  # every agent's default folder under tmp_path
        monkeypatch.setenv(key, value)
    gemini._resolved.clear()
    return tmp_path


def write_good(name: str, tmp: Path, repo: Path, transcripts: Path) -> tuple[Path, list[str]]:
    """One good session of format ``name`` at its default place under ``tmp``, saying its own lesson:
    (its file, its addresses)."""
    return write_agents_good(name, tmp, repo, transcripts, lesson_of(name))


def slot(name: str, tmp: Path, repo: Path, transcripts: Path) -> Path:
    """Where a session file of format ``name`` would be, beside (or in place of) its good one."""
    home = homes(tmp)
    other = "0bad0bad-1111-4222-8333-444455556666"
    if name == "claude-code":
        return transcripts / encode_path(str(repo)) / f"{other}.jsonl"
    if name == "codex":
        return (
            home["codex"] / "sessions" / "2026" / "03" / "10" / f"rollout-2026-03-10T21-00-00-{other}.jsonl"
        )
    if name == "gemini-cli":
        project = hashlib.sha256(str(repo).encode()).hexdigest()
        return (
            home["gemini"] / ".gemini" / "tmp" / project / "chats" / "session-2026-03-10T21-00-0bad0bad.json"
        )
    if name == "copilot-cli":
        return home["copilot"] / "session-state" / other / "events.jsonl"
    if name == "copilot-cli-history":
        return home["copilot"] / "history-session-state" / f"session_{other}_1773176400000.json"
    if name == "opencode":
        return tmp / "home" / ".local" / "share" / "opencode" / opencode.DB_NAME
    if name == "cursor":
        return tmp / "home" / ".cursor" / "chats" / cursor.cwd_hash(CURSOR_CWD) / other / cursor.STORE_NAME
    if name == "aider":
        return repo / aider.HISTORY_NAME
    raise AssertionError(f"no slot for the format {name}")  # pragma: no cover


def build(tmp: Path, target: str) -> World:
    """A good session of every format but ``target`` (whose slot the case fills)."""
    repo = (tmp / "src" / "spotter").resolve()
    repo.mkdir(parents=True)
    transcripts = tmp / "transcripts"
    transcripts.mkdir()
    config = Config(
        transcripts=transcripts, memory=tmp / "memory", state=tmp / "state", extractor="heuristic"
    )
    good: dict[str, list[str]] = {}
    for name in formats.FORMATS:
        if name != target:
            good[name] = write_good(name, tmp, repo, transcripts)[1]
    return World(tmp, config, repo, good)


def _good_bytes(name: str, tmp: Path) -> bytes:
    """The bytes of a good session file of ``name``, written elsewhere (outside every folder read)."""
    elsewhere = tmp / "elsewhere"
    repo = (tmp / "src" / "spotter").resolve()
    path, _ = write_good(name, elsewhere, repo, elsewhere / "transcripts")
    if name == "aider":  # written into the repository: move it out of the way
        data = path.read_bytes()
        path.unlink()
        return data
    return path.read_bytes()


# -- the hostile cases ---------------------------------------------------------------------------


def _garbage(world: World, name: str, path: Path) -> None:
    path.write_bytes(random.Random(31).randbytes(4096))


def _truncated(world: World, name: str, path: Path) -> None:
    data = _good_bytes(name, world.tmp)
    if name in SQLITE:
        cut = len(data) // 3  # the header and the first pages, not the rest
    elif name == "aider":
        cut = data.index(b"# aider chat") + 8  # mid-way through its first record, no newline yet
    elif formats.named(name).layout == "lines":
        cut = data.index(b"\n") // 2  # mid-way through the first record, no newline yet
    else:
        cut = len(data) // 2
    path.write_bytes(data[:cut])


def _invalid_utf8(world: World, name: str, path: Path) -> None:
    path.write_bytes((b"\xc3\x28\xa0\xa1\xff\xfe\xfd " * 64 + b"\n") * 16)


def _huge(world: World, name: str, path: Path) -> None:
    limit = {
        "gemini-cli": gemini.MAX_DOCUMENT,
        "copilot-cli-history": copilot_history.MAX_DOCUMENT,
        "aider": aider.MAX_FILE_BYTES,
    }.get(name)
    if limit is not None:  # a whole file over its limit: sparse, so the test writes nothing
        with path.open("wb") as fh:
            fh.truncate(limit + 1)
        return
    # one record over the longest line read: a JSON line that never fits
    path.write_bytes(b'{"type":"user","message":{"content":"' + b"a" * (MAX_LINE + 16) + b'"}}\n')


def _fifo(world: World, name: str, path: Path) -> None:
    os.mkfifo(path)


def _symlink_zero(world: World, name: str, path: Path) -> None:
    path.symlink_to("/dev/zero")


def _folder(world: World, name: str, path: Path) -> None:
    path.mkdir()
    (path / "inside.txt").write_text("not a session")


def _unreadable(world: World, name: str, path: Path) -> None:
    path.write_bytes(_good_bytes(name, world.tmp))
    path.chmod(0)


def _sqlite_header(world: World, name: str, path: Path) -> None:
    path.write_bytes(b"SQLite format 3\x00" + random.Random(7).randbytes(8192))


def _half_written(world: World, name: str, path: Path) -> None:
    data = _good_bytes(name, world.tmp)
    path.write_bytes(data[: len(data) * 2 // 3])  # a rewrite in progress: the writer is not done


Case = Callable[[World, str, Path], None]
CASES: dict[str, Case] = {
    "garbage": _garbage,
    "truncated": _truncated,
    "invalid-utf8": _invalid_utf8,
    "huge": _huge,
    "fifo": _fifo,
    "symlink-dev-zero": _symlink_zero,
    "folder": _folder,
    "unreadable": _unreadable,
    "sqlite-header-garbage": _sqlite_header,
    "half-written": _half_written,
}


def applies(name: str, case: str) -> bool:
    if case == "sqlite-header-garbage":
        return name in SQLITE
    if case == "half-written":
        return name in DOCUMENT
    if case == "invalid-utf8":
        return name not in SQLITE  # a database is bytes: its text is tested by the corrupt cases
    return True


KNOWN: dict[tuple[str, str], str] = {}
"""Cells that still fail, each with why: strict, so a fix must take its cell out of here."""
MATRIX = [
    pytest.param(n, c, id=f"{n}-{c}", marks=[pytest.mark.xfail(strict=True, reason=KNOWN[(n, c)])])
    if (n, c) in KNOWN
    else pytest.param(n, c, id=f"{n}-{c}")
    for n in formats.FORMATS
    for c in CASES
    if applies(n, c)
]


def _dream(config: Config) -> tuple[int, dict, str]:  # type: ignore[type-arg]
    got = CliRunner().invoke(cli, [*folder_args(config), "--extractor", "heuristic", "dream", "--json"])
    assert got.exception is None or isinstance(got.exception, SystemExit), got.output
    assert "Traceback" not in got.output
    return got.exit_code, json.loads(got.stdout), got.output


def _notices(record: dict) -> list[str]:  # type: ignore[type-arg]
    stats = record.get("stats", {})
    return [*stats.get("skipped_paths", []), *stats.get("unreadable_files", [])]


def _check(world: World, bad: Path, *, read_ok: bool = False) -> dict:  # type: ignore[type-arg]
    """Dream; check the bad file is named in one line, nothing of it read, every good session read;
    the cycle's record."""
    code, record, _ = _dream(world.config)
    assert code == 0, record
    notices = _notices(record)
    assert all("\n" not in n for n in notices), notices
    naming = [n for n in notices if str(bad) in n]
    with Ledger.open(world.config.state) as ledger:
        for name, addresses in world.good.items():
            for address in addresses:
                assert offsets.dreamed_point(ledger, address_key(address)) is not None, (name, address)
        proposed = {c.transcript for c in ledger.list_candidates(status="pending")}
        read_bad = bool(ledger.one("SELECT 1 FROM files WHERE path LIKE ?", (f"{bad}%",)))
    if read_ok and naming == []:  # read as it is (a WAL database being written: as committed)
        assert read_bad and any(t.startswith(str(bad)) for t in proposed), proposed
        return record
    assert len(naming) == 1, (str(bad), notices)  # exactly one line names it
    assert not read_bad and not [t for t in proposed if t.startswith(str(bad))], proposed
    return record


@pytest.mark.parametrize(("name", "case"), MATRIX)
def test_a_bad_file_is_one_line_and_every_other_format_is_read(env: Path, name: str, case: str) -> None:
    world = build(env, name)
    bad = slot(name, env, world.repo, world.config.transcripts)
    bad.parent.mkdir(parents=True, exist_ok=True)
    if case == "unreadable" and os.geteuid() == 0:
        pytest.skip("running as root (os.geteuid() == 0): chmod 000 leaves the file readable")
    CASES[case](world, name, bad)
    if bad.exists() and not bad.is_symlink():
        touch(bad)
    try:
        _check(world, bad)
    finally:
        if bad.exists() and not bad.is_symlink() and not bad.is_dir():
            bad.chmod(0o600)


def test_every_registered_format_has_a_good_session_and_a_slot(env: Path) -> None:
    world = build(env, "")
    assert set(world.good) == set(formats.FORMATS)
    for name in formats.FORMATS:
        assert slot(name, env, world.repo, world.config.transcripts).name


def _link_notice(record: dict, link: Path) -> None:  # type: ignore[type-arg]
    """The link is named by exactly the one line every format gives a symlink (files.LINK_REASON)."""
    assert [n for n in _notices(record) if str(link) in n] == [f"skipped {link}: {LINK_REASON}"], _notices(
        record
    )


def _root(world: World, name: str) -> Path:
    """The root (a folder the format reads) its good session lies under."""
    where = formats.split_address(world.good[name][0])[0]
    return next(
        r.folder
        for r in sources.roots(world.config)
        if r.format.name == name and where.is_relative_to(r.folder)
    )


def _every_good_read(world: World) -> None:
    with Ledger.open(world.config.state) as ledger:
        for name, addresses in world.good.items():
            for address in addresses:
                assert offsets.dreamed_point(ledger, address_key(address)) is not None, (name, address)


ROOTED = [n for n in formats.FORMATS if n != aider.name]
"""The formats with a root of their own (Aider keeps none: a history is found in a project's working
tree, where a linked folder is never followed and, being the person's, never named)."""


@pytest.mark.parametrize("name", list(formats.FORMATS))
def test_a_symlink_to_a_good_session_elsewhere_is_named_once_and_never_read_through(
    env: Path, name: str
) -> None:
    """Agents write their sessions as regular files in their own folders: a session file that is a
    symlink (here to a good session outside every folder read) is never read through, in every format,
    and is named by the one line every format gives; every other format's session is still read."""
    world = build(env, name)
    bad = slot(name, env, world.repo, world.config.transcripts)
    bad.parent.mkdir(parents=True, exist_ok=True)
    target = env / "outside" / bad.name
    target.parent.mkdir()
    target.write_bytes(_good_bytes(name, env))
    touch(target)
    bad.symlink_to(target)
    _link_notice(_check(world, bad), bad)


@pytest.mark.parametrize("name", list(formats.FORMATS))
def test_a_quote_is_never_verified_through_a_symlink(env: Path, name: str) -> None:
    """Quote verification reads a quote's source as the dream does: the lesson verifies in a good
    session, and never through a symlink to it at the session's place (it names the link's reason)."""
    world = build(env, name)
    elsewhere = env / "elsewhere"
    (elsewhere / "repo").mkdir(parents=True)
    target, addresses = write_good(name, elsewhere, elsewhere / "repo", elsewhere / "transcripts")
    fmt = formats.named(name)
    quote = next(
        piece.text[:120]
        for rec in fmt.records(*formats.split_address(addresses[0]))
        for piece in fmt.pieces(rec.obj)
        if piece.role == "person" and len(piece.text) > 20
    )
    assert verify_quotes([quote], [addresses[0]])[0].verified, (addresses, quote)
    bad = slot(name, env, world.repo, world.config.transcripts)
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.symlink_to(target)
    got = verify_quotes([quote], [addresses[0].replace(str(target), str(bad))])[0]
    assert not got.verified and got.matches == [], got
    assert "symlink" in (got.reason or ""), got.reason


def _linked_folder(world: World, name: str, root: Path) -> Path:
    """A folder below ``root`` that is a symlink to the same folder of a good session written under a
    root of its own elsewhere (read through the link, it would be a good session of ``name``)."""
    elsewhere = world.tmp / "elsewhere"
    root_there = elsewhere / root.relative_to(world.tmp)
    if name == opencode.name:  # the older storage/ layout: its folder is the one linked
        build_opencode_storage(root_there)
        link = root / "storage"
        link.symlink_to(root_there / "storage", target_is_directory=True)
        return link
    path, _ = write_good(name, elsewhere, world.repo, elsewhere / "transcripts")
    if name == copilot_history.name:  # a root of session files only: a folder of them linked into it
        link = root / "archive"
        link.symlink_to(root_there, target_is_directory=True)
        return link
    first = path.relative_to(root_there).parts[0]  # the project, date, session or chat folder
    link = root / f"{first}-linked"
    link.symlink_to(root_there / first, target_is_directory=True)
    return link


@pytest.mark.parametrize("name", ROOTED)
def test_a_symlinked_folder_below_a_root_is_named_once_and_never_read_through(env: Path, name: str) -> None:
    """A folder below a format's root (a Claude Code project folder, a Codex date folder, a Gemini
    project folder, a Copilot session folder, a Cursor chat folder, OpenCode's storage folder, a folder
    of Copilot's older history documents in their flat folder) that is a symlink is never read through:
    one line names it, and every good session (this format's own too) is read."""
    world = build(env, "")
    counts = _folder_counts(world)
    link = _linked_folder(world, name, _root(world, name))
    _link_notice(_check(world, link), link)
    assert _folder_counts(world) == counts  # `dreamtui config` counts no session behind the link
    listed: list[str] = []
    with Workspace(world.config) as ws:
        rows = ws.sessions(listed)  # the Sessions list: the link named once, nothing behind it listed
    assert [n for n in listed if str(link) in n] == [f"skipped {link}: {LINK_REASON}"], listed
    assert sum(r.files for r in rows) == sum(len(a) for a in world.good.values()), rows


def _folder_counts(world: World) -> dict[tuple[str, str], int | None]:
    """The sessions `dreamtui config` counts in each format's folder."""
    found = sources.format_folders(world.config, sources.discover_all(world.config))
    return {(f.name, str(f.folder)): f.sessions for f in found}


@pytest.mark.parametrize("name", ROOTED)
def test_a_root_that_is_a_symlink_is_read_through_it(env: Path, name: str) -> None:
    """The roots themselves (``~/.claude/projects``, ``~/.codex/sessions``…) are often links into a
    dotfiles folder: followed, every session below read, nothing named."""
    world = build(env, "")
    root = _root(world, name)
    real = env / "dotfiles" / name
    real.parent.mkdir(exist_ok=True)
    root.rename(real)
    root.symlink_to(real, target_is_directory=True)
    code, record, _ = _dream(world.config)
    assert code == 0, record
    assert not [n for n in _notices(record) if str(root) in n], _notices(record)
    _every_good_read(world)


@pytest.mark.parametrize("name", ROOTED)
def test_a_symlink_loop_below_a_root_ends_with_one_line_per_link(env: Path, name: str) -> None:
    """Links that loop (back up to the root from the folder of a session, to itself beside it) end the
    dream as any link does: each named once, every good session read."""
    world = build(env, "")
    root = _root(world, name)
    if name == opencode.name:  # OpenCode reads its database and its storage folder, nothing else
        loops = [root / "storage"]
        loops[0].symlink_to(root, target_is_directory=True)
    else:
        here = formats.split_address(world.good[name][0])[0].parent
        if name in (copilot.name, cursor.name):  # a session's own folder holds files only: its parent
            here = here.parent
        loops = [here / "loop-up", root / "loop-self"]
        loops[0].symlink_to(root, target_is_directory=True)
        loops[1].symlink_to(loops[1].name)  # itself: following it never ends (ELOOP)
    code, record, _ = _dream(world.config)
    assert code == 0, record
    for loop in loops:
        _link_notice(record, loop)
    _every_good_read(world)


def _sqlite_good(world: World, name: str, bad: Path) -> None:
    """The good database of ``name`` at ``bad`` (WAL mode, as the agent keeps it)."""
    data = _good_bytes(name, world.tmp)
    bad.write_bytes(data)
    with sqlite3.connect(bad) as conn:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    touch(bad)


@pytest.mark.parametrize("name", sorted(SQLITE))
def test_a_database_locked_by_a_writer_is_one_line_and_the_others_are_read(env: Path, name: str) -> None:
    world = build(env, name)
    bad = slot(name, env, world.repo, world.config.transcripts)
    bad.parent.mkdir(parents=True, exist_ok=True)
    _sqlite_good(world, name, bad)
    with sqlite3.connect(bad) as writer:
        writer.execute("PRAGMA journal_mode=DELETE")  # an exclusive lock keeps every reader out
    writer.close()
    touch(bad)
    writer = sqlite3.connect(bad, isolation_level=None)
    try:
        writer.execute("BEGIN EXCLUSIVE")
        _check(world, bad)
    finally:
        writer.execute("ROLLBACK")
        writer.close()


@pytest.mark.parametrize("name", sorted(SQLITE))
def test_a_wal_database_being_written_is_read_as_committed(env: Path, name: str) -> None:
    world = build(env, name)
    bad = slot(name, env, world.repo, world.config.transcripts)
    bad.parent.mkdir(parents=True, exist_ok=True)
    _sqlite_good(world, name, bad)
    writer = sqlite3.connect(bad, isolation_level=None)
    try:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("BEGIN IMMEDIATE")  # the agent is writing: its transaction open, not committed
        writer.execute("CREATE TABLE dreamtui_probe (x)")
        writer.execute("INSERT INTO dreamtui_probe VALUES (1)")
        touch(bad)
        _check(world, bad, read_ok=True)  # read as committed
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_one_watcher_hears_a_live_session_of_every_format_by_events_alone(env: Path) -> None:
    """Every format's live session changed as its agent changes it (lines appended; a whole document
    rewritten atomically and in place; rows inserted in WAL mode), heard through real watchdog events
    by one watcher over what the app watches (every agent's folder whole, each file kept inside a
    project in its folder alone: Aider's history, found in the working directory of the Claude Code
    session), with no rescan at all: a format whose change only a rescan would see fails here. How soon
    (the debounce plus a little) is measured by ``tests/bench/bench_watch_latency.py``."""
    from dreamtui.core.ingest.watch import DEFAULT_DEBOUNCE, Watcher
    from dreamtui.services.transcripts import watched_alone, watched_folders

    world = build(env, "")
    changes: list[Path] = []
    lock = threading.Lock()

    def changed(paths: list[Path]) -> None:
        with lock:
            changes.extend(paths)

    def heard(path: Path) -> bool:
        with lock:
            return path in changes

    files = {name: Path(formats.split_address(world.good[name][0])[0]) for name in formats.FORMATS}
    debounce = DEFAULT_DEBOUNCE / 5
    with Watcher(
        world.config.transcripts,
        extra=watched_folders(world.config),
        singles=watched_alone(world.config),
        on_change=changed,
        debounce=debounce,
        rescan_seconds=3600,
    ) as watcher:
        assert files["aider"] in watcher.alone and watcher.alone_folders == [world.repo]  # not recursive
        for name, path in files.items():
            for how in live_changes(name, path):
                with lock:
                    changes.clear()
                how()
                heard_at = wait_for(lambda p=path: heard(p) or heard(Path(f"{p}-wal")), 10)
                assert heard_at, (name, how.__name__)
        assert watcher.rescans == 0  # heard through events alone
