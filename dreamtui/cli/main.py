"""``dreamtui`` entry point: global options, error handling, and the sub-commands.

Each sub-command lives in its own module below ``dreamtui.cli`` and registers itself on :data:`cli`.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from dreamtui import __version__
from dreamtui.cli.app_cmd import run_app
from dreamtui.cli.output import echo
from dreamtui.core.config import Config, choices, folders_state, load_config
from dreamtui.core.errors import ConfigError, DreamError
from dreamtui.services import memory_repo
from dreamtui.services.dreaming import banner_lines_for


class DreamGroup(click.Group):
    """A group that turns :class:`DreamError` into one clear line on stderr, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except DreamError as exc:
            echo(f"dreamtui: {exc}", err=True)
            ctx.exit(2)
        finally:  # the yield floor and the index ceiling, on stderr after every sub-command
            if ctx.invoked_subcommand and isinstance(ctx.obj, Config):
                for line in banner_lines_for(ctx.obj):
                    echo(line, err=True)


@click.group(
    cls=DreamGroup, invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]}
)
@click.option(
    "--transcripts",
    type=click.Path(path_type=Path),
    default=None,
    help="Transcript folder (default ~/.claude/projects; env DREAMTUI_TRANSCRIPTS).",
)
@click.option(
    "--memory",
    type=click.Path(path_type=Path),
    default=None,
    help="Memory git repository (default ~/.claude/memory; env DREAMTUI_MEMORY).",
)
@click.option(
    "--state",
    type=click.Path(path_type=Path),
    default=None,
    help="State folder for the ledger and lock (default: the user state dir; env DREAMTUI_STATE).",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML config file (default: the user config dir; env DREAMTUI_CONFIG).",
)
@click.option(
    "--extractor",
    type=click.Choice(choices("extractor")),
    default=None,
    help="Which extractor proposes lessons (auto: the best one available; `dreamtui config` says which).",
)
@click.option("--model", default=None, help="Claude model for the anthropic and claude-code extractors.")
@click.option(
    "--demo", is_flag=True, help="Open the app on bundled demo transcripts in a temporary memory repo."
)
@click.option(
    "--init",
    "init",
    is_flag=True,
    help="Make the --memory folder a git repository even though it already holds files.",
)
@click.version_option(__version__, prog_name="dreamtui")
@click.pass_context
def cli(
    ctx: click.Context,
    transcripts: Path | None,
    memory: Path | None,
    state: Path | None,
    config_file: Path | None,
    extractor: str | None,
    model: str | None,
    demo: bool,
    init: bool,
) -> None:
    """dreamtui: dream over agent transcripts, propose memories, prove each one, let a person decide.

    With no sub-command, opens the review app on the configured folders.
    """
    ctx.obj = load_config(
        config_file,
        required=config_file is not None,
        transcripts=transcripts,
        memory=memory,
        state=state,
        extractor=extractor,
        model=model,
    )
    memory_repo.refuse_bare(ctx.obj)
    if not demo:
        # opening the app at a terminal, a yes adopts the folder as --init would
        ask = (
            click.confirm
            if ctx.invoked_subcommand is None and sys.stdin.isatty() and sys.stdout.isatty()
            else None
        )
        adopt_memory(ctx.obj, init, ask)
    if ctx.invoked_subcommand is None:
        run_app(ctx.obj, demo=demo)


def adopt_memory(config: Config, init: bool, ask: Callable[[str], bool] | None = None) -> None:
    """A memory folder that holds files but is not a git repository is refused (dreamtui would make it
    one and commit into it) unless ``--init`` says to, or ``ask`` (a yes/no question at the terminal,
    before the app opens) gets a yes: then it becomes a repository here, nothing else."""
    problem = memory_repo.foreign_folder_problem(config)
    if problem is None:
        return
    if not init and not (ask is not None and ask(f"{problem}. Make it a git repository now?")):
        raise ConfigError(problem)
    memory_repo.make_repository(config)
    echo(f"dreamtui: {config.memory} is now a git repository (--init)", err=True)


class CandidateId(click.ParamType):
    """A candidate id as typed in a shell: printable ASCII (ids are hex), so bytes that are not
    UTF-8 or escape codes are a usage error, not a crash in SQLite or in the terminal."""

    name = "ID"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if not text or not text.isascii() or not text.isprintable():
            self.fail(f"{text!r} is not a candidate id (see `dreamtui candidates`)", param, ctx)
        return text


CANDIDATE_ID = CandidateId()


def config_of(ctx: click.Context) -> Config:
    """The Config built by the group for this invocation."""
    obj = ctx.find_root().obj
    assert isinstance(obj, Config)
    return obj


def _folder_flags(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--transcripts/--memory/--state`` after a command's name (``opt_*`` parameters)."""
    for name, what in (
        ("state", "State folder"),
        ("memory", "Memory git repository"),
        ("transcripts", "Transcript folder"),
    ):
        func = click.option(
            f"--{name}",
            f"opt_{name}",
            type=click.Path(path_type=Path),
            default=None,
            help=f"{what} (overrides the global option).",
        )(func)
    return func


def pass_config(func: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a sub-command: it accepts ``--transcripts/--memory/--state`` after its name too,
    and receives the resulting :class:`Config` as its first argument."""

    @_folder_flags
    @click.pass_context
    @functools.wraps(func)
    def wrapper(
        ctx: click.Context,
        *args: Any,
        opt_transcripts: Path | None = None,
        opt_memory: Path | None = None,
        opt_state: Path | None = None,
        **kwargs: Any,
    ) -> Any:
        cfg = with_folders(ctx, opt_transcripts, opt_memory, opt_state)
        return func(cfg, *args, **kwargs)

    return wrapper


def with_folders(
    ctx: click.Context, transcripts: Path | None, memory: Path | None, state: Path | None
) -> Config:
    """The invocation's Config with the folder flags given after a command's name (a group's or a
    sub-command's) in place, stored back on the root context so what runs next and the banners after
    the command speak of the same folders. A state folder that was the default of the old folders
    follows the new ones (:func:`folders_state`)."""
    cfg = config_of(ctx)
    if not (transcripts or memory or state):
        return cfg
    new_transcripts = Path(os.path.expanduser(transcripts)) if transcripts else cfg.transcripts
    new_memory = Path(os.path.expanduser(memory)) if memory else cfg.memory
    if state:
        new_state = Path(os.path.expanduser(state))
    elif cfg.state == folders_state(cfg.transcripts, cfg.memory):
        new_state = folders_state(new_transcripts, new_memory)
    else:
        new_state = cfg.state
    cfg = cfg.changed(transcripts=new_transcripts, memory=new_memory, state=new_state)
    ctx.find_root().obj = cfg
    memory_repo.refuse_bare(cfg)
    return cfg


def folder_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a command group: it takes ``--transcripts/--memory/--state`` after its name too (before
    its sub-command's name), and its sub-commands (and its own body) see the resulting Config."""

    @_folder_flags
    @functools.wraps(func)
    def wrapper(
        *args: Any,
        opt_transcripts: Path | None = None,
        opt_memory: Path | None = None,
        opt_state: Path | None = None,
        **kwargs: Any,
    ) -> Any:
        with_folders(click.get_current_context(), opt_transcripts, opt_memory, opt_state)
        return func(*args, **kwargs)

    return wrapper


def main() -> None:
    """Console-script entry point."""
    try:
        cli(prog_name="dreamtui")
    except DreamError as exc:  # raised while building the config, before a sub-command runs
        echo(f"dreamtui: {exc}", err=True)
        sys.exit(2)


# Sub-commands register themselves on ``cli`` when imported.
from dreamtui.cli import (  # noqa: E402,F401
    consolidate_cmd,
    digest_cmd,
    dream_cmd,
    extract_cmd,
    link_cmd,
    memory_cmd,
    outside_cmd,
    promote_cmd,
    verify_cmd,
)
