"""The lenient reader of small models' JSON: what is valid comes back exactly, whatever wraps it; what
is bent is read as written; nothing is invented."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamtui.core.extract.lenient_json import NoJson, loads_lenient, repair

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40)
ITEM = st.dictionaries(st.sampled_from(["claim", "quote", "why", "type"]), TEXT, max_size=4)
ANSWER = st.fixed_dictionaries({"candidates": st.lists(ITEM, max_size=4)})


@settings(max_examples=150, deadline=None)
@given(
    ANSWER, st.sampled_from(["{}", "```json\n{}\n```", "Here you go:\n{}\nDone.", "<think>{{x}}</think>{}"])
)
def test_valid_json_comes_back_exactly_whatever_wraps_it(answer, wrapper) -> None:
    text = (
        wrapper.replace("{}", json.dumps(answer, ensure_ascii=False), 1)
        if wrapper != "{}"
        else json.dumps(answer)
    )
    assert loads_lenient(text) == (answer, 0)


@settings(max_examples=150, deadline=None)
@given(ANSWER)
def test_repair_leaves_valid_json_alone(answer) -> None:
    text = json.dumps(answer, ensure_ascii=False)
    assert json.loads(repair(text)) == answer


@pytest.mark.parametrize(
    ("text", "value", "given_up"),
    [
        ("{'a': 'it''s'}", {"a": "it''s"}, 0),  # read as written, not guessed at
        (
            "{'quote': 'don't mock it', 'ok': True, 'n': None,}",
            {"quote": "don't mock it", "ok": True, "n": None},
            0,
        ),
        ('{claim: "x"}', {"claim": "x"}, 0),
        ('[{"a": 1},]', [{"a": 1}], 0),
        ('{"candidates": [{"a": 1}, {"b": }, {"c": 3}]}', {"candidates": [{"a": 1}, {"c": 3}]}, 1),
        ('{"candidates": [{"a": 1}, {"b": "cut', {"candidates": [{"a": 1}]}, 1),
    ],
)
def test_bent_json(text, value, given_up) -> None:
    assert loads_lenient(text) == (value, given_up)


def test_no_json_at_all() -> None:
    with pytest.raises(NoJson):
        loads_lenient("I found no lessons in this session.")
