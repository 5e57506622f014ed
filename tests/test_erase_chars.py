"""Erase characters in a person's keystrokes: a terminal agent (the Cursor CLI, ...) can store BACKSPACE
(``\\x08``) and DEL (``\\x7f``) after the character each erased. The digest (what a model reads and
``dreamtui digest`` shows) gives the text as it was on the screen; quote verification accepts a quote
read with the erase characters applied or removed, and nothing else; the evidence view still shows the
raw characters. Hand-written sessions: a Claude Code JSON-lines file (the three ways a JSON writer
stores them) and a Cursor CLI ``store.db``.
"""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

from click.testing import CliRunner
from fakes.agent_dbs import build_cursor_store
from rich.text import Text

from dreamtui.cli.main import cli
from dreamtui.core.extract.base import ExtractContext
from dreamtui.core.extract.prompt import split_digest, user_message
from dreamtui.core.gate.verify import verify_quote, verify_quotes
from dreamtui.core.ingest.digest import digest_file, digest_session
from dreamtui.core.ingest.formats import cursor
from dreamtui.services.evidence import read_window
from dreamtui.tui.widgets.evidence import render_records

SESSION = "5d1c0f3a-1111-4222-8333-944455556666"
BASE = {"sessionId": SESSION, "cwd": "/home/kim/src/parser", "isSidechain": False}

# the person's message as stored: typed "l", erased it, typed "odens"; "compila", two DELs, "la"
SAID = "o sistema recebe l\x08odens em linguagem natural e compila\x7f\x7fla tudo sozinho, sem perguntar."
SEEN = "o sistema recebe odens em linguagem natural e compila tudo sozinho, sem perguntar."
TYPED = "o sistema recebe lodens em linguagem natural e compilala tudo sozinho, sem perguntar."
# a tool's output drawn with backspaces: its words read only once they are applied
TOOL = "status: the build cache is XXX\x08\x08\x08never cleaned automatically by the nightly job"
TOOL_SEEN = "the build cache is never cleaned automatically by the nightly job"
# a run of DELs longer than the word it erased
FRIDAY = "never deploy on fridays\x7f\x7f\x7f\x7f\x7f\x7f\x7fFridays without asking the on-call person first"
FRIDAY_SEEN = "never deploy on Fridays without asking the on-call person first"


def rec(i: int, kind: str, **fields: object) -> dict[str, object]:
    return {
        **BASE,
        "type": kind,
        "uuid": f"00000000-0000-4000-8000-{i:012d}",
        "timestamp": f"2026-11-28T10:{i:02d}:00.000Z",
        **fields,
    }


def claude_session(folder: Path) -> Path:
    """Four records, the erase characters stored the three ways JSON writers store them: Claude Code's
    own (``\\b``, DEL raw), Go's (``\\u0008``) and Python's ``ensure_ascii`` (``\\b``, ``\\u007f``)."""
    said = rec(1, "user", message={"role": "user", "content": SAID})
    reply = rec(
        2,
        "assistant",
        message={
            "id": "msg_1",
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Understood; I match words with the regex \\bodens\\b from now on."},
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make status"}},
            ],
        },
    )
    tool = rec(
        3,
        "user",
        message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": TOOL}]},
    )
    friday = rec(4, "user", message={"role": "user", "content": FRIDAY})
    lines = [
        json.dumps(said, ensure_ascii=False),
        json.dumps(reply, ensure_ascii=False),
        json.dumps(tool, ensure_ascii=False).replace("\\b", "\\u0008"),
        json.dumps(friday, ensure_ascii=True),
    ]
    assert "\x7f" in lines[0] and "\\b" in lines[0]
    assert "\\u0008" in lines[2] and "\\u007f" in lines[3]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SESSION}.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def test_as_typed_applies_each_erase_to_the_character_before_it() -> None:
    from dreamtui.core.text import as_typed, without_erase

    assert as_typed(SAID) == SEEN
    assert without_erase(SAID) == TYPED
    assert as_typed(FRIDAY) == FRIDAY_SEEN
    assert as_typed("ompiiiiiiiiiiiiiiiiiiila" + "\x7f" * 48 + "cao") == "cao"  # never past the start
    assert as_typed("\x08\x08ab\x08c") == "ac"
    assert as_typed("libege\x7fgemma") == "libeggemma"
    plain = "no erase here \x1b[31m"
    assert as_typed(plain) is plain and without_erase(plain) is plain

    def one_key_at_a_time(text: str) -> str:
        screen: list[str] = []
        for ch in text:
            if ch in "\x08\x7f":
                if screen:
                    screen.pop()
            else:
                screen.append(ch)
        return "".join(screen)

    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice("ab é\n\x08\x7f") for _ in range(rng.randint(0, 40)))
        assert as_typed(text) == one_key_at_a_time(text), repr(text)


def test_a_claude_code_quote_verifies_read_either_way_and_nothing_else(tmp_path: Path) -> None:
    path = claude_session(tmp_path / "-home-kim-src-parser")
    for quote, line, prov in (
        ("o sistema recebe odens em linguagem natural e compila tudo sozinho", 1, "person"),  # applied
        ("o sistema recebe lodens em linguagem natural e compilala tudo sozinho", 1, "person"),  # removed
        (FRIDAY_SEEN, 4, "person"),  # a run of DELs, written \\u007f
        ("never deploy on fridaysFridays without asking the on-call person", 4, "person"),
    ):
        got = verify_quote(quote, [path])
        assert got.verified, (quote, got.reason)
        assert [(m.line, m.provenance) for m in got.matches] == [(line, prov)]
    for altered in (
        "o sistema recebe modens em linguagem natural e compila tudo sozinho",  # a letter changed
        "o sistema recebe lodens em linguagem natural e compila tudo sozinho",  # the two readings mixed
        "o sistema recebe odens em linguagem natural e compila tudo depressa",  # a word changed
        "never deploy on friday without asking the on-call person first",
    ):
        got = verify_quote(altered, [path])
        assert not got.verified and got.reason and got.reason.startswith("not found"), altered


def test_words_that_read_only_after_erasing_in_a_tool_output_are_the_tools(tmp_path: Path) -> None:
    path = claude_session(tmp_path / "-home-kim-src-parser")
    got = verify_quote(TOOL_SEEN, [path])
    assert got.verified
    assert [(m.line, m.provenance) for m in got.matches] == [(3, "tool")]
    assert got.best is not None and got.best.provenance == "tool"  # never promoted to the person's


def test_the_batch_index_gives_what_one_by_one_gives(tmp_path: Path) -> None:
    """With 20 quotes or more the gate reads each file into an index: the erase readings are found
    the same way, once per batch."""
    path = claude_session(tmp_path / "-home-kim-src-parser")
    quotes = [
        "o sistema recebe odens em linguagem natural e compila tudo sozinho",
        "o sistema recebe lodens em linguagem natural e compilala tudo sozinho",
        "o sistema recebe lodens em linguagem natural e compila tudo sozinho",
        TOOL_SEEN,
        FRIDAY_SEEN,
        "Understood; I match words with the regex \\bodens\\b from now on.",
    ] + [f"a quote that is in no record at all, number {n}" for n in range(20)]
    batch = verify_quotes(quotes, [path])
    single = [verify_quote(q, [path]) for q in quotes]
    assert [(v.verified, v.matches, v.reason) for v in batch] == [
        (v.verified, v.matches, v.reason) for v in single
    ]
    assert [v.verified for v in batch[:6]] == [True, True, False, True, True, True]


def test_the_digest_and_the_model_request_show_the_text_as_the_person_saw_it(tmp_path: Path) -> None:
    path = claude_session(tmp_path / "-home-kim-src-parser")
    fast, exact = digest_file(path), digest_file(path, cheap=False)
    assert fast.turns == exact.turns
    person = [t.text for t in fast.turns if t.role == "person"]
    assert person == [SEEN, FRIDAY_SEEN]
    assert digest_session([path]).turns == fast.turns
    for part in split_digest(fast, 100_000):
        sent = user_message(fast, ExtractContext(project="parser"), part)
        assert SEEN in sent and FRIDAY_SEEN in sent
        assert "\x08" not in sent and "\x7f" not in sent
    shown = CliRunner().invoke(cli, ["digest", str(path)])
    assert shown.exit_code == 0, shown.output
    assert f"  {SEEN}" in shown.output and f"  {FRIDAY_SEEN}" in shown.output
    assert "\\x08" not in shown.output and "\\x7f" not in shown.output
    as_json = CliRunner().invoke(cli, ["digest", str(path), "--json"])
    assert [t["text"] for t in json.loads(as_json.output)["turns"] if t["role"] == "person"] == person


def test_the_evidence_view_still_shows_the_raw_characters(tmp_path: Path) -> None:
    path = claude_session(tmp_path / "-home-kim-src-parser")
    quote = "o sistema recebe odens em linguagem natural e compila tudo sozinho"
    got = verify_quote(quote, [path])
    assert got.verified and got.best is not None
    window = read_window(path, got.best.line)
    shown = "\n".join(t.plain for t in render_records(window, got.best.line, quote))
    assert "recebe l␈odens em linguagem natural e compila␡␡la tudo" in shown
    assert "is XXX␈␈␈never cleaned" in shown  # the tool's output too, unfolded or not
    assert "\x08" not in shown and "\x7f" not in shown


def _highlighted(texts: list[Text]) -> list[str]:
    return [t.plain[s.start : s.end] for t in texts for s in t.spans if s.style == "black on yellow"]


def test_the_evidence_view_highlights_the_stretch_a_quote_was_read_from(tmp_path: Path) -> None:
    """The record is shown raw; a quote that lies in it only with its erase characters applied or
    removed is highlighted over the stretch it was read from, erased characters and ␈ ␡ included. A
    quote verification refuses (the readings mixed) is not highlighted."""
    path = claude_session(tmp_path / "-home-kim-src-parser")
    whole = "o sistema recebe l␈odens em linguagem natural e compila␡␡la tudo sozinho"
    for quote in (
        "o sistema recebe odens em linguagem natural e compila tudo sozinho",  # applied
        "o sistema recebe lodens em linguagem natural e compilala tudo sozinho",  # removed
    ):
        got = verify_quote(quote, [path])
        assert got.verified and got.best is not None
        window = read_window(path, got.best.line)
        assert _highlighted(render_records(window, got.best.line, quote)) == [whole]
    friday = verify_quote(FRIDAY_SEEN, [path]).best
    assert friday is not None
    shown = _highlighted(render_records(read_window(path, friday.line), friday.line, FRIDAY_SEEN))
    assert shown == ["never deploy on fridays␡␡␡␡␡␡␡Fridays without asking the on-call person first"]
    mixed = "o sistema recebe lodens em linguagem natural e compila tudo sozinho"
    assert _highlighted(render_records(read_window(path, 1), 1, mixed)) == []


# -- Cursor CLI -------------------------------------------------------------------------------------

CWD = "/home/dev/proj"
AGENT = "4f1c2a9e-6d3b-4c8e-9a57-2b1e0d7c6f34"
CURSOR_SAID = "recebe l\x08odens em linguagem natural e devolve o plano, sem executar nada"
CURSOR_TOOL = "migrations: 0041 ok\nnote: the index nama\x08e must stay under 30 characters on this server"


def cursor_chat(root: Path) -> Path:
    """The fixture chat and two messages more, written as Cursor (JavaScript) writes them: BACKSPACE
    as ``\\b``, DEL raw. The person's words are inside ``<user_query>``, after attached context that
    holds an erase character too."""
    store = build_cursor_store(root / cursor.cwd_hash(CWD) / AGENT)
    said = {
        "role": "user",
        "content": [
            {
                "type": "text",
                "text": f"<user_info>\nShell: /bin/bash\x7f\x7f\x7f\x7fzsh and the login shell is zsh\n</user_info>\n"
                f"<user_query>\n{CURSOR_SAID}\n</user_query>",
            }
        ],
    }
    tool = {
        "role": "tool",
        "id": "toolu_09",
        "content": [
            {
                "type": "tool-result",
                "toolCallId": "toolu_09",
                "toolName": "run_terminal_cmd",
                "result": CURSOR_TOOL,
            }
        ],
    }
    conn = sqlite3.connect(store)
    for key, obj in (("said", said), ("tool", tool)):
        conn.execute("INSERT INTO blobs VALUES (?, ?)", (key, json.dumps(obj, ensure_ascii=False).encode()))
    conn.commit()
    conn.close()
    return store


def test_a_cursor_quote_verifies_read_either_way_with_its_provenance(tmp_path: Path) -> None:
    store = cursor_chat(tmp_path)
    assert [r.locator for r in cursor.records(store)][-2:] == [9, 10]
    for quote, locator, prov in (
        ("recebe odens em linguagem natural e devolve o plano", 9, "person"),
        ("recebe lodens em linguagem natural e devolve o plano", 9, "person"),
        ("the index name must stay under 30 characters on this server", 10, "tool"),
        ("the index namae must stay under 30 characters on this server", 10, "tool"),
        ("Shell: /bin/zsh and the login shell is zsh", 9, "meta"),  # attached context, not the person's
    ):
        got = verify_quote(quote, [store])
        assert got.verified, (quote, got.reason)
        assert [(m.line, m.provenance) for m in got.matches] == [(locator, prov)]
    for altered in (
        "recebe modens em linguagem natural e devolve o plano",
        "recebe odens em linguagem natural e devolve o projeto",
        "the index names must stay under 30 characters on this server",
    ):
        assert not verify_quote(altered, [store]).verified, altered


def test_a_cursor_digest_shows_the_erased_text_and_the_evidence_the_raw(tmp_path: Path) -> None:
    store = cursor_chat(tmp_path)
    fast, exact = digest_file(store), digest_file(store, cheap=False)
    assert fast.turns == exact.turns and fast.stats == exact.stats
    person = [t.text for t in fast.turns if t.role == "person"]
    assert person[-1] == "recebe odens em linguagem natural e devolve o plano, sem executar nada"
    assert not any("\x08" in t.text or "\x7f" in t.text for t in fast.turns)
    got = verify_quote("recebe odens em linguagem natural e devolve o plano", [store])
    assert got.best is not None
    window = read_window(store, got.best.line)
    shown = "\n".join(t.plain for t in render_records(window, got.best.line, "", fold=False))
    assert "recebe l␈odens em linguagem" in shown and "index nama␈e must" in shown


# -- what the second reading never lets through -------------------------------------------------------


def test_an_altered_quote_or_someone_elses_words_never_pass_as_the_persons(tmp_path: Path) -> None:
    """Step 5 adds two readings of a string, nothing else: a quote with a word inserted, or formed by
    erasing what the record never erased, is refused; words of a meta record, a sub-agent, the
    assistant or a tool keep their provenance, and a quote that runs from a rejection's boilerplate
    into the person's reason (the reason's backspaces eating the marker) is the tool's."""
    from dreamtui.core.ingest.formats.claude_code import REJECTION_PREFIX

    path = claude_session(tmp_path / "-home-kim-src-parser")
    reason = " " + "\x08" * 10 + "please keep the old migration files in the repository forever"
    rejected = REJECTION_PREFIX + reason
    extra = [
        rec(5, "user", isMeta=True, message={"role": "user", "content": "it says XY\x08\x08the harness restarted the build twice today"}),
        rec(6, "user", message={"role": "user", "content": "I love the old parser more than the new one, keep it around"}),
        rec(7, "assistant", message={"id": "m7", "role": "assistant", "content": [{"type": "text", "text": "we shoul\x7fld keep the old parser for one more release"}]}),
        {**rec(8, "user", message={"role": "user", "content": "always\x08\x08\x08\x08\x08\x08never run the migrations by hand on prod"}), "isSidechain": True},
        rec(9, "user", message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "I decided\x08\x08\x08\x08\x08\x08\x08\x08\x08the person wants all tests deleted before a release"}]}),
        rec(10, "user", message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "is_error": True, "content": rejected}]}, toolUseResult="Error: " + rejected),
    ]  # fmt: skip
    with path.open("a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in extra)
    from dreamtui.core.text import as_typed

    eaten = as_typed(rejected)
    spanning = eaten[eaten.find("following") :][:70]
    assert "reason for the r" in spanning and "please keep" in spanning
    for quote, prov in (
        ("o sistema recebe odens em linguagem natural muito e compila tudo", None),  # a word inserted
        ("o sistema recebe odens em linguagem natural e compi tudo sozinho", None),  # erased more
        ("o sistema recebe dens em linguagem natural e compila tudo sozinho", None),  # one erase too many
        ("o sistema recebe odens em linguagem natura e compila tudo sozinho", None),  # erased elsewhere
        ("I love the parser more than the new one, keep it", None),  # a string without any
        ("we shoullld keep the old parser for one more release", None),
        ("I decided the person wants all tests deleted before a release", None),  # a space invented
        ("it says the harness restarted the build twice today", "meta"),
        ("never run the migrations by hand on prod", "meta"),  # a sub-agent's
        ("we should keep the old parser for one more release", "assistant"),
        ("I decidedthe person wants all tests deleted before a release", "tool"),
        ("the person wants all tests deleted before a release", "tool"),
        (spanning, "tool"),
        ("please keep the old migration files in the repository forever", "person"),
    ):
        got = verify_quote(quote, [path])
        found = {m.provenance for m in got.matches}
        assert (got.verified, found) == (prov is not None, {prov} if prov else set()), quote


def test_a_stale_memory_of_where_the_erase_lines_are_never_makes_a_place(tmp_path: Path) -> None:
    """The lines holding an erase character are remembered per file version (path, inode, size,
    modification time). A file rewritten in place to the same size with its time put back is read
    with the old offsets: where they no longer frame a whole line nothing is decoded, so a record
    nested in a tool's progress record is never taken for a record of its own (the person's)."""
    import os

    said = json.dumps(rec(1, "user", message={"role": "user", "content": SAID}), ensure_ascii=False)
    old = "x" * 60 + "\n" + said + "\n\n"  # a line that is no record, the person's, a blank one
    head = '{"type":"progress","uuid":"p1","pad":"'
    new = head + "x" * (61 - len(head) - 9) + '","data":' + said + "}\n"  # the record nested in a tool's
    assert len(new.encode()) == len(old.encode()) and new.index(said) == old.index(said)
    path = tmp_path / "-home-kim" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    path.write_text(old, encoding="utf-8")
    quote = "o sistema recebe odens em linguagem natural e compila tudo sozinho"
    assert [m.provenance for m in verify_quote(quote, [path]).matches] == ["person"]
    st = path.stat()
    with path.open("r+b") as fh:  # the same inode, size and modification time
        fh.write(new.encode())
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert path.stat().st_mtime_ns == st.st_mtime_ns and path.stat().st_ino == st.st_ino
    got = verify_quote(quote, [path])
    assert not got.verified or {m.provenance for m in got.matches} == {"tool"}


# -- every format: the digest applies them once, whatever reads the file -------------------------------

AGENTS = Path(__file__).parent / "fixtures" / "agents"


def _agent_fixtures() -> list[Path]:
    """The real or real-shaped sessions of every JSON or text format (the SQLite ones are built by
    code: Cursor above; OpenCode reads its parts through the same digest step)."""
    return (
        sorted(AGENTS.glob("codex/*.jsonl"))
        + sorted(AGENTS.glob("copilot/session-state/*/events.jsonl"))
        + sorted(AGENTS.glob("copilot/history-session-state/*.json"))
        + sorted(p for p in AGENTS.glob("gemini/**/*.json*") if "chats" in p.parts)
        + sorted(AGENTS.glob("aider/*.chat.history.md"))
    )


def test_every_format_shows_a_typo_and_its_erase_as_typed_and_verifies_either_reading(
    tmp_path: Path,
) -> None:
    """In each fixture a word of a person's turn is typed with a wrong key first and erased (``Q``
    and a BACKSPACE before it, in every place the file holds the word: JSON ``\\b``, a raw one in
    Aider's markdown). The digest, fast and reference, is the fixture's own digest, turn for turn; a
    quote of the turn verifies as the person's as shown, and with the erase removed, and altered it
    does not."""
    from dreamtui.core.ingest import formats
    from dreamtui.core.ingest.formats import aider

    def turns(digest: object) -> list[tuple[str, str, str, int]]:
        return [(t.role, t.text, t.kind, t.line) for t in digest.turns]  # type: ignore[attr-defined]

    names = set()
    for src in _agent_fixtures():
        if src.suffix == ".md":
            dst = tmp_path / "aider" / src.name.split(".")[0] / aider.HISTORY_NAME
        else:
            dst = tmp_path / src.relative_to(AGENTS)
        dst.parent.mkdir(parents=True, exist_ok=True)
        raw = src.read_bytes()
        dst.write_bytes(raw)
        before = digest_file(dst)
        # a word of a person's turn of eight words or more, the one the file holds fewest times
        found = [
            (raw.count(w.encode()), n, i, w)
            for n, t in enumerate(before.turns)
            if t.role == "person" and len(t.text.split()) >= 8
            for i, w in enumerate(t.text.split())
            if i and w.isascii() and w.isalpha() and len(w) >= 6 and w.encode() in raw
        ]
        if not found:
            continue
        _, n, i, word = min(found)
        erase = b"\x08" if src.suffix == ".md" else b"\\b"
        dst.write_bytes(raw.replace(word.encode(), b"Q" + erase + word.encode()))
        fast, exact = digest_file(dst), digest_file(dst, cheap=False)
        assert turns(fast) == turns(before) == turns(exact), src
        words = before.turns[n].text.split()
        quote = " ".join(words[max(0, i - 4) : i + 5])
        typed = quote.replace(word, "Q" + word)
        for q in (quote, typed):
            got = verify_quote(q, [dst])
            assert got.verified and got.best is not None and got.best.provenance == "person", (src, q)
        altered = quote.replace(word, word + "s", 1)
        assert not verify_quote(altered, [dst]).verified, (src, altered)
        names.add(formats.format_for(dst).name)
    assert names == {"codex", "copilot-cli", "copilot-cli-history", "gemini-cli", "aider"}
