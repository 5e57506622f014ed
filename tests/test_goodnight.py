"""Goodnight detection: which of a person's words start a dream cycle."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamtui.core.ingest.goodnight import is_goodnight, said_goodnight
from dreamtui.core.models import Turn

PHRASES = ["good night", "goodnight", "g'night", "gnight", "nighty night", "sleep well", "sweet dreams"]


@pytest.mark.parametrize(
    "text",
    [
        "good night",
        "Goodnight!",
        "GOODNIGHT",
        "g'night all",
        "G\u2019night",
        "gnight :)",
        "nighty night",
        "Nighty-night",
        "ok, sleep well",
        "Sweet Dreams, claude",
        "that's it for today. good night!",
        "good-night",
        "Good\nnight",
    ],
)
def test_goodnight_phrases_in_any_case(text: str) -> None:
    assert is_goodnight(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "goodnightly builds",
        "the overnight job failed",
        "sleep wellness app",
        "a good knight",
        "the night was good",
        "gnightly",
        "sweet dreamscape",
        "regnight",
        "dreams are sweet",
    ],
)
def test_other_words_are_not_goodnight(text: str) -> None:
    assert not is_goodnight(text)


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(PHRASES),
    st.text(alphabet=" ,.!?;:\n()", max_size=5),
    st.text(alphabet=" ,.!?;:\n()", max_size=5),
    st.booleans(),
)
def test_phrase_between_separators_is_found(phrase: str, before: str, after: str, upper: bool) -> None:
    text = before + (phrase.upper() if upper else phrase) + after
    assert is_goodnight(text)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(PHRASES), st.sampled_from("abxz0"), st.booleans())
def test_phrase_glued_to_a_word_is_not_found(phrase: str, letter: str, at_start: bool) -> None:
    text = letter + phrase if at_start else phrase + letter
    assert not is_goodnight(text)


def test_only_a_persons_words_count() -> None:
    assistant = Turn(role="assistant", text="Good night! See you tomorrow.", file="f", line=3)
    person = Turn(role="person", text="good night", file="f", line=4)
    assert not said_goodnight([assistant])
    assert said_goodnight([assistant, person])
