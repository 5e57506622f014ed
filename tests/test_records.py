"""Record classification: whose words each string of a transcript record is."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dreamtui.core.ingest.formats.claude_code import (
    block_key,
    classify_user_text,
    is_synthetic,
    pieces,
    provenance_of,
    strip_spans,
)

FIX = Path(__file__).parent / "fixtures" / "transcripts"
MAIN = FIX / "-home-kim-shapes" / "11111111-2222-4333-8444-555555555555.jsonl"
SUB = FIX / "-home-kim-shapes" / "11111111-2222-4333-8444-555555555555" / "subagents" / "agent-a1b2c3d.jsonl"
LEGACY = FIX / "-home-kim-legacy" / "99999999-8888-4777-8666-555555555555.jsonl"


def line(path: Path, n: int) -> dict:
    """Record on 1-based line ``n``."""
    return orjson.loads(path.read_bytes().split(b"\n")[n - 1])


def person(obj: dict, **kw) -> list[tuple[str, str]]:
    return [(p.kind, p.text) for p in pieces(obj, **kw) if p.role == "person"]


def roles(obj: dict) -> set[str]:
    return {p.role for p in pieces(obj)}


def test_prompt_loses_system_reminder_and_keeps_the_words():
    assert person(line(MAIN, 2)) == [("prompt", "Please add a --dry-run flag to the deploy script.")]
    assert provenance_of(line(MAIN, 2), ("message", "content")) == "person"


def test_ide_spans_are_stripped_and_an_ide_only_block_is_context():
    obj = line(MAIN, 9)
    assert person(obj) == [
        (
            "prompt",
            "Print [bold red]rich markup[/] and \x1b]0;evil title\x07\x1b[31mescape codes\x1b[0m literally",
        )
    ]
    assert provenance_of(obj, ("message", "content", 0, "text")) == "meta"
    assert provenance_of(obj, ("message", "content", 1, "text")) == "person"
    assert person(line(MAIN, 28)) == [("prompt", "hello keep the deploy log terse")]


def test_assistant_text_and_thinking_are_the_assistants_but_tool_input_is_tool():
    assert [(p.role, p.kind) for p in pieces(line(MAIN, 3))] == [("assistant", "thinking")]
    assert [(p.role, p.kind, p.text) for p in pieces(line(MAIN, 4))] == [
        ("assistant", "text", "I'll add the flag to deploy.sh.")
    ]
    tool_use = line(MAIN, 5)
    assert pieces(tool_use) == []
    assert provenance_of(tool_use, ("message", "content", 0, "input", "command")) == "tool"
    assert provenance_of(tool_use, ("message", "model")) == "meta"


def test_tool_results_and_progress_copies_are_tool_output():
    result = line(MAIN, 7)
    assert roles(result) == {"tool"}
    assert provenance_of(result, ("message", "content", 0, "content")) == "tool"
    assert provenance_of(result, ("toolUseResult", "stdout")) == "tool"
    progress = line(MAIN, 6)
    assert pieces(progress) == []
    assert provenance_of(progress, ("data", "message", "message", "content", 0, "text")) == "tool"


def test_rejection_reason_is_the_persons_and_the_boilerplate_is_not():
    obj = line(MAIN, 15)
    assert person(obj) == [("rejection", "Never edit generated files; change the template instead.")]
    path = ("message", "content", 0, "content")
    text = obj["message"]["content"][0]["content"]
    assert provenance_of(obj, path) == "person"
    assert provenance_of(obj, path, offset=text.index("Never edit")) == "person"
    assert provenance_of(obj, path, offset=0) == "tool"


def test_interrupt_is_a_marker_not_a_prompt():
    obj = line(MAIN, 16)
    assert person(obj) == [("interrupt", "[Request interrupted by user for tool use]")]
    assert provenance_of(obj, ("message", "content", 0, "text")) == "meta"


def test_slash_command_caveat_expanded_body_and_stdout():
    assert roles(line(MAIN, 10)) == {"meta"}  # caveat
    assert person(line(MAIN, 11)) == [("command", "/review PR 42 carefully")]
    assert roles(line(MAIN, 12)) == {"meta"}  # isMeta expanded command body
    assert roles(line(MAIN, 13)) == {"meta"}  # <local-command-stdout>
    assert provenance_of(line(MAIN, 13), ("message", "content")) == "meta"


@pytest.mark.parametrize(
    "text, expected",
    [
        ("<command-message>deploy</command-message>\n<command-name>/deploy</command-name>", "/deploy"),
        ("<command-name>model</command-name><command-args>opus</command-args>", "/model opus"),
        ("<command-args>a b</command-args><command-name>/x</command-name>", "/x a b"),
    ],
)
def test_slash_command_tag_order_does_not_matter(text, expected):
    assert classify_user_text(text) == ("person", "command", expected)


def test_queue_operations_enqueue_and_popall_are_typed_text_but_notifications_are_not():
    assert person(line(MAIN, 17)) == [("queued", "also run the linter before committing")]
    assert pieces(line(MAIN, 18)) == []  # dequeue
    assert roles(line(MAIN, 20)) == {"meta"}  # a task notification in the queue
    assert person(line(MAIN, 22)) == [("queued", "what about the staging env?")]  # popAll
    assert provenance_of(line(MAIN, 17), ("content",)) == "person"
    assert provenance_of(line(MAIN, 20), ("content",)) == "meta"
    assert roles(line(MAIN, 23)) == {"meta"}  # task notification as a user record


def test_synthetic_and_api_error_replies_are_meta():
    synthetic = line(MAIN, 24)
    assert is_synthetic(synthetic)
    assert roles(synthetic) == {"meta"}
    assert provenance_of(synthetic, ("message", "content", 0, "text")) == "meta"
    assert not is_synthetic(line(MAIN, 4))
    assert roles(line(MAIN, 35)) == {"meta"}


def test_compaction_boundary_summary_and_old_summaries_are_meta():
    assert roles(line(MAIN, 25)) == {"meta"}
    summary = line(MAIN, 26)
    assert [(p.role, p.kind) for p in pieces(summary)] == [("meta", "compact_summary")]
    assert provenance_of(summary, ("message", "content")) == "meta"
    assert roles(line(MAIN, 27)) == {"meta"}
    assert provenance_of(line(MAIN, 27), ("summary",)) == "meta"


def test_visible_only_bash_input_and_bash_output():
    assert roles(line(MAIN, 30)) == {"meta"}
    assert person(line(MAIN, 31)) == [("command", "!make test")]
    assert roles(line(MAIN, 32)) == {"tool"}


def test_image_block_next_to_text_keeps_the_text():
    assert person(line(MAIN, 33)) == [("prompt", "what does this screenshot show?")]
    assert provenance_of(line(MAIN, 33), ("message", "content", 0, "source", "data")) == "meta"


def test_sidechain_user_lines_are_the_parent_agent_not_a_person():
    first = line(SUB, 1)
    assert person(first) == []
    assert provenance_of(first, ("message", "content")) == "meta"
    assert provenance_of(line(SUB, 2), ("message", "content", 0, "text")) == "assistant"
    assert provenance_of(line(SUB, 4), ("message", "content", 0, "content")) == "tool"
    assert person(line(LEGACY, 3)) == []
    # the caller may also say so explicitly, for a record without the isSidechain flag
    assert person(line(LEGACY, 1)) != []
    assert person(line(LEGACY, 1), first_sidechain_user=True) == []


def test_block_key_is_stable_across_rewrites_and_tells_blocks_apart():
    original, rewritten = line(MAIN, 4), line(MAIN, 8)
    assert original["uuid"] != rewritten["uuid"]
    assert block_key(original, 0) == block_key(rewritten, 0) is not None
    assert block_key(line(MAIN, 3), 0) != block_key(original, 0)  # thinking vs text of one reply
    assert block_key(line(MAIN, 5), 0).endswith("tool_use:toolu_1")
    assert block_key(line(MAIN, 29), 0) != block_key(original, 0)
    assert block_key(original, 5) is None
    assert block_key({"type": "assistant"}, 0) is None


def test_strip_spans_leaves_unclosed_tags_alone():
    assert strip_spans("talk about <system-reminder> tags") == "talk about <system-reminder> tags"
    assert strip_spans("a<system-reminder>x\ny</system-reminder>b") == "ab"


@pytest.mark.parametrize(
    "obj",
    [
        None,
        3,
        "text",
        [],
        {},
        {"type": "user"},
        {"type": "user", "message": "x"},
        {
            "type": "user",
            "message": {"content": [None, 1, {"type": "text"}, {"type": "tool_result", "content": 5}]},
        },
        {"type": "assistant", "message": {"content": [{"type": "text", "text": 1}]}},
        {"type": "queue-operation", "operation": "enqueue", "content": [{"no": "text"}, "raw"]},
        {"type": "system", "content": None},
        {"type": ["weird"]},
    ],
)
def test_odd_records_never_raise(obj):
    result = pieces(obj)
    assert isinstance(result, list)
    assert provenance_of(obj, ("message", "content", 0, "text")) in {"person", "assistant", "tool", "meta"}
    assert provenance_of(obj, ()) == "meta"


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(max_size=30)
    | st.sampled_from(["user", "assistant", "text", "tool_result", "<command-name>/x</command-name>"]),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "message",
                    "content",
                    "text",
                    "isMeta",
                    "isSidechain",
                    "toolUseResult",
                    "operation",
                    "model",
                    "id",
                ]
            ),
            children,
            max_size=5,
        )
    ),
    max_leaves=20,
)
paths = st.lists(st.sampled_from(["message", "content", "text", "toolUseResult", 0, 1, "data"]), max_size=5)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(obj=json_values, path=paths)
def test_any_json_value_classifies_without_raising(obj, path):
    for piece in pieces(obj):
        assert piece.role in {"person", "assistant", "tool", "meta"}
    assert provenance_of(obj, tuple(path)) in {"person", "assistant", "tool", "meta"}


def _all_pieces(path: Path):
    for raw in path.read_bytes().splitlines():
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        for piece in pieces(obj):
            yield obj, piece


def test_provenance_of_agrees_with_pieces_on_every_fixture_string():
    checked = 0
    for path in FIX.rglob("*.jsonl"):
        for obj, piece in _all_pieces(path):
            expected = "meta" if piece.kind == "interrupt" else piece.role
            assert provenance_of(obj, piece.path) == expected, (path.name, piece)
            checked += 1
    assert checked > 40


def test_provenance_of_agrees_with_pieces_on_the_corpus(corpus):
    for path in corpus.rglob("*.jsonl"):
        for obj, piece in _all_pieces(path):
            expected = "meta" if piece.kind == "interrupt" else piece.role
            assert provenance_of(obj, piece.path) == expected, (path.name, piece)
