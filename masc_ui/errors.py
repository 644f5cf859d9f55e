"""Errors that reach users. Each message says which input, what is wrong, and what to do."""

from __future__ import annotations


class WorkbenchError(Exception):
    """Base class of every error the workbench reports to a user (UI banner, CLI message)."""


class InputError(WorkbenchError, ValueError):
    """Bad user input: an image, mask, prompt, argument or file that cannot be used as given."""


class ModelUnavailableError(WorkbenchError, OSError):
    """Model weights that cannot be loaded: names the model, says why and what to do."""
