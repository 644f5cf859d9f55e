"""Rater logins: `username:password` pairs from the users file and/or the inline `users` setting."""
from __future__ import annotations

import hmac
from pathlib import Path

from ..errors import InputError
from ..settings import Settings


def load_users(settings: Settings) -> dict[str, str]:
    """username -> password from `settings.users_file` (one `user:password` per line, `#` comments) and
    `settings.users` (`alice:pw1,bob:pw2`); the inline setting wins on a repeated name. Empty = no logins."""
    users: dict[str, str] = {}
    if settings.users_file is not None:
        path = Path(settings.users_file)
        if not path.is_file():
            raise InputError(f"users file {path} (MASC_USERS_FILE) does not exist; create it with one "
                             "`username:password` per line or unset the setting")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            line = line.strip()
            if line and not line.startswith("#"):
                users.update([_pair(line, f"{path}, line {n}")])
    if settings.users:
        for n, item in enumerate(settings.users.split(","), 1):
            if item.strip():
                users.update([_pair(item.strip(), f"MASC_USERS, entry {n}")])
    return users


def check_login(users: dict[str, str], username: str, password: str) -> bool:
    """Constant-time password check; unknown users are refused."""
    expected = users.get(username)
    ok = hmac.compare_digest((expected or "").encode(), (password or "").encode())
    return expected is not None and ok


def _pair(text: str, where: str) -> tuple[str, str]:
    user, sep, password = text.partition(":")
    if not sep or not user.strip() or not password:
        raise InputError(f"{where}: expected `username:password`, got {text.split(':')[0]!r}...; "
                         "fix the entry (passwords may contain ':', usernames may not)")
    return user.strip(), password
