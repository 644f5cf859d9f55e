"""Raters already read, by username: every rating answer looks its rater up twice (its write, then the read of the
rater's next task), a round trip each to a database server.

A rater's row never changes once created: the workbench neither renames nor deletes raters (`ensure_rater` and the
imports only insert), and a restore needs an empty database. So a row, once seen by a *read* transaction (committed,
so its id is never handed out again), stays right for the life of the process. Rows seen inside a write transaction
are not remembered: that transaction may still roll back, and SQLite could then give the id to another rater. A
rater row deleted or renamed by hand while the app runs needs the app restarted.
"""

from __future__ import annotations

import threading

from sqlalchemy.orm import Session

from ..record_types import RaterRecord
from ._common import rater_row


class RaterRows:
    """Cache of committed rater rows, owned by one `Store` and shared by its repositories. Bounded: beyond
    `max_raters` entries it starts afresh (a campaign has tens of raters; imports add external ones)."""

    def __init__(self, max_raters: int = 10_000) -> None:
        self._max = max_raters
        self._lock = threading.Lock()
        self._rows: dict[str, RaterRecord] = {}

    def known(self, username: str) -> RaterRecord | None:
        """The rater's row if a read transaction saw it before, else None (look it up: `rater_row`, which also says
        what is wrong with a name that is not a string)."""
        return self._rows.get(username) if isinstance(username, str) else None

    def read(self, s: Session, username: str) -> RaterRecord:
        """The rater `username` (NotFound if absent), from the cache or from `s`, which must be a read transaction
        (see the module docstring)."""
        found = self.known(username)
        if found is not None:
            return found
        found = rater_row(s, username)
        with self._lock:
            if len(self._rows) >= self._max:
                self._rows.clear()
            self._rows[username] = found
        return found
