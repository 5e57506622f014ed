"""Git operations on the memory repository (GitPython).

Every write commits exactly the paths dreamtui wrote (``git commit --only -- <paths>``), so a
person's own staged or unstaged work is never swept in. A held ``index.lock`` is waited on and
retried; it is cleared only when it is stale: no live process holds it (no git process works in
this repository, no process has the file open), it has not changed for ``DREAMTUI_GIT_STALE_LOCK``
seconds (default 10) and it belongs to this user — what a killed git leaves behind. Each clearing is
logged in ``<git dir>/dreamtui-recovery.log`` and reported as a notice. Every git command that may run
hooks runs with a timeout (``DREAMTUI_GIT_HOOK_TIMEOUT``, default 60 s): a hanging hook is stopped and
the commit abandoned with a one-line error naming the hook; a failed or stopped commit puts the index
entries of its paths back exactly as they were. A missing identity falls back to
``dreamtui <dreamtui@localhost>`` for that commit only; the notice saying so is given once per
repository, with the first such commit whose notices the person sees (an accept, an undo), and
remembered in ``<git dir>/dreamtui-identity-notice``. A detached HEAD or a
merge/rebase/cherry-pick in progress is refused with a clear message.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import git
from git import GitCommandError, InvalidGitRepositoryError, NoSuchPathError, Repo

from dreamtui.core.config import env_seconds
from dreamtui.core.errors import MemoryRepoError
from dreamtui.core.memory.layout import bare_repository_message
from dreamtui.core.models import Jsonable
from dreamtui.core.secrets import redact

FALLBACK_NAME = "dreamtui"
FALLBACK_EMAIL = "dreamtui@localhost"
LOCK_TIMEOUT_ENV = "DREAMTUI_GIT_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 10.0
STALE_LOCK_ENV = "DREAMTUI_GIT_STALE_LOCK"
DEFAULT_STALE_LOCK = 10.0
HOOK_TIMEOUT_ENV = "DREAMTUI_GIT_HOOK_TIMEOUT"
DEFAULT_HOOK_TIMEOUT = 60.0
RECOVERY_LOG = "dreamtui-recovery.log"

TRAILER_CANDIDATE = "Dreamtui-Candidate"
TRAILER_UNDO = "Dreamtui-Undo"
TRAILER_REVIEW = "Dreamtui-Review"
TRAILER_AUTO = "Dreamtui-Auto"

_TRAILER_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9-]*): (.+)$")
_REVERTS = re.compile(r"This reverts commit ([0-9a-f]{40})")
_LOCK_ERROR = re.compile(r"\.lock'?: File exists|Unable to create '.*\.lock'|cannot lock ref", re.I)
_IN_PROGRESS = {
    "MERGE_HEAD": "a merge is in progress",
    "rebase-merge": "a rebase is in progress",
    "rebase-apply": "a rebase or am is in progress",
    "CHERRY_PICK_HEAD": "a cherry-pick is in progress",
    "REVERT_HEAD": "a revert is in progress",
}


@dataclass(frozen=True, slots=True)
class CommitInfo(Jsonable):
    """One commit: sha, subject, author, ISO date, and its ``Key: value`` trailers."""

    sha: str
    subject: str
    author: str
    date: str
    trailers: dict[str, list[str]] = field(default_factory=dict)
    reverts: str | None = None


@dataclass(slots=True)
class CommitResult:
    """The sha of a commit dreamtui made, and anything the person should be told about it."""

    sha: str
    notices: list[str] = field(default_factory=list)


def work_tree(repo: Repo) -> Path:
    """The repository's work tree (the memory repository is never bare)."""
    if repo.working_tree_dir is None:
        raise MemoryRepoError(f"{repo.git_dir} is a bare repository: the memory repository needs a work tree")
    return Path(repo.working_tree_dir)


def _seconds(name: str, default: float) -> float:
    return env_seconds(name, default)  # a bad value is a one-line ConfigError, never silently the default


def lock_timeout() -> float:
    """Seconds to wait for a held ``index.lock`` (``DREAMTUI_GIT_LOCK_TIMEOUT``, default 10)."""
    return _seconds(LOCK_TIMEOUT_ENV, DEFAULT_LOCK_TIMEOUT)


def stale_lock_age() -> float:
    """Seconds an unheld ``index.lock`` must stay unchanged before it is cleared
    (``DREAMTUI_GIT_STALE_LOCK``, default 10)."""
    return _seconds(STALE_LOCK_ENV, DEFAULT_STALE_LOCK)


def hook_timeout() -> float:
    """Seconds a git command (and the hooks it runs) may take (``DREAMTUI_GIT_HOOK_TIMEOUT``, default 60)."""
    return _seconds(HOOK_TIMEOUT_ENV, DEFAULT_HOOK_TIMEOUT) or DEFAULT_HOOK_TIMEOUT


_INHERITED = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_PREFIX",
)


def _pinned(repo: Repo) -> Repo:
    """Make every git command of ``repo`` act on it, even when dreamtui runs inside another repository's
    hook (which exports ``GIT_DIR``, ``GIT_INDEX_FILE``…)."""
    if any(name in os.environ for name in _INHERITED):
        gitdir = Path(repo.git_dir)
        repo.git.update_environment(
            GIT_DIR=str(gitdir),
            GIT_WORK_TREE=str(repo.working_tree_dir),
            GIT_INDEX_FILE=str(gitdir / "index"),
            GIT_OBJECT_DIRECTORY=str(Path(repo.common_dir) / "objects"),
            GIT_COMMON_DIR=str(repo.common_dir),
            GIT_NAMESPACE="",
            GIT_ALTERNATE_OBJECT_DIRECTORIES="",
            GIT_PREFIX="",
        )
    return repo


def bare_error(path: Path) -> MemoryRepoError:
    """The one-line refusal of a bare repository as the memory repository."""
    return MemoryRepoError(bare_repository_message(path))


def open_repo(path: Path, create: bool = True) -> Repo:
    """The memory repository at ``path``; created with ``git init -b main`` when missing.

    A bare repository is refused (:func:`bare_error`): nothing is ever written into it."""
    path = Path(path)
    try:
        repo = Repo(path, search_parent_directories=False)
        if repo.bare:
            raise bare_error(path)
        return _pinned(repo)
    except (InvalidGitRepositoryError, NoSuchPathError):
        if not create:
            raise MemoryRepoError(
                f"memory repository {path} does not exist (or is not a git repository)"
            ) from None
    if path.exists() and not path.is_dir():
        raise MemoryRepoError(f"memory path {path} exists and is not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        env = {name: "" for name in _INHERITED if name in os.environ}
        git.Git(str(path)).execute(
            ["git", "init", "-q", "-b", "main", str(path)],
            env={**env, "GIT_DIR": str(path / ".git")} if env else None,
        )
        return _pinned(Repo(path, search_parent_directories=False))
    except (OSError, GitCommandError) as exc:
        raise MemoryRepoError(f"cannot create the memory repository {path}: {_short(exc)}") from exc


def repo_exists(path: Path) -> bool:
    """``path`` is a git repository (without creating anything)."""
    try:
        Repo(Path(path), search_parent_directories=False)
        return True
    except (InvalidGitRepositoryError, NoSuchPathError):
        return False


def _short(exc: BaseException) -> str:
    if isinstance(exc, GitCommandError):
        text = exc.stderr if isinstance(exc.stderr, str) else str(exc.stderr or "")
        lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
        lines = [ln[len("stderr: ") :] if ln.startswith("stderr: ") else ln for ln in lines]
        lines = [ln.strip("'").strip() for ln in lines if ln.strip("'").strip()]
        return "; ".join(lines[:2]) or f"git exited with {exc.status}"
    return str(exc)


def not_writable(repo: Repo) -> str | None:
    """Why dreamtui must not write into ``repo`` now (a detached HEAD, or a merge/rebase/cherry-pick/
    revert in progress, whose conflicted files a write would destroy), or ``None``."""
    gitdir = Path(repo.git_dir)
    for name, what in _IN_PROGRESS.items():
        if (gitdir / name).exists():
            return (
                f"memory repository {repo.working_tree_dir}: {what}; finish or abort it "
                "(e.g. git merge --abort) and try again"
            )
    if repo.head.is_detached:
        return (
            f"memory repository {repo.working_tree_dir} is on a detached HEAD; "
            "check out a branch (git switch main) and try again"
        )
    return None


def ensure_writable(repo: Repo) -> None:
    """Refuse a detached HEAD or a merge/rebase/cherry-pick/revert in progress (clear message).
    Every writer of the memory repository calls this before touching a file or the index."""
    problem = not_writable(repo)
    if problem is not None:
        raise MemoryRepoError(problem)


def head_sha(repo: Repo) -> str | None:
    """The sha of HEAD, or ``None`` in a repository with no commits yet."""
    try:
        return repo.head.commit.hexsha
    except ValueError:
        return None


def show_file(repo: Repo, rel: str, rev: str = "HEAD") -> bytes | None:
    """The bytes of ``rel`` at ``rev``, or ``None`` when it is not there (or there are no commits)."""
    try:
        commit = repo.commit(rev)
    except (ValueError, git.BadName):
        return None
    try:
        blob = commit.tree / rel
    except KeyError:
        return None
    if blob.type != "blob":
        return None
    data: bytes = blob.data_stream.read()
    return data


IDENTITY_NOTICE_FILE = "dreamtui-identity-notice"
"""In the git dir: the fallback identity's notice has been given for this repository."""


def identity(repo: Repo) -> tuple[list[str], str | None]:
    """Extra ``-c`` options for a commit when git has no user identity, and the notice saying so —
    only while it has not been given for this repository (see :func:`identity_noticed`)."""

    def configured(key: str, envs: tuple[str, ...]) -> bool:
        if all(os.environ.get(e) for e in envs):
            return True
        try:
            return bool(repo.git.config("--get", key).strip())
        except GitCommandError:
            return False

    has_name = configured("user.name", ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"))
    has_email = configured("user.email", ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL")) or bool(
        os.environ.get("EMAIL")
    )
    if has_name and has_email:
        return [], None
    opts: list[str] = []
    if not has_name:
        opts += ["-c", f"user.name={FALLBACK_NAME}"]
    if not has_email:
        opts += ["-c", f"user.email={FALLBACK_EMAIL}"]
    if (Path(repo.git_dir) / IDENTITY_NOTICE_FILE).exists():
        return opts, None
    notice = (
        f"git has no user.name/user.email: committed as {FALLBACK_NAME} <{FALLBACK_EMAIL}> "
        "(set them with git config --global user.name/user.email; said once for this repository)"
    )
    return opts, notice


def identity_noticed(repo: Repo, notice: str) -> None:
    """Remember that the fallback identity's notice reached the person (after the commit it came with):
    later commits in this repository are made the same way, silently. Best effort."""
    try:
        (Path(repo.git_dir) / IDENTITY_NOTICE_FILE).write_text(notice + "\n", encoding="utf-8")
    except OSError:
        pass


# -- index.lock: wait for a live holder, clear what a killed git left ---------------------------


@dataclass(frozen=True, slots=True)
class LockVerdict:
    """What holds ``index.lock``: ``gone``, ``held`` (a live process), ``foreign`` (another user's),
    ``unknown`` (no ``/proc`` to look in), ``young`` (no holder, not yet stale) or ``stale``."""

    kind: str
    detail: str = ""
    stat: os.stat_result | None = None


def index_lock(repo: Repo) -> Path:
    """The path of the repository's ``index.lock``."""
    return Path(repo.git_dir) / "index.lock"


def _proc_text(pid: int, name: str) -> str:
    with open(f"/proc/{pid}/{name}", "rb") as fh:
        return fh.read().decode("utf-8", "replace")


def _inside(path: str, roots: tuple[Path, ...]) -> bool:
    try:
        resolved = Path(os.path.realpath(path))
    except (OSError, ValueError):
        return False
    return any(resolved == root or resolved.is_relative_to(root) for root in roots)


# sub-commands that never take index.lock (e.g. GitPython's long-lived ``cat-file --batch``)
_READ_ONLY = frozenset(
    {
        "cat-file",
        "log",
        "show",
        "rev-parse",
        "ls-files",
        "ls-tree",
        "rev-list",
        "for-each-ref",
        "config",
        "blame",
        "grep",
        "shortlog",
        "describe",
        "name-rev",
        "show-ref",
        "var",
        "help",
        "version",
        "diff-tree",
        "merge-base",
    }
)


def _subcommand(argv: list[str]) -> str:
    args = iter(argv[1:])
    for arg in args:
        if arg in ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"):
            next(args, None)
        elif not arg.startswith("-"):
            return arg
    return ""


def _git_places(pid: int, argv: list[str]) -> Iterator[str]:
    """The folders a git process works in: its cwd, its ``-C``/``--git-dir``/``--work-tree`` arguments
    and its ``GIT_DIR``/``GIT_WORK_TREE``/``GIT_INDEX_FILE``. Raises ``PermissionError`` when unreadable."""
    cwd = os.readlink(f"/proc/{pid}/cwd")
    base = cwd
    yield cwd
    args = iter(argv[1:])
    for arg in args:
        if arg == "-C":
            base = os.path.join(base, next(args, ""))
            yield base
        elif arg in ("--git-dir", "--work-tree"):
            yield os.path.join(base, next(args, ""))
        elif arg.startswith(("--git-dir=", "--work-tree=")):
            yield os.path.join(base, arg.split("=", 1)[1])
        elif not arg.startswith("-"):
            break  # the sub-command: what follows are its own arguments
    for item in _proc_text(pid, "environ").split("\0"):
        name, _, value = item.partition("=")
        if name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE") and value:
            yield os.path.join(cwd, value)


def _opens(pid: int, target: str) -> bool:
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                return True
        except OSError:
            continue
    return False


def lock_holders(repo: Repo, lock: Path | None = None) -> list[tuple[int, str]] | None:
    """Live processes of this user that may hold the repository's ``index.lock`` (only they can have
    made a lock that is this user's): git processes working in this repository, and any process with
    the lock file open, as (pid, command line). ``None`` when this system has no ``/proc`` to look in.
    A git process whose places cannot be read counts as a holder."""
    if not os.path.isdir("/proc/self/fd"):
        return None
    lock = lock or index_lock(repo)
    roots = tuple(
        {
            Path(os.path.realpath(p))
            for p in (repo.working_tree_dir or repo.git_dir, repo.git_dir, repo.common_dir)
        }
    )
    target = os.path.realpath(lock)
    me, euid = os.getpid(), os.geteuid()
    found: list[tuple[int, str]] = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        pid = int(name)
        try:
            if os.stat(f"/proc/{pid}").st_uid != euid:
                continue
            stat = _proc_text(pid, "stat")
            if stat[stat.rfind(")") + 2 :].split()[:1] == ["Z"]:
                continue  # a zombie holds nothing
            argv = [a for a in _proc_text(pid, "cmdline").split("\0") if a]
            comm = _proc_text(pid, "comm").strip()
        except OSError:
            continue  # gone, or not ours to read
        command = " ".join(argv) or comm
        program = os.path.basename(argv[0]) if argv else comm
        is_git = any(name == "git" or name.startswith("git-") for name in (comm, program))
        if is_git and _subcommand(argv) not in _READ_ONLY:
            try:
                if any(_inside(place, roots) for place in _git_places(pid, argv)):
                    found.append((pid, command))
                    continue
            except PermissionError:
                found.append((pid, command))
                continue
            except OSError:
                continue
        if _opens(pid, target):
            found.append((pid, command))
    return found


def _printable(text: str, limit: int = 80) -> str:
    text = "".join(ch if ch.isprintable() else " " for ch in text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def lock_verdict(repo: Repo, min_age: float | None = None) -> LockVerdict:
    """Who holds ``index.lock``, and whether dreamtui may clear it (``stale``)."""
    lock = index_lock(repo)
    try:
        st = os.lstat(lock)
    except FileNotFoundError:
        return LockVerdict("gone")
    except OSError as exc:
        return LockVerdict("unknown", f"cannot inspect it ({exc.strerror})")
    if st.st_uid != os.geteuid():
        return LockVerdict("foreign", f"it belongs to another user (uid {st.st_uid})", st)
    holders = lock_holders(repo, lock)
    if holders is None:
        return LockVerdict("unknown", "no /proc to see whether a git process holds it", st)
    if holders:
        pid, command = holders[0]
        more = f" and {len(holders) - 1} more" if len(holders) > 1 else ""
        return LockVerdict("held", f"held by a running process (pid {pid}: {_printable(command)}){more}", st)
    if not stat.S_ISREG(st.st_mode):
        return LockVerdict("unknown", "it is not a regular file", st)
    age = time.time() - st.st_mtime
    wanted = stale_lock_age() if min_age is None else min_age
    if age < wanted:
        return LockVerdict("young", f"no process holds it; it is cleared once unchanged for {wanted:g}s", st)
    return LockVerdict("stale", f"no process held it, unchanged for {age:.0f}s", st)


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_ino, a.st_dev, a.st_mtime_ns, a.st_size) == (b.st_ino, b.st_dev, b.st_mtime_ns, b.st_size)


def log_recovery(repo: Repo, line: str) -> None:
    """Append one line to ``<git dir>/dreamtui-recovery.log`` (best effort)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        with open(Path(repo.git_dir) / RECOVERY_LOG, "a", encoding="utf-8") as fh:
            fh.write(f"{stamp} pid {os.getpid()}: {line}\n")
    except OSError:
        pass


def clear_stale_lock(repo: Repo, min_age: float | None = None, why: str = "") -> str | None:
    """Remove ``index.lock`` when it is stale (see :func:`lock_verdict`); returns a notice when it did.

    The lock is renamed aside first and removed only when the renamed file is the one inspected, so a
    lock a new git process took in between is put back untouched."""
    verdict = lock_verdict(repo, min_age)
    if verdict.kind != "stale" or verdict.stat is None:
        return None
    lock = index_lock(repo)
    try:
        if not _same(os.lstat(lock), verdict.stat):
            return None
        aside = lock.with_name(f"index.lock.dreamtui-stale-{os.getpid()}")
        os.rename(lock, aside)
        if not _same(os.lstat(aside), verdict.stat):
            try:
                os.link(aside, lock)
            except FileExistsError:
                pass
            os.unlink(aside)
            return None
        os.unlink(aside)
    except OSError:
        return None
    _clear_temp_indexes(repo)
    line = f"cleared a stale {lock} ({why or 'left by a killed git process'}: {verdict.detail})"
    log_recovery(repo, line)
    return f"memory repository: {line}"


def _clear_temp_indexes(repo: Repo) -> None:
    """Remove the temporary indexes (``next-index-<pid>.lock``) a killed ``commit --only`` left behind
    (only this user's, and only when process ``<pid>`` is gone)."""
    for path in Path(repo.git_dir).glob("next-index-*.lock"):
        pid = path.name[len("next-index-") : -len(".lock")]
        try:
            if path.lstat().st_uid == os.geteuid() and not (pid.isdigit() and os.path.exists(f"/proc/{pid}")):
                path.unlink()
        except OSError:
            continue


def wait_for_index(repo: Repo, timeout: float | None = None, notices: list[str] | None = None) -> None:
    """Wait until ``index.lock`` is free: a live holder is waited on (up to ``timeout``, then a
    one-line :class:`MemoryRepoError` naming it), a stale lock is cleared (notice in ``notices``), and
    a lock no process holds is waited on until it is old enough to be called stale."""
    timeout = lock_timeout() if timeout is None else timeout
    lock = index_lock(repo)
    deadline = time.monotonic() + timeout
    delay = 0.02
    next_look = 0.0
    verdict = LockVerdict("gone")
    while lock.exists():
        now = time.monotonic()
        if now >= next_look:
            verdict = lock_verdict(repo)
            next_look = now + 0.25
            if verdict.kind == "stale":
                notice = clear_stale_lock(repo)
                if notice and notices is not None:
                    notices.append(notice)
                continue
        if now >= deadline and verdict.kind != "young":
            raise _lock_error(repo, lock, timeout, verdict)
        if now >= deadline + stale_lock_age() + 1:
            raise _lock_error(repo, lock, timeout, verdict)
        time.sleep(delay)
        delay = min(delay * 2, 0.25)


def _lock_error(
    repo: Repo, lock: Path, timeout: float, verdict: LockVerdict | None = None
) -> MemoryRepoError:
    if verdict is not None and verdict.kind == "held":
        return MemoryRepoError(
            f"memory repository is busy: {lock} is {verdict.detail} (waited {timeout:g}s); "
            "try again when it finishes"
        )
    if verdict is not None and verdict.kind == "foreign":
        return MemoryRepoError(
            f"memory repository is busy: {lock} is held, and {verdict.detail} (waited "
            f"{timeout:g}s); remove it yourself if no git process of that user is running"
        )
    return MemoryRepoError(
        f"memory repository is busy: {lock} is held by another git process (waited {timeout:g}s); "
        "try again when it finishes, or remove the lock yourself if no git process is running"
    )


# -- running git: hooks with a timeout, failures named -------------------------------------------


class GitFailed(MemoryRepoError):
    """A git command dreamtui ran failed; ``hook`` names the hook that failed or hung, if one did."""

    def __init__(
        self, message: str, *, stderr: str = "", hook: str | None = None, timed_out: bool = False
    ) -> None:
        super().__init__(message)
        self.stderr = stderr
        self.hook = hook
        self.timed_out = timed_out


def _hooks_seen(trace: Path) -> tuple[str | None, str | None, int | None]:
    """From a trace2 event file: (the hook still running, the last hook that failed, its exit code)."""
    try:
        lines = trace.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None, None, None
    sid = None
    started: dict[int, str] = {}
    running: dict[int, str] = {}
    failed: tuple[str | None, int | None] = (None, None)
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        sid = sid or event.get("sid")
        if event.get("sid") != sid:
            continue  # a git the hook itself ran
        if event.get("event") == "child_start" and event.get("child_class") == "hook":
            started[event.get("child_id")] = running[event.get("child_id")] = str(
                event.get("hook_name") or ""
            )
        elif event.get("event") == "child_exit" and event.get("child_id") in started:
            name = running.pop(event.get("child_id"), None)
            if event.get("code"):
                failed = (name, int(event.get("code")))
    hanging = next(reversed(running.values()), None) if running else None
    return hanging, failed[0], failed[1]


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.lower().startswith("hint:")]
    return _printable(lines[0], 160) if lines else ""


def _group_alive(pgid: int) -> bool:
    """A process of group ``pgid`` still runs (zombies, already dead, do not count)."""
    if not os.path.isdir("/proc/self"):
        try:
            os.killpg(pgid, 0)
            return True
        except (ProcessLookupError, PermissionError):
            return False
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = _proc_text(int(name), "stat")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] != "Z":
            return True
    return False


def _group_gone(pgid: int, timeout: float = 2.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and _group_alive(pgid):
        time.sleep(0.01)


def execute(repo: Repo, argv: list[str], *, input: bytes | None = None, timeout: float | None = None) -> str:
    """Run ``argv`` (``git …``) in ``repo`` in its own process group, within ``timeout`` seconds
    (:func:`hook_timeout`). A command still running then is killed with the hooks it started; an
    ``index.lock`` it left is cleared. Failures raise :class:`GitFailed` naming the hook at fault."""
    timeout = hook_timeout() if timeout is None else timeout
    fd, trace_name = tempfile.mkstemp(prefix="dreamtui-trace2-", suffix=".json")
    os.close(fd)
    trace = Path(trace_name)
    env = {
        **os.environ,
        "LANGUAGE": "C",
        "LC_ALL": "C",
        **repo.git.environment(),
        "GIT_TRACE2_EVENT": trace_name,
    }
    env.pop("GIT_TRACE2_EVENT_NESTING", None)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        try:
            proc = subprocess.Popen(
                argv,
                cwd=repo.working_tree_dir or repo.git_dir,
                env=env,
                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                process_group=0,
            )
        except OSError as exc:
            trace.unlink(missing_ok=True)
            raise GitFailed(f"cannot run git: {exc.strerror}") from exc
        timed_out = False
        try:
            if input is not None and proc.stdin is not None:
                try:
                    proc.stdin.write(input)
                    proc.stdin.close()
                except BrokenPipeError:
                    pass
            timed_out = not _wait(proc, timeout)
        except BaseException:
            _stop(repo, proc)
            trace.unlink(missing_ok=True)
            raise
        if timed_out:
            hanging = _hooks_seen(trace)[0]
            _stop(repo, proc)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    try:
        command = next((a for a in argv[1:] if not a.startswith("-") and "=" not in a), "")
        if timed_out:
            what = f"the {hanging} hook" if hanging else f"git {command}"
            raise GitFailed(
                f"{what} did not finish within {timeout:g}s and was stopped; "
                f"git {command} abandoned (see {HOOK_TIMEOUT_ENV})",
                stderr=stderr,
                hook=hanging,
                timed_out=True,
            )
        if proc.returncode != 0:
            _, failed, code = _hooks_seen(trace)
            said = _first_line(stderr) or _first_line(stdout)
            if failed:
                raise GitFailed(
                    f"the {failed} hook failed (exit {code}){': ' + said if said else ''}; "
                    f"git {command} abandoned",
                    stderr=stderr,
                    hook=failed,
                )
            raise GitFailed(
                f"git {command} failed in {repo.working_tree_dir}: {said or f'exit {proc.returncode}'}",
                stderr=stderr,
            )
        return stdout
    finally:
        trace.unlink(missing_ok=True)


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait up to ``timeout`` seconds for ``proc`` to exit (a pidfd where Linux has one: no polling);
    whether it did."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        try:
            proc.wait(timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    try:
        ready, _, _ = select.select([fd], [], [], timeout)
    finally:
        os.close(fd)
    if not ready and proc.poll() is None:
        return False
    proc.wait()
    return True


def _stop(repo: Repo, proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc``'s whole process group (git and its hooks), then clear the ``index.lock`` it held."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()
    _group_gone(proc.pid)
    clear_stale_lock(repo, min_age=0.0, why="left by the git process dreamtui stopped")  # logged


def run(
    repo: Repo,
    *args: str,
    pre: list[str] | None = None,
    timeout: float | None = None,
    notices: list[str] | None = None,
    input: bytes | None = None,
) -> str:
    """Run ``git <args>`` in ``repo``: wait for a held ``index.lock`` (clearing a stale one, with a
    notice in ``notices``), run with the hook timeout, retry when another git took the lock first."""
    timeout = lock_timeout() if timeout is None else timeout
    deadline = time.monotonic() + timeout
    delay = 0.02
    while True:
        wait_for_index(repo, max(0.0, deadline - time.monotonic()), notices)
        try:
            return execute(repo, ["git", *(pre or []), *args], input=input)
        except GitFailed as exc:
            if exc.hook or exc.timed_out or not _LOCK_ERROR.search(exc.stderr):
                raise
            if time.monotonic() >= deadline:
                raise _lock_error(repo, index_lock(repo), timeout, lock_verdict(repo)) from exc
            time.sleep(delay)
            delay = min(delay * 2, 0.25)


def _read(repo: Repo, args: list[str], **kwargs: object) -> str:
    """Run a git command that only reads; a failure is a one-line :class:`MemoryRepoError`."""
    try:
        return repo.git.execute(args, **kwargs)  # type: ignore[call-overload, no-any-return]
    except GitCommandError as exc:
        command = next((a for a in args[1:] if not a.startswith("-")), "")
        raise MemoryRepoError(f"git {command} failed in {repo.working_tree_dir}: {_short(exc)}") from exc


def status(repo: Repo, paths: list[str]) -> dict[str, str]:
    """``git status --porcelain`` codes (``XY``) of ``paths`` that differ from HEAD (or are untracked).

    Never writes the index (``--no-optional-locks``): a person's held lock or a full disk is no
    reason to fail a look."""
    if not paths:
        return {}
    out = _read(
        repo,
        [
            "git",
            "--no-optional-locks",
            "status",
            "--porcelain=v1",
            "-z",
            "--untracked-files=all",
            "--no-renames",
            "--",
            *paths,
        ],
        strip_newline_in_stdout=False,
    )
    codes: dict[str, str] = {}
    for entry in out.split("\0"):
        if len(entry) > 3:
            codes[entry[3:]] = entry[:2]
    return codes


def refuse_uncommitted(repo: Repo, rel: str, data: bytes | None = None) -> None:
    """Refuse (one-line :class:`MemoryRepoError`) to rewrite ``rel`` over a person's uncommitted
    (staged or unstaged) changes to it, which the rewrite and ``commit --only`` would destroy.

    With ``data`` (the bytes about to be written), a working file that already holds exactly
    ``data`` passes when no third version is staged: committing it loses nothing (e.g. dreamtui's
    own write left uncommitted by a crash).
    """
    code = status(repo, [rel]).get(rel)
    if not code:
        return
    if data is not None and (code[0] in " ?" or code[1] == " "):
        try:
            if (work_tree(repo) / rel).read_bytes() == data:
                return
        except OSError:
            pass
    raise MemoryRepoError(
        f"{rel} in the memory repository has uncommitted changes (git status {code.strip()}); "
        "commit or discard them first, so dreamtui does not overwrite them"
    )


_NO_ENTRY = "0 " + "0" * 40 + "\t"


def index_entries(repo: Repo, paths: list[str]) -> dict[str, list[str]]:
    """The index entries of ``paths`` as ``git ls-files -s`` lines (``mode sha stage<TAB>path``)."""
    if not paths:
        return {}
    out = _read(
        repo,
        ["git", "--literal-pathspecs", "ls-files", "-s", "-z", "--", *paths],
        strip_newline_in_stdout=False,
    )
    entries: dict[str, list[str]] = {p: [] for p in paths}
    for entry in out.split("\0"):
        if "\t" in entry:
            entries.setdefault(entry.split("\t", 1)[1], []).append(entry)
    return entries


def put_back_index(repo: Repo, before: dict[str, list[str]]) -> bool:
    """Make the index entries of the paths in ``before`` exactly what they were (a path that was not in
    the index leaves it). Returns whether anything had to change."""
    if not before or index_entries(repo, list(before)) == before:
        return False
    lines = []
    for path, entries in before.items():
        lines += entries if entries else [f"{_NO_ENTRY}{path}"]
    run(repo, "update-index", "-z", "--index-info", input="".join(f"{ln}\0" for ln in lines).encode())
    return True


def commit_paths(
    repo: Repo,
    paths: list[str],
    subject: str,
    trailers: dict[str, str],
    body: str = "",
    *,
    notices_shown: bool = False,
) -> CommitResult:
    """Commit exactly ``paths`` (as they are in the working tree; deleted ones as deletions) with
    ``trailers``; everything else in the index or working tree stays as the person left it.

    When the commit fails or a hook hangs, the index entries of ``paths`` are put back as they were
    before (the working files stay) and a one-line :class:`MemoryRepoError` names the hook. A hanging
    ``post-commit`` hook (the commit already made) is stopped with a notice.

    The message is built here and only here: every secret in the subject and body is redacted.

    ``notices_shown``: the caller shows the person the result's notices, so the fallback identity's
    notice, once among them, is not given again for this repository (:func:`identity_noticed`).
    Callers whose notices go nowhere (a dream cycle's review file) leave it to the next that shows them.
    """
    ensure_writable(repo)
    opts, notice = identity(repo)
    notices = [notice] if notice else []
    message = redact(subject.strip()) or "dreamtui"
    if body.strip():
        message += "\n\n" + redact(body.strip())
    for key, value in trailers.items():
        if not _TRAILER_LINE.match(f"{key}: {value}") or "\n" in value or "\r" in value:
            raise MemoryRepoError(f"bad commit trailer {key!r}: {value!r}")
    if trailers:
        message += "\n\n" + "\n".join(f"{k}: {v}" for k, v in trailers.items())
    wait_for_index(repo, notices=notices)
    before = index_entries(repo, paths)
    head_before = head_sha(repo)
    present = [p for p in paths if (work_tree(repo) / p).exists()]
    empty = [] if paths else ["--allow-empty"]  # --only with no paths: an empty commit, index untouched
    try:
        if present:
            run(repo, "add", "--", *present, notices=notices)
        run(
            repo,
            "commit",
            "-q",
            "--no-edit",
            "--cleanup=whitespace",
            "--only",
            *empty,
            "-m",
            message,
            "--",
            *paths,
            pre=opts,
            notices=notices,
        )
    except GitFailed as exc:
        head = head_sha(repo)
        if exc.timed_out and head != head_before and _parent_is(repo, head, head_before):
            notices.append(f"{exc} — the commit itself was made")  # a hanging post-commit hook
            log_recovery(repo, str(exc))
            if notice and notices_shown:
                identity_noticed(repo, notice)
            return CommitResult(str(head), notices)
        _raise_after_put_back(repo, before, exc)
    except BaseException as exc:
        _raise_after_put_back(repo, before, exc)
    sha = head_sha(repo)
    if sha is None or sha == head_before:
        raise MemoryRepoError(f"git commit made no commit in {repo.working_tree_dir}")
    if notice and notices_shown:
        identity_noticed(repo, notice)
    return CommitResult(sha, notices)


def _parent_is(repo: Repo, sha: str | None, parent: str | None) -> bool:
    if sha is None:
        return False
    parents = [p.hexsha for p in repo.commit(sha).parents]
    return parents == ([parent] if parent else [])


def _raise_after_put_back(repo: Repo, before: dict[str, list[str]], exc: BaseException) -> None:
    """Put the index entries back after a failed commit, then raise ``exc`` (as a one-line
    :class:`MemoryRepoError` that also says when the index could not be put back)."""
    try:
        put_back_index(repo, before)
    except MemoryRepoError as again:
        staged = " ".join(before)
        raise MemoryRepoError(
            f"{_one(exc)}; and the index still holds dreamtui's {staged} "
            f"({_one(again)}): run git restore --staged -- {staged}"
        ) from exc
    if isinstance(exc, Exception) and not isinstance(exc, MemoryRepoError):
        raise MemoryRepoError(_one(exc)) from exc
    raise exc


def _one(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def restore_paths(repo: Repo, paths: list[str]) -> None:
    """Make the index entries of ``paths`` match HEAD again (their working files are untouched)."""
    if not paths:
        return
    if head_sha(repo) is None:
        run(repo, "rm", "-q", "--cached", "--ignore-unmatch", "--", *paths)
    else:
        run(repo, "reset", "-q", "HEAD", "--", *paths)


def _parse_log(out: str) -> list[CommitInfo]:
    commits = []
    for record in out.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        sha, author, date, message = (record.split("\x1f") + ["", "", ""])[:4]
        trailers: dict[str, list[str]] = {}
        paragraphs = [p for p in message.strip().split("\n\n") if p.strip()]
        if len(paragraphs) > 1:
            for line in paragraphs[-1].splitlines():
                m = _TRAILER_LINE.match(line.strip())
                if m:
                    trailers.setdefault(m.group(1), []).append(m.group(2).strip())
        reverts = _REVERTS.search(message)
        subject = message.strip().split("\n", 1)[0] if message.strip() else ""
        commits.append(
            CommitInfo(sha.strip(), subject, author, date, trailers, reverts.group(1) if reverts else None)
        )
    return commits


_LOG_FORMAT = "--format=%H%x1f%an <%ae>%x1f%aI%x1f%B%x1e"


def list_commits(
    repo: Repo, path: str | None = None, limit: int | None = None, grep: list[str] | None = None
) -> list[CommitInfo]:
    """Commits reachable from HEAD, newest first, with their trailers (empty with no commits)."""
    if head_sha(repo) is None:
        return []
    args = ["git", "log", _LOG_FORMAT]
    if limit:
        args.append(f"-n{limit}")
    for pattern in grep or []:
        args.append(f"--grep={pattern}")
    if path:
        args += ["--", path]
    return _parse_log(_read(repo, args, strip_newline_in_stdout=False))


def file_history(repo: Repo, path: str, limit: int | None = None) -> list[CommitInfo]:
    """The commits that changed ``path`` (following renames), newest first."""
    if head_sha(repo) is None:
        return []
    args = ["git", "log", "--follow", _LOG_FORMAT]
    if limit:
        args.append(f"-n{limit}")
    return _parse_log(_read(repo, [*args, "--", path], strip_newline_in_stdout=False))


def dreamtui_commits(repo: Repo) -> list[CommitInfo]:
    """Commits that carry a dreamtui trailer or revert another commit, newest first."""
    return list_commits(repo, grep=["Dreamtui-", "This reverts commit"])


def commit_exists(repo: Repo, sha: str) -> bool:
    """``sha`` names a commit object in the repository."""
    try:
        repo.git.execute(["git", "cat-file", "-e", f"{sha}^{{commit}}"])
        return True
    except GitCommandError:
        return False


def is_ancestor(repo: Repo, sha: str, of: str = "HEAD") -> bool:
    """``sha`` is reachable from ``of``."""
    try:
        repo.git.execute(["git", "merge-base", "--is-ancestor", sha, of])
        return True
    except GitCommandError:
        return False


def changed_paths(repo: Repo, sha: str) -> list[str]:
    """The paths a commit changed."""
    out = _read(
        repo,
        ["git", "diff-tree", "--root", "--no-commit-id", "-r", "--name-only", "-z", sha],
        strip_newline_in_stdout=False,
    )
    return [p for p in out.split("\0") if p]
