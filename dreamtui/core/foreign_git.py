"""git in a repository dreamtui does not own: read-only, and unable to run any program it names.

A project's repository (or a worktree a transcript's ``cwd`` points at) is written by whoever works
there — an agent too. Its ``.git/config`` (and whatever ``include.path`` pulls in), its
``.git/info/attributes`` and its hooks are theirs, so every git command dreamtui runs in it goes
through :func:`run`, which makes each place git would start a configured program impossible:

- only reading commands (:data:`READ_ONLY`); ``log``, ``show`` and the diff commands get
  ``--no-textconv --no-ext-diff`` (no ``diff.<driver>.textconv``/``.command``, ``diff.external`` or
  ``GIT_EXTERNAL_DIFF``), and ``log``/``show`` ``--no-show-signature`` (no ``gpg.program`` through
  ``log.showSignature``); a file is read with ``cat-file blob``, which applies no filter;
- ``-c`` settings, which outrank the repository's own: no fsmonitor, hooks from ``/dev/null``, ``cat``
  as the pager (and ``--no-pager``), no credential helper, no askpass, ``false`` as the ssh command
  and the gpg programs, no attributes file of the person's, no automatic gc or maintenance, bare
  repositories only when named (an embedded bare repository is never discovered);
- no network at all: ``GIT_ALLOW_PROTOCOL`` empty disallows every transport whatever the repository's
  ``protocol.*.allow`` says, so a partial clone's lazy fetch (which would run
  ``remote.<name>.uploadpack``, ``core.sshCommand``, ``core.gitProxy``, an ``ext::`` command or a
  credential helper) fails instead, as does ``GIT_NO_LAZY_FETCH=1`` on a git that knows it;
- an environment of its own: no ``GIT_*`` of dreamtui's (``GIT_DIR`` from a hook, ``GIT_SSH``,
  ``GIT_ASKPASS``, ``GIT_EXTERNAL_DIFF``…), no system or global config (``GIT_CONFIG_NOSYSTEM``,
  ``GIT_CONFIG_GLOBAL=/dev/null``), no terminal prompt, no replace refs, no optional locks. The
  person's own ``safe.directory`` list (system and global config) is passed on with ``-c``: a
  repository another user owns is read only when the person told git to trust it, as git does;
- a timeout that kills git with everything it started, and a cap on what it may print.

What stays possible: the repository's config still sets plain values (a rename limit, an abbreviation
length); attributes may still name a driver, whose programs are all off. Filters (``filter.<x>.clean``
and ``smudge``) cannot be switched off by ``-c``; none of :data:`READ_ONLY` applies one.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import threading
from pathlib import Path

TIMEOUT = 20.0
"""Seconds a command may take before it is killed with everything it started."""
MAX_OUTPUT = 256 * 1024 * 1024
"""Bytes a command may print; more is a failure (the command is killed)."""

READ_ONLY = frozenset({"rev-parse", "ls-tree", "log", "cat-file", "rev-list", "diff-tree"})
"""The commands :func:`run` runs: each reads, none applies a filter or runs a hook."""
_NO_PROGRAMS = {
    "log": ("--no-textconv", "--no-ext-diff", "--no-show-signature"),
    "diff-tree": ("--no-textconv", "--no-ext-diff"),
}
_CONFIG = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.pager", "cat"),
    ("core.askPass", ""),
    ("core.sshCommand", "false"),
    ("core.attributesFile", os.devnull),
    ("credential.helper", ""),
    ("log.showSignature", "false"),
    ("gpg.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    ("protocol.allow", "never"),
    ("submodule.recurse", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("safe.bareRepository", "explicit"),
)
_KEEP = frozenset({"GIT_EXEC_PATH"})
_DROP = frozenset({"SSH_ASKPASS", "PAGER"})


def environment() -> dict[str, str]:
    """The environment git runs in: dreamtui's, without any ``GIT_*`` (but ``GIT_EXEC_PATH``), with
    nothing from the system's or the person's config and no network, prompt or pager."""
    env = {k: v for k, v in os.environ.items() if (not k.startswith("GIT_") or k in _KEEP) and k not in _DROP}
    env.update(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_ALLOW_PROTOCOL": "",
            "GIT_PROTOCOL_FROM_USER": "0",
            "GIT_NO_LAZY_FETCH": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_OPTIONAL_LOCKS": "0",
            "GIT_PAGER": "cat",
            "PAGER": "cat",
            "GIT_SSH_COMMAND": "false",
            "GIT_PROXY_COMMAND": "false",
            "LC_ALL": "C",
            "LANGUAGE": "C",
        }
    )
    return env


_CONFIG_FILES = (
    "HOME",
    "XDG_CONFIG_HOME",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_NOSYSTEM",
    "PATH",
)


def trusted() -> tuple[str, ...]:
    """The person's ``safe.directory`` values, from the system and the global config (where git alone
    reads them), in order: an empty value clears the ones before it, as in git."""
    home = os.environ.get("HOME", "")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files = (
        os.environ.get("GIT_CONFIG_GLOBAL") or os.path.join(home, ".gitconfig"),
        os.path.join(xdg, "git", "config"),
    )
    return _trusted((*(os.environ.get(name, "") for name in _CONFIG_FILES), *map(_stamp, files)))


def _stamp(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return ""
    return f"{st.st_mtime_ns}:{st.st_size}:{st.st_ino}"


@functools.lru_cache(maxsize=8)
def _trusted(files: tuple[str, ...]) -> tuple[str, ...]:
    del files  # the cache key: the same settings and config files give the same answer
    env = {
        k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _KEEP or k in _CONFIG_FILES
    }
    values: list[str] = []
    for scope in ("--system", "--global"):
        try:
            out = subprocess.run(
                ["git", "config", scope, "--includes", "--get-all", "safe.directory"],
                capture_output=True,
                env={**env, "LC_ALL": "C"},
                cwd=os.path.sep,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            continue
        if out.returncode == 0:
            values += out.stdout.decode("utf-8", "surrogateescape").splitlines()
    return tuple(values)


def argv(repo: Path | str, command: str, *args: str) -> list[str]:
    """The command line of ``git <command> <args>`` in ``repo`` with every configured program off."""
    if command not in READ_ONLY:
        raise ValueError(f"git {command} is not a reading command dreamtui runs in a foreign repository")
    settings = (*_CONFIG, *(("safe.directory", value) for value in trusted()))
    config = [part for key, value in settings for part in ("-c", f"{key}={value}")]
    return ["git", "--no-pager", *config, "-C", str(repo), command, *_NO_PROGRAMS.get(command, ()), *args]


def run(
    repo: Path | str, command: str, *args: str, timeout: float = TIMEOUT, limit: int = MAX_OUTPUT
) -> bytes | None:
    """What ``git <command> <args>`` in ``repo`` prints, or None when it fails, takes longer than
    ``timeout`` seconds or prints more than ``limit`` bytes (it is then killed with all it started).
    :class:`OSError` when git cannot be started (not installed)."""
    proc = subprocess.Popen(
        argv(repo, command, *args),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=environment(),
        start_new_session=True,
    )
    stopped = threading.Event()

    def stop() -> None:
        stopped.set()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    timer = threading.Timer(timeout, stop)
    timer.daemon = True
    timer.start()
    chunks: list[bytes] = []
    size = 0
    assert proc.stdout is not None
    try:
        while chunk := proc.stdout.read(1 << 16):
            size += len(chunk)
            if size > limit:
                stop()
                break
            chunks.append(chunk)
        code = proc.wait()
    finally:
        timer.cancel()
        proc.stdout.close()
        if proc.poll() is None:
            stop()
            proc.wait()
    if stopped.is_set() or code != 0:
        return None
    return b"".join(chunks)


def text(
    repo: Path | str, command: str, *args: str, timeout: float = TIMEOUT, limit: int = MAX_OUTPUT
) -> str | None:
    """:func:`run`'s output as text (invalid UTF-8 replaced); None as there, and when git is missing."""
    try:
        out = run(repo, command, *args, timeout=timeout, limit=limit)
    except OSError:
        return None
    return None if out is None else out.decode("utf-8", "replace")
