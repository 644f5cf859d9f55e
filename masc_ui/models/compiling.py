"""Optional `torch.compile` of a model's forward, falling back to the eager module when compilation is unavailable
or fails.

Compilation costs a first call per new input shape and did not make the whole vision tower inside `score_many`
measurably faster on the CPUs tried (`bench/mfu.py --compile` measures it), so it is opt-in (`MaSC(compile=True)`),
for hardware where it pays (GPUs, untested here). Inductor reorders sums: float32 with
compilation is close to, but not bit-for-bit, the eager float32 of the exact mode.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from typing import Any

import torch

COMPILE_OPTIONS = {"freezing": True}
"""Inductor options: `freezing` folds the (inference-only) weights into the graph, which lets it prepack them for
oneDNN and fuse the bias and GELU into the matmuls."""


def compile_unavailable(device: str) -> str | None:
    """Why `torch.compile` cannot be used for `device` here (None when it can): no dynamo for this Python, or no
    C++ compiler for inductor's CPU code."""
    if not hasattr(torch, "compile"):
        return "this torch has no torch.compile"
    from torch import _dynamo

    if not _dynamo.is_dynamo_supported():
        return "torch.compile does not support this Python version"
    if torch.device(device).type == "cpu":
        compilers = [os.environ.get("CXX", ""), "g++", "c++", "clang++"]
        if not any(c and shutil.which(c) for c in compilers):
            return "no C++ compiler (g++, c++, clang++ or $CXX) for inductor's CPU kernels"
    return None


class CompiledForward:
    """Calls `module` through `torch.compile` when `enabled`; the first failure (at compile time or in the compiled
    call) switches to the eager `module` for good, and `fallback_reason` says why.

    Args:
        module: an inference-only module (its weights must not change after the first call: they are frozen in).
        device: where it runs (decides which compiler is needed).
        enabled: False = always eager (`fallback_reason` stays None).
        backend: the torch.compile backend (`inductor`; tests pass a failing one).
    """

    def __init__(
        self,
        module: torch.nn.Module,
        device: str,
        *,
        enabled: bool = True,
        backend: str | Callable[..., Any] = "inductor",
    ) -> None:
        self.module = module
        self.fallback_reason: str | None = None
        self._compiled: Callable[..., Any] | None = None
        self._lock = threading.Lock()
        if not enabled:
            return
        self.fallback_reason = compile_unavailable(device)
        if self.fallback_reason is None:
            options = COMPILE_OPTIONS if backend == "inductor" else None
            self._compiled = torch.compile(module, backend=backend, options=options)

    @property
    def compiled(self) -> bool:
        """True while calls go through the compiled module."""
        return self._compiled is not None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        compiled = self._compiled
        if compiled is None:
            return self.module(*args, **kwargs)
        try:
            return compiled(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 -- dynamo/inductor raise many types; eager is always correct
            failure = exc
        # Eager on the same inputs: a bad input raises its own error here and compilation stays on; if eager
        # succeeds, the compiler was at fault and is dropped for good.
        result = self.module(*args, **kwargs)
        with self._lock:
            self._compiled = None
            self.fallback_reason = f"compilation failed ({_describe(failure)})"
        return result


def _describe(exc: BaseException) -> str:
    """`Type: first line`, and the root cause's when the error wraps another (dynamo wraps the compiler's)."""
    root = exc
    while True:
        inner = getattr(root, "inner_exception", None) or root.__cause__
        if not isinstance(inner, BaseException) or inner is root:
            break
        root = inner
    text = f"{type(exc).__name__}: {_first_line(exc)}"
    return text if root is exc else f"{text} {type(root).__name__}: {_first_line(root)}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else "no message"
