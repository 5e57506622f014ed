"""What a generated block holds: the accepted lessons, read from the memory repository's last commit.

Only what is committed counts (an edit not yet committed, a file an outside writer left, never), so
the block never shows what memory does not hold. Global lessons first, then each project's under its
folder's name; a per-project file gets the global lessons and that project's. Bounded: at most
:data:`MAX_BYTES`, each lesson at most :data:`MAX_LESSON` characters; what is left out is counted and
the memory folder named.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from git import Blob

from dreamtui.core import secrets
from dreamtui.core.memory import gitops
from dreamtui.core.memory import layout as memory
from dreamtui.core.memory.agents.base import shown
from dreamtui.core.memory.frontmatter import read_lenient
from dreamtui.core.repository import encode_path, repository_root
from dreamtui.core.text import clean_line

MAX_BYTES = 12_000
"""The block's size cap (Codex reads at most 32 KiB of instructions in all)."""
MAX_LESSON = 400
"""Characters of one lesson at most."""
_SKIPPED = {memory.INDEX, memory.BRIEFING}


@dataclass(frozen=True, slots=True)
class Lesson:
    folder: str
    """``""`` for a global lesson, else its project's folder below ``projects/``."""
    path: str
    text: str


def lessons(root: Path) -> list[Lesson]:
    """Every memory file of the repository's HEAD, as one line each (none when there is no commit)."""
    if not gitops.repo_exists(root):
        return []
    repo = gitops.open_repo(root, create=False)
    try:
        tree = repo.head.commit.tree
    except ValueError:
        return []
    found: list[Lesson] = []
    for item in tree.traverse():
        if not isinstance(item, Blob):
            continue
        rel = str(item.path)
        folder = _folder_of(rel)
        if folder is None:
            continue
        found.append(Lesson(folder, rel, _one_line(_committed(root, rel, item))))
    found.sort(key=lambda lesson: (lesson.folder, lesson.path))
    return found


def _committed(root: Path, rel: str, blob: Blob) -> bytes:
    """The bytes ``blob`` holds: the work tree's file when it is the same blob (the usual case, with no
    round trip to git per file), else git's."""
    try:
        data = (root / rel).read_bytes() if not (root / rel).is_symlink() else None
    except OSError:
        data = None
    if data is not None and hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest() == blob.hexsha:
        return data
    read: bytes = blob.data_stream.read()
    return read


def _folder_of(rel: str) -> str | None:
    parts = rel.split("/")
    if not rel.endswith(".md") or parts[-1] in _SKIPPED or parts[-1].startswith("."):
        return None
    if len(parts) == 1:
        return ""
    if len(parts) == 3 and parts[0] == memory.PROJECTS:
        return parts[1]
    return None  # reviews/, anything deeper


def _one_line(data: bytes) -> str:
    meta, body = read_lenient(data.decode("utf-8", "replace"))
    title = clean_line(str(meta.get("name") or ""))
    plain = body.replace("**Why:**", "Why:").replace("**How to apply:**", "How to apply:")
    text = " — ".join(part for part in (clean_line(p) for p in plain.split("\n\n")) if part)
    if title and not text.startswith(title.rstrip(".…")):
        text = f"{title}: {text}" if text else title
    text = text or title
    text = text.replace("<!--", "<!-").replace("-->", "->")  # never a marker of its own
    text = secrets.redact(text)  # another sink: a file committed by hand may hold what accept refuses
    return text if len(text) <= MAX_LESSON else text[: MAX_LESSON - 1].rstrip() + "…"


def project_folders(project: Path) -> set[str]:
    """The folders below ``projects/`` that hold ``project``'s lessons (its repository's key)."""
    key = encode_path(repository_root(str(project)))
    return {memory.project_folder(key), memory.legacy_project_folder(key)}


def block(root: Path, project: Path | None = None) -> str:
    """The block's inside for a global file (``project`` None: every lesson) or a project's file."""
    wanted = project_folders(project) if project is not None else None
    chosen = [
        lesson for lesson in lessons(root) if lesson.folder == "" or wanted is None or lesson.folder in wanted
    ]
    head = [
        "# Lessons from your dreamtui memory",
        "",
        f"Lessons you accepted in dreamtui ({shown(root)}); follow them. A lesson under a project",
        "heading applies only when you work in that repository.",
    ]
    lines = list(head)
    size = sum(len(line.encode()) + 1 for line in lines)
    current: str | None = None
    left = 0
    for index, lesson in enumerate(chosen):
        add = []
        if lesson.folder != current:
            # third-level headings: Gemini CLI's save_memory ends its section at the next "## " and puts
            # a new fact just before it, so a "## " here would take the fact into dreamtui's markers
            add += ["", "### Everywhere" if lesson.folder == "" else f"### Project {lesson.folder}", ""]
        add.append(f"- {lesson.text}")
        cost = sum(len(line.encode()) + 1 for line in add)
        if size + cost > MAX_BYTES:
            left = len(chosen) - index
            break
        lines += add
        size += cost
        current = lesson.folder
    if not chosen:
        lines += ["", "(No lessons accepted yet.)"]
    if left:
        lines += [
            "",
            f"({left} more lesson{'s' if left != 1 else ''} did not fit here: see {shown(root / memory.INDEX)})",
        ]
    return "\n".join(lines) + "\n"
