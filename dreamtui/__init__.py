"""dreamtui: dream over coding-agent transcripts, propose memories, prove each one, let a person decide."""

__version__ = "0.1.0"
