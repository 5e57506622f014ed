"""The one frontmatter schema: a safe round-trip for any text, never executing anything."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamtui.core.memory import frontmatter
from dreamtui.core.memory.frontmatter import FrontmatterError, dump, parse, validate

NASTY = [
    "---",
    "a\n---\nb",
    "!!python/object/apply:os.system ['echo pwned']",
    "line\u2028sep",
    "next\x85line",
    "cr\ronly",
    "crlf\r\n",
    "tab\there",
    'say "hi" \\ back',
    "  leading",
    "trailing  ",
    "yes",
    "null",
    "~",
    "123",
    "0x1F",
    "1e3",
    "2026-01-05",
    "#comment",
    "key: value",
    "- item",
    "[a, b]",
    "{a: b}",
    "&anchor",
    "*alias",
    "|",
    ">",
    "'single'",
    "",
    "\x00nul",
    "\x1b[31mred\x1b[0m",
    "\ufeffbom",
    "emoji 🎉",
    "é ü ß",
]


def _meta(value: str) -> dict[str, object]:
    return {
        "name": value,
        "description": value,
        "type": "feedback",
        "source_session": value,
        "quote": value,
        "verified_line": 12,
        "candidate": "c0123456789a",
        "created": "2026-01-05T10:00:00Z",
        "extractor": "heuristic",
    }


@pytest.mark.parametrize("value", NASTY)
def test_nasty_values_round_trip(value: str) -> None:
    text = dump(_meta(value), "body\n")
    assert parse(text) == (_meta(value), "body\n")


def test_dumped_block_has_one_line_per_field_and_no_fence_inside() -> None:
    text = dump(_meta("a\n---\nb\u2028c\x85d\re"), "")
    block = text.split("\n")
    assert block[0] == "---" and block.count("---") == 2
    assert len(block) == len(_meta("x")) + 3  # two fences and the empty body after the last newline


def test_python_tags_are_text_never_executed(tmp_path) -> None:
    marker = tmp_path / "pwned"
    evil = f"!!python/object/apply:os.system ['touch {marker}']"
    text = f"---\nname: {evil}\ndescription: x\ntype: user\n---\nbody"
    with pytest.raises(FrontmatterError):  # a tag is not in the safe subset: refused, not run
        parse(text)
    assert not marker.exists()
    meta, _ = parse(dump({"name": evil, "description": "x", "type": "user"}))
    assert meta["name"] == evil
    assert not marker.exists()


def test_no_frontmatter_gives_empty_fields() -> None:
    assert parse("# just markdown\n") == ({}, "# just markdown\n")


def test_values_written_by_people_are_read() -> None:
    text = (
        "---\nname: Run tests first\ndescription: 'it''s quick'  \ntype: feedback\nverified_line: 3\n"
        "created: 2026-01-05\nextractor: ~\n---\nBody\n"
    )
    meta, body = parse(text)
    assert meta == {
        "name": "Run tests first",
        "description": "it's quick",
        "type": "feedback",
        "verified_line": 3,
        "created": "2026-01-05",
        "extractor": None,
    }
    assert body == "Body\n"
    assert validate(meta) == []


@pytest.mark.parametrize(
    "text, message",
    [
        ("---\nname: x\n", "no closing"),
        ("---\nname: [a, b]\n---\n", "single-line"),
        ("---\nname: |\n  block\n---\n", "single-line"),
        ("---\n  name: x\n---\n", "flat"),
        ("---\nname: x\nname: y\n---\n", "duplicate"),
        ('---\nname: "unterminated\n---\n', "unterminated"),
        ('---\nname: "bad \\q escape"\n---\n', "unknown escape"),
        ("---\nnot a pair\n---\n", "key: value"),
    ],
)
def test_unsupported_frontmatter_is_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(FrontmatterError, match=message):
        parse(text)


def test_validate_names_every_problem() -> None:
    assert validate(_meta("fine")) == []
    problems = validate(
        {"name": "", "type": "opinion", "verified_line": 0, "created": "yesterday", "tags": "x"}
    )
    assert "missing name" in problems
    assert "missing description" in problems
    assert "unknown field tags" in problems
    assert any("type 'opinion'" in p for p in problems)
    assert any("verified_line" in p for p in problems)
    assert any("created 'yesterday'" in p for p in problems)
    assert validate({**_meta("x"), "name": "two\nlines"}) == ["name must be one line"]


scalars = st.one_of(st.text(), st.integers(min_value=-(10**12), max_value=10**12), st.none(), st.booleans())
keys = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,20}", fullmatch=True)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(keys, scalars, max_size=12), st.text())
def test_round_trip_any_fields_and_body(meta: dict[str, object], body: str) -> None:
    assert parse(dump(meta, body)) == (meta, body)


@settings(max_examples=200, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(
            [
                "-",
                "\n",
                "\r",
                "\x85",
                "\u2028",
                "\u2029",
                "!",
                "p",
                ":",
                " ",
                '"',
                "\\",
                "'",
                "#",
                "\x00",
                "\ud7ff",
                "\ufeff",
            ]
        ),
        max_size=40,
    )
)
def test_round_trip_of_break_heavy_text(value: str) -> None:
    meta = _meta(value)
    assert parse(dump(meta, value)) == (meta, value)
    assert parse(dump(meta, value).encode("utf-8").decode("utf-8")) == (meta, value)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        keys.filter(lambda k: k.lower() not in {"null", "true", "false", "yes", "no", "on", "off", "y", "n"}),
        st.one_of(st.text(), st.integers(min_value=-(10**6), max_value=10**6), st.none()),
        max_size=8,
    )
)
def test_other_yaml_readers_see_the_same_values(meta: dict[str, object]) -> None:
    """What dreamtui writes reads the same in a standard YAML parser (PyYAML, when installed)."""
    yaml = pytest.importorskip("yaml")
    block, _ = frontmatter.split(dump(meta, ""))
    loaded = yaml.safe_load(block) or {}
    assert loaded == meta


def test_read_lenient_reads_hand_written_files_without_raising() -> None:
    from dreamtui.core.memory.frontmatter import read_lenient

    meta, body = read_lenient('---\nname: "Deploy \\"safely\\""\ndescription: |\nweird: [1\n---\nbody\n')
    assert meta == {"name": 'Deploy "safely"', "description": "|", "weird": "[1"}
    assert body == "body\n"
    assert read_lenient("---\nname: x\nno closing fence\n") == ({}, "---\nname: x\nno closing fence\n")
    assert read_lenient("plain body") == ({}, "plain body")
