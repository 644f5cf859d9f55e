"""A lean client of Gradio's queue protocol, the one the app's page speaks: log in (`POST /login`), read the
endpoints' numbers from `/config`, then for each event `POST /gradio_api/queue/join` and read
`GET /gradio_api/queue/data` (server-sent events) until the event's `process_completed` message; for an event
registered with `queue=False`, as the page does, one `POST /gradio_api/run/<api_name>` answered with the outputs.

Why not `gradio_client` for load: it opens new HTTP connections and a stream thread for every call, so 16 simulated
raters in one process cost about as much CPU as the server they measure and wait on their own interpreter lock; on
a 2-core machine that doubles the latency it reports. Here every rater is a coroutine on one event loop with a
keep-alive connection, as a browser tab keeps its own: what the figures measure is the server.
"""

from __future__ import annotations

import json
import uuid

import httpx


class QueueError(RuntimeError):
    """The server refused or failed an event (its message, as the page would show it)."""


class QueueSession:
    """One logged-in page: a session hash, a cookie jar and a connection, events sent one after the other."""

    def __init__(self, url: str, http: httpx.AsyncClient, endpoints: dict[str, tuple[int, list[bool]]]):
        self.url = url.rstrip("/") + "/"
        self.http = http
        self.endpoints = endpoints
        """api_name -> (fn_index, for each input whether it is a session state, which the page sends as null,
        whether the event goes through the queue)."""
        self.session_hash = uuid.uuid4().hex[:11]

    @classmethod
    async def open(
        cls, url: str, username: str | None = None, password: str | None = None, timeout: float = 120.0
    ) -> QueueSession:
        """Log in when a username is given and read the endpoints (`api_name` -> fn_index) from the page's config."""
        base = url.rstrip("/") + "/"
        http = httpx.AsyncClient(timeout=timeout)
        try:
            if username is not None:
                resp = await http.post(base + "login", data={"username": username, "password": password})
                if resp.status_code != 200:
                    raise QueueError(f"login of {username} refused: HTTP {resp.status_code} {resp.text[:200]}")
                http.cookies = {k: v for k, v in resp.cookies.items() if v is not None}
            resp = await http.get(base + "config")
            resp.raise_for_status()
            config = resp.json()
            state = {c["id"] for c in config["components"] if c.get("type") == "state"}
            endpoints = {
                d["api_name"]: (d["id"], [i in state for i in d["inputs"]], d.get("queue") is not False)
                for d in config["dependencies"]
                if d.get("api_name")
            }
        except BaseException:
            await http.aclose()
            raise
        return cls(base, http, endpoints)

    async def call(self, api_name: str, *data) -> list:
        """Send one event with `data` for its inputs that are not session states (as `gradio_client` takes them)
        and wait for its answer: the outputs' values as the page receives them (all outputs of the event, in
        order, a session state's as null; files as FileData dicts, not downloaded)."""
        fn_index, is_state, queued = self.endpoints[api_name.lstrip("/")]
        given = iter(data)
        data = tuple(None if state else next(given) for state in is_state)
        if not queued:  # the page posts an event registered with `queue=False` and reads the answer from the reply
            resp = await self.http.post(
                self.url + f"gradio_api/run/{api_name.lstrip('/')}",
                json={
                    "data": list(data),
                    "event_data": None,
                    "fn_index": fn_index,
                    "trigger_id": None,
                    "session_hash": self.session_hash,
                },
            )
            if resp.status_code != 200:
                raise QueueError(f"{api_name}: {_error_of(resp)}")
            return resp.json()["data"]
        resp = await self.http.post(
            self.url + "gradio_api/queue/join",
            json={
                "data": list(data),
                "event_data": None,
                "fn_index": fn_index,
                "trigger_id": None,
                "session_hash": self.session_hash,
            },
        )
        if resp.status_code != 200:
            raise QueueError(f"{api_name}: HTTP {resp.status_code} {resp.text[:200]}")
        event_id = resp.json()["event_id"]
        async with self.http.stream(
            "GET", self.url + "gradio_api/queue/data", params={"session_hash": self.session_hash}
        ) as stream:
            buffer = b""
            async for chunk in stream.aiter_bytes():
                buffer += chunk
                while b"\n\n" in buffer:
                    line, buffer = buffer.split(b"\n\n", 1)
                    if not line.startswith(b"data:"):
                        continue
                    message = json.loads(line[5:])
                    if message.get("event_id") != event_id or message.get("msg") != "process_completed":
                        continue
                    if not message.get("success"):
                        raise QueueError(f"{api_name}: {(message.get('output') or {}).get('error')}")
                    return message["output"]["data"]
        raise QueueError(f"{api_name}: the event stream closed before the answer")

    async def close(self) -> None:
        await self.http.aclose()


def _error_of(resp: httpx.Response) -> str:
    """What a refused or failed direct call says (Gradio answers `{"error": ...}`), else its status and start."""
    try:
        found = resp.json().get("error")
    except ValueError:
        found = None
    return str(found) if found else f"HTTP {resp.status_code} {resp.text[:200]}"
