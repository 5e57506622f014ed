"""Git operations on the memory repository (GitPython).

Every write commits exactly the paths dreamtui wrote (``git commit --only -- <paths>``), so a
person's own staged or unstaged work is never swept in. A held ``index.lock`` is waited on and
retried, never deleted. A missing identity falls back to ``dreamtui <dreamtui@localhost>`` for
that commit only, with a notice. A detached HEAD or a merge/rebase/cherry-pick in progress is
refused with a clear message.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

import git
from git import GitCommandError, InvalidGitRepositoryError, NoSuchPathError, Repo

from dreamtui.core.errors import MemoryRepoError
from dreamtui.core.memory.layout import bare_repository_message
from dreamtui.core.secrets import redact

FALLBACK_NAME = "dreamtui"
FALLBACK_EMAIL = "dreamtui@localhost"
LOCK_TIMEOUT_ENV = "DREAMTUI_GIT_LOCK_TIMEOUT"
DEFAULT_LOCK_TIMEOUT = 10.0

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
class CommitInfo:
    """One commit: sha, subject, author, ISO date, and its ``Key: value`` trailers."""

    sha: str
    subject: str
    author: str
    date: str
    trailers: dict[str, list[str]] = field(default_factory=dict)
    reverts: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"sha": self.sha, "subject": self.subject, "author": self.author, "date": self.date,
                "trailers": self.trailers, "reverts": self.reverts}


@dataclass(slots=True)
class CommitResult:
    """The sha of a commit dreamtui made, and anything the person should be told about it."""

    sha: str
    notices: list[str] = field(default_factory=list)


def lock_timeout() -> float:
    """Seconds to wait for a held ``index.lock`` (``DREAMTUI_GIT_LOCK_TIMEOUT``, default 10)."""
    try:
        return max(0.0, float(os.environ.get(LOCK_TIMEOUT_ENV, DEFAULT_LOCK_TIMEOUT)))
    except ValueError:
        return DEFAULT_LOCK_TIMEOUT


_INHERITED = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
              "GIT_NAMESPACE", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PREFIX")


def _pinned(repo: Repo) -> Repo:
    """Make every git command of ``repo`` act on it, even when dreamtui runs inside another repository's
    hook (which exports ``GIT_DIR``, ``GIT_INDEX_FILE``…)."""
    if any(name in os.environ for name in _INHERITED):
        gitdir = Path(repo.git_dir)
        repo.git.update_environment(
            GIT_DIR=str(gitdir), GIT_WORK_TREE=str(repo.working_tree_dir), GIT_INDEX_FILE=str(gitdir / "index"),
            GIT_OBJECT_DIRECTORY=str(Path(repo.common_dir) / "objects"), GIT_COMMON_DIR=str(repo.common_dir),
            GIT_NAMESPACE="", GIT_ALTERNATE_OBJECT_DIRECTORIES="", GIT_PREFIX="")
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
            raise MemoryRepoError(f"memory repository {path} does not exist (or is not a git repository)") from None
    if path.exists() and not path.is_dir():
        raise MemoryRepoError(f"memory path {path} exists and is not a folder")
    try:
        path.mkdir(parents=True, exist_ok=True)
        env = {name: "" for name in _INHERITED if name in os.environ}
        git.Git(str(path)).execute(["git", "init", "-q", "-b", "main", str(path)],
                                   env={**env, "GIT_DIR": str(path / ".git")} if env else None)
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
        lines = [ln[len("stderr: "):] if ln.startswith("stderr: ") else ln for ln in lines]
        lines = [ln.strip("'").strip() for ln in lines if ln.strip("'").strip()]
        return "; ".join(lines[:2]) or f"git exited with {exc.status}"
    return str(exc)


def ensure_writable(repo: Repo) -> None:
    """Refuse a detached HEAD or a merge/rebase/cherry-pick/revert in progress (clear message)."""
    gitdir = Path(repo.git_dir)
    for name, what in _IN_PROGRESS.items():
        if (gitdir / name).exists():
            raise MemoryRepoError(
                f"memory repository {repo.working_tree_dir}: {what}; finish or abort it "
                "(e.g. git merge --abort) and try again")
    if repo.head.is_detached:
        raise MemoryRepoError(
            f"memory repository {repo.working_tree_dir} is on a detached HEAD; "
            "check out a branch (git switch main) and try again")


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
    return blob.data_stream.read()


def identity(repo: Repo) -> tuple[list[str], str | None]:
    """Extra ``-c`` options for a commit, and a notice, when git has no user identity."""
    def configured(key: str, envs: tuple[str, ...]) -> bool:
        if all(os.environ.get(e) for e in envs):
            return True
        try:
            return bool(repo.git.config("--get", key).strip())
        except GitCommandError:
            return False

    has_name = configured("user.name", ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"))
    has_email = (configured("user.email", ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"))
                 or bool(os.environ.get("EMAIL")))
    if has_name and has_email:
        return [], None
    opts: list[str] = []
    if not has_name:
        opts += ["-c", f"user.name={FALLBACK_NAME}"]
    if not has_email:
        opts += ["-c", f"user.email={FALLBACK_EMAIL}"]
    notice = (f"git has no user.name/user.email: committed as {FALLBACK_NAME} <{FALLBACK_EMAIL}> "
              "(set them with git config --global user.name/user.email)")
    return opts, notice


def run(repo: Repo, *args: str, pre: list[str] | None = None, timeout: float | None = None) -> str:
    """Run ``git <args>`` in ``repo``, waiting for a held ``index.lock`` (never deleting it)."""
    timeout = lock_timeout() if timeout is None else timeout
    deadline = time.monotonic() + timeout
    lock = Path(repo.git_dir) / "index.lock"
    delay = 0.02
    while True:
        if lock.exists():
            if time.monotonic() >= deadline:
                raise _lock_error(repo, lock, timeout)
            time.sleep(delay)
            delay = min(delay * 2, 0.25)
            continue
        try:
            return repo.git.execute(["git", *(pre or []), *args])
        except GitCommandError as exc:
            if _LOCK_ERROR.search(str(exc.stderr or "")) and time.monotonic() < deadline:
                time.sleep(delay)
                delay = min(delay * 2, 0.25)
                continue
            if _LOCK_ERROR.search(str(exc.stderr or "")):
                raise _lock_error(repo, lock, timeout) from exc
            raise MemoryRepoError(f"git {args[0]} failed in {repo.working_tree_dir}: {_short(exc)}") from exc


def _lock_error(repo: Repo, lock: Path, timeout: float) -> MemoryRepoError:
    return MemoryRepoError(
        f"memory repository is busy: {lock} is held by another git process (waited {timeout:g}s); "
        "try again when it finishes, or remove the lock yourself if no git process is running")


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
    out = _read(repo, ["git", "--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all",
                       "--no-renames", "--", *paths], strip_newline_in_stdout=False)
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
            if (Path(repo.working_tree_dir) / rel).read_bytes() == data:
                return
        except OSError:
            pass
    raise MemoryRepoError(
        f"{rel} in the memory repository has uncommitted changes (git status {code.strip()}); "
        "commit or discard them first, so dreamtui does not overwrite them")


def commit_paths(repo: Repo, paths: list[str], subject: str, trailers: dict[str, str],
                 body: str = "") -> CommitResult:
    """Commit exactly ``paths`` (as they are in the working tree; deleted ones as deletions) with
    ``trailers``; everything else in the index or working tree stays as the person left it.

    The message is built here and only here: every secret in the subject and body is redacted.
    """
    ensure_writable(repo)
    opts, notice = identity(repo)
    present = [p for p in paths if (Path(repo.working_tree_dir) / p).exists()]
    if present:
        run(repo, "add", "--", *present)
    message = redact(subject.strip()) or "dreamtui"
    if body.strip():
        message += "\n\n" + redact(body.strip())
    for key, value in trailers.items():
        if not _TRAILER_LINE.match(f"{key}: {value}") or "\n" in value or "\r" in value:
            raise MemoryRepoError(f"bad commit trailer {key!r}: {value!r}")
    if trailers:
        message += "\n\n" + "\n".join(f"{k}: {v}" for k, v in trailers.items())
    empty = [] if paths else ["--allow-empty"]  # --only with no paths: an empty commit, index untouched
    run(repo, "commit", "-q", "--no-edit", "--cleanup=whitespace", "--only", *empty, "-m", message, "--", *paths,
        pre=opts)
    sha = _read(repo, ["git", "rev-parse", "HEAD"]).strip()
    return CommitResult(sha, [notice] if notice else [])


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
        commits.append(CommitInfo(sha.strip(), subject, author, date, trailers,
                                  reverts.group(1) if reverts else None))
    return commits


_LOG_FORMAT = "--format=%H%x1f%an <%ae>%x1f%aI%x1f%B%x1e"


def list_commits(repo: Repo, path: str | None = None, limit: int | None = None,
                 grep: list[str] | None = None) -> list[CommitInfo]:
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
    out = _read(repo, ["git", "diff-tree", "--root", "--no-commit-id", "-r", "--name-only", "-z", sha],
                           strip_newline_in_stdout=False)
    return [p for p in out.split("\0") if p]
