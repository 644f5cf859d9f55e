"""Per-client rate limits on the heavy actions (model runs, saves, exports, agreement), so that one client cannot
keep the server busy for everyone: a token bucket per (client, action kind)."""

from __future__ import annotations

import threading
import time
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

    def __init__(self, limits: dict[str, tuple[int, float]] | None = None, clock=time.monotonic) -> None:
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
