"""``plan_normalize`` / ``apply_normalize``: offenders are listed, fixed as one commit, nothing is lost."""

from __future__ import annotations

from pathlib import Path

import pytest

from dreamtui.core.config import Config
from dreamtui.core.dream import promotion
from dreamtui.core.errors import MemoryRepoError
from dreamtui.core.memory import frontmatter, gitops
from dreamtui.core.memory.normalize import apply_normalize, plan_normalize, problems_of, topic_files

GOOD = frontmatter.dump(
    {
        "name": "Run focused tests first",
        "description": "Run the one test file before the suite",
        "type": "feedback",
        "source_session": "s1",
        "quote": "run the focused tests",
        "verified_line": 3,
        "candidate": "c123",
        "created": "2026-09-01T09:00:00Z",
        "extractor": "heuristic",
    },
    "Run tests/test_x.py first.\n",
)


def write_repo(config: Config, files: dict[str, str]) -> None:
    """A memory repo with ``files`` committed."""
    repo = gitops.open_repo(config.memory)
    for rel, text in files.items():
        path = Path(config.memory) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    gitops.commit_paths(repo, list(files), "seed", {})


@pytest.fixture
def repo_files(config: Config) -> dict[str, str]:
    files = {
        "MEMORY.md": "# Memory\n- [Run focused tests first](run-focused-tests-first.md) — hook\n",
        "briefing.md": "# Briefing\nno frontmatter, not a topic file\n",
        "promotion.md": "# Auto-write promotion\n",
        "reviews/review-2026-09-01.md": "# Review\n",
        "run-focused-tests-first.md": GOOD,
        "feedback_commit_style.md": "# Commit style\n\nUse the imperative mood in commit subjects.\n",
        "projects/proj/aliases.md": (
            '---\ntitle: Use uv\nsummary: Prefer uv over pip\nkind: Project\nline: "12"\n'
            "tags: tooling\n---\nUse uv for installs.\n"
        ),
        "projects/proj/broken.md": "---\nname: Broken\ndescription: |\n  multi\n  line\ntype: user\n---\nbody\n",
        "projects/proj/untyped.md": "---\nname: No type\ndescription: Type cannot be guessed\n---\nbody\n",
    }
    write_repo(config, files)
    return files


def by_path(plan):
    return {c.path: c for c in plan}


def test_topic_files_are_the_layout_only(config: Config, repo_files: dict[str, str]) -> None:
    rels = {p.relative_to(config.memory).as_posix() for p in topic_files(config)}
    assert rels == {
        "run-focused-tests-first.md",
        "feedback_commit_style.md",
        "projects/proj/aliases.md",
        "projects/proj/broken.md",
        "projects/proj/untyped.md",
    }


def test_plan_lists_each_offender_with_its_problems(config: Config, repo_files: dict[str, str]) -> None:
    plan = by_path(plan_normalize(config))
    assert set(plan) == {
        "feedback_commit_style.md",
        "projects/proj/aliases.md",
        "projects/proj/broken.md",
        "projects/proj/untyped.md",
    }
    assert plan["feedback_commit_style.md"].problems == ["no frontmatter"]
    assert "unknown field title" in plan["projects/proj/aliases.md"].problems
    assert plan["projects/proj/broken.md"].problems[0].startswith("unreadable frontmatter")
    assert plan["projects/proj/untyped.md"].problems == ["missing type"]
    # the plan is only a plan: nothing on disk changed
    assert (Path(config.memory) / "feedback_commit_style.md").read_text() == repo_files[
        "feedback_commit_style.md"
    ]


def test_a_file_without_frontmatter_gets_one_from_its_name_heading_and_first_line(
    config: Config, repo_files: dict[str, str]
) -> None:
    change = by_path(plan_normalize(config))["feedback_commit_style.md"]
    assert change.fixable
    meta, body = frontmatter.parse(change.after or "")
    assert meta == {
        "name": "Commit style",
        "description": "Use the imperative mood in commit subjects.",
        "type": "feedback",
    }
    assert body == repo_files["feedback_commit_style.md"]
    assert "+type: feedback" in change.diff()


def test_aliases_are_renamed_and_unknown_fields_kept_in_the_body(
    config: Config, repo_files: dict[str, str]
) -> None:
    change = by_path(plan_normalize(config))["projects/proj/aliases.md"]
    assert change.fixable, change.remaining
    meta, body = frontmatter.parse(change.after or "")
    assert meta == {
        "name": "Use uv",
        "description": "Prefer uv over pip",
        "type": "project",
        "verified_line": 12,
    }
    assert frontmatter.validate(meta) == []
    assert "tags: tooling" in body and body.startswith("Use uv for installs.\n")


def test_what_cannot_be_fixed_waits_for_a_person(config: Config, repo_files: dict[str, str]) -> None:
    plan = by_path(plan_normalize(config))
    assert not plan["projects/proj/broken.md"].fixable and plan["projects/proj/broken.md"].after is None
    assert not plan["projects/proj/untyped.md"].fixable
    assert plan["projects/proj/untyped.md"].remaining == ["missing type"]


def test_apply_rewrites_the_fixable_offenders_as_one_commit(
    config: Config, repo_files: dict[str, str]
) -> None:
    repo = gitops.open_repo(config.memory)
    # a person's own staged work must not be swept into the commit
    (Path(config.memory) / "notes.txt").write_text("mine\n")
    repo.git.add("notes.txt")
    before_head = gitops.head_sha(repo)
    sha = apply_normalize(config, plan_normalize(config))
    assert sha and sha != before_head
    assert repo.commit(sha).parents[0].hexsha == before_head  # exactly one new commit
    assert sorted(gitops.changed_paths(repo, sha)) == ["feedback_commit_style.md", "projects/proj/aliases.md"]
    assert gitops.list_commits(repo, limit=1)[0].trailers == {"Dreamtui-Normalize": ["yes"]}
    assert gitops.status(repo, ["notes.txt"]) == {"notes.txt": "A "}
    assert problems_of(Path(config.memory) / "feedback_commit_style.md") == []
    left = {c.path for c in plan_normalize(config)}
    assert left == {"projects/proj/broken.md", "projects/proj/untyped.md"}
    gate = promotion.schema_gate(config)
    assert not gate.passed
    assert [o["path"] for o in gate.evidence["offenders"]] == [
        "projects/proj/broken.md",
        "projects/proj/untyped.md",
    ]


def test_apply_refuses_a_file_changed_since_the_plan(config: Config, repo_files: dict[str, str]) -> None:
    plan = plan_normalize(config)
    target = Path(config.memory) / "feedback_commit_style.md"
    target.write_text("# Commit style\n\nEdited meanwhile.\n")
    with pytest.raises(MemoryRepoError, match="changed since the plan"):
        apply_normalize(config, plan)
    assert target.read_text() == "# Commit style\n\nEdited meanwhile.\n"
    assert (
        "Dreamtui-Normalize" not in gitops.list_commits(gitops.open_repo(config.memory), limit=1)[0].trailers
    )


def test_a_merge_in_progress_is_refused_before_writing(config: Config, repo_files: dict[str, str]) -> None:
    repo = gitops.open_repo(config.memory)
    (Path(repo.git_dir) / "MERGE_HEAD").write_text(gitops.head_sha(repo) or "")
    with pytest.raises(MemoryRepoError, match="merge is in progress"):
        apply_normalize(config, plan_normalize(config))
    assert (Path(config.memory) / "feedback_commit_style.md").read_text() == repo_files[
        "feedback_commit_style.md"
    ]


def test_a_failed_commit_puts_every_file_back(
    config: Config, repo_files: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = gitops.open_repo(config.memory)
    plan = plan_normalize(config)
    hook = Path(repo.git_dir) / "hooks" / "pre-commit"  # the person's hook refuses the commit
    hook.write_text("#!/bin/sh\necho 'frontmatter is frozen' >&2\nexit 1\n")
    hook.chmod(0o755)
    index = repo.git.execute(["git", "ls-files", "-s"])
    with pytest.raises(MemoryRepoError, match="the pre-commit hook failed .*: frontmatter is frozen"):
        apply_normalize(config, plan)
    assert repo.git.execute(["git", "ls-files", "-s"]) == index
    for rel in ("feedback_commit_style.md", "projects/proj/aliases.md"):
        assert (Path(config.memory) / rel).read_text() == repo_files[rel]


def test_nothing_fixable_means_no_commit(config: Config) -> None:
    write_repo(config, {"ok.md": GOOD})
    assert plan_normalize(config) == []
    assert apply_normalize(config, []) is None
    assert promotion.schema_gate(config).passed


# -- nothing is ever lost ------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from dreamtui.core.memory.normalize import normalize_text  # noqa: E402

_keys = st.sampled_from(
    [
        "name",
        "title",
        "description",
        "summary",
        "type",
        "kind",
        "tags",
        "owner",
        "session",
        "source_session",
        "line",
        "x-note",
        "date",
    ]
)
_values = st.one_of(st.text(max_size=40), st.integers(-5, 10_000), st.booleans(), st.none())


@settings(max_examples=80, deadline=None)
@given(meta=st.dictionaries(_keys, _values, max_size=8), body=st.text(max_size=80))
def test_normalize_keeps_every_value_and_round_trips(meta: dict, body: str) -> None:
    text = frontmatter.dump(meta, body)
    after, _fixes = normalize_text(text, "feedback_some_topic")
    assert after is not None
    new_meta, new_body = frontmatter.parse(after)  # what it writes is always readable
    assert set(new_meta) <= set(frontmatter.FIELDS)
    assert new_body.startswith(body.rstrip("\n")) or not body.strip()
    for key, value in meta.items():
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        kept_in_meta = any(
            v == value or str(v) == str(value) or v == " ".join(str(value).split()) for v in new_meta.values()
        )
        assert kept_in_meta or key in new_body, (key, value, after)
    assert normalize_text(after, "feedback_some_topic")[0] == after  # idempotent


def test_apply_refuses_a_file_with_the_persons_staged_version(
    config: Config, repo_files: dict[str, str]
) -> None:
    """``commit --only`` commits the working file: a staged version of the person's own would be lost."""
    rel = "projects/proj/aliases.md"
    path = Path(config.memory) / rel
    repo = gitops.open_repo(config.memory)
    path.write_text(repo_files[rel] + "Staged by me.\n", encoding="utf-8")
    repo.git.add(rel)
    path.write_text(repo_files[rel] + "Staged by me.\nThen more, unstaged.\n", encoding="utf-8")
    before = (repo.git.diff("--cached"), repo.git.diff())
    plan = plan_normalize(config)
    with pytest.raises(MemoryRepoError, match=f"{rel} .*uncommitted changes"):
        apply_normalize(config, plan)
    assert (repo.git.diff("--cached"), repo.git.diff()) == before
