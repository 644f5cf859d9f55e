"""Is the Hugging Face Hub reachable, and is a checkpoint's config already in the local cache? Asked once at
start-up by the `auto` profile, so that an offline machine decides in about a second instead of waiting through
huggingface_hub's retries with exponential backoff (five rounds, ~23 s).

- `cached_config(model_id)`: the local Hugging Face cache only (no network).
- `hub_offline()`: `HF_HUB_OFFLINE` (or `TRANSFORMERS_OFFLINE`) as huggingface_hub read it.
- `hub_unreachable(timeout_s)`: ONE `HEAD` request to the Hub endpoint (`HF_ENDPOINT`, default
  https://huggingface.co) through huggingface_hub's own HTTP client (its proxies and headers), no retries, in a
  daemon thread joined for at most `timeout_s` seconds, so that a DNS lookup that hangs cannot hold start-up
  longer than that. Any HTTP answer, even an error status, means reachable.
"""

from __future__ import annotations

import threading

PROBE_TIMEOUT_S = 1.5
"""Seconds the one connectivity probe may take (start-up with no network spends at most this on probing)."""
CONFIG_FILE = "config.json"


def cached_config(model_id: str) -> str | None:
    """Path of `model_id`'s config.json in the local Hugging Face cache (revision `main`), or None when it is not
    there (or known not to exist). Never touches the network."""
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(model_id, CONFIG_FILE)
    except ValueError:  # not a valid repo id (e.g. a path that does not exist): not cached
        return None
    return found if isinstance(found, str) else None


def hub_offline() -> bool:
    """True when huggingface_hub is in offline mode (`HF_HUB_OFFLINE=1` or `TRANSFORMERS_OFFLINE=1`)."""
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


def hub_endpoint() -> str:
    from huggingface_hub import constants

    return str(constants.ENDPOINT)


def hub_unreachable(timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """None when the Hub endpoint answers one HEAD request within `timeout_s` seconds, else why not (one line)."""
    url = hub_endpoint()
    outcome: dict[str, str] = {}

    def ask() -> None:
        try:
            _head(url, timeout_s)
            outcome["answer"] = "ok"
        except Exception as exc:  # any failure to get an answer means "unreachable"; the reason is shown
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            outcome["error"] = f"{type(exc).__name__}: {text}" if text else type(exc).__name__

    worker = threading.Thread(target=ask, name="masc-hub-probe", daemon=True)
    worker.start()
    worker.join(timeout_s)
    if "answer" in outcome:
        return None
    return outcome.get("error") or f"no answer from {url} within {timeout_s:g} s"


def _head(url: str, timeout_s: float) -> None:
    """One HEAD request with huggingface_hub's client (no retries); raises when there is no HTTP answer."""
    from huggingface_hub.utils import get_session

    get_session().head(url, timeout=timeout_s, follow_redirects=False)
