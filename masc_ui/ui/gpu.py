"""ZeroGPU support: functions that run models are wrapped with `spaces.GPU` when the `spaces` package exists
(Hugging Face Spaces); elsewhere they are returned unchanged."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import TypeVar

F = TypeVar("F", bound=Callable)


def gpu(fn: F) -> F:
    if importlib.util.find_spec("spaces") is None:
        return fn
    import spaces

    return spaces.GPU(fn)
