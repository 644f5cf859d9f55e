"""A chat model behind an OpenAI-compatible API, asked through the `openai` client, with the guards a paid judge
needs: retries with exponential backoff on transient failures, a per-run cap on requests and tokens, and every
answer (or the reason there is none) returned, never raised.

- Retried: HTTP 429 and 5xx, timeouts, connection errors; up to `judge_max_attempts` attempts per call (OpenS2V: 5).
  The wait before attempt k+1 is `judge_backoff_s * 2^(k-1)`, at most 5x `judge_backoff_s` (OpenS2V: 2, 4, 8, 10 s);
  a server's `Retry-After` raises the wait up to that same cap.
- Not retried: any other HTTP error (400 bad request, 401 bad key, 404 unknown model...): the reply carries it.
- Budget (`CallBudget`, one per run): every HTTP request counts against `judge_max_calls`, every reported token
  against `judge_max_tokens`; a call that would exceed the cap is not sent and says so.
- The client is created with `max_retries=0` (the retries above are the only ones), the base URL and key from the
  settings, never from environment variables.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ...errors import ModelUnavailableError
from ...settings import Settings

OPENAI_BASE_URL = "https://api.openai.com/v1"
BACKOFF_CAP = 5.0
"""The longest wait is this many times `judge_backoff_s`."""
_NO_KEY = "not-needed"
"""Sent as the key to a self-hosted server when no key is set (the client needs a string)."""


@dataclass(frozen=True)
class JudgeConfig:
    """Where and how to ask (from `Settings`: `judge_*`)."""

    base_url: str
    model: str
    api_key: str = field(repr=False)
    temperature: float | None
    seed: int | None
    timeout_s: float
    max_attempts: int
    backoff_s: float

    @classmethod
    def from_settings(
        cls, settings: Settings, *, model: str | None = None, what: str = "the NaturalScore judge", hint: str = ""
    ) -> JudgeConfig:
        """The judge of `settings` asking `model` (default `judge_model`); `what` and `hint` word the error.
        Raises `ModelUnavailableError` when OpenAI's API would be asked without a key."""
        model = model or settings.judge_model
        base_url = (settings.judge_base_url or OPENAI_BASE_URL).rstrip("/")
        key = settings.judge_api_key
        if not key and base_url == OPENAI_BASE_URL:
            raise ModelUnavailableError(
                f"{what} ({model} at {OPENAI_BASE_URL}) needs an API key: set MASC_JUDGE_API_KEY, or point "
                f"MASC_JUDGE_BASE_URL at a self-hosted OpenAI-compatible server{hint}"
            )
        return cls(
            base_url=base_url,
            model=model,
            api_key=key or _NO_KEY,
            temperature=settings.judge_temperature,
            seed=settings.judge_seed,
            timeout_s=settings.judge_timeout_s,
            max_attempts=settings.judge_max_attempts,
            backoff_s=settings.judge_backoff_s,
        )


class CallBudget:
    """Requests and tokens spent in one run, against their caps (thread-safe)."""

    def __init__(self, max_calls: int, max_tokens: int | None = None) -> None:
        self.max_calls = max_calls
        self.max_tokens = max_tokens
        self.calls = 0
        self.tokens = 0
        self._lock = threading.Lock()

    def take_call(self) -> str | None:
        """Count one request; or, when a cap is reached, count nothing and return why."""
        with self._lock:
            if self.calls >= self.max_calls:
                return (
                    f"the judge call cap of {self.max_calls} requests for this run is reached "
                    "(MASC_JUDGE_MAX_CALLS); raise it or score fewer samples"
                )
            if self.max_tokens is not None and self.tokens >= self.max_tokens:
                return (
                    f"the judge token cap of {self.max_tokens:,} tokens for this run is reached "
                    "(MASC_JUDGE_MAX_TOKENS); raise it or score fewer samples"
                )
            self.calls += 1
            return None

    def add_tokens(self, n: int) -> None:
        with self._lock:
            self.tokens += n


@dataclass
class JudgeReply:
    """One call's outcome: the raw answer text, or why there is none."""

    text: str | None
    """The answer as the model wrote it (None when there is no answer)."""
    error: str | None
    """Why there is no answer (None when there is one)."""
    attempts: int
    """HTTP requests sent for this call."""
    failures: list[str] = field(default_factory=list)
    """What went wrong on each failed attempt, e.g. `HTTP 429`, `timeout`."""
    served_model: str | None = None
    """The model the server says answered (e.g. a dated snapshot)."""
    tokens: int | None = None
    """Prompt + completion tokens the server reported."""
    details: dict[str, Any] = field(default_factory=dict)
    """What else a judge reports about the answer (the local judge: `input_tokens`, `new_tokens`,
    `max_positions`); in `as_dict` only when there is something."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "answer": self.text,
            "error": self.error,
            "attempts": self.attempts,
            "failures": list(self.failures),
            "served_model": self.served_model,
            "tokens": self.tokens,
            **({"details": dict(self.details)} if self.details else {}),
        }


class ChatJudge:
    """Asks a conversation (`chat`) or one user message (`ask`) and returns a `JudgeReply`; see the module
    docstring."""

    def __init__(self, config: JudgeConfig, budget: CallBudget) -> None:
        from openai import OpenAI

        self.config = config
        self.budget = budget
        self.client = OpenAI(api_key=config.api_key, base_url=config.base_url, timeout=config.timeout_s, max_retries=0)

    def ask(self, content: list[dict[str, Any]]) -> JudgeReply:
        """One user message holding the content parts `content` (text, `image_url`)."""
        return self.chat([{"role": "user", "content": content}])

    def chat(self, messages: list[dict[str, Any]]) -> JudgeReply:
        """The chat-completions `messages` (roles `system`, `user`, `assistant`; content a string or a list of
        parts) sent as they are, with the configured model, temperature and seed."""
        import openai

        request: dict[str, Any] = {"model": self.config.model, "stream": False, "messages": messages}
        if self.config.temperature is not None:
            request["temperature"] = self.config.temperature
        if self.config.seed is not None:
            request["seed"] = self.config.seed
        reply = JudgeReply(text=None, error=None, attempts=0)
        for attempt in range(1, self.config.max_attempts + 1):
            refused = self.budget.take_call()
            if refused:
                reply.error = refused
                return reply
            reply.attempts += 1
            retry_after = None
            try:
                response = self.client.chat.completions.create(**request)
            except (openai.RateLimitError, openai.InternalServerError) as exc:
                reply.failures.append(f"HTTP {exc.status_code}")
                retry_after = _retry_after(exc)
            except openai.APITimeoutError:
                reply.failures.append(f"timeout after {self.config.timeout_s:g} s")
            except openai.APIConnectionError as exc:
                reply.failures.append(f"connection error ({exc.__cause__ or exc})")
            except openai.APIStatusError as exc:
                reply.failures.append(f"HTTP {exc.status_code}")
                reply.error = f"the judge answered HTTP {exc.status_code} ({_message(exc)}); not retried"
                return reply
            except (openai.OpenAIError, ValueError) as exc:  # a body that is not a chat completion (ValueError: JSON)
                reply.failures.append(type(exc).__name__)
                reply.error = f"the judge's response could not be read ({exc})"
                return reply
            else:
                return _answered(reply, response, self.budget)
            if attempt < self.config.max_attempts:
                time.sleep(self._wait(attempt, retry_after))
        reply.error = f"no answer after {reply.attempts} attempts ({', '.join(reply.failures)})"
        return reply

    def _wait(self, attempt: int, retry_after: float | None) -> float:
        cap = BACKOFF_CAP * self.config.backoff_s
        wait = min(self.config.backoff_s * 2.0 ** (attempt - 1), cap)
        return min(max(wait, retry_after or 0.0), cap)


def _answered(reply: JudgeReply, response: Any, budget: CallBudget) -> JudgeReply:
    usage = getattr(response, "usage", None)
    if usage is not None and getattr(usage, "total_tokens", None) is not None:
        reply.tokens = int(usage.total_tokens)
        budget.add_tokens(reply.tokens)
    reply.served_model = getattr(response, "model", None)
    choices = getattr(response, "choices", None) or []
    text = choices[0].message.content if choices and choices[0].message is not None else None
    if text is None:
        reply.error = "the judge returned no answer text"
    else:
        reply.text = text
    return reply


def _retry_after(exc: Any) -> float | None:
    try:
        return float(exc.response.headers.get("retry-after"))
    except (AttributeError, TypeError, ValueError):
        return None


def _message(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(getattr(exc, "message", exc))
