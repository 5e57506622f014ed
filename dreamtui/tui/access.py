"""The typed way from a screen or widget to the running :class:`~dreamtui.tui.app.DreamApp`.

Textual types ``self.app`` as a plain ``App``; :func:`dream_app` gives the app's own attributes
(the workspace, the config, its signals) with their types, instead of ``self.app.x`` and a
``type: ignore``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from textual.dom import DOMNode

if TYPE_CHECKING:
    from dreamtui.tui.app import DreamApp


def dream_app(node: DOMNode) -> DreamApp:
    """The :class:`DreamApp` ``node`` runs in."""
    return cast("DreamApp", node.app)
