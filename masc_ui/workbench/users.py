"""Logins and roles: who may log in (passwords hashed with Argon2id), what each role may do, login throttling.

Roles:
- `admin`: every tab and every endpoint (score, save, browse, export, agreement, database upkeep);
- `rater`: only their own rating tasks and answers. No metric value, method, other rater's answer or sample
  id reaches a rater: the use cases refuse raters (`Accounts.require_admin`), whatever calls them.

Where logins come from:
- the users file (`MASC_USERS_FILE`, `--users-file`): one `name:password-hash:role` per line (`#` comments),
  written by `masc-ui users add NAME --role ROLE`; plaintext passwords are refused there;
- `MASC_USERS` for quick starts: `name:password[:role],...` (role `rater` when not given; the password may
  also be an Argon2 hash). Plaintext passwords are hashed when the app starts and never kept.
- none: single-user local mode. Every caller acts as admin, which is only safe on a machine nobody else
  reaches (`startup_warnings` says so loudly when the app listens on another address).

The acting user of every use case is the logged-in name, or None for a local process (the CLI, batch, or the
app without logins): None acts as admin. Errors never repeat a users entry (it may hold a password).
"""

from __future__ import annotations

import ipaddress
import os
import re
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..caching import LruCache
from ..errors import InputError, WorkbenchError
from ..settings import Settings

ROLES = ("admin", "rater")
DEFAULT_ROLE = "rater"
"""Role of a `MASC_USERS` entry that names none: least privilege."""
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
"""Login names: letters, digits, `_ . @ -`, 1..64 characters, starting with a letter or digit."""
HASH_PREFIX = "$argon2"
MIN_PASSWORD_LENGTH = 8
"""Shortest password `masc-ui users add` accepts (quick-start `MASC_USERS` passwords are not checked)."""


class AccessDenied(WorkbenchError):
    """The acting user's role does not allow the action (a rater calling an admin use case)."""


class LoginThrottled(WorkbenchError):
    """Too many failed logins from this address; `wait_s` seconds until its next try is checked."""

    def __init__(self, wait_s: float) -> None:
        super().__init__(f"too many failed logins: wait {wait_s:.0f} s before trying again")
        self.wait_s = wait_s


@dataclass(frozen=True)
class Account:
    name: str
    password_hash: str
    """Argon2id hash in PHC format (`$argon2id$v=19$m=...,t=...,p=...$salt$hash`)."""
    role: str


def hash_password(password: str) -> str:
    """Argon2id hash (argon2-cffi's defaults: 64 MiB, 3 passes, 4 lanes) of `password`, salted."""
    from argon2 import PasswordHasher

    return PasswordHasher().hash(password)


def _verify(password_hash: str, password: str) -> bool:
    from argon2 import PasswordHasher
    from argon2.exceptions import InvalidHashError, VerificationError

    try:
        return PasswordHasher().verify(password_hash, password)
    except (VerificationError, InvalidHashError):
        return False


class Accounts:
    """The logins of one process and the role rules. Empty = single-user local mode (everyone acts as admin)."""

    def __init__(self, accounts: dict[str, Account] | None = None) -> None:
        self._accounts = dict(accounts or {})
        self._dummy_hash: str | None = None
        self._lock = threading.Lock()
        self.throttle = LoginThrottle()
        """Failed-login backoff of this process (`check_login`)."""

    @classmethod
    def from_settings(cls, settings: Settings) -> Accounts:
        """The users file's accounts, then `MASC_USERS`' (which win on a repeated name); InputError naming the
        line or entry (never its text) when one is malformed."""
        accounts: dict[str, Account] = {}
        if settings.users_file is not None:
            accounts.update((a.name, a) for a in read_users_file(Path(settings.users_file)))
        if settings.users:
            accounts.update((a.name, a) for a in parse_inline_users(settings.users))
        return cls(accounts)

    @property
    def logins_enabled(self) -> bool:
        return bool(self._accounts)

    def names(self, role: str | None = None) -> list[str]:
        return sorted(n for n, a in self._accounts.items() if role is None or a.role == role)

    def role_of(self, user: str | None) -> str:
        """`admin` for None (a local process) and for anybody when there are no logins (single-user local mode);
        the account's role otherwise (AccessDenied for a name that has no account)."""
        if user is None or not self._accounts:
            return "admin"
        account = self._accounts.get(user)
        if account is None:
            raise AccessDenied("you are not logged in with a known account; log in again")
        return account.role

    def is_admin(self, user: str | None) -> bool:
        try:
            return self.role_of(user) == "admin"
        except AccessDenied:
            return False

    def require_admin(self, user: str | None, action: str) -> None:
        """AccessDenied unless `user` acts as admin; `action` says what was refused (e.g. "exporting")."""
        if not self.is_admin(user):
            raise AccessDenied(f"{action} needs an admin login; raters only rate their own tasks")

    def require_login(self, user: str | None, action: str) -> str:
        """`user` when it is a logged-in account (any role); AccessDenied otherwise."""
        if user is None or user not in self._accounts:
            raise AccessDenied(f"{action} needs a login")
        return user

    def verify(self, name: str, password: str) -> bool:
        """True when `password` is `name`'s. An unknown name costs one hash check too, so the time taken does
        not tell which names exist."""
        account = self._accounts.get(name)
        if account is None:
            _verify(self._dummy(), password or "")
            return False
        return _verify(account.password_hash, password or "")

    def _dummy(self) -> str:
        with self._lock:
            if self._dummy_hash is None:
                self._dummy_hash = hash_password("not a password of anybody")
            return self._dummy_hash


def read_users_file(path: Path) -> list[Account]:
    """Accounts of a users file (`name:password-hash:role` per line, `#` comments)."""
    if not path.is_file():
        raise InputError(
            f"users file {path} (MASC_USERS_FILE) does not exist or is not a file; create it with "
            "`masc-ui users add NAME --role admin --users-file FILE` or unset the setting"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"users file {path} cannot be read as UTF-8 text ({type(exc).__name__})") from None
    accounts = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        where = f"users file {path}, line {n}"
        name, sep, rest = line.partition(":")
        password_hash, sep2, role = rest.rpartition(":")
        if not sep or not sep2:
            raise InputError(f"{where}: expected `name:password-hash:role`; write the line with `masc-ui users add`")
        _check_name(name, where)
        _check_role(role, where)
        if not password_hash.startswith(HASH_PREFIX):
            raise InputError(
                f"{where}: the password is not an Argon2 hash (plaintext passwords are not accepted "
                "in a users file); write the line with `masc-ui users add`"
            )
        accounts.append(Account(name, password_hash, role))
    return accounts


def parse_inline_users(text: str) -> list[Account]:
    """Accounts of `MASC_USERS` (`name:password[:role],...`); plaintext passwords are hashed here."""
    accounts = []
    for n, item in enumerate(text.split(","), 1):
        item = item.strip()
        if not item:
            continue
        where = f"MASC_USERS, entry {n}"
        name, sep, secret = item.partition(":")
        if not sep or not secret:
            raise InputError(
                f"{where}: expected `name:password` or `name:password:role` (names may not contain ':'); fix the entry"
            )
        role = DEFAULT_ROLE
        head, colon, tail = secret.rpartition(":")
        if colon and tail in ROLES:
            secret, role = head, tail
        _check_name(name, where)
        if not secret:
            raise InputError(f"{where}: the password is empty")
        accounts.append(Account(name, secret if secret.startswith(HASH_PREFIX) else hash_password(secret), role))
    return accounts


def add_user(path: Path, name: str, password: str, role: str) -> bool:
    """Write `name`'s line (`name:argon2-hash:role`) into the users file at `path`, replacing an existing line of
    that name; the file is created with mode 0600 and replaced atomically. True when the name was new."""
    _check_name(name, "user name")
    _check_role(role, "role")
    if len(password) < MIN_PASSWORD_LENGTH:
        raise InputError(f"the password is shorter than {MIN_PASSWORD_LENGTH} characters; choose a longer one")
    if "\n" in password or "\r" in password:
        raise InputError("the password contains a line break; choose another")
    lines = []
    if path.exists():
        read_users_file(path)  # refuse to rewrite a file we cannot read
        lines = path.read_text(encoding="utf-8").splitlines()
    kept = [ln for ln in lines if ln.strip().partition(":")[0] != name or ln.strip().startswith("#")]
    new = len(kept) == len(lines)
    kept.append(f"{name}:{hash_password(password)}:{role}")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".users-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write("\n".join(kept) + "\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return new


def _check_name(name: str, where: str) -> None:
    if not NAME_PATTERN.match(name):
        raise InputError(
            f"{where}: a login name has 1 to 64 letters, digits or `_ . @ -` and starts with a letter or digit"
        )


def _check_role(role: str, where: str) -> None:
    if role not in ROLES:
        raise InputError(f"{where}: the role must be one of {', '.join(ROLES)}")


FREE_FAILURES = 5
"""Failed logins allowed in a row (per name and per address) before the backoff starts."""
FIRST_DELAY_S = 2.0
"""Wait after the first failure beyond `FREE_FAILURES`; doubles with each further failure."""
MAX_DELAY_S = 900.0
"""Longest wait of an address (15 minutes)."""
MAX_NAME_DELAY_S = 30.0
"""Longest delay of a wrong answer for a login name."""
THROTTLE_ENTRIES = 50_000
"""Names and addresses remembered by the throttle (least recently failed forgotten first)."""


@dataclass(frozen=True)
class _Failures:
    count: int
    locked_until: float


def _backoff(count: int, longest: float) -> float:
    extra = count - FREE_FAILURES
    return 0.0 if extra <= 0 else min(longest, FIRST_DELAY_S * 2 ** (extra - 1))


class LoginThrottle:
    """Backoff on failed logins that slows guessing down without letting anybody lock an account (OWASP's
    authentication guidance: no hard lockout of the account, which anyone could trigger).

    - Per client address: after `FREE_FAILURES` failures in a row from an address (any names), each further try
      from it is refused before any password is looked at until `FIRST_DELAY_S * 2**(extra failures - 1)` seconds
      (at most `MAX_DELAY_S`) have passed since its last failure (`wait_s`).
    - Per login name: after `FREE_FAILURES` failures in a row for a name (from anywhere), each further *wrong* guess
      for it is answered only after the same doubling delay, at most `MAX_NAME_DELAY_S` (what `failed` returns).
      The name is never locked: the right password from an address that has not failed is checked at once and
      logs in, however many guesses others made.
    A successful login clears the name and the address."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._state: LruCache[_Failures] = LruCache(THROTTLE_ENTRIES)
        self._lock = threading.Lock()

    def wait_s(self, address: str | None) -> float:
        """Seconds until `address` may try again (0: now; always 0 for an unknown address)."""
        found = self._state.get(("address", address)) if address else None
        return max(0.0, found.locked_until - self._clock()) if found else 0.0

    def failed(self, name: str, address: str | None) -> float:
        """Count a wrong password of `name` from `address`; returns how long to delay the answer (seconds). The
        address's wait starts once that answer is out, so a delayed guesser still finds its address waiting."""
        now = self._clock()
        with self._lock:
            old = self._state.get(("name", name.lower()))
            count = (old.count if old else 0) + 1
            delay = _backoff(count, MAX_NAME_DELAY_S)
            self._state.put(("name", name.lower()), _Failures(count, now + delay))
            if address:
                old = self._state.get(("address", address))
                count = (old.count if old else 0) + 1
                wait = _backoff(count, MAX_DELAY_S)
                self._state.put(("address", address), _Failures(count, now + delay + wait if wait else 0.0))
            return delay

    def succeeded(self, name: str, address: str | None) -> None:
        with self._lock:
            for key in self._keys(name, address):
                if self._state.get(key) is not None:
                    self._state.put(key, _Failures(0, 0.0))

    @staticmethod
    def _keys(name: str, address: str | None) -> list[tuple[str, str]]:
        return [("name", name.lower())] + ([("address", address)] if address else [])


class SessionClock:
    """Idle and absolute lifetime of login sessions, by their session token: a session ends `idle_s` seconds after
    its last use, or `max_s` seconds after it was first seen, whichever comes first. Thread-safe."""

    def __init__(self, idle_s: float, max_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.idle_s, self.max_s = idle_s, max_s
        self._clock = clock
        self._seen: dict[str, tuple[float, float]] = {}
        """Token -> (first seen, last used)."""
        self._lock = threading.Lock()

    def alive(self, token: str, *, use: bool = True) -> bool:
        """True while the session of `token` has not outlived either lifetime (then, with `use`, this counts as its
        latest use); False once it has (it is forgotten: the caller ends the session)."""
        now = self._clock()
        with self._lock:
            first, last = self._seen.get(token, (now, now))
            if now - last > self.idle_s or now - first > self.max_s:
                self._seen.pop(token, None)
                return False
            self._seen[token] = (first, now if use else last)
            return True

    def forget(self, token: str) -> None:
        with self._lock:
            self._seen.pop(token, None)

    def keep_only(self, tokens: set[str]) -> None:
        """Forget every session whose token is not in `tokens` (ended elsewhere)."""
        with self._lock:
            for token in set(self._seen) - tokens:
                del self._seen[token]


def check_login(accounts: Accounts, name: str, password: str, address: str | None) -> bool:
    """True for the right password of a known name; LoginThrottled (before any hash check) while `address` must
    wait (`accounts.throttle`). The delay a wrong answer owes (`LoginThrottle.failed`) is the caller's to wait:
    the app's login waits it without holding a thread (`masc_ui.ui.launch.login_checker`)."""
    throttle = accounts.throttle
    wait = throttle.wait_s(address)
    if wait > 0:
        raise LoginThrottled(wait)
    if accounts.verify(name, password):
        throttle.succeeded(name, address)
        return True
    throttle.failed(name, address)
    return False


def is_local_address(host: str) -> bool:
    """True for loopback addresses and `localhost` (where an app without logins is reachable only from here)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def startup_warnings(settings: Settings, accounts: Accounts) -> list[str]:
    """Loud warnings for risky setups: no logins on a non-local address; logins without any admin."""
    warnings = []
    if not accounts.logins_enabled and not is_local_address(settings.host):
        warnings.append(
            f"WARNING: no logins are configured and the app listens on {settings.host}: everyone who can reach "
            "it acts as admin (scores, saves, browses and exports every rating). Set MASC_USERS or MASC_USERS_FILE "
            "with an admin login (see README, 'Security notes')."
        )
    if accounts.logins_enabled and not accounts.names("admin"):
        warnings.append(
            "WARNING: logins are configured but none has the admin role: nobody can score, browse or "
            "export. Give one login `:admin` (masc-ui users add NAME --role admin)."
        )
    return warnings
