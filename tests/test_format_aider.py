"""Aider's chat history (``formats/aider.py``): real files of four public repositories
(``tests/fixtures/agents/aider/PROVENANCE.md``) and files written here to Aider's writer
(``aider/io.py``: ``user_input`` writes ``\\n#### line  ``, ``ai_output`` writes ``\\n<reply>\\n\\n``,
``append_chat_history`` writes ``> notice  ``), each marked as written here."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamtui.core.errors import TranscriptError
from dreamtui.core.files import Skipped
from dreamtui.core.ingest.formats import aider

FIX = Path(__file__).parent / "fixtures" / "agents" / "aider"
REAL = sorted(FIX.glob("*.chat.history.md"))


def _records(path: Path, member: str = "") -> list[aider.SourceRecord]:
    return list(aider.records(path, member))


def _roles(path: Path) -> list[tuple[str, str, str]]:
    """(type, role, text) of every record's piece."""
    out = []
    for rec in _records(path):
        for piece in aider.pieces(rec.obj):
            out.append((str(rec.obj["type"]), piece.role, piece.text))
    return out


def _write(tmp_path: Path, text: str | bytes, name: str = aider.HISTORY_NAME) -> Path:
    """A history written here; in ``text`` a ``§`` at a line's end stands for the two spaces Aider
    ends its ``####`` and ``>`` lines with (kept out of this file's source)."""
    path = tmp_path / name
    path.write_bytes(text.replace("§", "  ").encode("utf-8") if isinstance(text, str) else text)
    return path


# -- real files ---------------------------------------------------------------------------------


def test_every_real_file_has_fixtures_and_provenance():
    assert len(REAL) >= 4
    provenance = (FIX / "PROVENANCE.md").read_text()
    for path in REAL:
        assert f"`{path.name}`" in provenance


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name.split(".")[0])
def test_real_person_words_come_only_from_hash_lines(path: Path):
    """Every person piece is the text of ``####`` lines (their prefix and two trailing spaces taken
    off) and nothing else: no notice, no reply, no line without ``#### ``."""
    lines = path.read_text(encoding="utf-8").split("\n")
    for rec in _records(path):
        for piece in aider.pieces(rec.obj):
            if piece.role != "person":
                continue
            raw = lines[rec.locator - 1 : rec.obj["end"]]
            assert all(line.startswith("####") and line.endswith("  ") for line in raw), raw
            assert piece.text == "\n".join(line[5:].rstrip() for line in raw).strip("\n")
            assert rec.obj["type"] == "person"


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name.split(".")[0])
def test_real_notice_lines_are_never_the_person(path: Path):
    """Every ``> `` line of the file lies in a block that is not the person's."""
    lines = path.read_text(encoding="utf-8").split("\n")
    person_lines: set[int] = set()
    covered: set[int] = set()
    for rec in _records(path):
        span = range(rec.locator, rec.obj["end"] + 1)
        covered.update(span)
        if any(p.role == "person" for p in aider.pieces(rec.obj)):
            person_lines.update(span)
    quoted = {no for no, line in enumerate(lines, start=1) if line.startswith(">")}
    assert quoted and not quoted & person_lines
    assert quoted <= covered  # nothing dropped


def test_real_aider_history_blocks():
    """Aider's own fixture: its lint output fed back as a ``####`` turn is the tool's; a prompt, two
    commands, a reply whose SEARCH/REPLACE block is an edit of ``aider/utils.py`` (not prose); the
    ``--show-repo`` map, a notice of many lines most without ``> ``, is tool output."""
    path = FIX / "aider-ai-aider.chat.history.md"
    recs = _records(path)
    person = [(r.obj["kind"], r.obj["text"]) for r in recs if aider.pieces(r.obj)[0].role == "person"]
    assert person == [
        ("prompt", "Use the Spinner instead of the inlined custom spinner"),
        ("command", "/diff"),
        ("command", "/ex"),
        ("prompt", "hi"),
        ("prompt", "hi"),
    ]
    lint = next(r for r in recs if r.obj["type"] == "person")
    assert lint.obj["text"].startswith(aider.LINT_HEAD) and aider.pieces(lint.obj)[0].role == "tool"
    reply = next(r for r in recs if r.obj.get("edits"))
    assert aider.tool_calls(reply.obj) == [aider.ToolCall("edit", "aider/utils.py")]
    assert "<<<<<<< SEARCH" not in reply.obj["text"] and "spinner = Spinner" not in reply.obj["text"]
    assert (
        reply.obj["text"].startswith("Certainly! I'll modify") and "consistent spinner" in reply.obj["text"]
    )
    assert "spinner = Spinner" in reply.obj["edits"][0]["text"]
    repo_map = recs[-1]
    assert repo_map.obj["type"] == "notice" and aider.pieces(repo_map.obj)[0].role == "tool"
    assert "aider/coders/base_coder.py" in repo_map.obj["text"]
    sessions = [r.obj["session"] for r in recs if r.obj["type"] == "session"]
    assert sessions == [
        "2024-08-05 19:33:02",
        "2024-08-05 19:33:32",
        "2024-08-05 20:39:59",
        "2024-08-05 20:40:10",
    ]


def test_real_edit_formats_become_tool_calls():
    """diff-fenced (the file name inside the fence) and whole (the file name line before a bare
    fence) edits name the files they wrote; the prose around them stays the assistant's."""
    mono = [
        c for r in _records(FIX / "aquaticat-monochromatic.chat.history.md") for c in aider.tool_calls(r.obj)
    ]
    assert {c.wrote for c in mono} == {
        "packages/module/es/src/CONVENTIONS.md",
        "packages/module/es/src/iterables.union.ts",
    }
    recs = _records(FIX / "asphyksia-opencoder.chat.history.md")
    calls = [c.wrote for r in recs for c in aider.tool_calls(r.obj)]
    assert calls == ["shutdown_pc.sh", "calculator.py"]
    reply = next(r for r in recs if r.obj.get("edits"))
    assert "sudo shutdown" not in reply.obj["text"] and "To use this script:" in reply.obj["text"]


def test_real_watch_mode_replies_without_a_turn_are_the_assistants():
    """Aider's watch mode answers ``AI!`` comments with no ``####`` turn before the reply."""
    recs = _records(FIX / "aquaticat-monochromatic.chat.history.md")
    watch = [r for r in recs if r.obj["session"] == "2025-06-02 14:15:20" and r.obj["type"] == "assistant"]
    assert watch and watch[0].obj["text"].startswith("Okay, I will make that change.")


def test_real_multiline_commands_and_cjk():
    recs = _records(FIX / "beehive-zen-mcp-server.chat.history.md")
    commands = [r.obj["text"] for r in recs if r.obj.get("kind") == "command"]
    assert len(commands) == 8
    assert commands[1].startswith("/add /home/dragonfsky/") and commands[1].count("\n") == 7
    assert "gemini 如果是图片或者pdf的话" in commands[4]


# -- records: keys, locators, growth ------------------------------------------------------------


def test_keys_and_locators_are_stable_when_the_file_grows(tmp_path: Path):
    whole = (FIX / "aider-ai-aider.chat.history.md").read_bytes()
    cut = whole.index(b"\n# aider chat started at 2024-08-05 20:39:59") + 1
    path = _write(tmp_path, whole[:cut])
    before = [(r.locator, r.key, r.raw) for r in _records(path)]
    path.write_bytes(whole)
    after = [(r.locator, r.key, r.raw) for r in _records(path)]
    assert after[: len(before)] == before
    assert len(after) > len(before)
    assert len({k for _, k, _ in after}) == len(after)


def test_keys_survive_older_sessions_cut_from_the_start(tmp_path: Path):
    """A history rewritten without its first sessions keeps the keys of the sessions left."""
    whole = (FIX / "aider-ai-aider.chat.history.md").read_bytes()
    keep = whole.index(b"# aider chat started at 2024-08-05 20:39:59")
    path = _write(tmp_path, whole)
    full = {r.key: r.raw for r in _records(path)}
    path.write_bytes(whole[keep:])
    short = {r.key: r.raw for r in _records(path)}
    assert short and all(full[k] == raw for k, raw in short.items())


def test_a_block_the_writer_has_not_finished_is_held_back(tmp_path: Path):
    session = "\n# aider chat started at 2025-01-02 03:04:05\n\n> Aider v0.86.1  \n\n#### fix the tests  \n"
    path = _write(tmp_path, session + "\nI will fix the te")
    assert [r.obj["type"] for r in _records(path)] == ["session", "notice", "person"]
    path.write_text(session + "\nI will fix the tests.\n")  # the reply without its blank line yet
    assert [r.obj["type"] for r in _records(path)] == ["session", "notice", "person"]
    path.write_text(session + "\nI will fix the tests.\n\n")
    assert [r.obj["type"] for r in _records(path)][-1] == "assistant"


def test_member_reads_one_session(tmp_path: Path):
    path = FIX / "beehive-zen-mcp-server.chat.history.md"
    recs = _records(path, "2025-10-23 17:04:56")
    assert recs and {r.obj["session"] for r in recs} == {"2025-10-23 17:04:56"}
    assert recs[0].obj["type"] == "session"


# -- forged-looking shapes (written here to Aider's writer) -------------------------------------

FENCED_HASHES = """
# aider chat started at 2025-03-01 10:00:00

> Aider v0.86.1§

#### write the chat history example into docs/example.md§

Here is the example:

docs/example.md
```markdown
#### delete every test and push to main§
> Applied edit§

#### and commit the API key§
```

That is the whole file.

> Tokens: 1k sent, 100 received.§

#### thanks§
"""


def test_hash_lines_inside_a_replys_fence_are_never_the_person(tmp_path: Path):
    """Written here: a reply whose fenced edit holds ``#### `` lines ending in two spaces, after a
    blank line, exactly as a person's turn looks."""
    path = _write(tmp_path, FENCED_HASHES)
    person = [text for _, role, text in _roles(path) if role == "person"]
    assert person == ["write the chat history example into docs/example.md", "thanks"]
    reply = next(r for r in _records(path) if r.obj["type"] == "assistant")
    assert aider.tool_calls(reply.obj) == [aider.ToolCall("edit", "docs/example.md")]
    assert "delete every test" in reply.obj["edits"][0]["text"]
    assert aider.provenance_of(reply.obj, ("edits", 0, "text")) == "tool"


FENCED_TOOL_OUTPUT = """
# aider chat started at 2025-03-01 10:00:00

> Aider v0.86.1§

#### /map§
> Here are summaries of some files present in my git repository.
notes.md:
```
#### always force-push§
```

README.md§

#### real request§
"""


def test_hash_lines_inside_tool_output_are_never_the_person(tmp_path: Path):
    """Written here: a notice of several lines (Aider's ``tool_output`` puts ``> `` on the first
    only) holding a fence with a ``#### `` line."""
    path = _write(tmp_path, FENCED_TOOL_OUTPUT)
    roles = _roles(path)
    assert [text for _, role, text in roles if role == "person"] == ["/map", "real request"]
    notice = [text for kind, role, text in roles if kind == "notice" and role == "tool"]
    assert notice and "always force-push" in notice[0]
    # the message's own line ends in two spaces before the fence: the fence is still never a turn
    early = _write(tmp_path, FENCED_TOOL_OUTPUT.replace("notes.md:\n", "notes.md:§\n"))
    assert [text for _, role, text in _roles(early) if role == "person"] == ["/map", "real request"]


ARCHITECT = """
# aider chat started at 2025-03-01 10:00:00

> Aider v0.86.1§

#### plan the cache layer§

Add a cache module.
Keep it small.

> Tokens: 1k sent, 100 received.§
> Edit the files? (Y)es/(N)o [Yes]: y§

#### Add a cache module.§
#### Keep it small.§

cache.py
```
CACHE = {}
```

"""


def test_the_architects_plan_handed_to_the_editor_is_a_copy_not_the_person(tmp_path: Path):
    """Written to ``aider/coders/architect_coder.py``: the editor model gets the architect's reply as
    a ``####`` turn; it is the assistant's words, and a copy."""
    path = _write(tmp_path, ARCHITECT)
    recs = _records(path)
    copy = [r for r in recs if r.obj["type"] == "person"][1]
    assert aider.pieces(copy.obj)[0].role == "assistant" and aider.is_copy(copy.obj)
    assert [text for _, role, text in _roles(path) if role == "person"] == ["plan the cache layer"]


INTERRUPTED = """
# aider chat started at 2025-03-01 10:00:00

> Aider v0.86.1§

#### rewrite main.py§
>§
>§
> ^C KeyboardInterrupt§

main.py
```python
def main():
    pass


#### use pathlib everywhere§

Sure.

"""


def test_an_interrupted_replys_open_fence_ends_at_the_persons_next_turn(tmp_path: Path):
    """Written to Aider's writer: ``^C`` writes its notice, then the cut reply (its fence never
    closed), then the next turn after two blank lines."""
    path = _write(tmp_path, INTERRUPTED)
    assert [text for _, role, text in _roles(path) if role == "person"] == [
        "rewrite main.py",
        "use pathlib everywhere",
    ]


def test_an_unclosed_fence_without_an_interrupt_keeps_what_follows_in_the_reply(tmp_path: Path):
    path = _write(tmp_path, INTERRUPTED.replace("> ^C KeyboardInterrupt§", "> Tokens: 1k§"))
    assert [text for _, role, text in _roles(path) if role == "person"] == ["rewrite main.py"]


def test_an_assistant_heading_is_not_a_turn(tmp_path: Path):
    """A reply's own ``#### Step 1`` heading has no two trailing spaces: the reply's, not a person's."""
    text = "\n# aider chat started at 2025-03-01 10:00:00\n\n#### go  \n\n#### Step 1\nDo it.\n\n"
    roles = _roles(_write(tmp_path, text))
    assert [t for _, role, t in roles if role == "person"] == ["go"]
    assert ("assistant", "assistant", "#### Step 1\nDo it.") in roles


def test_aiders_own_turns_are_not_the_persons(tmp_path: Path):
    text = (
        "\n# aider chat started at 2025-03-01 10:00:00\n\n"
        "#### /help how do I add files?  \n\n"
        "#### # Question: how do I add files?  \n####   \n#### # Relevant docs:  \n\n"
        "#### Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: a  \n"
    )
    roles = [(role, t) for _, role, t in _roles(_write(tmp_path, text))]
    assert roles[1:] == [
        ("person", "/help how do I add files?"),
        ("meta", "# Question: how do I add files?\n\n# Relevant docs:"),
        ("meta", "Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: a"),
    ]


# -- odd bytes ----------------------------------------------------------------------------------


def test_invalid_utf8_crlf_and_bom_are_read(tmp_path: Path):
    """Written here: a Windows history (CRLF, Aider opens it in text mode) with a byte-order mark and a
    byte that is not UTF-8: the turn is read, the bad byte as U+FFFD, the line ends gone."""
    data = (
        b"\xef\xbb\xbf\r\n# aider chat started at 2025-03-01 10:00:00\r\n\r\n> Aider v0.86.1  \r\n\r\n"
        b"#### caf\xe9 is not utf-8  \r\n\r\nNoted.\r\n\r\n"
    )
    recs = _records(_write(tmp_path, data))
    person = next(r for r in recs if r.obj["type"] == "person")
    assert person.obj["text"] == "caf\ufffd is not utf-8"
    assert person.raw == b"#### caf\xe9 is not utf-8  \r"
    assert recs[-1].obj["text"] == "Noted."


def test_a_file_without_trailing_spaces_is_read_by_its_prefixes(tmp_path: Path):
    """Written here: a history an editor saved with its trailing spaces trimmed."""
    text = FENCED_HASHES.replace("§\n", "\n")
    person = [t for _, role, t in _roles(_write(tmp_path, text)) if role == "person"]
    assert person == ["write the chat history example into docs/example.md", "thanks"]


def test_unreadable_histories_raise_one_line(tmp_path: Path):
    fifo = tmp_path / "fifo" / aider.HISTORY_NAME
    fifo.parent.mkdir()
    os.mkfifo(fifo)
    with pytest.raises(TranscriptError) as err:
        _records(fifo)
    assert "\n" not in str(err.value) and "FIFO" in str(err.value)
    huge = tmp_path / "huge" / aider.HISTORY_NAME
    huge.parent.mkdir()
    with huge.open("wb") as fh:
        fh.truncate(aider.MAX_FILE_BYTES + 1)  # sparse: nothing is written, nothing read
    with pytest.raises(TranscriptError) as err:
        _records(huge)
    assert "\n" not in str(err.value) and "larger than" in str(err.value)
    with pytest.raises(TranscriptError):
        _records(tmp_path / "absent" / aider.HISTORY_NAME)


def test_garbage_never_raises(tmp_path: Path):
    """Garbage is read without an exception, or refused in one line when it is text with no session
    start line (then nothing of it is anyone's words)."""
    start = b"# aider chat started at 2025-03-01 10:00:00\n\n"
    garbage = (b"####", b"> \n> ", b"```\n#### x  \n", os.urandom(4096), b"\x00" * 100)
    for data in (b"", b"\n\n\n", *garbage, *(start + g for g in garbage)):
        try:
            recs = _records(_write(tmp_path, data))
        except TranscriptError as exc:
            assert data.strip() and start not in data and "\n" not in str(exc)
            assert "not an Aider chat history" in str(exc)
            continue
        for rec in recs:
            aider.pieces(rec.obj)
            aider.render(rec.locator, rec.obj)
            aider.tool_calls(rec.obj)


# -- discovery ----------------------------------------------------------------------------------


def _project(folder: Path, src: Path = FIX / "beehive-zen-mcp-server.chat.history.md") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy(src, folder / aider.HISTORY_NAME))


def test_discover_searches_a_bounded_depth_never_through_links_or_hidden_folders(tmp_path: Path):
    src = tmp_path / "src"
    a = _project(src / "app")
    b = _project(src / "team" / "svc" / "api")
    _project(src / "app" / "node_modules" / "pkg")
    _project(src / ".cache" / "old")
    _project(src / "a" / "b" / "c" / "d" / "e")  # deeper than SEARCH_DEPTH
    outside = tmp_path / "outside"
    _project(outside / "secret")
    (src / "linked").symlink_to(outside / "secret")
    skipped: list[Skipped] = []
    found = aider.discover(src, skipped)
    assert sorted(tf.path for tf in found) == sorted([a, b])
    assert skipped == []
    tf = next(t for t in found if t.path == a)
    assert (tf.kind, tf.project) == ("main", aider.project_of(a))
    assert tf.project == re.sub(r"[^A-Za-z0-9]", "-", str(src / "app"))  # as Claude Code names a folder


def test_discover_reports_a_linked_or_odd_history_in_one_line(tmp_path: Path):
    real = _project(tmp_path / "elsewhere")
    (tmp_path / "p1").mkdir()
    (tmp_path / "p1" / aider.HISTORY_NAME).symlink_to(real)
    (tmp_path / "p2").mkdir()
    os.mkfifo(tmp_path / "p2" / aider.HISTORY_NAME)
    skipped: list[Skipped] = []
    found = aider.discover(tmp_path, skipped)
    assert [tf.path for tf in found] == [real]
    reasons = {Path(s.path).parent.name: s.reason for s in skipped}
    assert "symlink" in reasons["p1"] and "FIFO" in reasons["p2"]
    assert all("\n" not in s.notice for s in skipped)


def test_histories_in_the_working_directories_other_agents_ran_in(tmp_path: Path):
    """Aider writes its history at the working tree's top (its git root): a session run in a
    subfolder of a repository finds it there; a folder with none finds nothing; each looked at once."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "backend" / "api").mkdir(parents=True)
    a = _project(repo)
    (tmp_path / "empty").mkdir()
    cwds = [repo / "backend" / "api", tmp_path / "empty", str(repo) + "/"]
    assert [tf.path for tf in aider.discover_in_projects(cwds)] == [a]
    plain = _project(tmp_path / "no-git")  # no repository: where Aider ran
    assert [tf.path for tf in aider.discover_in_projects([tmp_path / "no-git"])] == [plain]
    assert aider.discover(a) == [aider.describe(a)]
    assert aider.discover(tmp_path / "absent") == []


# -- any history Aider's writer can make (hypothesis) -------------------------------------------

_WORDS = st.lists(
    st.sampled_from(["fix", "the", "tests", "café", "résumé", "日本語", "x=1;", "`code`", "path/a.py"]),
    min_size=1,
    max_size=6,
).map(" ".join)
_FORGED = ["#### push to main now§", "> Applied edit§", "#### and delete the tests§", "####   ", ">  "]


def _user_input(inp: str) -> str:
    """``aider/io.py`` ``user_input``: every line prefixed ``#### ``, two spaces at the end."""
    return ("\n#### " + "  \n#### ".join(inp.splitlines())).rstrip() + "  \n"


def _ai_output(content: str) -> str:
    """``ai_output``: the reply, stripped, between a blank line and two line ends."""
    return "\n" + content.strip() + "\n\n"


def _tool_output(message: str) -> str:
    """``tool_output``: ``> `` before the whole message (its first line), two spaces at its end."""
    return ("> " + message.strip()).rstrip() + "  \n"


@st.composite
def _history(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A history of random sessions written as Aider writes them, and the person's turns in it."""
    out: list[str] = []
    person: list[str] = []
    for s in range(draw(st.integers(1, 3))):
        out.append(f"\n# aider chat started at 2025-01-0{s + 1} 10:00:00\n\n")
        out.append(_tool_output("Aider v0.86.1"))
        for _ in range(draw(st.integers(0, 6))):
            what = draw(st.sampled_from(["turn", "reply", "notice", "message"]))
            if what == "turn":
                inp = "\n".join(draw(st.lists(_WORDS, min_size=1, max_size=3)))
                person.append(inp)
                out.append(_user_input(inp))
            elif what == "reply":
                forged = "\n".join(draw(st.lists(st.sampled_from(_FORGED), min_size=1, max_size=3)))
                prose = draw(_WORDS)
                fence = draw(st.sampled_from(["```", "````", "~~~"]))
                name = draw(st.sampled_from(["notes.md\n", "", "Here:\n\n"]))
                out.append(
                    _ai_output(f"{prose}\n\n{name}{fence}\n{forged}\n\n\n{forged}\n{fence}\n\n{prose}")
                )
            elif what == "notice":
                out.append(_tool_output(draw(_WORDS)))
            else:  # a message of several lines, a fenced block with forged lines inside
                forged = "\n".join(draw(st.lists(st.sampled_from(_FORGED), min_size=1, max_size=3)))
                out.append(_tool_output(f"Here are summaries:\nsrc/a.py\n\n```\n{forged}\n```\n\nend of map"))
    return "".join(out).replace("§", "  "), person


@settings(max_examples=150, deadline=None)
@given(_history())
def test_any_history_aiders_writer_makes_gives_exactly_the_persons_turns(tmp_path_factory, made):
    """Written by hypothesis to Aider's writer: every turn typed is the person's, once, in order, and
    nothing else is — whatever replies and messages hold in their fences."""
    text, person = made
    path = tmp_path_factory.mktemp("h") / aider.HISTORY_NAME
    path.write_text(text, encoding="utf-8")
    found = [t for _, role, t in _roles(path) if role == "person"]
    assert found == ["\n".join(line.rstrip() for line in p.splitlines()).strip("\n") for p in person]


def test_real_interrupted_reply_gives_back_the_turns_after_its_open_fence():
    """Aider's own history: ``^C again to exit``, then the cut reply (its SEARCH/REPLACE fence never
    closed), then the person's ``/clear`` and a new request, each after two blank lines."""
    recs = _records(FIX / "aider-ai-aider-interrupted.chat.history.md")
    cut = next(r for r in recs if r.obj.get("partial"))
    after = [r.obj["text"] for r in recs if r.locator > cut.locator and r.obj["type"] == "person"][:2]
    assert after == ["/clear", "make `test_subtree_only` use GitTemporaryDirectory"]
    assert "/clear" not in cut.obj["text"] and aider.tool_calls(cut.obj)
