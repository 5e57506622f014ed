"""The one text-safety module: what each writer makes of escape codes, controls and surrogates."""

from __future__ import annotations

from dreamtui.core import text


def test_clean_text_strips_escapes_and_controls_for_files() -> None:
    raw = "a\x1b]8;;http://x\x07link\x1b]8;;\x07 \x1b[31mred\x1b[0m\x00\r\nb\u2028c\x9b2Jd"
    assert text.clean_text(raw) == "alink red\nb\ncd"
    assert text.clean_text("[bold]rich[/bold]") == "[bold]rich[/bold]"
    assert text.clean_text("half \udcff") == "half ?"


def test_clean_line_collapses_and_replaces_controls() -> None:
    assert text.clean_line("one\x1b[1m  two\x07three\nfour") == "one two three four"
    assert text.clean_line("one\x07three", control="") == "onethree"


def test_shorten_cuts_at_a_word_boundary() -> None:
    assert text.shorten("alpha beta gamma delta", 14) == "alpha beta…"
    assert text.shorten("short", 14) == "short"
    assert text.shorten("short", None) == "short"


def test_terminal_escapes_show_controls_and_bidi_never_raw() -> None:
    shown = text.escape_controls("red \x1b[31m x\u202eevil\nnext\tcol")
    assert shown == "red \\x1b[31m x\\u202eevil\nnext\tcol"
    assert "\x1b" not in shown and "\u202e" not in shown


def test_json_escapes_keep_json_valid() -> None:
    import json

    dumped = json.dumps({"a": "x\x85y\u202ez"}, ensure_ascii=False)
    shown = text.escape_controls_json(dumped)
    assert json.loads(shown) == {"a": "x\x85y\u202ez"}
    assert "\x85" not in shown and "\u202e" not in shown


def test_app_shows_control_pictures_and_replaces_surrogates() -> None:
    assert text.visible_controls("a\x1b[2Jb\r\x07\x7f\x01\udcff\u2066") == "a␛[2Jb␍␇␡␁\ufffd\\u2066"


def test_without_surrogates_makes_text_encodable() -> None:
    out = text.without_surrogates("ok \ud83d cut")
    assert out == "ok \ufffd cut"
    out.encode("utf-8")
