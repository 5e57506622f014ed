"""``python -m dreamtui``: the same as the ``dreamtui`` command (the watch service runs it this way)."""

from dreamtui.cli.main import main

if __name__ == "__main__":
    main()
