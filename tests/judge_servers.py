"""A chat-completions server on 127.0.0.1 for the openai judge tests: real HTTP, canned model answers."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class ChatServer:
    """Answers each POST /v1/chat/completions with the next canned reply and records the request bodies."""

    replies: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    base_url: str = ""

    def reply_message(self, content: str | None, *, refusal: str | None = None, finish: str = "stop") -> None:
        """Queue a completion whose first choice carries ``content`` (and ``refusal``)."""
        body = {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 1_764_460_800,
            "model": "test-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content, "refusal": refusal},
                    "finish_reason": finish,
                    "logprobs": None,
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        }
        self.replies.append((200, body))

    def reply_label(self, label: str, quote: str = "", reasoning: str = "because") -> None:
        """Queue a well-formed structured answer."""
        self.reply_message(json.dumps({"label": label, "quote": quote, "reasoning": reasoning}))


@contextmanager
def chat_server() -> Iterator[ChatServer]:
    """Start the server on a free port; stop it on exit."""
    state = ChatServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length))
            state.requests.append(body)
            state.headers.append({k.lower(): v for k, v in self.headers.items()})
            if self.path != "/v1/chat/completions":
                status, reply = 404, {"error": {"message": f"no route {self.path}", "type": "invalid_request_error"}}
            elif state.replies:
                status, reply = state.replies.pop(0)
            else:
                status, reply = 500, {"error": {"message": "no canned reply left", "type": "server_error"}}
            data = json.dumps(reply).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
