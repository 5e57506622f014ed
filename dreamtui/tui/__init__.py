"""The Textual review workstation: a thin layer over :mod:`dreamtui.services`."""
