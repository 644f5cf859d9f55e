"""A real HTTP server on loopback that speaks the OpenAI chat-completions protocol, with scripted answers: the
judge tests (NaturalScore, the DreamBench++ judge) run the `openai` client against it."""

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeOpenAI:
    """A chat-completions server: each POST takes the next scripted action (when none is left: `default(body)`,
    which answers "4").

    Actions: ("answer", text), ("status", code[, retry_after]), ("sleep", seconds, text), ("garbage",)."""

    def __init__(self) -> None:
        self.script: list[tuple] = []
        self.default = lambda body: ("answer", "4")
        """The action when the script is empty, from the request body."""
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep the test output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake.lock:
                    fake.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                    action = fake.script.pop(0) if fake.script else fake.default(body)
                if action[0] == "sleep":
                    time.sleep(action[1])
                    action = ("answer", action[2])
                if action[0] == "status":
                    payload = json.dumps({"error": {"message": f"scripted {action[1]}", "type": "x"}}).encode()
                    self.send_response(action[1])
                    if len(action) > 2:
                        self.send_header("Retry-After", str(action[2]))
                elif action[0] == "garbage":
                    payload = b"<html>not json</html>"
                    self.send_response(200)
                else:
                    payload = json.dumps(
                        {
                            "id": "chatcmpl-1",
                            "object": "chat.completion",
                            "created": 0,
                            "model": "judge-2024-11-20",
                            "choices": [
                                {
                                    "index": 0,
                                    "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": action[1]},
                                }
                            ],
                            "usage": {"prompt_tokens": 100, "completion_tokens": 1, "total_tokens": 101},
                        }
                    ).encode()
                    self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                try:
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # the client timed out and left
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
