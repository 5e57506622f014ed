"""Install in one line: the wheel ``uv tool install`` / ``pipx install`` build and install, run from a
fresh venv — ``dreamtui --version``, the bundled demo dreamed headless, and the README's first command
(``dreamtui --demo``) in a real terminal when tmux is there (``.ci/run`` installs it).

The wheel is built from a copy of the package's files (``pip wheel --no-deps``: no ``build/`` or
``*.egg-info`` left in the repository): without build isolation when this environment's setuptools
builds wheels itself (70.1 or later, or with the ``wheel`` package), else isolated, pip fetching
``setuptools`` and ``wheel`` from its index as ``pip install -e .`` does. The venv is a new one; the
wheel goes in with ``--no-deps --no-index``, and only then are its dependencies made visible from this
environment's site-packages (a ``.pth`` file, read after the venv's own: the wheel's dreamtui is the one
imported, never this checkout). No other download; about 30 s on a busy 2-core machine.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import site
import subprocess
import sys
import sysconfig
import uuid
import zipfile
from pathlib import Path

import pytest

from tests.test_tui_tmux import TMUX, queue_loaded, tmux, wait_screen

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent


def builds_wheels_offline() -> bool:
    """setuptools ≥ 70.1 carries ``bdist_wheel`` itself; an older one needs the ``wheel`` package."""
    try:
        import setuptools
    except ImportError:
        return False
    major, minor = (int(x) for x in re.findall(r"\d+", setuptools.__version__)[:2])
    if (major, minor) >= (70, 1):
        return True
    try:
        import wheel  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("src")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    shutil.copytree(
        REPO / "dreamtui", src / "dreamtui", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    dist = tmp_path_factory.mktemp("dist")
    no_isolation = ["--no-build-isolation"] if builds_wheels_offline() else []
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", *no_isolation, "-w", str(dist), str(src)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = dist.glob("dreamtui-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed (its dependencies: this environment's)."""
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=300)
    purelib = Path(
        subprocess.run(
            [str(root / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    done = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(root / "bin" / "python"), "install", "-q"]
        + ["--no-deps", "--no-index", "--ignore-installed", str(wheel)],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (purelib / "dreamtui" / "__init__.py").is_file()
    # only now this environment's packages (the dependencies): before, pip would see its dreamtui there
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *site.getsitepackages()}
    (purelib / "zz-test-deps.pth").write_text("\n".join(sorted(ours)) + "\n")
    return root


def clean_env(**extra: str) -> dict[str, str]:
    """The test's sandbox (conftest: its own HOME, no git identity), without this checkout on the path."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME"}}
    env.update(extra)
    return env


def test_the_wheel_carries_the_demo_and_the_package_data(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    demo = {n for n in names if n.startswith("dreamtui/demo/projects/") and n.endswith(".jsonl")}
    bundled = {
        f"dreamtui/{p.relative_to(REPO / 'dreamtui')}"
        for p in (REPO / "dreamtui/demo/projects").rglob("*.jsonl")
    }
    assert demo == bundled and len(demo) >= 4
    agents = {n for n in names if n.startswith("dreamtui/demo/agents/")}  # Codex's, Gemini's, Aider's
    bundled_agents = {
        f"dreamtui/{p.relative_to(REPO / 'dreamtui')}"
        for p in (REPO / "dreamtui/demo/agents").rglob("*")
        if p.is_file()
    }
    assert agents == bundled_agents and len(agents) >= 3
    for needed in ("dreamtui/tui/app.tcss", "dreamtui/py.typed", "dreamtui/core/secret_rules/gitleaks.toml"):
        assert needed in names
    entry = next(n for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "dreamtui = dreamtui.cli.main:main" in zipfile.ZipFile(wheel).read(entry).decode()


def test_the_installed_wheel_runs_version_and_the_demo_headless(venv: Path, tmp_path: Path) -> None:
    bin_dir = venv / "bin"
    where = subprocess.run(
        [str(bin_dir / "python"), "-c", "import dreamtui; print(dreamtui.__file__)"],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=tmp_path,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(venv), where  # the wheel's dreamtui, not this checkout
    version = subprocess.run(
        [str(bin_dir / "dreamtui"), "--version"],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=tmp_path,
    )
    assert version.returncode == 0 and re.fullmatch(r"dreamtui, version \d+\.\d+\.\d+\n", version.stdout)
    # the demo as --demo prepares it (one dream with the offline extractor), then its queue from the CLI
    demo = tmp_path / "demo"
    prepared = subprocess.run(
        [str(bin_dir / "python"), "-c", "import sys; from pathlib import Path; from dreamtui.demo import prepare_demo; "
         "c = prepare_demo(Path(sys.argv[1])); print(c.transcripts); print(c.memory); print(c.state)", str(demo)],
        capture_output=True, text=True, env=clean_env(), cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert prepared.returncode == 0, prepared.stderr
    transcripts, memory, state = prepared.stdout.split()
    listed = subprocess.run(
        [
            str(bin_dir / "dreamtui"),
            "--transcripts",
            transcripts,
            "--memory",
            memory,
            "--state",
            state,
            "candidates",
        ],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=tmp_path,
        timeout=600,
    )
    assert listed.returncode == 0, listed.stderr
    assert len([line for line in listed.stdout.splitlines() if line.strip()]) >= 3, listed.stdout


@pytest.mark.skipif(not TMUX, reason="needs tmux (the README's first command opens the app in a terminal)")
def test_the_readme_first_command_from_the_wheel(venv: Path, tmp_path: Path) -> None:
    """``dreamtui --demo`` from the installed wheel opens the review app on the bundled demo."""
    session = f"dreamtui-wheel-{uuid.uuid4().hex[:8]}"
    (tmp_path / "none.toml").touch()
    env = {
        **{k: os.environ[k] for k in ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "GIT_CONFIG_GLOBAL")},
        "DREAMTUI_DEMO_DIR": str(tmp_path / "demo"),
        "DREAMTUI_CONFIG": str(tmp_path / "none.toml"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "TERM": "xterm-256color",
    }
    words = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    command = f"env -u PYTHONPATH {words} {shlex.quote(str(venv / 'bin' / 'dreamtui'))} --demo; echo DREAMTUI-EXITED; sleep 30"
    assert TMUX
    subprocess.run(
        [
            TMUX,
            "-L",
            session,
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            session,
            "-x",
            "150",
            "-y",
            "45",
            command,
        ],
        check=True,
        env={**os.environ, "TMUX": ""},
    )
    try:
        wait_screen(session, queue_loaded, timeout=240)
        tmux(session, "send-keys", "-t", session, "q")
        wait_screen(session, lambda text: "DREAMTUI-EXITED" in text, timeout=120)
    finally:
        tmux(session, "kill-server", check=False)
