"""The offline consolidation finders (issue 26): what code can prove about memories already there.

- **Duplicates** among a project's memory files (its folder and the global ones): the same text
  (exact, after whitespace and case) or lexically the same (:func:`dedup.similarity` at least
  :data:`LEXICAL` with the same specifics: numbers, paths, flags) → one **merge** (the fuller file kept,
  the others deleted, their ``MEMORY.md`` lines dropped).
- **Paths gone**: a relative path a memory names that the project's repository had in its history and
  does not have at ``HEAD`` → **retire** (renamed: an **update** naming the new path).
- **Commands gone**: ``npm run X`` / ``yarn X`` / ``pnpm X`` whose ``package.json`` at ``HEAD`` has no
  script ``X`` that an earlier version had, ``make X`` whose ``Makefile`` lost target ``X``, a file to
  run (``./x.sh``, ``python x.py``) that is gone → **retire**.

Never age alone: a memory is proposed only with the check that failed, written as its evidence ("path
X named in memory Y does not exist in repository Z at HEAD (abc1234); deleted in def5678"). A path the
repository never had (another repository's, a plan) proves nothing and is left alone.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from dreamtui.core import clock, foreign_git
from dreamtui.core.gate import dedup
from dreamtui.core.ledger import Ledger
from dreamtui.core.ledger.consolidations import Consolidation, evidence_key
from dreamtui.core.memory import consolidate
from dreamtui.core.memory import layout as memory
from dreamtui.core.memory.briefing import project_memory_folders
from dreamtui.core.memory.frontmatter import read_lenient
from dreamtui.core.memory.outside_tree import read_memory_bytes
from dreamtui.core.repository import repository_root

LEXICAL = 0.85
"""Lexical similarity from which two memories with the same specifics are proposed as one."""
SKIP_TOP = frozenset({memory.INDEX, memory.BRIEFING, "promotion.md", "README.md"})
GIT_TIMEOUT = 20.0

_PATH = re.compile(r"(?<![\w/.~:@-])(\.{0,2}/)?((?:[A-Za-z0-9_.-]+/)+[A-Za-z0-9_.-]*[A-Za-z0-9_-])(?![\w/-])")
_BACKTICK_FILE = re.compile(r"`(\.?/?[A-Za-z0-9_.-]+\.[A-Za-z0-9]{1,8})`")
_RUN_FILE = re.compile(
    r"\b(?:python3?|bash|sh|node|ruby|perl|uv run|poetry run python)\s+(\.?/?[A-Za-z0-9_./-]+\.[A-Za-z0-9]{1,5})\b"
)
_DOT_SLASH = re.compile(r"(?<![\w/.])\./([A-Za-z0-9_./-]+)")
_NPM = re.compile(r"\b(?:npm run|yarn run|pnpm run|bun run|yarn|pnpm)\s+([A-Za-z0-9_:.-]+)")
_MAKE = re.compile(r"\bmake\s+(?:-[A-Za-z]\s+)*([A-Za-z0-9_][A-Za-z0-9_.-]*)")
_MAKE_TARGET = re.compile(
    r"^([A-Za-z0-9_][A-Za-z0-9_.-]*(?:\s+[A-Za-z0-9_][A-Za-z0-9_.-]*)*)\s*::?(?!=)", re.M
)
_YARN_BUILTIN = frozenset(
    {"install", "add", "remove", "upgrade", "init", "why", "dlx", "exec", "create", "test"}
)
_AT_HEAD = re.compile(r" at HEAD \([0-9a-f]+\)")
_URLISH = re.compile(r"^(?:https?|ftp|git|ssh)$|\.(?:com|org|io|net|dev)$", re.I)


@dataclass(slots=True)
class MemoryFile:
    """One memory file as the finders read it."""

    rel: str
    text: str
    sha: str = ""
    """The sha256 of the file's bytes as read (what :func:`consolidate.stale` compares), invalid UTF-8
    and secrets included; empty: of ``text`` as dreamtui would write it."""

    @property
    def seen(self) -> str:
        """The hash a proposal remembers of this file."""
        return (
            self.sha or consolidate.sha256(memory.storable(self.text.encode("utf-8", "surrogatepass"))) or ""
        )

    @property
    def body(self) -> str:
        return read_lenient(self.text)[1].strip()

    @property
    def description(self) -> str:
        return str(read_lenient(self.text)[0].get("description", "") or "")

    @property
    def says(self) -> list[str]:
        """What the memory says in a line: its description and its body's first line (a claim). Two
        writers say one rule in other words, and one adds why/how lines; these compare the rules."""
        first = next(
            (ln.strip() for ln in self.body.splitlines() if ln.strip() and not ln.startswith("#")), ""
        )
        return list(dict.fromkeys(t for t in (self.description.strip(), first) if t))


def project_memories(root: Path, project: str, ledger: Ledger | None = None) -> list[MemoryFile]:
    """A project's memory files: its folders (``projects/<folder>/``, the old lossy one too, and with the
    ``ledger`` its worktrees' old folders: :func:`briefing.project_memory_folders`) and the global topic
    files at the top of the repository (never the index, briefing or review files)."""
    root = Path(root)
    folders = {memory.legacy_project_folder(project), *project_memory_folders(ledger, project)}
    out: list[MemoryFile] = []
    for path in dedup.memory_files(root):
        rel = path.relative_to(root).as_posix()
        parts = rel.split("/")
        top = len(parts) == 1 and rel not in SKIP_TOP
        own = len(parts) == 3 and parts[0] == memory.PROJECTS and parts[1] in folders
        if not (top or own):
            continue
        raw = read_memory_bytes(path)  # bounded as the outside scan is (a larger file is left alone); no link
        if raw is not None:
            out.append(MemoryFile(rel, raw.decode("utf-8", errors="replace"), consolidate.sha256(raw) or ""))
    return out


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _make(
    kind: str,
    project: str,
    targets: list[str],
    evidence: str,
    reason: str,
    files: dict[str, MemoryFile],
    *,
    keep: str | None = None,
    new_text: str | None = None,
) -> Consolidation:
    return Consolidation(
        id=consolidate.new_id(),
        kind=kind,
        project=project,
        targets=targets,
        evidence_kind="check",
        evidence=evidence,
        evidence_key=evidence_key(
            kind, targets, _AT_HEAD.sub("", evidence)
        ),  # HEAD moves; the proof does not
        source="offline",
        seen={rel: files[rel].seen for rel in targets},
        keep_path=keep,
        new_text=new_text,
        reason=reason,
        created_at=clock.now_iso(),
    )


# -- duplicates --------------------------------------------------------------------------------------


def _said_alike(a: MemoryFile, b: MemoryFile) -> float | None:
    """How alike two memories' claims are (:attr:`MemoryFile.says`, each pair of lines of at least three
    terms with the same specifics), when at least :data:`LEXICAL`; else None."""
    best: float | None = None
    for x in a.says:
        if len(dedup.terms(x)) < 3:
            continue
        for y in b.says:
            if len(dedup.terms(y)) < 3 or dedup.specifics(x) != dedup.specifics(y):
                continue
            score = dedup.similarity(x, y)
            if score >= LEXICAL and (best is None or score > best):
                best = score
    return best


def find_duplicates(project: str, files: list[MemoryFile]) -> list[Consolidation]:
    """One merge per group of memories that say the same (exactly, or lexically with equal specifics)."""
    by_rel = {f.rel: f for f in files}
    bodies = {f.rel: f.body for f in files if len(dedup.terms(f.body)) >= 3}
    docs = {rel: dedup.Doc.of("memory", rel, body) for rel, body in bodies.items()}  # terms once a text
    rels = sorted(bodies)
    parent = {rel: rel for rel in rels}
    how: dict[frozenset[str], str] = {}

    def top(rel: str) -> str:
        while parent[rel] != rel:
            rel = parent[rel]
        return rel

    for i, a in enumerate(rels):
        for b in rels[i + 1 :]:
            if _norm(bodies[a]) == _norm(bodies[b]):
                how[frozenset((a, b))] = "the same text"
            else:
                score = dedup.similarity_of(docs[a], docs[b])
                if score >= LEXICAL and dedup.specifics(bodies[a]) == dedup.specifics(bodies[b]):
                    how[frozenset((a, b))] = f"lexical similarity {score:.2f}, the same specifics"
                else:
                    said = _said_alike(by_rel[a], by_rel[b])
                    if said is None:
                        continue
                    how[frozenset((a, b))] = (
                        f"what they say: lexical similarity {said:.2f}, the same specifics"
                    )
            parent[top(b)] = top(a)
    groups: dict[str, list[str]] = {}
    for rel in rels:
        groups.setdefault(top(rel), []).append(rel)
    out = []
    for members in groups.values():
        if len(members) < 2:
            continue
        keep = max(members, key=lambda r: (len(bodies[r]), "candidate:" in by_rel[r].text, -members.index(r)))
        pairs = [
            f"{a} and {b}: {how[frozenset((a, b))]}"
            for n, a in enumerate(members)
            for b in members[n + 1 :]
            if frozenset((a, b)) in how
        ]
        evidence = f"memories {', '.join(members)} say the same ({'; '.join(pairs)})"
        others = [r for r in members if r != keep]
        out.append(
            _make(
                "merge",
                project,
                members,
                evidence,
                f"keep {keep}, remove {', '.join(others)} and their index lines",
                by_rel,
                keep=keep,  # kept byte for byte (no new text): only the others and their index lines go
            )
        )
    return out


# -- the project's repository ---------------------------------------------------------------------


def _git(repo: Path, *args: str) -> str | None:
    """``git <args>`` in the project's repository, which is not ours: through :mod:`foreign_git`, so no
    program its config or attributes name (textconv, gpg, a lazy fetch's ssh…) can run."""
    return foreign_git.text(repo, *args, timeout=GIT_TIMEOUT)


@dataclass
class Repository:
    """A project's git repository, read at ``HEAD`` (never written)."""

    path: Path
    head: str
    tree: frozenset[str]
    dirs: frozenset[str]
    _history: dict[str, str] | None = field(default=None, repr=False)

    @classmethod
    def open(cls, path: Path | str) -> Repository | None:
        """The repository at ``path`` (None when it is not one, or has no commit)."""
        path = Path(path)
        head = _git(path, "rev-parse", "--verify", "-q", "HEAD")
        listing = _git(path, "ls-tree", "-r", "--name-only", "-z", "HEAD") if head else None
        if not head or listing is None:
            return None
        tree = frozenset(p for p in listing.split("\0") if p)
        all_dirs: set[str] = set()
        for d in {p.rsplit("/", 1)[0] for p in tree if "/" in p}:
            parts = d.split("/")
            all_dirs.update("/".join(parts[:i]) for i in range(1, len(parts) + 1))
        return cls(path, head.strip(), tree, frozenset(all_dirs))

    @property
    def short(self) -> str:
        return self.head[:7]

    @property
    def name(self) -> str:
        return self.path.name

    def has(self, rel: str) -> bool:
        rel = rel.rstrip("/")
        return rel in self.tree or rel in self.dirs

    @cached_property
    def history(self) -> dict[str, str]:
        """Every path the history of ``HEAD`` ever had → the newest commit that deleted it (renames as
        deletions here)."""
        out: dict[str, str] = {}
        log = _git(self.path, "log", "--no-renames", "--diff-filter=D", "--format=@%h", "--name-only", "HEAD")
        sha = ""
        for line in (log or "").splitlines():
            if line.startswith("@"):
                sha = line[1:]
            elif line.strip() and line not in out:
                out[line] = sha
        return out

    @cached_property
    def renames(self) -> dict[str, tuple[str, str]]:
        """Old path → (new path, commit) for renames in the history of ``HEAD``."""
        out: dict[str, tuple[str, str]] = {}
        log = _git(self.path, "log", "-M", "--diff-filter=R", "--format=@%h", "--name-status", "HEAD")
        sha = ""
        for line in (log or "").splitlines():
            if line.startswith("@"):
                sha = line[1:]
            elif line.startswith("R"):
                parts = line.split("\t")
                if len(parts) == 3 and parts[1] not in out:
                    out[parts[1]] = (parts[2], sha)
        return out

    def gone(self, rel: str) -> str | None:
        """The commit that deleted ``rel`` when the repository had it and ``HEAD`` does not, else None."""
        if self.has(rel):
            return None
        if rel in self.history:
            return self.history[rel]
        prefix = rel.rstrip("/") + "/"  # a folder: every file under it went
        for path, sha in self.history.items():
            if path.startswith(prefix):
                return sha
        return None

    def file_at_head(self, rel: str) -> str | None:
        return _git(self.path, "cat-file", "blob", f"HEAD:{rel}") if rel in self.tree else None

    def removed_in(self, needle: str, rel: str) -> str | None:
        """The newest commit whose change to ``rel`` removed or added ``needle`` (git's pickaxe)."""
        out = _git(self.path, "log", "-n1", "--format=%h", f"-S{needle}", "HEAD", "--", rel)
        return (out or "").strip() or None


def named_paths(text: str) -> list[str]:
    """The repository-relative paths a memory's text names (in order, each once)."""
    found: list[str] = []
    for m in _PATH.finditer(text):
        lead, rel = m.group(1) or "", m.group(2)
        if (
            lead == "../"
            or rel.startswith(("//", "~"))
            or "://" in text[max(0, m.start() - 3) : m.start() + 3]
        ):
            continue
        first = rel.split("/", 1)[0]
        if _URLISH.search(first) or first.endswith(":"):
            continue
        found.append(rel.rstrip("/."))
    for pattern in (_BACKTICK_FILE, _RUN_FILE, _DOT_SLASH):
        for m in pattern.finditer(text):
            rel = m.group(1)
            rel = rel[2:] if rel.startswith("./") else rel.lstrip("/")
            found.append(rel.rstrip("."))
    return [p for p in dict.fromkeys(found) if p and not p.startswith(".") or p.startswith(".github/")]


def _renamed(text: str, moves: dict[str, str]) -> str:
    """``text`` with every path in ``moves`` (old → new) replaced where it stands as a whole path."""
    if not moves or not text:
        return text
    olds = sorted(moves, key=len, reverse=True)
    pattern = re.compile(r"(?<![\w-])(?<![\w-]/)(" + "|".join(re.escape(o) for o in olds) + r")(?![\w/-])")
    return pattern.sub(lambda m: moves[m.group(1)], text)


def find_gone_paths(project: str, files: list[MemoryFile], repo: Repository) -> list[Consolidation]:
    """A retire per memory that names a path its repository deleted; an update per memory whose every
    gone path was renamed, naming each new path everywhere the memory says the old one (its body,
    ``name:`` and ``description:``; the index line follows the new name)."""
    by_rel = {f.rel: f for f in files}
    out = []
    for f in files:
        body = f.body
        gone = [(rel, sha) for rel in named_paths(body) if (sha := repo.gone(rel)) is not None]
        if not gone:
            continue
        moved: dict[str, tuple[str, str]] = {}
        deleted: list[tuple[str, str]] = []
        for rel, sha in gone:
            renamed = repo.renames.get(rel)
            if renamed is not None and repo.has(renamed[0]):
                moved[rel] = renamed
            else:
                deleted.append((rel, sha))
        where = f"does not exist in repository {repo.name} at HEAD ({repo.short})"
        if deleted:  # one path the repository lost is proof enough: the memory goes
            rel, sha = deleted[0]
            evidence = f"path {rel} named in memory {f.rel} {where}; deleted in {sha}"
            out.append(_make("retire", project, [f.rel], evidence, f"{rel} is gone", by_rel))
            continue
        evidence = "; ".join(
            f"path {rel} named in memory {f.rel} {where}; it was renamed to {new} in {rsha}"
            for rel, (new, rsha) in moved.items()
        )
        moves = {rel: new for rel, (new, _) in moved.items()}
        meta = read_lenient(f.text)[0]
        text = consolidate.rewrite(
            f.text,
            _renamed(body, moves),
            description=_renamed(f.description, moves) or None,
            name=_renamed(str(meta.get("name", "")), moves) or None,
        )
        news = ", ".join(dict.fromkeys(moves.values()))
        out.append(
            _make(
                "update",
                project,
                [f.rel],
                evidence,
                f"name {news} instead",
                by_rel,
                keep=f.rel,
                new_text=text,
            )
        )
    return out


def _scripts(repo: Repository) -> dict[str, object] | None:
    raw = repo.file_at_head("package.json")
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    scripts = data.get("scripts") if isinstance(data, dict) else None
    return scripts if isinstance(scripts, dict) else {}


def _makefile(repo: Repository) -> tuple[str, set[str]] | None:
    for name in ("GNUmakefile", "makefile", "Makefile"):
        raw = repo.file_at_head(name)
        if raw is not None:
            targets: set[str] = set()
            for m in _MAKE_TARGET.finditer(raw):
                targets.update(m.group(1).split())
            return name, targets
    return None


def find_gone_commands(project: str, files: list[MemoryFile], repo: Repository) -> list[Consolidation]:
    """A retire per memory naming a ``package.json`` script or ``make`` target its repository removed."""
    by_rel = {f.rel: f for f in files}
    scripts = _scripts(repo)
    make = _makefile(repo)
    out = []
    for f in files:
        body = f.body
        evidence = None
        for m in _NPM.finditer(body) if scripts is not None else ():
            name = m.group(1)
            explicit = m.group(0).split()[1:2] == ["run"]
            if (name in _YARN_BUILTIN and not explicit) or name in (scripts or {}):
                continue
            sha = repo.removed_in(f'"{name}"', "package.json")
            if sha:
                evidence = (
                    f"command `{m.group(0)}` named in memory {f.rel}: package.json of repository {repo.name} at "
                    f"HEAD ({repo.short}) has no script {name!r} (changed in {sha})"
                )
                break
        if evidence is None and make is not None:
            mk, targets = make
            for m in _MAKE.finditer(body):
                name = m.group(1)
                if name in targets:
                    continue
                sha = repo.removed_in(f"{name}:", mk)
                if sha:
                    evidence = (
                        f"command `make {name}` named in memory {f.rel}: {mk} of repository {repo.name} at HEAD "
                        f"({repo.short}) has no target {name!r} (changed in {sha})"
                    )
                    break
        if evidence is not None:
            out.append(_make("retire", project, [f.rel], evidence, "the command it names is gone", by_rel))
    return out


def find_offline(
    root: Path, project: str, repo_path: Path | str | None = None, ledger: Ledger | None = None
) -> list[Consolidation]:
    """Every offline proposal for ``project``'s memories (duplicates among its own and the global ones;
    with its repository, what its own memories name that is gone). A memory already in a merge is not
    proposed for retirement in the same pass."""
    files = project_memories(root, project, ledger)
    out = find_duplicates(project, files)
    repo = Repository.open(repo_path) if repo_path else None
    if repo is not None:
        merged = {rel for item in out for rel in item.targets}
        # only the project's own memories are checked against its repository: a global one may name
        # another project's path
        rest = [f for f in files if f.rel not in merged and f.rel.startswith(memory.PROJECTS + "/")]
        gone = find_gone_paths(project, rest, repo)
        named = {rel for item in gone for rel in item.targets}
        out += gone + find_gone_commands(project, [f for f in rest if f.rel not in named], repo)
    return out


def repositories_of(cwds: Iterable[str]) -> list[Path]:
    """The git repositories (main worktrees) the sessions ran in, on this machine, each once."""
    found: list[Path] = []
    for cwd in cwds:
        root = repository_root(cwd) if cwd else ""
        if root and Path(root, ".git").exists() and Path(root) not in found:
            found.append(Path(root))
    return found
