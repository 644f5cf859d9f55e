"""Per-client rate limits on the heavy actions (model runs, saves, exports, agreement), so that one client cannot
keep the server busy for everyone: a token bucket per (client, action kind)."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from ..caching import LruCache
from ..errors import WorkbenchError

LIMITS = {"model": (30, 60.0), "save": (20, 60.0), "export": (6, 60.0), "analysis": (10, 60.0), "preview": (120, 60.0)}
"""Action kind -> (requests allowed in a burst, per how many seconds): a client may make that many at once and
then one every seconds / burst (Run, Explain and Segment Anything clicks are `model`; Save `save`; exports
`export`; the agreement table `analysis`; Browse's picture of the chosen row, which a user clicking down the table
asks for at every click, `preview`)."""
CLIENTS = 20_000
"""(client, kind) buckets remembered (least recently used forgotten first: a forgotten client starts full)."""


class RateLimited(WorkbenchError):
    """A client asked for more than its share; the message says how long to wait."""


@dataclass(frozen=True)
class _Bucket:
    tokens: float
    at: float


class RateLimits:
    """Token buckets per (client, kind). `client` is the login name, or the client's address without logins."""

    def __init__(
        self, limits: dict[str, tuple[int, float]] | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._limits = dict(LIMITS if limits is None else limits)
        self._clock = clock
        self._buckets: LruCache[_Bucket] = LruCache(CLIENTS)
        self._lock = threading.Lock()

    def take(self, client: str, kind: str) -> None:
        """Use one request of `kind` for `client`; RateLimited (nothing used) when its bucket is empty."""
        if kind not in self._limits:
            return
        burst, per_s = self._limits[kind]
        rate = burst / per_s
        now = self._clock()
        with self._lock:
            old = self._buckets.get((client, kind)) or _Bucket(float(burst), now)
            tokens = min(float(burst), old.tokens + (now - old.at) * rate)
            if tokens < 1.0:
                self._buckets.put((client, kind), _Bucket(tokens, now))
                raise RateLimited(
                    f"too many requests: wait {(1.0 - tokens) / rate:.0f} s and try again "
                    f"(at most {burst} per {per_s:.0f} s)"
                )
            self._buckets.put((client, kind), _Bucket(tokens - 1.0, now))


class UploadQuotaExceeded(WorkbenchError):
    """A login asked to upload more than its quota allows; the message says how much and how long to wait."""


class UploadQuota:
    """Bytes each client (login name) may upload per sliding window of `window_s` seconds: Gradio keeps an upload
    in its cache for up to an hour, so a client never holds more than about one window's quota there."""

    def __init__(self, max_bytes: int, window_s: float = 3600.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.max_bytes, self.window_s = max_bytes, window_s
        self._clock = clock
        self._taken: LruCache[deque[tuple[float, int]]] = LruCache(CLIENTS)
        self._lock = threading.Lock()

    def take(self, client: str, nbytes: int) -> None:
        """Count `nbytes` more against `client`; UploadQuotaExceeded (nothing counted) when they do not fit."""
        now = self._clock()
        with self._lock:
            taken = self._taken.get(client) or deque()
            while taken and now - taken[0][0] >= self.window_s:
                taken.popleft()
            used = sum(n for _, n in taken)
            if used + nbytes > self.max_bytes:
                wait = self.window_s - (now - taken[0][0]) if taken else self.window_s
                raise UploadQuotaExceeded(
                    f"upload quota reached: {_mib(used)} uploaded in the last {self.window_s / 60:.0f} minutes and "
                    f"this upload of {_mib(nbytes)} would pass the {_mib(self.max_bytes)} a login may upload in that "
                    f"time; wait {max(1, round(wait / 60))} min, or ask the administrator (MASC_UPLOAD_QUOTA_MB)"
                )
            taken.append((now, nbytes))
            self._taken.put(client, taken)


def _mib(nbytes: int) -> str:
    return f"{nbytes / (1024 * 1024):.1f} MiB"
