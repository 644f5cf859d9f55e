"""Why a browser's login session ended, when its cookie names a session the server does not know.

Gradio keeps login sessions in the server's memory only: a restart forgets every one, and a browser then holds a
session cookie that no longer logs anybody in. Gradio also names its cookies by a fresh random id per start
(`access-token-<id>`), so after a restart nothing told the app's own stale cookie from another app's on the same
host. Here:

- `app_cookie_id(data_dir)` is that id kept in the data directory (`COOKIE_ID_FILE`), the same on every start of
  the app over that directory: a cookie of that name that carries an unknown session is this app's;
- `EndedSessions` remembers (bounded) the sessions the server itself ended (idle or absolute lifetime), so such a
  cookie says "expired" while any other unknown session of this app's name says "the server restarted"
  (`ended_notice`).
"""

from __future__ import annotations

import os
import secrets
import threading
from collections import OrderedDict
from pathlib import Path

COOKIE_ID_FILE = "login-cookie-id"
"""File in the data directory holding the login cookies' name id (URL-safe text, no secret: the cookie's value,
the session token, is the secret)."""
COOKIE_ID_BYTES = 24
RESTARTED = "Your session ended because the server restarted; log in again."
EXPIRED = "Your session ended: it was idle for too long or reached its longest lifetime; log in again."
ENDED_REMEMBERED = 10_000
"""Sessions ended by their lifetime that `EndedSessions` tells apart (the oldest are forgotten first)."""


def app_cookie_id(data_dir: Path) -> str | None:
    """The id of the app's login cookies kept in `data_dir` (made and written on first use, owner-only); None when
    the folder cannot hold it (not a folder, read-only): the caller keeps Gradio's random id, and a restart is then
    not told apart."""
    path = Path(data_dir) / COOKIE_ID_FILE
    found = _read_id(path)
    if found is not None:
        return found
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process of this app made it meanwhile (theirs wins), or no folder
        return _read_id(path)
    except OSError:
        return None
    made = secrets.token_urlsafe(COOKIE_ID_BYTES)
    with os.fdopen(descriptor, "w", encoding="ascii") as fh:
        fh.write(made)
    return made


def _read_id(path: Path) -> str | None:
    try:
        found = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return found if found and found.replace("-", "").replace("_", "").isalnum() else None


class EndedSessions:
    """Session tokens the server ended by their lifetime, the latest `ENDED_REMEMBERED`. Thread-safe."""

    def __init__(self, remembered: int = ENDED_REMEMBERED) -> None:
        self._tokens: OrderedDict[str, None] = OrderedDict()
        self._remembered = remembered
        self._lock = threading.Lock()

    def add(self, token: str) -> None:
        with self._lock:
            self._tokens[token] = None
            while len(self._tokens) > self._remembered:
                self._tokens.popitem(last=False)

    def __contains__(self, token: object) -> bool:
        with self._lock:
            return token in self._tokens

    def ended_notice(self, token: str) -> str:
        """What the login page says to a browser whose cookie of this app carries `token`, a session the server
        does not know: `EXPIRED` for a session it ended itself, else `RESTARTED`."""
        return EXPIRED if token in self else RESTARTED
