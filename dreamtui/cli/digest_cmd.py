"""CLI sub-commands (placeholder until implemented)."""

from __future__ import annotations

from dreamtui.cli.main import cli, pass_config


@cli.command("config")
@pass_config
def show_config(config) -> None:
    """Print the resolved configuration (where things live)."""
    import click
    for name in ("transcripts", "memory", "state", "config_file"):
        click.echo(f"{name}: {getattr(config, name)}")
    click.echo(f"extractor: {config.resolved_extractor()} (configured: {config.extractor})")
    click.echo(f"model: {config.model}")
    click.echo(f"concurrency: {config.concurrency}")
