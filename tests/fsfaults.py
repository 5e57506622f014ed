"""Real file-system faults for tests, also when the tests run as root.

Root reads every folder whatever its mode bits say (the capabilities ``CAP_DAC_OVERRIDE`` and
``CAP_DAC_READ_SEARCH``), so a ``chmod 000`` folder is no fault for root. :func:`no_root_override`
drops those two capabilities from the *effective* set of the calling thread (they stay in the
permitted set and are raised again afterwards): inside it, root is held to the mode bits of the files
it owns like any person, and the kernel itself answers ``EACCES``. Threads started inside inherit the
lowered set. When the tests do not run as root nothing needs dropping and the mode bits already hold.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

_VERSION_3 = 0x20080522
_DAC_BITS = (1 << 1) | (1 << 2)  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def _caps() -> tuple[_Header, ctypes.Array]:
    header = _Header(_VERSION_3, 0)
    data = (_Data * 2)()
    if _libc().capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget failed")
    return header, data


def _set_effective(low_word: int) -> None:
    header, data = _caps()
    data[0].effective = low_word
    if _libc().capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


@contextmanager
def no_root_override() -> Iterator[None]:
    """Mode bits hold for this thread (and threads it starts), even for root."""
    if os.geteuid() != 0:
        yield
        return
    try:
        _header, data = _caps()
        before = data[0].effective
        _set_effective(before & ~_DAC_BITS)
    except (OSError, AttributeError) as exc:  # no capget/capset here (another libc, a seccomp filter)
        pytest.skip(f"cannot hold root to mode bits here: {exc}")
    try:
        yield
    finally:
        _set_effective(before)


@contextmanager
def mode(path: Path, bits: int) -> Iterator[Path]:
    """``path`` with mode ``bits`` for the duration (restored after, so tmp_path can be cleaned up)."""
    old = path.stat().st_mode & 0o7777
    path.chmod(bits)
    try:
        yield path
    finally:
        path.chmod(old)


@contextmanager
def unreadable(path: Path, bits: int = 0o000) -> Iterator[Path]:
    """``path`` (a folder) cannot be read (``0o000``) or, with ``bits=0o444``, can be listed but not
    searched: the kernel refuses it, for root too."""
    with mode(path, bits), no_root_override():
        yield path
