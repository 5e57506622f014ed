"""A project's repository is not ours (issue 34, item 1): no program its git config, attributes, hooks or
remotes name ever runs while dreamtui reads it.

Each test builds a real repository whose ``.git/config`` (or ``.git/info/attributes``, or a hook) names a
program that writes a marker file, runs dreamtui's real code over it — the repository a session ran in
(``repository.by_git``) and the consolidation finders that read its history (``git log -S`` on
``package.json`` and the ``Makefile``, the deleted and renamed paths, the files at HEAD) — and checks
the marker never appears. The finders still find what a complete repository proves."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakes.cli_world import folder_args
from fakes.gitrepo import git as sh
from fakes.transcript import write_session

from dreamtui.core import foreign_git, repository
from dreamtui.core.config import Config
from dreamtui.core.dream import consolidate_find as find
from dreamtui.core.ingest.projects import encode_path
from dreamtui.core.memory.layout import project_folder

NOW = "2026-04-02T09:00:00Z"
WRITTEN = 1775116800.0  # 2026-04-02T08:00:00Z: an hour before NOW


@pytest.fixture(autouse=True)
def _home(git_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DREAMTUI_NOW", NOW)


def topic(name: str, body: str) -> str:
    return f"---\nname: {name}\ndescription: {name}\ntype: project\n---\n\n{body}\n"


MEMORIES = {
    "settings.md": topic("Settings", "The settings live in src/settings.py; edit them there."),
    "lint.md": topic("Lint", "Always run npm run lint before committing."),
    "deploy.md": topic("Deploy", "Ship it with make deploy from the main branch."),
    "helper.md": topic("Helper", "The shared helper is in lib/old.py and returns 42."),
}
FOUND = {"settings.md": "retire", "lint.md": "retire", "deploy.md": "retire", "helper.md": "update"}


class Marker:
    """Programs that record that they ran, in one file."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.file = folder / "RAN"

    def program(self, name: str) -> str:
        """An executable that appends ``name`` and its arguments to the marker file, then prints its
        first argument's content (as a textconv would)."""
        path = self.folder / f"evil-{name}"
        path.write_text(f'#!/bin/sh\necho "{name} $*" >> "{self.file}"\ncat "$1" 2>/dev/null\nexit 0\n')
        path.chmod(0o755)
        return str(path)

    @property
    def ran(self) -> str:
        return self.file.read_text() if self.file.exists() else ""


@pytest.fixture
def marker(tmp_path: Path) -> Marker:
    folder = tmp_path / "programs"
    folder.mkdir()
    return Marker(folder)


def project_repo(where: Path) -> Path:
    """A project whose history had ``src/settings.py``, a ``lint`` script and a ``make deploy`` target,
    all gone at HEAD, and ``lib/old.py`` renamed to ``lib/new.py``."""
    where.mkdir(parents=True)
    sh(where, "init", "-q", "-b", "main")
    (where / "src").mkdir()
    (where / "lib").mkdir()
    (where / "src" / "settings.py").write_text("DEBUG = False\n")
    (where / "lib" / "old.py").write_text("def helper():\n    return 42\n" * 5)
    (where / "package.json").write_text(json.dumps({"scripts": {"lint": "eslint .", "test": "vitest"}}))
    (where / "Makefile").write_text("deploy:\n\t./deploy.sh\n\nbuild:\n\tcc main.c\n")
    sh(where, "add", "-A")
    sh(where, "commit", "-q", "-m", "first")
    (where / "src" / "settings.py").unlink()
    sh(where, "mv", "lib/old.py", "lib/new.py")
    (where / "package.json").write_text(json.dumps({"scripts": {"test": "vitest"}}))
    (where / "Makefile").write_text("build:\n\tcc main.c\n")
    sh(where, "add", "-A")
    sh(where, "commit", "-q", "-m", "second")
    return where


def memory_repo(config: Config, project: str) -> Path:
    root = config.memory
    root.mkdir(parents=True)
    sh(root, "init", "-q", "-b", "main")
    folder = root / "projects" / project_folder(project)
    folder.mkdir(parents=True)
    for name, text in MEMORIES.items():
        (folder / name).write_text(text)
    (root / "MEMORY.md").write_text(
        "# Memory\n"
        + "".join(f"- [{n[:-3]}](projects/{project_folder(project)}/{n}) — hook\n" for n in MEMORIES)
    )
    sh(root, "add", "-A")
    sh(root, "commit", "-q", "-m", "memories")
    return root


def partial_clone(source: Path, where: Path) -> Path:
    """A blobless clone of ``source``: every file's content is fetched from its remote when first read."""
    sh(source, "config", "uploadpack.allowFilter", "true")
    subprocess.run(
        ["git", "clone", "-q", "--no-checkout", "--filter=blob:none", f"file://{source}", str(where)],
        check=True,
        capture_output=True,
    )
    return where


def read_everything(config: Config, repo: Path) -> dict[str, str]:
    """What dreamtui does in a session's repository: find it from a folder inside it, and run every
    consolidation finder over its history. The kinds proposed, by memory file."""
    repository.by_git.cache_clear()
    inside = repo / "src"
    inside.mkdir(exist_ok=True)
    assert repository.repository_root(str(inside)) == str(repo.resolve())
    project = "-home-kim-shop"
    root = config.memory if config.memory.exists() else memory_repo(config, project)
    items = find.find_offline(root, project, repo)
    return {item.targets[0].rsplit("/", 1)[-1]: item.kind for item in items}


# -- one test per mechanism ---------------------------------------------------------------------------


def test_a_textconv_in_the_projects_config_never_runs_and_the_history_is_still_read(
    config: Config, tmp_path: Path, marker: Marker
) -> None:
    repo = project_repo(tmp_path / "shop")
    sh(repo, "config", "diff.evil.textconv", marker.program("textconv"))
    (repo / ".git" / "info" / "attributes").write_text("* diff=evil\n")
    assert read_everything(config, repo) == FOUND
    assert marker.ran == ""


def test_a_textconv_pulled_in_by_include_path_never_runs(
    config: Config, tmp_path: Path, marker: Marker
) -> None:
    repo = project_repo(tmp_path / "shop")
    included = tmp_path / "more.cfg"
    included.write_text(f'[diff "evil"]\n\ttextconv = {marker.program("include")}\n')
    sh(repo, "config", "include.path", str(included))
    (repo / "package.json").write_text(json.dumps({"scripts": {"test": "vitest"}}))
    (repo / ".gitattributes").write_text("package.json diff=evil\nMakefile diff=evil\n")
    sh(repo, "add", ".gitattributes")
    sh(repo, "commit", "-q", "-m", "attributes")
    assert read_everything(config, repo) == FOUND
    assert marker.ran == ""


def test_a_signature_check_asked_for_by_the_projects_config_never_runs_gpg(
    config: Config, tmp_path: Path, marker: Marker
) -> None:
    repo = project_repo(tmp_path / "shop")
    signer = tmp_path / "sign"
    signer.write_text(  # what git reads from gpg when it signs: a status line and an armoured block
        "#!/bin/sh\ncat >/dev/null\necho '[GNUPG:] SIG_CREATED ' >&2\n"
        "echo '-----BEGIN PGP SIGNATURE-----'\necho x\necho '-----END PGP SIGNATURE-----'\n"
    )
    signer.chmod(0o755)
    (repo / "Makefile").unlink()  # a signed commit that the deleted-paths log shows
    (repo / "package.json").write_text(json.dumps({"scripts": {}}))
    sh(repo, "add", "-A")
    sh(repo, "-c", f"gpg.program={signer}", "commit", "-q", "-S", "-m", "signed")
    sh(repo, "config", "log.showSignature", "true")
    sh(repo, "config", "gpg.program", marker.program("gpg"))
    sh(repo, "config", "gpg.format", "openpgp")
    found = read_everything(config, repo)
    assert found["settings.md"] == "retire" and found["lint.md"] == "retire"
    assert marker.ran == ""


def test_an_external_diff_in_config_attributes_or_dreamtuis_environment_never_runs(
    config: Config, tmp_path: Path, marker: Marker, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = project_repo(tmp_path / "shop")
    sh(repo, "config", "diff.external", marker.program("diff.external"))
    sh(repo, "config", "diff.evil.command", marker.program("diff.command"))
    (repo / ".git" / "info" / "attributes").write_text("* diff=evil\n")
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", marker.program("GIT_EXTERNAL_DIFF"))
    assert read_everything(config, repo) == FOUND
    assert marker.ran == ""


def test_clean_smudge_and_process_filters_never_run(config: Config, tmp_path: Path, marker: Marker) -> None:
    repo = project_repo(tmp_path / "shop")
    for kind in ("clean", "smudge", "process"):
        sh(repo, "config", f"filter.evil.{kind}", marker.program(f"filter.{kind}"))
    sh(repo, "config", "filter.evil.required", "true")
    (repo / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    assert read_everything(config, repo) == FOUND
    assert marker.ran == ""


def test_an_fsmonitor_program_never_runs(config: Config, tmp_path: Path, marker: Marker) -> None:
    repo = project_repo(tmp_path / "shop")
    sh(repo, "config", "core.fsmonitor", marker.program("fsmonitor"))
    assert read_everything(config, repo) == FOUND
    assert marker.ran == ""


HOOKS = [
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
]


def test_no_hook_of_the_project_runs_from_its_hooks_folder_or_a_configured_one(
    config: Config, tmp_path: Path, marker: Marker
) -> None:
    repo = project_repo(tmp_path / "shop")
    elsewhere = tmp_path / "hooks"
    elsewhere.mkdir()
    for name in HOOKS:
        for folder in (repo / ".git" / "hooks", elsewhere):
            shutil.copy(marker.program(f"hook-{name}"), folder / name)
    assert read_everything(config, repo) == FOUND
    sh(repo, "config", "core.hooksPath", str(elsewhere))
    assert read_everything(config, repo) == FOUND
    assert marker.ran == ""


def test_a_pager_the_project_configures_never_runs(config: Config, tmp_path: Path, marker: Marker) -> None:
    repo = project_repo(tmp_path / "shop")
    sh(repo, "config", "core.pager", marker.program("core.pager"))
    for command in ("log", "show", "cat-file", "ls-tree", "rev-parse"):
        sh(repo, "config", f"pager.{command}", marker.program(f"pager.{command}"))
    assert read_everything(config, repo) == FOUND
    assert marker.ran == ""
    assert "--no-pager" in foreign_git.argv(repo, "log")
    assert foreign_git.environment()["GIT_PAGER"] == "cat"


def test_a_partial_clones_lazy_fetch_never_runs_the_remotes_upload_pack(
    config: Config, tmp_path: Path, marker: Marker
) -> None:
    repo = partial_clone(project_repo(tmp_path / "origin"), tmp_path / "shop")
    sh(repo, "config", "remote.origin.uploadpack", marker.program("uploadpack"))
    read_everything(config, repo)  # what is not here cannot be read; nothing is fetched
    assert marker.ran == ""


def test_core_ssh_command_never_runs_from_config_or_dreamtuis_environment(
    config: Config, tmp_path: Path, marker: Marker, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = partial_clone(project_repo(tmp_path / "origin"), tmp_path / "shop")
    sh(repo, "config", "remote.origin.url", "ssh://git.example.invalid/shop.git")
    sh(repo, "config", "core.sshCommand", marker.program("core.sshCommand"))
    sh(repo, "config", "protocol.ssh.allow", "always")
    read_everything(config, repo)
    assert marker.ran == ""
    shutil.rmtree(config.memory)
    sh(repo, "config", "--unset", "core.sshCommand")
    monkeypatch.setenv("GIT_SSH_COMMAND", marker.program("GIT_SSH_COMMAND"))
    monkeypatch.setenv("GIT_SSH", marker.program("GIT_SSH"))
    read_everything(config, repo)
    assert marker.ran == ""


def test_core_git_proxy_never_runs(config: Config, tmp_path: Path, marker: Marker) -> None:
    repo = partial_clone(project_repo(tmp_path / "origin"), tmp_path / "shop")
    sh(repo, "config", "remote.origin.url", "git://git.example.invalid/shop.git")
    sh(repo, "config", "core.gitProxy", marker.program("core.gitProxy"))
    sh(repo, "config", "protocol.git.allow", "always")
    read_everything(config, repo)
    assert marker.ran == ""


def test_an_ext_remote_the_project_allows_never_runs(config: Config, tmp_path: Path, marker: Marker) -> None:
    repo = partial_clone(project_repo(tmp_path / "origin"), tmp_path / "shop")
    sh(repo, "config", "remote.origin.url", f"ext::{marker.program('ext')} %S")
    sh(repo, "config", "protocol.ext.allow", "always")
    sh(repo, "config", "protocol.allow", "always")
    read_everything(config, repo)
    assert marker.ran == ""


@pytest.fixture
def asks_for_a_password() -> Iterator[str]:
    """A local HTTP server that answers every request 401, so git asks for credentials."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="shop"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = do_GET

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/shop.git"
    server.shutdown()
    server.server_close()


def test_a_credential_helper_and_askpass_the_project_names_never_run(
    config: Config, tmp_path: Path, marker: Marker, asks_for_a_password: str
) -> None:
    repo = partial_clone(project_repo(tmp_path / "origin"), tmp_path / "shop")
    sh(repo, "config", "remote.origin.url", asks_for_a_password)
    sh(repo, "config", "credential.helper", "!" + marker.program("credential.helper"))
    sh(repo, "config", f"credential.{asks_for_a_password}.helper", marker.program("credential.url.helper"))
    sh(repo, "config", "core.askPass", marker.program("core.askPass"))
    sh(repo, "config", "protocol.http.allow", "always")
    read_everything(config, repo)
    assert marker.ran == ""


def test_a_repository_named_by_dreamtuis_own_git_dir_is_not_the_one_asked_about(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """dreamtui run from another repository's hook inherits its ``GIT_DIR``: the session's folder still
    says which repository the session belongs to."""
    repo = project_repo(tmp_path / "shop")
    other = project_repo(tmp_path / "other")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    repository.by_git.cache_clear()
    assert repository.by_git(str(repo / "lib")) == str(repo.resolve())


def test_only_reading_commands_run_in_a_project_repository() -> None:
    with pytest.raises(ValueError, match="not a reading command"):
        foreign_git.argv("/tmp", "commit")
    for command in ("log", "diff-tree"):
        line = foreign_git.argv("/tmp", command)
        assert {"--no-textconv", "--no-ext-diff"} <= set(line)


def test_a_git_that_hangs_is_stopped_at_the_timeout_with_what_it_started(tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    repo.mkdir()
    sh(repo, "init", "-q")
    fifo = tmp_path / "config-include"
    os.mkfifo(fifo)  # git reading an included config that never ends
    sh(repo, "config", "include.path", str(fifo))
    assert foreign_git.run(repo, "rev-parse", "--git-dir", timeout=0.5) is None


# -- the repro: a plain `dreamtui dream` ----------------------------------------------------


def test_dreamtui_dream_over_a_session_in_a_repository_with_a_textconv_never_runs_it(
    config: Config, tmp_path: Path, marker: Marker
) -> None:
    repo = project_repo(tmp_path / "kim" / "shop")
    sh(repo, "config", "diff.evil.textconv", marker.program("textconv"))
    (repo / ".git" / "info" / "attributes").write_text("* diff=evil\n")
    project = encode_path(str(repo))
    memory_repo(config, project)
    session = write_session(
        config.transcripts,
        [(role, text) for _ in range(8) for role, text in TALK],
        project=project,
        cwd=str(repo),
    )
    os.utime(session, (WRITTEN, WRITTEN))
    result = CliRunner().invoke(_cli(), [*folder_args(config), "dream", "--extractor", "heuristic"])
    assert result.exit_code == 0, result.output
    assert marker.ran == ""
    listed = CliRunner().invoke(_cli(), [*folder_args(config), "consolidate", "--all", "--json"])
    found = {item["targets"][0].rsplit("/", 1)[-1]: item["evidence"] for item in json.loads(listed.output)}
    assert set(found) == set(FOUND) and "has no script 'lint'" in found["lint.md"]


TALK = (
    ("person", "We changed how the shop builds: the lint script is gone, biome checks everything now."),
    ("assistant", "Understood, I will use the new check instead of the old lint step from now on."),
)


def _cli() -> Callable[..., object]:
    from dreamtui.cli.main import cli

    return cli


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a folder away needs root")
def test_a_repository_another_user_owns_is_read_only_when_the_person_trusts_it(
    tmp_path: Path, git_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = project_repo(tmp_path / "shop")
    for path in (repo, *repo.rglob("*")):
        os.lchown(path, 4242, 4242)
    monkeypatch.delenv("SUDO_UID", raising=False)
    # the repository's own config cannot say it is safe: git reads safe.directory from the person's only
    sh(repo, "config", "--file", str(repo / ".git" / "config"), "safe.directory", "*")
    repository.by_git.cache_clear()
    assert repository.by_git(str(repo / "lib")) is None
    with (git_home / ".gitconfig").open("a") as config:
        config.write(f"[safe]\n\tdirectory = {repo}\n")
    repository.by_git.cache_clear()
    assert repository.by_git(str(repo / "lib")) == str(repo)
