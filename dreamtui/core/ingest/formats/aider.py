"""Aider's chat history: ``<project>/.aider.chat.history.md``, a markdown file per project.

Aider keeps no central folder: it appends every session of a project to one markdown file in the
project (its git root, or the folder it ran in), read here as a whole file of records
(:class:`~.protocol.SourceRecord`, one per block). Every shape below is what Aider's own writer makes
(``aider/io.py``: ``append_chat_history``, ``user_input``, ``ai_output``; ``../shared/docs/agent-formats.md``):

- ``\\n# aider chat started at 2024-08-05 19:33:02\\n\\n`` starts a session (the only time in the file);
- ``\\n#### <line>  `` lines: what the person typed (each line of it prefixed, two spaces at its end);
- ``> <text>  `` lines: Aider's own notices, questions and answers, token counts, tool output (a
  message of several lines has ``> `` on its first line only; its last line ends with two spaces);
- ``\\n<reply>\\n\\n``: the assistant's reply, as the model wrote it: prose, fenced code, and the edits
  Aider applies (SEARCH/REPLACE blocks, whole files after a file name, unified diffs).

Blocks (:func:`parse`): a session line, a person's turn, a notice, a reply. Provenance: ``####`` lines
are the person's, except where Aider itself wrote them (its lint output fed back ``# Fix any errors
below``, ``/help``'s context, a question answered for a group, the architect's plan handed to the
editor model: a copy of the reply before it); ``>`` lines are never the person's (Aider's ``meta``, or
``tool`` for a command's output); a reply's prose is the assistant's and its edit blocks are tool calls
(``tool`` input, never prose to keep). Inside a reply's fence nothing is a turn: a reply holding a
``#### `` line in a code block is still the reply. A fence left open by an interrupted reply (``^C``
just before it) ends at the person's next turn, which Aider always writes after two blank lines.

What the format cannot say: a reply may write, outside any fence, a line exactly like a person's
(``#### …`` ending in two spaces, after a blank line); it is read as the person's, as Aider's own
viewer would. A file whose trailing spaces were stripped (an editor's "trim trailing whitespace") is
read by its prefixes alone.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dreamtui.core.errors import TranscriptError
from dreamtui.core.files import LINK_REASON, Skipped, error_reason, not_regular_reason, open_regular
from dreamtui.core.ingest.formats.generic import PiecesDigester
from dreamtui.core.ingest.formats.protocol import (
    FileKind,
    JsonPath,
    Layout,
    Piece,
    RecordRef,
    SourceRecord,
    ToolCall,
    TranscriptFile,
    split_address,
)
from dreamtui.core.models import DigestStats, Provenance, RawRecord, Turn
from dreamtui.core.repository import encode_path

if TYPE_CHECKING:  # the digest's dedup state: digest.py imports the formats
    from dreamtui.core.ingest.digest import DigestState

name = "aider"
"""This format's name (its key in ``formats.FORMATS``)."""
agent = "Aider"
"""The agent as a person names it."""
label = "Aider"
"""The agent in a word, as the queue's and Sessions' agent column show it."""
layout: Layout = "records"
"""A whole markdown file, read as records (one per block)."""
HISTORY_NAME = ".aider.chat.history.md"
"""The file Aider appends every session of a project to (its ``--chat-history-file`` default)."""
suffix = HISTORY_NAME
"""How a transcript file's name ends (the whole name)."""
tool_call_hint = b""
"""Any reply may hold an edit (a fence, a file name line): every block is looked at."""

MAX_FILE_BYTES = 256 * 1024 * 1024
"""A history larger than this is not read (one notice): Aider's own grows by a few MB a year."""
SEARCH_DEPTH = 4
"""How many folders deep a configured folder is searched for history files."""
SEARCH_FOLDERS = 20_000
"""At most this many folders are listed in one search (a home folder has many more)."""
SKIP_FOLDERS = frozenset({"node_modules", "__pycache__", "venv", "site-packages", "target", "dist", "build"})
"""Folders never searched (besides hidden ones: ``.git``, ``.venv``, …)."""

PERSON: Provenance = "person"
ASSISTANT: Provenance = "assistant"
TOOL: Provenance = "tool"
META: Provenance = "meta"


def default_roots() -> list[Path]:
    """None: Aider keeps no central folder. Its histories are found in the folders the config names
    (``[formats.aider] folders``) and in the working directories of the sessions other formats know."""
    return []


def claims(path: Path) -> bool:
    """Whether ``path`` is an Aider chat history, by its name."""
    return Path(path).name == HISTORY_NAME


# -- where the histories are --------------------------------------------------------------------


def _folder(path: Path) -> str:
    """The folder a history lies in, absolute (symlinks kept: it is the project as the person names it)."""
    return os.path.abspath(Path(path).parent)


def project_of(path: Path) -> str:
    """The project folder name of a history: its folder's path spelt as a project folder."""
    return encode_path(_folder(path))


def session_of(path: Path) -> str:
    """The history file as one session: ``aider-`` and a short hash of its folder."""
    digest = hashlib.blake2b(_folder(path).encode("utf-8", "surrogateescape"), digest_size=6).hexdigest()
    return f"aider-{digest}"


def kind_of(path: Path) -> FileKind:
    """Always ``main``: Aider has no sub-agents."""
    return "main"


def describe(path: Path, head: bytes | None = None) -> TranscriptFile:
    """A :class:`TranscriptFile` for one history."""
    return _transcript(Path(path))


def _transcript(path: Path) -> TranscriptFile:
    return TranscriptFile(path, project_of(path), session_of(path), "main", None, name)


def cwd_of(path: Path) -> str:
    """The folder the history lies in: Aider writes it in the project it ran for."""
    return _folder(path)


def is_main_file(root: Path, path: Path) -> bool:
    """Every history is a main session file."""
    return claims(path)


def is_auto_dream(path: Path) -> bool:
    """Aider has no background memory consolidation."""
    return False


def with_session(path: Path) -> list[Path]:
    """A history is its session's one file."""
    return [Path(path)]


def session_files(root: Path, project: str, session: str) -> list[Path]:
    """The history of that session under ``root`` (one file, or none)."""
    return [tf.path for tf in discover(root) if tf.project == project and tf.session == session]


def _history_problem(path: str) -> str | None:
    """None when ``path`` (a directory entry named like a history) may be read; else why not."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"cannot read it ({error_reason(exc)})"
    if stat.S_ISLNK(st.st_mode):
        return LINK_REASON
    if not stat.S_ISREG(st.st_mode):
        return not_regular_reason(st.st_mode)
    return None


def discover(root: Path, skipped: list[Skipped] | None = None) -> list[TranscriptFile]:
    """Every history in ``root`` and its folders down to :data:`SEARCH_DEPTH`, never through a symlink
    (``root`` itself may be one: the person named it), never into hidden folders or
    :data:`SKIP_FOLDERS`, at most :data:`SEARCH_FOLDERS` folders listed. ``root`` may also be a history
    file itself. A history that is a symlink, a FIFO or a device, and a folder that cannot be listed,
    are reported in ``skipped``; never raises."""
    root = Path(root)
    notes: list[Skipped] = skipped if skipped is not None else []
    if root.name == HISTORY_NAME:
        problem = _history_problem(str(root))
        if problem is None:
            return [_transcript(root)]
        if os.path.lexists(root):
            notes.append(Skipped(str(root), problem))
        return []
    found: list[Path] = []
    queue: list[tuple[str, int]] = [(str(root), 0)]
    listed = 0
    while queue:
        folder, depth = queue.pop(0)
        if listed >= SEARCH_FOLDERS:
            notes.append(Skipped(str(root), f"searched {SEARCH_FOLDERS} folders; the rest is not searched"))
            break
        listed += 1
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            if depth == 0 and isinstance(exc, (FileNotFoundError, NotADirectoryError)):
                return []
            notes.append(Skipped(folder, f"cannot list this folder ({error_reason(exc)})"))
            continue
        for entry in entries:
            if entry.name == HISTORY_NAME:
                problem = _history_problem(entry.path)
                if problem is None:
                    found.append(Path(entry.path))
                else:
                    notes.append(Skipped(entry.path, problem))
                continue
            if depth >= SEARCH_DEPTH or entry.name.startswith(".") or entry.name in SKIP_FOLDERS:
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    queue.append((entry.path, depth + 1))
            except OSError:
                continue
    return [_transcript(p) for p in found]


def _top_level(folder: str) -> str | None:
    """The working tree ``folder`` lies in (the nearest folder above it holding ``.git``, a folder or a
    worktree's file), as ``git rev-parse --show-toplevel`` says; None outside any."""
    here = Path(folder)
    for up in (here, *here.parents):
        if os.path.lexists(up / ".git"):
            return str(up)
    return None


def discover_in_projects(
    cwds: Iterable[str | Path], skipped: list[Skipped] | None = None
) -> list[TranscriptFile]:
    """The histories of the projects other agents' sessions ran in (their working directories): Aider
    writes its history in the working tree's top folder (its git root), or in the folder it ran in when
    there is no repository. Each folder is looked at, never searched below; a history that is a
    symlink or not a regular file is reported in ``skipped``."""
    folders: list[str] = []
    for cwd in cwds:
        folder = os.path.abspath(cwd)
        folders.append(folder)
        top = _top_level(folder)
        if top is not None:
            folders.append(top)
    out: list[TranscriptFile] = []
    seen: set[str] = set()
    for folder in folders:
        path = os.path.join(folder, HISTORY_NAME)
        if path in seen:
            continue
        seen.add(path)
        if not os.path.lexists(path):
            continue
        problem = _history_problem(path)
        if problem is None:
            out.append(_transcript(Path(path)))
        elif skipped is not None:
            skipped.append(Skipped(path, problem))
    return out


# -- the blocks ---------------------------------------------------------------------------------

HEADER = re.compile(r"^# aider chat started at (?P<time>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\s*$")
_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_TAG_FENCE = re.compile(r"^<(?P<tag>source|code|pre|codeblock|sourcecode)>\s*$")
_STRICT_MARK = re.compile(rb"(?m)^(?:####|>).*  \r?$")
_MODELINE = re.compile(r"^-\*-.*-\*-$")
_CONFIRM = re.compile(r"\(Y\)es/\(N\)o.*\]: ?\S*$")
_PATHLIKE = re.compile(r"^[\w.\\/:~+@-]+$")
_SHELL_INFO = frozenset({"bash", "sh", "shell", "zsh", "console", "cmd", "bat", "powershell", "ps1", "fish"})
LINT_HEAD = "# Fix any errors below, if possible."
"""The first line of the lint output Aider feeds back as a person's turn (``aider/linter.py``)."""
HELP_HEAD = "# Question:"
"""The first line of the context ``/help`` sends as a person's turn (``aider/help.py``)."""
INTERRUPT = "^C "
"""What Aider's notice of a Ctrl-C holds (``^C again to exit``, ``^C KeyboardInterrupt``): a reply right
after it was cut short."""


@dataclass(slots=True)
class Block:
    """One block of a history: ``kind`` (``session``, ``person``, ``notice``, ``reply``), its first
    and last line (1-based), its lines as written, the session it belongs to and whether a reply was
    cut short by ``^C`` (an open fence in it ends at the person's next turn)."""

    kind: str
    start: int
    session: str
    partial: bool = False
    cont: bool = False
    """A notice whose message goes on in lines without ``> `` (open until a line ends in two spaces)."""
    end: int = 0
    """The last line that is not blank."""
    index: int = 0
    """The block's place in its session (0: the session line)."""
    lines: list[str] = field(default_factory=list)
    obj: dict[str, Any] = field(default_factory=dict)


def _strict(data: bytes) -> bool:
    """Whether the file keeps the two spaces Aider ends every ``####`` and ``>`` line with."""
    return _STRICT_MARK.search(data) is not None


def _is_person(line: str, strict: bool) -> bool:
    if not line.startswith("####") or (len(line) > 4 and line[4] != " "):
        return False
    return not strict or line.endswith("  ")


def _is_notice(line: str, strict: bool) -> bool:
    return line.startswith(">") and (not strict or line.endswith("  "))


def _fence_of(line: str) -> tuple[str, int] | None:
    """The fence a line opens (its character and length, or a tag), else None."""
    m = _FENCE.match(line)
    if m is not None:
        if m["fence"][0] == "`" and "`" in m["info"]:
            return None
        return m["fence"][0], len(m["fence"])
    t = _TAG_FENCE.match(line.strip())
    return ("</" + t["tag"] + ">", 0) if t is not None else None


def _closes(fence: tuple[str, int], line: str) -> bool:
    char, length = fence
    s = line.strip()
    if length == 0:
        return s == char
    return len(s) >= length and s == char * len(s) and len(line) - len(line.lstrip(" ")) <= 3


_RUNS = re.compile(
    r"""(?P<p>(?:^\#\#\#\#(?:\ [^\n]*)?\ \ \n)+)
    |(?P<n>(?:^>[^\n]*\ \ \n)+)
    |(?P<b>(?:^[^\S\n]*\n)+)
    |(?P<o>(?:^(?![\#>`~<]|\ {1,3}[`~]|[^\S\n]*\n)[^\n]*\n)+)
    |(?P<x>^[^\n]*\n)""",
    re.M | re.X,
)
"""Runs of lines of one shape: a person's lines (``p``), notice lines (``n``), blank lines (``b``), plain
text (``o``: no mark at its start, never a fence), and any other single line (``x``: a fence, a session
line, a heading, a message's first line): a file is read run by run, most runs in one step."""


class _Parser:
    """Cuts the lines of a history into :class:`Block` s, forward only: the blocks of a file that only
    grew are the blocks it had, the last one perhaps longer. Only the lines :data:`_CANDIDATE` finds
    are looked at one by one; the runs of text between them extend or start a block whole."""

    def __init__(self, lines: list[str], strict: bool) -> None:
        self.all = lines
        self.strict = strict
        self.blocks: list[Block] = []
        self.cur: Block | None = None
        self.fence: tuple[str, int] | None = None
        self.blanks = 0
        self.session = ""
        self.counts: dict[str, int] = {}
        self.index = 0

    def run(self, text: str) -> list[Block]:
        """The blocks of ``text`` (whose lines are ``self.all``)."""
        if not self.strict:  # a file without the two spaces: every marked line its own step
            for no, line in enumerate(self.all, start=1):
                self.feed(no, line)
            self.close()
            return self.blocks
        if text and not text.endswith("\n"):
            text += "\n"
        count = text.count
        first = 1
        for m in _RUNS.finditer(text):
            n = count("\n", m.start(), m.end())
            last = first + n - 1
            shape = m.lastgroup
            if shape == "o":
                self.plain(first, last)
            elif shape == "b":
                self.blank(first, n)
            elif shape == "x" or self.cur is not None and self.cur.cont:
                for no in range(first, last + 1):
                    self.feed(no, self.all[no - 1])
            elif self.fence is not None and not (
                shape == "p" and self.cur is not None and self.cur.partial and self.blanks >= 2
            ):
                self.cur.end = last  # type: ignore[union-attr]  # a fence is only open in a block
                self.blanks = 0
            else:
                self.fence = None
                kind = "person" if shape == "p" else "notice"
                cur = self.cur
                if cur is not None and cur.kind == kind and self.blanks == 0:
                    cur.end = last
                else:
                    self.open(kind, first).end = last
                self.blanks = 0
            first = last + 1
        self.close()
        return self.blocks

    def blank(self, first: int, n: int) -> None:
        """``n`` blank lines from line ``first``."""
        self.blanks += n
        cur = self.cur
        if self.fence is None and cur is not None and cur.kind != "reply" and not cur.cont:
            self.close()

    def close(self) -> None:
        cur = self.cur
        if cur is None:
            return
        self.index += 1
        cur.index = self.index
        cur.lines = self.all[cur.start - 1 : cur.end]
        self.blocks.append(cur)
        self.cur = None
        self.fence = None

    def open(self, kind: str, no: int) -> Block:
        self.close()
        partial = False
        if kind == "reply" and self.blocks:
            last = self.blocks[-1]
            partial = last.kind == "notice" and last.session == self.session and INTERRUPT in last.lines[-1]
        self.cur = Block(kind, no, self.session, partial, end=no)
        return self.cur

    def plain(self, first: int, last: int) -> None:
        """Lines ``first``..``last``: text that is neither blank nor marked (no ``#``, ``>``, fence)."""
        cur = self.cur
        self.blanks = 0
        if cur is not None and (self.fence is not None or cur.kind == "reply"):
            cur.end = last
            return
        if cur is not None and cur.cont:
            run = "\n".join(self.all[first - 1 : last]) + "\n"
            at = run.find("  \n")  # the message's last line ends in two spaces
            if at < 0:
                cur.end = last
                return
            no = first + run.count("\n", 0, at)
            cur.cont = False
            cur.end = no
            if no == last:
                return
            first = no + 1
        if cur is not None and cur.kind == "notice" and not self.strict and cur.end == first - 1:
            cur.end = last  # a message of several lines, in a file without the two spaces
            return
        self.open("reply", first).end = last

    def feed(self, no: int, line: str) -> None:
        """One marked or blank line."""
        strict = self.strict
        cur = self.cur
        m = HEADER.match(line) if line.startswith("# aider") else None
        if m is not None:  # a session starts: whatever was open ends, even a fence
            self.close()
            time = m["time"]
            n = self.counts[time] = self.counts.get(time, 0) + 1
            self.session = time if n == 1 else f"{time}#{n}"
            self.index = -1
            self.cur = Block("session", no, self.session, end=no)
            self.close()
            self.blanks = 0
            return
        blank = not line.strip()
        if self.fence is not None and cur is not None:
            if _closes(self.fence, line):
                self.fence = None
                cur.end = no
                self.blanks = 0
                return
            if not (cur.partial and self.blanks >= 2 and _is_person(line, strict)):
                if blank:
                    self.blanks += 1
                else:
                    cur.end = no
                    self.blanks = 0
                return
            self.fence = None
        if blank:
            self.blanks += 1
            if cur is not None and cur.kind != "reply" and not cur.cont:
                self.close()
            return
        blanks, self.blanks = self.blanks, 0
        if cur is not None and cur.cont:  # a notice's message going on without ``> ``
            cur.end = no
            if line.endswith("  "):
                cur.cont = False
            self._fence_in(line)
            return
        if _is_person(line, strict):
            if cur is not None and cur.kind == "person" and blanks == 0:
                cur.end = no
            else:
                self.open("person", no)
            return
        if _is_notice(line, strict) or (line.startswith(">") and (cur is None or cur.kind != "reply")):
            if cur is not None and cur.kind == "notice" and blanks == 0:
                cur.end = no
            else:
                cur = self.open("notice", no)
            if strict and not line.endswith("  "):  # the first line of a message of several lines
                cur.cont = True
            return
        if cur is not None and (cur.kind == "reply" or (cur.kind == "notice" and blanks == 0 and not strict)):
            cur.end = no
        else:
            self.open("reply", no)
        self._fence_in(line)

    def _fence_in(self, line: str) -> None:
        if self.fence is None and line[:1] in ("`", "~", " ", "<"):
            self.fence = _fence_of(line)


def _lines(data: bytes) -> tuple[str, list[str]]:
    """The text of a history, decoded (invalid bytes as U+FFFD, a byte-order mark dropped, Windows line
    ends as ``\\n``), and its lines."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text = data.decode("utf-8", "replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return text, lines


def parse(data: bytes) -> list[Block]:
    """The blocks of a whole history, each with its decoded record (``Block.obj``)."""
    text, lines = _lines(data)
    blocks = _Parser(lines, _strict(data)).run(text)
    last_reply: list[str] = []
    for block in blocks:
        block.obj = _record(block, last_reply)
        if block.obj["type"] == "assistant":
            last_reply = block.lines
        elif block.kind == "session":
            last_reply = []
    return blocks


# -- a block as a record --------------------------------------------------------------------------


def _flat(text: str) -> str:
    return " ".join(text.split())


@lru_cache(maxsize=256)
def _iso(session: str) -> str | None:
    """A session's start time as ISO 8601 (its date and time, no zone: Aider writes local time)."""
    if not session:
        return None
    return session.split("#", 1)[0].replace(" ", "T")


_FENCE_STARTS = ("`", "~", "<")


def _person_text(lines: list[str]) -> str:
    """A turn's text: each line without ``#### `` and its trailing spaces."""
    return "\n".join([(line[5:] if line.startswith("#### ") else line[4:]).rstrip() for line in lines]).strip(
        "\n"
    )


def _notice_text(lines: list[str]) -> str:
    """A notice's text: each line without ``> `` (a message's later lines have none) and its trailing
    spaces."""
    return "\n".join(
        [
            (line[2:] if line.startswith("> ") else line[1:] if line[:1] == ">" else line).rstrip()
            for line in lines
        ]
    ).strip()


def _pathlike(line: str) -> str | None:
    """The file name a line before (or first inside) an edit's fence names, else None."""
    s = line.strip().strip("*`#:").strip()
    if not s or len(s) > 300 or not _PATHLIKE.match(s):
        return None
    return s if ("." in s or "/" in s or "\\" in s) else None


def _edit_of(lines: list[str], i: int, j: int, pos: int) -> tuple[str, dict[str, str]] | None:
    """The edit (its shape, file and body) the fence on lines ``i``..``j`` of a reply makes, or None.
    Shapes: ``named`` (a file name line right before the fence: ``whole``, ``diff``), ``inside`` (the
    file name first inside it: ``diff-fenced``), ``udiff``."""
    body = lines[i + 1 : j]
    info = lines[i].strip().lstrip("`~").strip().lower()
    named = _pathlike(lines[i - 1]) if i - 1 >= pos else None
    searches = any(b.startswith(("<<<<<<< SEARCH", "<<<<<<< ORIGINAL")) for b in body)
    if named:
        return "named", {"file": named, "text": "\n".join(body)}
    if searches:
        inside = _pathlike(body[0]) if body else None
        return "inside", {"file": inside or "", "text": "\n".join(body[1:] if inside else body)}
    if info in ("diff", "udiff", "patch"):
        plus = next((b for b in body if b.startswith("+++ ")), None)
        if plus is not None:
            return "udiff", {"file": plus[4:].strip().removeprefix("b/"), "text": "\n".join(body)}
    return None


def _split_reply(lines: list[str]) -> tuple[str, list[dict[str, str]], list[dict[str, str]]]:
    """A reply's prose (its edit blocks and their file name lines taken out), its edits (file and
    body) and the shell commands it suggests (fences of a shell's language)."""
    marks = [
        k
        for k, line in enumerate(lines)
        if line.startswith(_FENCE_STARTS) or (line[:1] == " " and line.lstrip(" ")[:1] in ("`", "~"))
    ]
    prose: list[str] = []
    edits: list[dict[str, str]] = []
    commands: list[dict[str, str]] = []
    pos = 0  # the first line not yet taken
    for at, i in enumerate(marks):
        fence = _fence_of(lines[i]) if i >= pos else None
        if fence is None:
            continue
        j = next((m for m in marks[at + 1 :] if _closes(fence, lines[m])), len(lines))
        found = _edit_of(lines, i, j, pos)
        if found is not None:
            shape, edit = found
            upto = i - 1 if shape == "named" else i  # the file name line belongs to the edit
            prose.extend(lines[pos:upto])
            while prose and not prose[-1].strip():
                prose.pop()
            prose.append("")
            edits.append(edit)
        elif lines[i].strip().lstrip("`~").strip().lower().split(" ")[0] in _SHELL_INFO:
            prose.extend(lines[pos:i])
            commands.append({"command": "\n".join(lines[i + 1 : j]).strip()})
        else:
            prose.extend(lines[pos : j + 1])
        pos = j + 1
    prose.extend(lines[pos:])
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(prose)).strip()
    return text, edits, commands


def _is_copy_of(text: str, reply: list[str] | str) -> bool:
    """Whether a turn's text is the reply's (whitespace aside): the architect's plan handed on
    (``reply``: its lines, or its text)."""
    if isinstance(reply, str):  # the first line not blank, as the lines would give it
        m = _NOT_SPACE.search(reply)
        head = None
        if m is not None:
            line_end = reply.find("\n", m.start())
            head = reply[m.start() : line_end if line_end >= 0 else len(reply)].strip()
    else:
        head = next((line.strip() for line in reply if line.strip()), None)
    if head is None or not text.lstrip().startswith(head):
        return False
    return _flat(text) == _flat(reply if isinstance(reply, str) else "\n".join(reply))


_NOT_SPACE = re.compile(r"\S")


def _person_kind(text: str, last_reply: list[str] | str) -> tuple[Provenance, str]:
    """Whose words a ``####`` turn is, and its kind (``last_reply``: the lines of the reply before it,
    or its text)."""
    first = text.lstrip("\n").split("\n", 1)[0].strip()
    if last_reply and _is_copy_of(text, last_reply):
        return ASSISTANT, "copy"  # the architect's plan handed to the editor model
    if first == LINT_HEAD:
        return TOOL, "tool_result"
    if first.startswith(HELP_HEAD):
        return META, "context"
    if _CONFIRM.search(first) and "\n" not in text.strip():
        return META, "confirm"
    if first.startswith(("/", "!")):
        return PERSON, "command"
    if text.strip() == "<blank>":
        return META, "meta"
    return PERSON, "prompt"


def _record(block: Block, last_reply: list[str]) -> dict[str, Any]:
    time = _iso(block.session)
    base: dict[str, Any] = {"session": block.session, "time": time, "line": block.start, "end": block.end}
    if block.kind == "session":
        return {"type": "session", **base, "text": block.lines[0].lstrip("# ").strip()}
    if block.kind == "person":
        text = _person_text(block.lines)
        role, kind = _person_kind(text, last_reply)
        return {"type": "person", **base, "role": role, "kind": kind, "text": text}
    if block.kind == "notice":
        text = _notice_text(block.lines)
        cont = any(not line.startswith(">") for line in block.lines)
        return {"type": "notice", **base, "role": TOOL if cont else META, "text": text}
    full = "\n".join(block.lines).strip()
    if block.start == 1 and len(block.lines) == 1 and _MODELINE.match(full):
        return {"type": "notice", **base, "role": META, "text": full}
    prose, edits, commands = _split_reply(block.lines)
    record: dict[str, Any] = {"type": "assistant", **base, "text": prose}
    if edits:
        record["edits"] = edits
    if commands:
        record["commands"] = commands
    if block.partial:
        record["partial"] = True
    return record


def _key(block: Block) -> str:
    return f"{block.session or 'before'}/{block.index}"


def records(path: Path, member: str = "") -> Iterator[SourceRecord]:
    """The blocks of the history ``path`` as records, in order (of session ``member`` only, when
    given: its start time as :func:`parse` names it). ``locator``: the block's first line; ``key``:
    its session and place in it (stable while the file grows, and when older sessions are cut from
    its start); ``raw``: its lines as stored. A last block the writer may not have finished (no line
    end yet, or a reply not yet followed by its blank line) is held back until it is.

    Raises :class:`TranscriptError` (one line) for a file that is not a regular file, cannot be
    read, is larger than :data:`MAX_FILE_BYTES`, or holds text but no session start line."""
    data = _read(Path(path))
    blocks = parse(data)
    _a_history(Path(path), blocks)
    raw_lines = data.split(b"\n")
    if blocks and _unfinished(blocks[-1], data):
        blocks.pop()
    for block in blocks:
        if member and block.session != member:
            continue
        obj = dict(block.obj)
        obj["key"] = _key(block)
        raw = b"\n".join(raw_lines[block.start - 1 : block.end])
        yield SourceRecord(block.start, obj["key"], raw, obj)


def _a_history(path: Path, blocks: list[Block]) -> None:
    """Refuse (one line) a file with text but no session start line: Aider writes
    ``# aider chat started at …`` before anything else of every session, so such a file is not its
    history (random bytes, another tool's markdown), and none of it may be read as anyone's words.
    Text before the first start line of a real history (one trimmed by hand) is still read."""
    if blocks and not any(block.kind == "session" for block in blocks):
        raise TranscriptError(f"{path}: not an Aider chat history (no '# aider chat started at' line)")


def _unfinished(block: Block, data: bytes) -> bool:
    if not data.endswith(b"\n"):
        return True
    return block.kind == "reply" and not data.endswith((b"\n\n", b"\n\r\n"))


def _read(path: Path) -> bytes:
    try:
        with open_regular(path) as fh:
            size = os.fstat(fh.fileno()).st_size
            if size > MAX_FILE_BYTES:
                raise TranscriptError(
                    f"{path}: {size // (1024 * 1024)} MB, larger than the {MAX_FILE_BYTES // (1024 * 1024)} MB read"
                )
            return fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise TranscriptError(f"{path}: {error_reason(exc)}") from None


# -- whose words --------------------------------------------------------------------------------


def pieces(obj: Any) -> list[Piece]:
    """A record's text with its provenance: a person's turn (``prompt``/``command``, or Aider's own:
    ``tool_result``, ``context``, ``confirm``, an architect's ``copy``), a reply's prose (``text``),
    a notice (``notification``; ``tool_result`` for a message of several lines), the session line."""
    if not isinstance(obj, dict):
        return []
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        return []
    rtype = obj.get("type")
    if rtype == "person":
        given = obj.get("role")
        role: Provenance = given if given in (PERSON, ASSISTANT, TOOL) else META
        return [Piece(role, text, str(obj.get("kind") or "prompt"), ("text",))]
    if rtype == "assistant":
        return [Piece(ASSISTANT, text, "text", ("text",))]
    if rtype == "notice":
        role = TOOL if obj.get("role") == TOOL else META
        return [Piece(role, text, "tool_result" if role == TOOL else "notification", ("text",))]
    if rtype == "session":
        return [Piece(META, text, "system", ("text",))]
    return []


def provenance_of(obj: Any, path: JsonPath) -> Provenance:
    """Whose words the string at ``path`` is: a record's ``text`` as :func:`pieces` says; an edit's
    body and a suggested command are ``tool`` (a tool call's input); every other field ``meta``."""
    if not isinstance(obj, dict) or not path:
        return META
    if path == ("text",):
        found = pieces(obj)
        return found[0].role if found else META
    if path[0] in ("edits", "commands") and len(path) == 3 and path[2] in ("text", "command"):
        return TOOL
    return META


def provenance(obj: dict[str, Any], path: JsonPath, value: str, holds: Callable[[str], bool]) -> Provenance:
    """:func:`provenance_of` (a turn is one person's or one writer's whole: no part of it differs)."""
    return provenance_of(obj, path)


def ref(obj: dict[str, Any]) -> RecordRef:
    """A record's key (as its id), its session's start time, no working directory (the file's folder
    is the session's) and never a sub-agent."""
    key = obj.get("key")
    time = obj.get("time")
    return RecordRef(
        key if isinstance(key, str) else None, time if isinstance(time, str) else None, None, False
    )


def is_copy(obj: dict[str, Any]) -> bool:
    """A ``####`` turn that repeats the reply before it (the architect's plan handed to the editor)."""
    return obj.get("type") == "person" and obj.get("kind") == "copy"


def tool_calls(obj: dict[str, Any]) -> list[ToolCall]:
    """A reply's edits (``edit``, the file it wrote) and suggested shell commands (``shell``)."""
    out: list[ToolCall] = []
    for edit in obj.get("edits") or []:
        if isinstance(edit, dict):
            target = edit.get("file")
            out.append(ToolCall("edit", target if isinstance(target, str) and target else None))
    for command in obj.get("commands") or []:
        if isinstance(command, dict) and isinstance(command.get("command"), str):
            out.append(ToolCall("shell", None, command["command"]))
    return out


def render(line: int, obj: dict[str, Any]) -> RawRecord:
    """A block for the evidence window: its type, its session's time, its text with whose words it is,
    then its edits and commands as calls; notices and the session line fold."""
    texts = [(str(p.role), p.text) for p in pieces(obj)]
    texts += [("call", f"edit {e.get('file') or '?'}\n{e.get('text', '')}") for e in obj.get("edits") or []]
    texts += [("call", f"shell {c.get('command', '')}") for c in obj.get("commands") or []]
    rtype = str(obj.get("type") or "?")
    folds = rtype in ("notice", "session")
    return RawRecord(
        line,
        rtype,
        str(obj.get("time") or ""),
        texts,
        kind=str(obj.get("kind") or ""),
        bookkeeping=folds,
        folds=folds,
    )


# -- the digest ---------------------------------------------------------------------------------


def digest_records(
    address: Path, kind: FileKind | None, state: DigestState, stats: DigestStats, interrupts: bool
) -> tuple[TranscriptFile, list[Turn], str] | None:
    """The digest of a whole history (``digest.digest_file``'s fast path; None for one session of it,
    ``#member``: its records are read): what :func:`describe`, :func:`records` and :func:`digester`
    give together (the same turns, stats and description: ``tests/test_formats_fast_digest.py``).
    A history that keeps its two trailing spaces is scanned in its bytes (:func:`_scan_digest`: the blocks
    cut as :func:`parse` cuts them, only a person's turn and a reply decoded); another (trimmed, or a
    kind the turns are not made inline for) is cut by :class:`_Parser` as :func:`parse` cuts it, a
    notice's or a session line's text never put together."""
    path, member = split_address(address)
    if member:
        return None
    tf = describe(path)
    data = _read(path)
    turns: list[Turn] = []
    d = PiecesDigester(pieces, ref, str(address), kind or tf.kind, state, stats, interrupts)
    if d.kind in ("main", "subagent") and _strict(data):
        _scan_digest(path, data, d, turns)
    else:
        _digest_blocks(path, data, d, turns)
    return tf, turns, d.cwd


def _digest_blocks(path: Path, data: bytes, d: PiecesDigester, turns: list[Turn]) -> None:
    """The digest of the blocks :class:`_Parser` cuts (any file, any kind of transcript asked for)."""
    state, stats = d.state, d.stats
    text, lines = _lines(data)
    blocks = _Parser(lines, _strict(data)).run(text)
    _a_history(path, blocks)
    if blocks and _unfinished(blocks[-1], data):
        blocks.pop()
    raw_lines = data.split(b"\n")
    before = list(accumulate(map(len, raw_lines), initial=0))  # the bytes of the lines before each
    stored = len(raw_lines)
    file, new_person, new_block = d.file, state.new_person, state.new_block
    inline = d.kind in ("main", "subagent")  # another kind asked for: each record through d.record
    main = d.kind == "main"
    reply_kind = "subagent" if d.kind == "subagent" else "text"
    last_reply: list[str] = []
    for block in blocks:
        first, last = block.start - 1, min(block.end, stored)
        stats.lines += 1
        stats.bytes += before[last] - before[first] + (last - first - 1) if last > first else 0
        shape = block.kind
        if shape == "notice":
            continue
        if shape == "session":
            last_reply = []
            continue
        obj = _record(block, last_reply)
        rtype, said = obj["type"], obj["text"]
        if rtype == "assistant":
            last_reply = block.lines
        key = obj["key"] = _key(block)
        if not inline:
            d.record(obj, block.start, turns)
        elif rtype == "person" and obj["role"] == PERSON and main and said.strip():
            # what PiecesDigester._record makes of pieces() and ref() for a person's turn
            ts = obj["time"]
            if ts and not new_person(ts, said):
                continue
            turns.append(Turn("person", said, file, block.start, key, ts, obj["kind"]))
            stats.chars += len(said)
        elif rtype == "assistant":  # ... and for a reply's prose
            prose = said.strip()
            if prose and new_block(key, said):
                turns.append(Turn("assistant", prose, file, block.start, key, obj["time"], reply_kind))
                stats.chars += len(prose)


# -- the digest's scan: a history's bytes, run by run -------------------------------------------

_WITNESS = rb"\x00-\x08\x0e-\x1b\x21-\x7f\xc0\xc1\xc3-\xe0\xe4-\xff"
"""Bytes that make a line not blank however it decodes: an ASCII character that is not whitespace, or
the first byte of a character of a range that holds no whitespace (not a witness: ASCII whitespace,
the continuation bytes, and the first bytes of U+0080–U+00BF, U+1000–U+3FFF, where U+0085, U+00A0,
U+1680, U+2000–U+205F and U+3000 lie); an invalid byte decodes as U+FFFD, not whitespace."""
_BLANK_LINE = rb"[ \t\x0b\x0c\r\x1c-\x1f]*\n"
"""A line of ASCII whitespace alone (a line of other whitespace is looked at on its own)."""
_PLAIN_LINE = rb"(?![#>`~<]| {1,3}[`~])[^\n" + _WITNESS + rb"]*[" + _WITNESS + rb"][^\n]*\n"
"""A line ``_RUNS`` reads as plain text (``o``): no mark at its start, never a fence, not blank."""
_HEAD_AT = rb"# aider chat started at "
_FENCE_STOP = {
    (char, partial): re.compile(rb"\n(?=" + stop + (rb"|####" if partial else b"") + rb"|" + _HEAD_AT + rb")")
    for char, stop in (("`", rb" {0,3}```"), ("~", rb" {0,3}~~~"), ("<", rb"</"))
    for partial in (False, True)
}
"""Inside an open fence, the next line that may end it (``_RUNS`` checks only its ``x`` lines: a
fence's character after at most three spaces, a tag's ``</``), start a session, or (in a reply ``^C``
cut short) be the person's next turn."""
_HEADER_LINE = re.compile(
    rb"# aider chat started at (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)[ \t\x0b\x0c\r\x1c-\x1f]*\n((?:"
    + _BLANK_LINE
    + rb")*)"
)
"""A session start line as Aider writes it, and the blank lines after it (``HEADER`` on its text reads
any other)."""
_MESSAGE_STOP = re.compile(rb"\n(?=[`~<]| {1,3}[`~]|" + _HEAD_AT + rb")")
"""In a notice's message of several lines, the next line that may open a fence or start a session (a
line that ends the message, in two trailing spaces, is found apart)."""
_ASCII_BLANK = b" \t\r\x0b\x0c\x1c\x1d\x1e\x1f"
_BLANK_START = frozenset(b"\n" + _ASCII_BLANK)
_BLANKS = re.compile(rb"(?:" + _BLANK_LINE + rb")+")
_PLAIN = re.compile(_PLAIN_LINE)
_TWO_SPACES = rb"[^\n]*+\n(?:(?<=  \n)|(?<=  \r\n))"
"""The rest of a line that ends in two spaces (the line end read first: no backtracking)."""
_NOTICE_RUN = re.compile(rb"(?:>" + _TWO_SPACES + rb")+((?:" + _BLANK_LINE + rb")*)")
"""A run of notice lines (``>``, two trailing spaces), and the blank lines after it."""
_PERSON_RUN = re.compile(rb"(?:#### " + _TWO_SPACES + rb")+((?:" + _BLANK_LINE + rb")*)")
"""A run of a person's lines (``#### ``, two trailing spaces), and the blank lines after it."""
_REPLY_END = re.compile(rb"\n(?=[#>`~<]| {1,3}[`~])")
"""The next line that may not be plain text or blank: a mark, a fence, a tag."""
_MARK_START = frozenset(b"`~<")
_FENCE_AFTER_SPACES = re.compile(rb" {1,3}[`~]")


def _squeeze(text: str) -> str:
    """``re.sub(r"\\n{3,}", "\\n\\n", text)``: three line ends or more as two (a few searches in C where
    the expression tries every character)."""
    while "\n\n\n" in text:
        text = text.replace("\n\n\n", "\n\n")
    return text


def _turn_text(text: str) -> str:
    """:func:`_person_text` of a person's block as the byte scan cuts it (every line ``#### `` and two
    trailing spaces), a turn of one line (most) without splitting it."""
    if "\n" not in text:
        return text[5:].rstrip()
    return "\n".join([line[5:].rstrip() for line in text.split("\n")]).strip("\n")


_Cut = tuple[str, int, int, str, int, list[int], int]
"""A block the scan cut: its kind, first line's offset, last line's end, session, place in it, a
reply's fences (the offsets of each one's first and last line), and its first line's number."""


def _scan_digest(path: Path, data: bytes, d: PiecesDigester, turns: list[Turn]) -> None:
    """The digest of a history that keeps its two trailing spaces, read in its bytes: the blocks
    :class:`_Parser` cuts (the same rules: ``_RUNS``'s runs, :meth:`_Parser.feed`'s lines), found in
    runs of whole lines by searches (:data:`_NOTICE_END`, :data:`_PERSON_END`, :data:`_REPLY_END`,
    :data:`_FENCE_STOP`, :data:`_MESSAGE_STOP`), any other line decoded and classed by ``_RUNS``
    itself; a block's bytes counted from offsets, a notice and a session line never decoded, a
    person's turn and a reply decoded alone. A turn's block is digested once the next one is cut (the
    last may be one the writer has not finished), none before the file is known to hold a session
    start line (else it is refused, nothing digested)."""
    size = len(data)
    base = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    stats, file = d.stats, d.file
    new_person, new_block = d.state.new_person, d.state.new_block
    main = d.kind == "main"
    reply_kind = "subagent" if d.kind == "subagent" else "text"
    count, find, rfind, startswith = data.count, data.find, data.rfind, data.startswith
    decode = bytes.decode
    # the block being cut: its kind ("" for none), first line's offset, last line's end (its "\n")
    kind = ""
    start = end = 0
    cont = partial = False
    fence: tuple[str, int] | None = None
    blanks = 0
    session = ""
    index = 0
    counts: dict[str, int] = {}
    last_kind, last_end, last_span = "", 0, 0  # the block cut before
    n_blocks = n_bytes = 0
    # the digest
    fences: list[int] = []  # the open reply's fences: the offsets of their first and last lines
    pending: _Cut | None = None  # the last turn's block cut, not yet digested
    early: list[_Cut] = []  # turns' blocks before the first session line
    sessions = False
    line_at, line_no = 0, 1
    last_reply: tuple[int, int] | None = None  # the session's last reply (its offsets)

    def take(block: _Cut) -> None:
        """A person's turn or a reply: made a turn as ``PiecesDigester`` makes one of its record."""
        nonlocal last_reply
        shape, first, last, owner, place, marks, line_no = block
        time = _iso(owner)
        key = f"{owner or 'before'}/{place}"
        if shape == "person":
            said = _turn_text(lines_of(first, last))
            if last_reply is not None and copied(said, last_reply):
                return  # the architect's plan handed to the editor model
            role, turn_kind = _person_kind(said, "")
            if role == PERSON and main and said.strip() and (not time or new_person(time, said)):
                turns.append(Turn("person", said, file, line_no, key, time, turn_kind))
                stats.chars += len(said)
            return
        if not marks:  # no fence: the prose is the whole reply
            text = lines_of(first, last)
            if first == base and "\n" not in text and _MODELINE.match(text.strip()):
                return  # Aider's mode line, read as a notice
            said = _squeeze(text)
        else:
            said = prose_of(first, last, marks)
        last_reply = (first, last)
        prose = said.strip()
        if prose and new_block(key, said):
            turns.append(Turn("assistant", prose, file, line_no, key, time, reply_kind))
            stats.chars += len(prose)

    def lines_of(at: int, upto: int) -> str:
        """The text of the lines from offset ``at`` to ``upto`` (the ``\\n`` ending the last, or the file's
        end), as the reference's lines give it: decoded, Windows line ends as ``\\n``. Bytes cut only at a
        line's end decode as the whole would (a ``\\n`` is never part of a character)."""
        raw = data[at:upto]
        if upto < size and raw.endswith(b"\r"):
            raw = raw[:-1]
        text = decode(raw, "utf-8", "replace")
        return text.replace("\r\n", "\n") if "\r" in text else text

    def copied(said: str, reply: tuple[int, int]) -> bool:
        """:func:`_is_copy_of` the reply ``reply`` (its offsets), the reply decoded only when the turn
        starts with its first line (a reply's first line is never blank)."""
        first, last = reply
        nl = find(b"\n", first, last)
        head = lines_of(first, nl if nl >= 0 else last).strip()
        if head and not said.lstrip().startswith(head):
            return False
        return _is_copy_of(said, lines_of(first, last))

    def prose_of(first: int, last: int, marks: list[int]) -> str:
        """:func:`_split_reply`'s prose of the reply ``first``..``last`` (``marks``: the offsets of each of
        its fences' first and last lines), read in its bytes: an edit's fence and its file name line
        taken out, a shell command's fence too, any other fence kept; only the lines kept and each
        fence's first line and the one before it decoded."""
        kept: list[str] = []  # the prose so far: each item one line or more, joined by "\n"
        at = first  # the first line not yet taken
        after = last + 1  # where a line after the reply's last would start
        for k in range(0, len(marks), 2):
            opens = marks[k]
            if k + 1 < len(marks):
                closes = marks[k + 1]
                nl = find(b"\n", closes, last)
                past = nl + 1 if nl >= 0 else after  # the line after the fence's last
            else:  # a fence left open runs to the reply's end
                closes = past = after
            named = None
            if opens > at:  # the line before the fence is not the last fence's: a file name?
                before = (rfind(b"\n", first, opens - 1) + 1) or first
                named = _pathlike(lines_of(before, opens - 1))
            if named:  # an edit, its file name line with it
                upto = before
            else:
                upto = opens
                if (
                    find(b"\n<<<<<<< SEARCH", opens, closes - 1) < 0
                    and find(b"\n<<<<<<< ORIGINAL", opens, closes - 1) < 0
                ):
                    nl = find(b"\n", opens, last)
                    head_end = nl if nl >= 0 else last  # the end of the fence's first line
                    info = lines_of(opens, head_end).strip().lstrip("`~").strip().lower()
                    if info not in ("diff", "udiff", "patch") or find(b"\n+++ ", head_end, closes) < 0:
                        if info.split(" ")[0] not in _SHELL_INFO:
                            upto = past  # any other fence: kept whole
                        if upto > at:
                            kept.append(lines_of(at, upto - 1))
                        at = past
                        continue
            if upto > at:
                kept.append(lines_of(at, upto - 1))
            while kept:  # the blank lines before the edit go with it
                tail = kept[-1]
                stripped = tail.rstrip()
                if not stripped:
                    kept.pop()
                    continue
                cut = tail.find("\n", len(stripped))
                if cut >= 0:
                    kept[-1] = tail[:cut]
                break
            kept.append("")
            at = past
        if after > at:
            kept.append(lines_of(at, last))
        return _squeeze("\n".join(kept))

    def close() -> None:
        nonlocal kind, index, fence, cont, partial, last_kind, last_end, last_span, n_blocks, n_bytes
        nonlocal pending, last_reply
        if not kind:
            return
        index += 1
        last_span = end - start + (base if start == base else 0)
        n_blocks += 1
        n_bytes += last_span
        if kind == "person" or kind == "reply":
            block = (kind, start, end, session, index, fences, line_no)
            if not sessions:
                early.append(block)
            else:
                if pending is not None:
                    take(pending)
                pending = block
        elif kind == "session":
            if pending is not None:
                take(pending)
                pending = None
            last_reply = None
        last_kind, last_end = kind, end
        kind = ""
        fence = None
        cont = partial = False

    def open_(shape: str, pos: int) -> None:
        nonlocal kind, start, end, partial, cont, fences, line_at, line_no
        if kind:
            close()
        if shape != "notice":  # a turn's block: its first line's number (the lines before just read)
            line_no += count(b"\n", line_at, pos)
            line_at = pos
        cut = False
        if shape == "reply":
            fences = []
            if last_kind == "notice":
                cut = b"^C " in data[rfind(b"\n", 0, last_end) + 1 : last_end]  # INTERRUPT
        kind, start, end, partial, cont = shape, pos, pos, cut, False

    def header(pos: int, upto: int, time: str) -> None:
        """A session start line (:meth:`_Parser.feed`'s): whatever was open ends, even a fence."""
        nonlocal session, index, sessions, kind, start, end, blanks
        close()
        n = counts[time] = counts.get(time, 0) + 1
        session = time if n == 1 else f"{time}#{n}"
        index = -1
        if not sessions:
            sessions = True
            for held in early:
                take(held)
            early.clear()
        kind, start, end = "session", pos, upto
        close()
        blanks = 0

    def extend(pos: int, upto: int) -> None:
        """The lines ``pos``..``upto`` (whole) go on the open block: its last line the last not blank."""
        nonlocal end, blanks
        at, blank = upto, 0
        while at > pos:
            last = data[at - 2] if at - 2 >= pos else 10  # the line's last byte ("\n": it is empty)
            if last == 10:
                blank += 1
                at -= 1
                continue
            if 32 < last < 127:  # a visible character ends it: not blank
                end = at - 1
                blanks = blank
                return
            first = rfind(b"\n", pos, at - 1) + 1 or pos
            seg = data[first : at - 1]
            if seg.strip(_ASCII_BLANK) and (seg.isascii() or decode(seg, "utf-8", "replace").strip()):
                end = at - 1
                blanks = blank
                return
            blank += 1
            at = first
        blanks += blank

    def line(pos: int) -> int:
        """One line read on its own, classed as ``_RUNS`` classes it (the run loop of
        :meth:`_Parser.run` for a run of one line); the offset after it."""
        nonlocal end, blanks, fence
        nl = find(b"\n", pos)
        if nl < 0:
            upto = after = size
            raw = data[pos:]
        else:
            upto, after = nl, nl + 1
            raw = data[pos:nl]
            if raw.endswith(b"\r"):
                raw = raw[:-1]
        text = raw.decode("utf-8", "replace")
        m = _RUNS.match(text + "\n")
        shape = m.lastgroup if m is not None else "x"
        if shape == "o":
            plain(pos, upto, text)
        elif shape == "b":
            blanks += 1
            if fence is None and kind and kind != "reply" and not cont:
                close()
        elif shape == "x" or kind and cont:
            feed(pos, upto, text)
        elif fence is not None and not (shape == "p" and partial and blanks >= 2):
            end = upto
            blanks = 0
        else:
            fence = None
            run = "person" if shape == "p" else "notice"
            if kind != run or blanks:
                open_(run, pos)
            end = upto
            blanks = 0
        return after

    def plain(pos: int, upto: int, text: str) -> None:
        """:meth:`_Parser.plain` of one line."""
        nonlocal end, blanks, cont
        blanks = 0
        if kind and (fence is not None or kind == "reply"):
            end = upto
            return
        if kind and cont:
            end = upto
            if text.endswith("  "):
                cont = False
            return
        open_("reply", pos)
        end = upto

    def feed(pos: int, upto: int, line: str) -> None:
        """:meth:`_Parser.feed` of one line (in a file that keeps its two trailing spaces)."""
        nonlocal end, blanks, fence, cont
        m = HEADER.match(line) if line.startswith("# aider") else None
        if m is not None:
            header(pos, upto, m["time"])
            return
        blank = not line.strip()
        if fence is not None and kind:
            if _closes(fence, line):
                fence = None
                if kind == "reply":
                    fences.append(pos)
                end = upto
                blanks = 0
                return
            if not (partial and blanks >= 2 and _is_person(line, True)):
                if blank:
                    blanks += 1
                else:
                    end = upto
                    blanks = 0
                return
            fence = None
        if blank:
            blanks += 1
            if kind and kind != "reply" and not cont:
                close()
            return
        before, blanks = blanks, 0
        if kind and cont:
            end = upto
            if line.endswith("  "):
                cont = False
            if fence is None and line[:1] in ("`", "~", " ", "<"):
                fence = _fence_of(line)
            return
        if _is_person(line, True):
            if kind != "person" or before:
                open_("person", pos)
            end = upto
            return
        if _is_notice(line, True) or (line.startswith(">") and kind != "reply"):
            if kind != "notice" or before:
                open_("notice", pos)
            end = upto
            if not line.endswith("  "):
                cont = True
            return
        if kind != "reply":
            open_("reply", pos)
        end = upto
        if fence is None and line[:1] in ("`", "~", " ", "<"):
            fence = _fence_of(line)
            if fence is not None:
                fences.append(pos)

    crlf = b"\r" in data
    ends = -1  # in a message of several lines: the end of the next line ending in two spaces
    pos = base
    while pos < size:
        c = data[pos]
        if fence is not None:  # the lines that cannot end the fence, then the one that may
            m = _FENCE_STOP[fence[0][0], partial].search(data, pos - 1)
            body = m.start() + 1 if m is not None else rfind(b"\n", pos) + 1
            if body > pos:
                extend(pos, body)
                pos = body
                if pos >= size:
                    break
                c = data[pos]
            nl = find(b"\n", pos)
            if c == 35 or nl < 0:  # "#": a session line, or a person's after a reply cut short
                pos = line(pos)
                continue
            raw = data[pos:nl]
            if _closes(fence, decode(raw[:-1] if raw.endswith(b"\r") else raw, "utf-8", "replace")):
                fence = None  # _RUNS's x line, fed: it ends the fence
                if kind == "reply":
                    fences.append(pos)
            end = nl
            blanks = 0
            pos = nl + 1
            continue
        if cont:  # a message's lines that cannot end it, then the one that may
            if ends < pos:  # the next line ending in two spaces (its "\n"), else the file's end
                at = find(b"  \n", pos)
                ends = at + 2 if at >= 0 else size
                if crlf:
                    at = find(b"  \r\n", pos, ends)
                    ends = at + 3 if at >= 0 else ends
            body = rfind(b"\n", 0, ends) + 1 if ends < size else rfind(b"\n", pos) + 1
            m = _MESSAGE_STOP.search(data, pos - 1, body)
            if m is not None:
                body = m.start() + 1
            if body > pos:
                extend(pos, body)
                pos = body
            if pos < size:
                m = _BLANKS.match(data, pos)
                if m is not None:  # blank lines (two spaces too): the message goes on past them
                    blanks += count(b"\n", pos, m.end())
                    pos = m.end()
                else:
                    pos = line(pos)
            continue
        if c == 62 or c == 35 and startswith(b"#### ", pos):  # ">" or "#### ": notice or person lines
            m = (_NOTICE_RUN if c == 62 else _PERSON_RUN).match(data, pos)
            if m is None:  # its first line does not end in two spaces: in a reply, the reply's
                nl = find(b"\n", pos)
                if kind == "reply" and nl >= 0:
                    end = nl
                    blanks = 0
                    pos = nl + 1
                else:
                    pos = line(pos)
                continue
            run = "notice" if c == 62 else "person"
            if kind != run or blanks:  # open_(run, pos), inline
                if kind:
                    close()
                if c == 35:
                    line_no += count(b"\n", line_at, pos)
                    line_at = pos
                kind, start, partial, cont = run, pos, False, False
            upto = m.start(1)
            end = upto - 1
            blanks = 0
            pos = m.end()
            if pos > upto:  # blank lines end it
                blanks = count(b"\n", upto, pos)
                close()
            continue
        if c == 35:  # "#": a session line, a heading, a line of "####" not the person's
            if startswith(_HEAD_AT, pos):
                m = _HEADER_LINE.match(data, pos)
                if m is not None:  # the usual session line (and the blank lines after it), in its bytes
                    upto = m.start(2)
                    header(pos, upto - 1, m[1].decode())
                    pos = m.end()
                    if pos > upto:
                        blanks = count(b"\n", upto, pos)
                    continue
                nl = find(b"\n", pos)
                if nl > 0:
                    raw = data[pos:nl]
                    head = HEADER.match(decode(raw[:-1] if raw.endswith(b"\r") else raw, "utf-8", "replace"))
                    if head is not None:
                        header(pos, nl, head["time"])
                        pos = nl + 1
                        continue
            nl = find(b"\n", pos)
            if kind == "reply" and nl >= 0:  # a heading, a line of "#": the reply's
                end = nl
                blanks = 0
                pos = nl + 1
            else:
                pos = line(pos)
            continue
        if c in _BLANK_START:
            m = _BLANKS.match(data, pos)
            if m is not None:
                at = m.end()
                blanks += count(b"\n", pos, at)
                if kind and kind != "reply":
                    close()
                pos = at
                continue
        if c in _MARK_START or c == 32 and _FENCE_AFTER_SPACES.match(data, pos):
            nl = find(b"\n", pos)
            if kind != "reply" or nl < 0:
                pos = line(pos)
                continue
            # a reply's line of "`", "~" or "<": _RUNS's x line, fed: the reply goes on, a fence may open
            raw = data[pos:nl]
            fence = _fence_of(decode(raw[:-1] if raw.endswith(b"\r") else raw, "utf-8", "replace"))
            if fence is not None:
                fences.append(pos)
            end = nl
            blanks = 0
            pos = nl + 1
            continue
        if kind != "reply":  # plain text opens a reply (a line of other whitespace is looked at alone)
            if not 32 < c < 127 and _PLAIN.match(data, pos) is None:
                pos = line(pos)
                continue
            open_("reply", pos)
        # plain text and blank lines, up to the next line that may be neither
        m = _REPLY_END.search(data, pos)
        upto = m.start() + 1 if m is not None else rfind(b"\n", pos) + 1
        if upto > pos:
            extend(pos, upto)
            pos = upto
        if m is None and pos < size:
            pos = line(pos)
    close()
    if not n_blocks:
        return
    if not sessions:
        raise TranscriptError(f"{path}: not an Aider chat history (no '# aider chat started at' line)")
    if not data.endswith(b"\n") or last_kind == "reply" and not data.endswith((b"\n\n", b"\n\r\n")):
        n_blocks -= 1  # the last block, which the writer has not finished
        n_bytes -= last_span
        if last_kind == "person" or last_kind == "reply":
            pending = None
    if pending is not None:
        take(pending)
    stats.lines += n_blocks
    stats.bytes += n_bytes


def keep(buf: bytes, start: int, end: int) -> bool:
    """Every block may hold words the digest keeps."""
    return True


def digester(
    file: str,
    kind: FileKind,
    state: DigestState,
    stats: DigestStats,
    interrupts: bool,
    cheap: bool = True,
) -> PiecesDigester:
    """The digest of a records format: turns from :func:`pieces` (``formats.generic``)."""
    return PiecesDigester(pieces, ref, file, kind, state, stats, interrupts)
