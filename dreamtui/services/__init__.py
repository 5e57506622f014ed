"""The service layer both front ends (the CLI and the app) use: :class:`Workspace`."""

from dreamtui.services.workspace import Banner, DecisionResult, MemoryFile, SessionRow, Status, Workspace

__all__ = ["Banner", "DecisionResult", "MemoryFile", "SessionRow", "Status", "Workspace"]
