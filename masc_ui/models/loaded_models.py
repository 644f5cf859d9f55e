"""The one owner of loaded models: lazy, once per process, thread-safe."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar, cast

M = TypeVar("M")


class ModelRegistry:
    """Holds every loaded model/scorer, keyed by what identifies it (e.g. `("masc", model_id, device)`).

    `get(key, loader)` runs `loader()` the first time a key is asked for (other threads asking for the
    same key wait for that one load), then returns the same object for the life of the registry.
    `reporting(on_load)` tells the caller's own thread/context about each load it triggers (progress messages).
    """

    def __init__(self) -> None:
        self._items: dict[Hashable, Any] = {}
        self._locks: dict[Hashable, threading.Lock] = {}
        self._guard = threading.Lock()
        # Per context (a browser request's thread), so one session's progress never sees another's loads.
        self._watchers: ContextVar[tuple[Callable[[Hashable], None], ...]] = ContextVar(
            f"model-load-watchers-{id(self)}", default=()
        )

    @contextmanager
    def reporting(self, on_load: Callable[[Hashable], None]) -> Iterator[None]:
        """Within the block, `on_load(key)` is called just before each `loader()` that `get` runs in this context
        (never for a key already loaded)."""
        token = self._watchers.set(self._watchers.get() + (on_load,))
        try:
            yield
        finally:
            self._watchers.reset(token)

    def get(self, key: Hashable, loader: Callable[[], M]) -> M:
        """The object loaded for `key` (by the first caller's `loader`; a key always names one kind of object)."""
        if key in self._items:
            return cast(M, self._items[key])
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            if key not in self._items:
                for on_load in self._watchers.get():
                    on_load(key)
                self._items[key] = loader()
            return cast(M, self._items[key])

    def loaded(self) -> list[Hashable]:
        """Keys of the models loaded so far, in load order."""
        return list(self._items)

    def clear(self) -> None:
        with self._guard:
            self._items.clear()
            self._locks.clear()
