"""Gitleaks' rule set as dreamtui runs it: every rule loads, and every rule finds gitleaks' own true
examples and none of its false ones (``tests/data/gitleaks_examples.json``, extracted from gitleaks'
``cmd/generate/config/rules/*.go`` by ``scripts/gitleaks_examples.py``)."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamtui.core.secret_rules import gitleaks
from dreamtui.core.secret_rules.normalize import normalize
from dreamtui.core.secrets import has_secret, redact

DATA = json.loads((Path(__file__).parent / "data" / "gitleaks_examples.json").read_text(encoding="utf-8"))


def _text(entry: str) -> str:
    return base64.b64decode(entry).decode("utf-8")


def _expand(entry: str | list[str]) -> list[str]:
    if isinstance(entry, str):
        return [_text(entry)]
    identifier, secret = (_text(e) for e in entry)
    return [
        t.replace("{i}", identifier).replace("{I}", identifier.upper()).replace("{s}", secret)
        for t in DATA["samples"]
    ]


RULES = sorted(set(DATA["rules"]) & set(gitleaks.rule_ids()))


def test_the_rule_file_is_the_one_the_examples_come_from_and_every_rule_compiles() -> None:
    assert gitleaks.load().commit == DATA["source"]["commit"]
    assert gitleaks.compile_all() == []
    assert len(gitleaks.rule_ids()) == 217
    # the five rules that need a file path are the only ones left out
    assert sorted(gitleaks.skipped()) == [
        "freemius-secret-key",
        "hashicorp-tf-password",
        "kubernetes-secret-yaml",
        "nuget-config-password",
        "pkcs12-file",
    ]
    assert len(RULES) >= 210  # nearly every rule that runs has gitleaks' own examples


@pytest.mark.parametrize("rule", RULES)
def test_each_rule_finds_gitleaks_true_examples(rule: str) -> None:
    examples = [t for e in DATA["rules"][rule]["tp"] for t in _expand(e)]
    missed = [t for t in examples if not gitleaks.find(t.encode("utf-8"), only=rule)]
    assert missed == []
    # and the whole scanner redacts each of them, once (redacting again changes nothing)
    assert all(has_secret(t) for t in examples)
    assert [redact(redact(t)) for t in examples] == [redact(t) for t in examples]


@pytest.mark.parametrize("rule", [r for r in RULES if DATA["rules"][r]["fp"]])
def test_each_rule_leaves_gitleaks_false_examples_alone(rule: str) -> None:
    examples = [t for e in DATA["rules"][rule]["fp"] for t in _expand(e)]
    found = [t for t in examples if gitleaks.find(t.encode("utf-8"), only=rule)]
    assert found == []


def test_the_identifier_prefix_taken_off_for_speed_is_put_back_for_match_allowlists() -> None:
    # generic-api-key allows "public_key = …" by its whole match: the match must start at "public"
    value = "Zk29fQx81LmNvB0aTq7Yw3"
    assert gitleaks.find(f"public_key = {value}".encode(), only="generic-api-key") == []
    assert gitleaks.find(f"secret_key = {value}".encode(), only="generic-api-key") != []


@pytest.mark.parametrize(
    "rule", ["generic-api-key", "curl-auth-header", "private-key", "jwt", "aws-access-token"]
)
def test_a_hostile_megabyte_line_stays_linear(rule: str) -> None:
    spec = next(r for r in gitleaks.load().rules if r.id == rule)
    keyword = (spec.keywords or ("x",))[0]
    for chunk in (keyword + " ", keyword + "=", keyword + ' -H "Authorization: Bearer ', keyword + "-----"):
        line = chunk * (1_000_000 // len(chunk))
        start = time.process_time()  # CPU time: a loaded machine stretches wall time, not this
        redact(line)
        assert time.process_time() - start < 8.0, chunk


@pytest.mark.parametrize(
    "chunk",
    [
        "aws ",  # context words of the own rules, repeated
        "aws secret " + "Ab3/" * 10 + " ",  # a context word and a 40-character candidate, repeated
        "AccountKey=" + "Ab3+" * 22,
        "the pass is ",
        "\u200b",  # a format character everywhere: the normalised copy and its map
        "ｘ\u200b",
    ],
)
def test_a_hostile_megabyte_line_of_the_new_shapes_stays_linear(chunk: str) -> None:
    line = chunk * (1_000_000 // len(chunk))
    start = time.process_time()  # CPU time: a loaded machine stretches wall time, not this
    redact(line)
    assert time.process_time() - start < 8.0


# each piece and what the scanner reads it as: invisible characters and marks are gone, look-alikes
# and compatibility forms are plain letters, any space is a space, an escape reads as its character
PIECES = {
    "a": "a",
    "Z": "Z",
    "\u200b": "",
    "\u00ad": "",
    "\u2060": "",
    "\ufe0f": "",
    "\u0301": "",
    "\u3164": "",
    "ｘ": "x",
    "ﬁ": "fi",
    "é": "e",
    "\u0410": "A",
    "\u00a0": " ",
    "\\u200b": "",
    "\\u0410": "A",
    " ": " ",
}


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(sorted(PIECES))))
def test_every_scanned_character_maps_back_to_the_original_character_it_was_read_from(
    pieces: list[str],
) -> None:
    text = "".join(pieces)
    norm = normalize(text)
    # reference: each piece read on its own (an escape counts as one character)
    expected: list[tuple[str, int]] = []
    at = 0
    for piece in pieces:
        expected += [(ch, at) for ch in PIECES[piece]]
        at += len(piece)
    assert norm.text == "".join(ch for ch, _ in expected)
    assert [norm.original(j) for j in range(len(norm.text))] == [at for _, at in expected]
    assert [norm.text[j] for j in norm.spaces] == [" "] * len(norm.spaces)
    assert len(norm.spaces) == pieces.count("\u00a0")
