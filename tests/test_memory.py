"""Memory layout: slugs, safe paths, atomic writes, the index line and the index ceiling."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dreamtui.core.errors import MemoryRepoError
from dreamtui.core.memory import layout as memory


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_slugs_are_always_short_safe_ascii(text: str) -> None:
    slug = memory.slugify(text)
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", slug)
    assert 1 <= len(slug) <= memory.SLUG_MAX + len("-note")
    assert slug.split(".")[0] not in {"con", "nul", "aux", "prn"}


@pytest.mark.parametrize(
    "text, slug",
    [
        ("Always run `pytest -q` before committing!", "always-run-pytest-q-before-committing"),
        ("Évitez les caches périmés", "evitez-les-caches-perimes"),
        ("../../etc/passwd", "etc-passwd"),
        (".git/config", "git-config"),
        ("CON", "con-note"),
        ("nul", "nul-note"),
        ("Memory", "memory-note"),
        ("🎉🎉", "memory-note"),
        ("", "memory-note"),
        ("\x1b[31mred\x1b[0m alert", "red-alert"),
    ],
)
def test_slugify(text: str, slug: str) -> None:
    assert memory.slugify(text) == slug


def test_very_long_titles_give_bounded_slugs_and_index_lines() -> None:
    title = "word " * 500 + "x" * 5000
    slug = memory.slugify(title)
    assert len(slug) <= memory.SLUG_MAX
    assert len(memory.slugify("x" * 5000)) == memory.SLUG_MAX
    line = memory.index_line(title, f"{slug}.md", title)
    assert len(line) < 300 and "\n" not in line


def test_unique_slug_suffixes_on_collision_case_insensitively(tmp_path: Path) -> None:
    (tmp_path / "Run-Tests.md").write_text("x")
    assert memory.unique_slug(tmp_path, "run-tests") == "run-tests-2"
    (tmp_path / "run-tests-2.md").write_text("x")
    assert memory.unique_slug(tmp_path, "run-tests") == "run-tests-3"
    assert memory.unique_slug(tmp_path, "other", taken={"other"}) == "other-2"
    assert memory.unique_slug(tmp_path / "missing", "fresh") == "fresh"


@pytest.mark.parametrize(
    "rel, why",
    [
        ("../x.md", "not allowed"),
        ("a/../../x.md", "not allowed"),
        ("/etc/passwd", "relative"),
        ("C:/x.md", "relative"),
        (".git/config", ".git"),
        (".GIT/hooks/pre-commit", ".git"),
        ("projects/.Git/x.md", ".git"),
        (".git./x", ".git"),
        ("GIT~1/x", ".git"),
        ("CON.md", "reserved"),
        ("projects/nul/x.md", "reserved"),
        ("com1.txt", "reserved"),
        ("a\x00b.md", "NUL"),
        ("a" * 300 + ".md", "255 bytes"),
        ("a\\b.md", "character"),
        ("a//b.md", "not allowed"),
        ("", "relative"),
    ],
)
def test_unsafe_paths_are_refused(tmp_path: Path, rel: str, why: str) -> None:
    with pytest.raises(MemoryRepoError, match=re.escape(why)):
        memory.safe_path(tmp_path, rel)


def test_symlinks_are_refused_at_every_component(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "repo"
    (root / "projects").mkdir(parents=True)
    os.symlink(outside, root / "projects" / "evil")
    os.symlink(outside / "target.md", root / "link.md")
    with pytest.raises(MemoryRepoError, match="symlink"):
        memory.safe_path(root, "projects/evil/x.md")
    with pytest.raises(MemoryRepoError, match="symlink"):
        memory.atomic_write(root, "projects/evil/x.md", b"data")
    with pytest.raises(MemoryRepoError, match="symlink"):
        memory.atomic_write(root, "link.md", b"data")
    with pytest.raises(MemoryRepoError, match="not a plain folder"):
        memory.make_dirs(root, "projects/evil/deeper")
    assert list(outside.iterdir()) == []


def test_a_file_where_a_folder_should_be_is_refused(tmp_path: Path) -> None:
    (tmp_path / "projects").write_text("not a folder")
    with pytest.raises(MemoryRepoError, match="not a folder"):
        memory.safe_path(tmp_path, "projects/p/x.md")


def test_atomic_write_replaces_whole_file_and_leaves_no_temp(tmp_path: Path) -> None:
    memory.atomic_write(tmp_path, "MEMORY.md", b"one\n")
    memory.atomic_write(tmp_path, "MEMORY.md", b"two\n")
    assert (tmp_path / "MEMORY.md").read_bytes() == b"two\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["MEMORY.md"]

    def boom() -> None:
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        memory.atomic_write(tmp_path, "MEMORY.md", b"three\n", crash_hook=boom)
    assert (tmp_path / "MEMORY.md").read_bytes() == b"two\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["MEMORY.md"]


def test_make_dirs_reports_what_it_created(tmp_path: Path) -> None:
    (tmp_path / "projects").mkdir()
    assert memory.make_dirs(tmp_path, "projects/p1/sub") == ["projects/p1", "projects/p1/sub"]
    assert memory.make_dirs(tmp_path, "projects/p1/sub") == []


def test_topic_paths() -> None:
    assert memory.topic_rel_path("global", "-home-me-app", "run-tests") == "run-tests.md"
    assert (
        memory.topic_rel_path("project", "-home-me-app", "run-tests") == "projects/home-me-app/run-tests.md"
    )
    # a name that is no Claude Code path keeps a readable slug plus a hash of the exact name, never ".."
    evil = memory.topic_rel_path("-home-me-app", "../../evil", "x")
    assert evil.startswith("projects/evil--") and evil.endswith("/x.md") and ".." not in evil


def test_index_line_is_one_clean_line() -> None:
    line = memory.index_line("Use [brackets]\nand \x1b[1mANSI\x1b[0m", "a b.md", "hook\r\nwith break")
    assert line == "- [Use (brackets) and ANSI](a%20b.md) — hook with break"
    assert memory.index_line("T", "t.md", "") == "- [T](t.md)"


def test_index_add_and_remove_line() -> None:
    text = memory.add_index_line("- [A](a.md) — a", "- [B](b.md) — b")
    assert text == "- [A](a.md) — a\n- [B](b.md) — b\n"
    assert memory.remove_index_line(text, "- [A](a.md) — a") == "- [B](b.md) — b\n"
    assert memory.remove_index_line(text, "- [Z](z.md)") == text


def test_ceiling_status_counts_lines_and_bytes(tmp_path: Path) -> None:
    assert memory.ceiling_status(tmp_path).pct == 0
    (tmp_path / "MEMORY.md").write_text("- x\n" * 100)
    status = memory.ceiling_status(tmp_path)
    assert (status.lines, status.bytes, status.pct, status.warn) == (100, 400, 50.0, False)
    assert memory.ceiling_warning(status) is None


def test_ceiling_warns_from_85_percent_of_lines_or_bytes() -> None:
    assert not memory.ceiling_of("- x\n" * 169).warn
    at_85 = memory.ceiling_of("- x\n" * 170)
    assert at_85.warn and at_85.pct == 85.0
    warning = memory.ceiling_warning(at_85)
    assert warning is not None and "85%" in warning and "170/200 lines" in warning
    by_bytes = memory.ceiling_of(("- " + "y" * 2200 + "\n") * 10)
    assert by_bytes.lines == 10 and by_bytes.warn


def test_ceiling_refuses_past_100_percent_with_what_to_do() -> None:
    assert memory.check_ceiling("- x\n" * 200).pct == 100.0
    with pytest.raises(MemoryRepoError, match=r"201 lines.*past the ceiling.*merge or remove index lines"):
        memory.check_ceiling("- x\n" * 201)
    with pytest.raises(MemoryRepoError, match="25,000 bytes"):
        memory.check_ceiling("y" * 25_001 + "\n")


def test_clean_text_strips_escapes_and_controls() -> None:
    assert (
        memory.clean_text("a\x1b]8;;http://x\x07link\x1b]8;;\x07 \x1b[31mred\x1b[0m\x00\r\nb\u2028c")
        == "alink red\nb\nc"
    )
    assert memory.clean_text("[bold]rich[/bold]") == "[bold]rich[/bold]"


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "a",
                "B",
                ".",
                "/",
                "\\",
                "\x00",
                "git",
                "GIT",
                "con",
                "~1",
                " ",
                "é",
                "\ud800",
                "\udcff",
                ":",
                "..",
            ]
        ),
        max_size=20,
    ).map("".join)
)
def test_safe_path_never_escapes_and_never_crashes(tmp_path_factory, rel: str) -> None:
    root = tmp_path_factory.getbasetemp() / "safe-root"
    root.mkdir(exist_ok=True)
    try:
        path = memory.safe_path(root, rel)
    except MemoryRepoError:
        return
    inside = path.relative_to(root)
    assert ".." not in inside.parts
    assert all(p.rstrip(". ").lower() != ".git" for p in inside.parts)


def test_index_lines_keep_the_files_crlf_endings() -> None:
    from dreamtui.core.memory.layout import add_index_line, remove_index_line

    crlf = "- [A](a.md) — a\r\n- [B](b.md) — b"
    added = add_index_line(crlf, "- [C](c.md) — c")
    assert added == "- [A](a.md) — a\r\n- [B](b.md) — b\r\n- [C](c.md) — c\r\n"
    assert add_index_line("", "- [C](c.md) — c") == "- [C](c.md) — c\n"
    assert remove_index_line(added, "- [C](c.md) — c") == "- [A](a.md) — a\r\n- [B](b.md) — b\r\n"


@pytest.mark.usefixtures("git_home")
def test_ceiling_warning_never_says_full_while_there_is_room() -> None:
    from dreamtui.core.memory.layout import ceiling_of, ceiling_warning

    text = "".join(f"- [m{i}](m{i}.md) — hook\n" for i in range(199))
    warning = ceiling_warning(ceiling_of(text))
    assert warning is not None and "at 99% " in warning and "(199/200 lines" in warning
    assert "at 100% " in (ceiling_warning(ceiling_of(text + "- [x](x.md) — y\n")) or "")
