"""Rows as typed values: the one mapping from a ``sqlite3.Row`` to a dataclass."""

from __future__ import annotations

import sqlite3
from dataclasses import fields
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

RowT = TypeVar("RowT", bound="DataclassInstance")


def from_row(cls: type[RowT], row: sqlite3.Row) -> RowT:
    """``row`` as the dataclass ``cls``: each field takes the column of its name (a column the query
    did not select leaves the field's default)."""
    keys = row.keys()
    return cls(**{f.name: row[f.name] for f in fields(cls) if f.name in keys})
