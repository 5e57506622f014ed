"""The command line: a thin layer over :mod:`dreamtui.services`."""
