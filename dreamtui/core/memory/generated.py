"""Files the dream cycle generates in the memory repository (the daily review file, the briefing):
each written and committed alone, and put right after an interrupted run.

Before writing, the ledger records the git blob id of the bytes (``generated_writes``); the record
goes once the commit holds them. A run killed, or refused by a commit hook, in between therefore
leaves a file (or index entry) that is recognisably dreamtui's own: the next write may replace it,
and :func:`reconcile_generated` (run when a dream cycle starts) commits it, or unstages what dreamtui
staged, without waiting for a person. A person's own edits to these files are never overwritten.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from git import Repo

from dreamtui.core import clock
from dreamtui.core.config import Config
from dreamtui.core.errors import DreamError, MemoryRepoError
from dreamtui.core.ledger import Ledger
from dreamtui.core.ledger import generated as generated_writes
from dreamtui.core.memory import gitops
from dreamtui.core.memory import layout as memory
from dreamtui.core.memory.decisions import memory_lock


def blob_id(data: bytes) -> str:
    """The git blob id (``git hash-object``) of ``data``."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _ours(ledger: Ledger, rel: str) -> dict[str, tuple[str, dict[str, str]]]:
    """Blob id → (subject, trailers) of every uncommitted version of ``rel`` dreamtui wrote."""
    return generated_writes.versions(ledger, rel)


def remember(ledger: Ledger, rel: str, data: bytes, subject: str, trailers: dict[str, str]) -> None:
    """Remember that dreamtui is about to write ``data`` to ``rel`` for the commit ``subject``."""
    generated_writes.remember(ledger, rel, blob_id(data), subject, trailers, clock.now_iso())


def _forget(ledger: Ledger, rel: str) -> None:
    generated_writes.forget(ledger, rel)


def _versions(repo: Repo, rel: str) -> tuple[str | None, str | None, str | None, bool]:
    """Blob ids of ``rel`` in the working tree, the index and HEAD (``None``: absent), and whether
    the index holds a conflict for it."""
    root = gitops.work_tree(repo)
    work = memory.read_bytes(root, rel)
    head = gitops.show_file(repo, rel)
    entries = gitops.index_entries(repo, [rel]).get(rel, [])
    conflict = any(e.split("\t", 1)[0].split()[2] != "0" for e in entries)
    index = entries[0].split()[1] if len(entries) == 1 and not conflict else None
    return (None if work is None else blob_id(work), index, None if head is None else blob_id(head), conflict)


def refuse_persons_changes(repo: Repo, ledger: Ledger, rel: str, data: bytes) -> None:
    """Refuse (one-line :class:`MemoryRepoError`) to rewrite ``rel`` over a person's uncommitted
    changes; changes that are only dreamtui's own earlier, uncommitted writes (or ``data`` itself)
    are no reason to stop."""
    code = gitops.status(repo, [rel]).get(rel)
    if not code:
        return
    work, index, head, conflict = _versions(repo, rel)
    allowed = {*_ours(ledger, rel), blob_id(data), head}
    if not conflict and work is not None and work in allowed and index in allowed:
        return
    raise MemoryRepoError(
        f"{rel} in the memory repository has uncommitted changes (git status {code.strip()}); "
        "commit or discard them first, so dreamtui does not overwrite them"
    )


def write_generated(
    config: Config, ledger: Ledger, rel: str, data: bytes, subject: str, trailers: dict[str, str]
) -> gitops.CommitResult | None:
    """Write ``rel`` (atomically) and commit it alone when it changed; ``None`` when there was
    nothing to commit. A person's uncommitted changes to ``rel`` are refused, dreamtui's own
    leftovers replaced. Secrets are redacted first: the recorded blob is of the bytes on disk."""
    data = memory.storable(data)
    with memory_lock(config):
        repo = gitops.open_repo(config.memory)
        gitops.ensure_writable(repo)
        root = Path(repo.working_tree_dir or config.memory)
        folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
        memory.make_dirs(root, folder)
        refuse_persons_changes(repo, ledger, rel, data)
        remember(ledger, rel, data, subject, trailers)
        before = memory.read_bytes(root, rel)
        if before != data:
            memory.atomic_write(root, rel, data)
        result = None
        try:
            if gitops.status(repo, [rel]):
                result = gitops.commit_paths(repo, [rel], subject, trailers)
        except gitops.GitFailed as exc:
            # a hook that hung and was stopped: the file goes back as it was, nothing left behind (a
            # hook that said no leaves dreamtui's version untracked, for the next write or reconcile)
            if exc.timed_out:
                _put_back(root, rel, data, before)
                _forget(ledger, rel)
            raise
        _forget(ledger, rel)
        return result


def _put_back(root: Path, rel: str, written: bytes, before: bytes | None) -> None:
    """Make ``rel`` what it was before dreamtui wrote ``written`` (absent when it was), only while it
    still holds ``written``: a person's write since is never undone."""
    if memory.read_bytes(root, rel) != written or before == written:
        return
    if before is None:
        memory.safe_path(root, rel).unlink(missing_ok=True)
    else:
        memory.atomic_write(root, rel, before, verbatim=True)


def reconcile_generated(config: Config, ledger: Ledger) -> list[str]:
    """Put right what an interrupted run left of its generated files: a stale ``index.lock`` is
    cleared, a leftover that is dreamtui's own is committed (as the commit it was meant for), a
    version dreamtui staged under a person's later edit is unstaged. Never raises for one file: what
    cannot be done is said in the returned notices, and the cycle goes on."""
    paths = generated_writes.paths(ledger)
    if not paths or not gitops.repo_exists(config.memory):
        return []
    notices: list[str] = []
    try:
        with memory_lock(config):
            repo = gitops.open_repo(config.memory, create=False)
            gitops.ensure_writable(repo)
            gitops.wait_for_index(repo, notices=notices)
            for rel in paths:
                try:
                    _reconcile_one(repo, ledger, rel, notices)
                except DreamError as exc:
                    notices.append(f"{rel}: left by an interrupted run, not reconciled: {exc}")
    except DreamError as exc:
        notices.append(f"generated files of an interrupted run not reconciled: {exc}")
    return notices


def _reconcile_one(repo: Repo, ledger: Ledger, rel: str, notices: list[str]) -> None:
    ours = _ours(ledger, rel)
    work, index, head, conflict = _versions(repo, rel)
    allowed = {*ours, head}
    staged_by_us = index in ours and index != head
    if conflict:
        notices.append(f"{rel} has a merge conflict in the index: left as it is")
    elif work is not None and work in allowed and index in allowed:
        if work != head:
            subject, trailers = ours[work]
            result = gitops.commit_paths(repo, [rel], subject, trailers)
            notices += result.notices
            notices.append(f"committed {rel} as an interrupted run left it (commit {result.sha[:10]})")
        elif index != head:
            gitops.put_back_index(repo, {rel: _head_entries(repo, rel)})
            notices.append(f"unstaged {rel}, which an interrupted run had staged")
    elif staged_by_us:
        gitops.put_back_index(repo, {rel: _head_entries(repo, rel)})
        notices.append(
            f"unstaged dreamtui's version of {rel} left by an interrupted run; "
            "your changes to the file are left as they are"
        )
    elif (work, index) != (head, head):
        notices.append(f"{rel} was changed after an interrupted run wrote it: left as it is")
    _forget(ledger, rel)


def _head_entries(repo: Repo, rel: str) -> list[str]:
    """``rel``'s index entry as HEAD has it (none when HEAD has no such file)."""
    if gitops.head_sha(repo) is None:
        return []
    out = repo.git.execute(["git", "ls-tree", "-z", "HEAD", "--", rel], strip_newline_in_stdout=False)
    entries = []
    for entry in out.split("\0"):
        if "\t" in entry:
            meta, path = entry.split("\t", 1)
            mode, _kind, sha = meta.split()
            entries.append(f"{mode} {sha} 0\t{path}")
    return entries
