"""The digest: the person's words and the assistant's prose, each pointing back to its raw line."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from dreamtui.cli.main import cli
from dreamtui.core.ingest.digest import (
    digest_file,
    digest_increment,
    digest_session,
    persist,
)
from dreamtui.core.ingest.formats.claude_code import (
    REJECTION_MARKER,
    drop_big_strings,
    needs_decode,
    pieces,
    provenance_of,
)
from dreamtui.core.ingest.tail import Tailer
from dreamtui.core.ingest.transcripts import session_files
from dreamtui.core.ledger import Ledger

FIX = Path(__file__).parent / "fixtures" / "transcripts"
S1 = "11111111-2222-4333-8444-555555555555"
MAIN = FIX / "-home-kim-shapes" / f"{S1}.jsonl"
SUB = FIX / "-home-kim-shapes" / S1 / "subagents" / "agent-a1b2c3d.jsonl"
COMPACT = FIX / "-home-kim-shapes" / S1 / "subagents" / "agent-acompact-7f3e2a.jsonl"
LEGACY = FIX / "-home-kim-legacy" / "99999999-8888-4777-8666-555555555555.jsonl"
BAD = FIX / "-home-kim-bad" / "bad.jsonl"

EXPECTED_MAIN = [
    ("person", "prompt", 2, "Please add a --dry-run flag to the deploy script."),
    ("assistant", "text", 4, "I'll add the flag to deploy.sh."),
    (
        "person",
        "prompt",
        9,
        "Print [bold red]rich markup[/] and \x1b]0;evil title\x07\x1b[31mescape codes\x1b[0m literally",
    ),
    ("person", "command", 11, "/review PR 42 carefully"),
    ("person", "rejection", 15, "Never edit generated files; change the template instead."),
    ("person", "interrupt", 16, "[Request interrupted by user for tool use]"),
    ("person", "queued", 17, "also run the linter before committing"),
    ("person", "queued", 21, "what about the staging env?"),
    ("person", "prompt", 28, "hello keep the deploy log terse"),
    ("assistant", "text", 29, "Done — the flag is in place."),
    ("person", "command", 31, "!make test"),
    ("person", "prompt", 33, "what does this screenshot show?"),
    ("assistant", "text", 34, "A failing deploy log."),
]
# Markers in the fixture's text that must never reach a digest.
NEVER = [
    "TOOL-OUTPUT",
    "TOOL-INPUT",
    "THINKING-ONLY",
    "PROGRESS-COPY",
    "EXPANDED-COMMAND-BODY",
    "COMMAND-STDOUT",
    "TASK-NOTIFICATION",
    "SYNTHETIC",
    "COMPACT-SUMMARY",
    "OLD-SUMMARY",
    "VISIBLE-ONLY",
    "BASH-STDOUT",
    "API-ERROR",
    "FUTURE-TYPE",
    "PARENT-",
    "SUB-TOOL-OUTPUT",
    "COMPACT-HELPER",
    "LEGACY-TOOL-OUTPUT",
    "system-reminder",
    "ide_opened_file",
    "ide_selection",
    "Caveat:",
    "Remember the todo list",
]


def shape(turns):
    return [(t.role, t.kind, t.line, t.text) for t in turns]


def test_main_file_keeps_person_words_and_assistant_prose_only():
    d = digest_file(MAIN)
    assert shape(d.turns) == EXPECTED_MAIN
    assert (d.session, d.project) == (S1, "-home-kim-shapes")
    text = "\n".join(t.text for t in d.turns)
    for marker in NEVER:
        assert marker not in text


def test_every_turn_points_back_to_its_raw_line():
    raw_lines = MAIN.read_bytes().split(b"\n")
    for turn in digest_file(MAIN).turns:
        obj = orjson.loads(raw_lines[turn.line - 1])
        assert obj.get("uuid") == turn.uuid
        assert obj.get("timestamp") == turn.timestamp
        own = [p for p in pieces(obj) if p.role == turn.role]
        assert turn.text in [p.text.strip() for p in own]
        if turn.kind != "interrupt":
            assert {provenance_of(obj, p.path) for p in own} == {turn.role}


def test_stats_count_bytes_chars_and_signal():
    d = digest_file(MAIN)
    assert d.stats.bytes == MAIN.stat().st_size
    assert d.stats.lines == MAIN.read_bytes().count(b"\n")
    assert d.stats.chars == sum(len(t.text) for t in d.turns)
    assert 0 < d.stats.signal_pct < 100
    assert d.stats.skipped_lines == 0


def test_subagent_files_have_no_person_and_compaction_files_nothing():
    sub = digest_file(SUB)
    assert shape(sub.turns) == [("assistant", "subagent", 2, "Found two callers of deploy().")]
    assert digest_file(COMPACT).turns == []


def test_legacy_sidechains_inside_the_main_file():
    d = digest_file(LEGACY)
    assert shape(d.turns) == [
        ("person", "prompt", 1, "Fix the flaky login test please."),
        ("assistant", "text", 2, "I'll ask a sub-agent to find the test."),
        ("assistant", "subagent", 4, "The login test is tests/test_login.py."),
        ("person", "prompt", 6, "thanks, now make it deterministic"),
    ]


def test_session_digest_merges_subagent_prose_by_time_without_their_user_lines():
    d = digest_session(session_files(FIX, "-home-kim-shapes", S1))
    assert len(d.files) == 4
    assert [t.text for t in d.turns if t.kind == "subagent"] == [
        "Found two callers of deploy().",
        "There are two env files.",
    ]
    assert [t.text for t in d.turns if t.role == "person"] == [
        x[3] for x in EXPECTED_MAIN if x[0] == "person"
    ]
    stamps = [t.timestamp for t in d.turns]
    assert stamps == sorted(stamps)
    assert d.stats.bytes == sum(Path(f).stat().st_size for f in d.files)
    without = digest_session(session_files(FIX, "-home-kim-shapes", S1), include_subagents=False)
    assert not any(t.kind == "subagent" for t in without.turns)


def test_interrupt_markers_can_be_left_out():
    assert not any(t.kind == "interrupt" for t in digest_file(MAIN, interrupts=False).turns)


def test_bad_lines_are_counted_and_the_good_ones_kept():
    d = digest_file(BAD)
    # the record with two bad bytes is kept, the bytes shown as U+FFFD and counted as replaced
    assert [t.text for t in d.turns] == ["first good line", "bad \ufffd\ufffd utf8", "second good line"]
    assert (d.stats.malformed, d.stats.invalid_utf8, d.stats.replaced) == (2, 0, 1)  # broken JSON, a list
    assert d.stats.skipped_lines == 3  # and the empty line
    assert d.stats.partial_tail
    assert d.stats.bytes == BAD.read_bytes().rfind(b"\n") + 1


def test_huge_lines_are_skipped_and_counted(tmp_path: Path):
    f = tmp_path / "s.jsonl"
    raw = MAIN.read_bytes().split(b"\n")
    f.write_bytes(b"\n".join([raw[1], b'{"type":"user","x":"' + b"z" * 50_000 + b'"}', raw[3], b""]))
    d = digest_file(f, max_line=10_000)
    assert [t.line for t in d.turns] == [1, 3]
    assert (d.stats.oversized, d.stats.skipped_lines, d.stats.lines) == (1, 1, 3)


def test_the_cheap_byte_test_never_changes_the_digest():
    for path in FIX.rglob("*.jsonl"):
        full = digest_file(path, cheap=False)
        assert shape(digest_file(path).turns) == shape(full.turns), path.name
    # spaced JSON (not Claude Code's writer) is decoded rather than skipped
    assert needs_decode(b'{"type": "user", "message": {"content": "hi"}}')
    assert not needs_decode(b'{"type":"progress","data":{}}')
    tool = (
        b'{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result",'
        b'"content":"%s"}]},"toolUseResult":{"a":1}}'
    )
    assert not needs_decode(tool % b"output")
    assert not needs_decode(tool % (b"x" * 100_000))
    assert needs_decode(tool % records_rejection())
    assert not needs_decode(
        b'{"message":{"id":"m","type":"message","role":"assistant","content":'
        b'[{"type":"tool_use","id":"t","input":{}}]},"type":"assistant"}'
    )
    assert needs_decode(
        b'{"message":{"id":"m","type":"message","role":"assistant","content":'
        b'[{"type":"thinking","thinking":"hm"},{"type":"text","text":"hi"}]},"type":"assistant"}'
    )
    assert needs_decode(
        b'{"message":{"type":"message","role":"assistant","content":"plain"},"type":"assistant"}'
    )
    assert needs_decode(b'{"message":{"type":"message","role":"user","content":"hi"},"type":"user"}')


def records_rejection() -> bytes:
    return ("The user doesn't want to proceed with this tool use. " + REJECTION_MARKER + " use tabs").encode()


def test_big_base64_strings_are_dropped_before_decoding_and_nothing_else():
    image = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * 70_000}}
    text = {"type": "text", "text": 'keep "data":"' + "B" * 70_000 + '" literally'}
    raw = orjson.dumps({"type": "user", "message": {"role": "user", "content": [image, text]}})
    obj = orjson.loads(drop_big_strings(raw))
    assert obj["message"]["content"][0]["source"]["data"] == ""
    assert obj["message"]["content"][1] == text


def test_the_cheap_byte_test_never_changes_the_digest_of_the_corpus(corpus: Path):
    for path in corpus.rglob("*.jsonl"):
        assert shape(digest_file(path).turns) == shape(digest_file(path, cheap=False).turns), path.name


# -- incremental --------------------------------------------------------------------------------


def grow(path: Path, data: bytes) -> None:
    with path.open("ab") as fh:
        fh.write(data)


def test_incremental_digest_equals_one_full_digest_and_persists_dedup(config, tmp_path: Path):
    data = MAIN.read_bytes()
    lines = data.split(b"\n")
    f = tmp_path / "projects" / "-home-kim-shapes" / f"{S1}.jsonl"
    f.parent.mkdir(parents=True)
    f.write_bytes(b"")
    turns = []
    # cut between the original and rewritten assistant block, and between enqueue and the user record
    cuts = [3, 5, 8, 17, 19, 22, len(lines)]
    done = 0
    for step, cut in enumerate(cuts):
        grow(f, b"".join(line + b"\n" for line in lines[done:cut] if line or cut < len(lines)))
        done = cut
        led = Ledger.open(config.state)  # a restart before every step
        d, read, _ = digest_increment(led, f, tailer=Tailer(led))
        led.close()
        assert read.start_line == (0 if step == 0 else cuts[step - 1])
        turns += d.turns
    assert shape(turns) == EXPECTED_MAIN
    led = Ledger.open(config.state)
    again, _, _ = digest_increment(led, f)
    assert again.turns == []
    led.close()


def test_incremental_digest_of_an_appended_rewrite_is_empty(ledger: Ledger, tmp_path: Path):
    f = tmp_path / "s.jsonl"
    lines = MAIN.read_bytes().split(b"\n")
    f.write_bytes(lines[3] + b"\n")  # the assistant block
    first, _, _ = digest_increment(ledger, f)
    assert [t.text for t in first.turns] == ["I'll add the flag to deploy.sh."]
    grow(f, lines[7] + b"\n")  # the same block rewritten with a new uuid
    second, _, _ = digest_increment(ledger, f)
    assert second.turns == []


def test_uncommitted_increment_is_read_again_and_rollback_keeps_it_unread(ledger: Ledger, tmp_path: Path):
    f = tmp_path / "s.jsonl"
    shutil.copy(MAIN, f)
    d1, read, state = digest_increment(ledger, f, commit=False)
    d2, _, _ = digest_increment(ledger, f, commit=False)
    assert shape(d1.turns) == shape(d2.turns) == EXPECTED_MAIN
    with pytest.raises(RuntimeError), ledger.write():
        assert persist(ledger, Tailer(ledger), read, state, d1.stats)
        raise RuntimeError("the caller failed to store what it made of the turns")
    d3, read3, state3 = digest_increment(ledger, f, commit=False)
    assert shape(d3.turns) == EXPECTED_MAIN
    with ledger.write():
        assert persist(ledger, Tailer(ledger), read3, state3, d3.stats)
    assert digest_increment(ledger, f)[0].turns == []


def test_truncated_and_rewritten_file_is_digested_again_once(ledger: Ledger, tmp_path: Path):
    f = tmp_path / "s.jsonl"
    lines = MAIN.read_bytes().split(b"\n")
    f.write_bytes(lines[1] + b"\n" + lines[3] + b"\n")
    assert len(digest_increment(ledger, f)[0].turns) == 2
    f.write_bytes(lines[32] + b"\n")  # truncated, new content
    d, read, _ = digest_increment(ledger, f)
    assert read.reset and [t.text for t in d.turns] == ["what does this screenshot show?"]
    assert digest_increment(ledger, f)[0].turns == []


# -- CLI ----------------------------------------------------------------------------------------


def test_cli_json_has_the_documented_shape():
    result = CliRunner().invoke(cli, ["digest", str(MAIN), "--json"])
    assert result.exit_code == 0, result.output
    data = orjson.loads(result.stdout)
    assert {"turns", "stats"} <= set(data)
    assert {"bytes", "chars", "signal_pct", "skipped_lines"} <= set(data["stats"])
    for turn in data["turns"]:
        assert {"role", "text", "line", "uuid", "timestamp"} <= set(turn)
        assert turn["role"] in ("person", "assistant")
    assert [t["text"] for t in data["turns"]] == [x[3] for x in EXPECTED_MAIN]


def test_cli_text_prints_transcript_text_literally_without_control_codes():
    result = CliRunner().invoke(cli, ["digest", str(MAIN)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "\x1b" not in out and "\x07" not in out
    assert (
        "Print [bold red]rich markup[/] and \\x1b]0;evil title\\x07\\x1b[31mescape codes\\x1b[0m literally"
        in out
    )
    assert "/review PR 42 carefully" in out
    assert "[person (rejection)]" in out and "L15" in out
    assert "2026-03-01 10:00:01" in out


def test_cli_session_flag_includes_subagent_prose():
    result = CliRunner().invoke(cli, ["digest", str(MAIN), "--session"])
    assert result.exit_code == 0, result.output
    assert "Found two callers of deploy()." in result.output
    assert "agent-a1b2c3d.jsonl:2" in result.output


@pytest.mark.parametrize("target, message", [("absent.jsonl", "no such transcript"), (".", "is a directory")])
def test_cli_missing_file_or_directory_is_one_line_and_exit_2(tmp_path: Path, target, message):
    result = CliRunner().invoke(cli, ["digest", str(tmp_path / target)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in result.output


def test_digest_names_the_project_by_its_working_directory_not_the_folder_encoding(tmp_path) -> None:
    from dreamtui.core.ingest.digest import digest_session

    folder = tmp_path / "-home-kim-src-dreamboard-web"
    folder.mkdir()
    path = folder / "s1.jsonl"
    path.write_text(
        '{"type":"user","cwd":"/home/kim/src/dreamboard-web","uuid":"u1","timestamp":"2026-01-01T00:00:00Z",'
        '"message":{"role":"user","content":"Always run the linter before committing here."}}\n'
    )
    digest = digest_session([path])
    assert digest.cwd == "/home/kim/src/dreamboard-web"
    assert digest.project_name == "dreamboard-web"
    assert digest.project == "-home-kim-src-dreamboard-web"  # the folder stays the key
