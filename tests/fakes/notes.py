"""What the app said in its toasts, recorded as it is said.

Textual keeps a toast only until it times out (and reaps it when read), so a test that reads the app's
toasts on a loaded machine could miss one. Every ``App.notify`` (the public call every screen, widget
and worker goes through) is recorded here for the life of the app, as the :class:`Notification`
Textual makes of it; the toast itself is shown as before. Installed for every test by ``conftest.py``.
"""

from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

import pytest
from textual.app import App
from textual.notifications import Notification

_SAID: WeakKeyDictionary[App[Any], list[Notification]] = WeakKeyDictionary()


def record_notifications(monkeypatch: pytest.MonkeyPatch) -> None:
    """Record every notification of every app from now until the test ends."""
    original = App.notify

    def notify(
        self: App[Any],
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        said = timeout if timeout is not None else self.NOTIFICATION_TIMEOUT
        _SAID.setdefault(self, []).append(Notification(message, title, severity, said, markup=markup))
        original(self, message, title=title, severity=severity, timeout=timeout, markup=markup)

    monkeypatch.setattr(App, "notify", notify)


def notes(app: App[Any]) -> list[Notification]:
    """Every notification ``app`` has shown, oldest first (expired toasts included)."""
    return list(_SAID.get(app, ()))


def messages(app: App[Any], title: str | None = None) -> list[str]:
    """The messages of ``app``'s notifications (those with ``title`` when given), oldest first."""
    return [n.message for n in notes(app) if title is None or n.title == title]


def said(app: App[Any], text: str) -> bool:
    """Whether any notification of ``app`` contains ``text``."""
    return any(text in n.message for n in notes(app))
