"""The app's screens in tab order: each one's default key, its mode name and its label.

Apart from the app, so the screen tabs under every header read it without importing the app."""

from __future__ import annotations

SCREENS_KEYS = (
    ("1", "queue", "Queue"),
    ("2", "sessions", "Sessions"),
    ("3", "cycles", "Cycles"),
    ("4", "briefings", "Briefings"),
    ("5", "stats", "Stats"),
    ("6", "memory", "Memory"),
    ("7", "promotion", "Promotion"),
)
