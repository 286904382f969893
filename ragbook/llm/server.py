"""A chat-completions server around a :class:`~ragbook.llm.LocalModel`, on 127.0.0.1
(the appendix "Serving the model").

``POST /v1/chat/completions`` takes
``{"model", "messages", "max_tokens"?, "temperature"?, "stream"?}`` and answers as the
protocol does: ``choices[0].message.content``, ``finish_reason`` and ``usage``; with
``"stream": true`` it sends server-sent events, one ``chat.completion.chunk`` per piece
of text, then ``data: [DONE]``. ``GET /v1/models`` lists the one model. The model
decodes greedily, so a temperature other than 0 is refused (HTTP 400), as is a body that
is not JSON, a message list that is malformed, or a prompt over the context window; a
wrong bearer token gets HTTP 401. Requests are served one at a time (the model is one
process's memory), and the server listens on 127.0.0.1 only.

    with ChatServer(LocalModel("qwen2.5-1.5b", records=book_records())) as server:
        client = ChatClient(base_url=server.url, model=server.model_name)
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .. import validate
from . import ContextOverflow, LocalModel, ModelError, RecordMissing

__all__ = ["ChatServer"]


class ChatServer:
    """Serve ``model`` over the chat-completions protocol on 127.0.0.1 (``port`` 0: a
    free port).

    Use it as a context manager, or call :meth:`stop`; ``api_key``, when given, must
    come as a bearer token. ``log`` keeps (path, status) of every request.
    """

    def __init__(self, model: LocalModel, port: int = 0, api_key: str | None = None):
        if not isinstance(model, LocalModel):
            raise TypeError(
                f"model must be a ragbook.llm.LocalModel, got {type(model).__name__}"
            )
        self.model = model
        self.api_key = (
            validate.text(api_key, "api_key") if api_key is not None else None
        )
        self.log: list[tuple[str, int]] = []
        self._serve = threading.Lock()
        self.server = ThreadingHTTPServer(
            ("127.0.0.1", validate.whole(port, "port")), self._handler()
        )
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def model_name(self) -> str:
        return self.model.name

    def __enter__(self) -> "ChatServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop serving and release the port (idempotent)."""
        if self._thread.is_alive():
            self.server.shutdown()
            self._thread.join()
        self.server.server_close()

    def _handler(self):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # the log list, not stderr
                pass

            def _send(self, status: int, payload: dict) -> None:
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                # logged before the body is written: a client that has its answer
                # finds the request in the log
                outer.log.append((self.path, status))
                self.wfile.write(body)

            def _error(self, status: int, message: str) -> None:
                self._send(status, {"error": {"message": message, "code": status}})

            def _authorised(self) -> bool:
                if outer.api_key is None:
                    return True
                return (
                    self.headers.get("Authorization", "") == f"Bearer {outer.api_key}"
                )

            def do_GET(self):
                if self.path.rstrip("/") != "/v1/models":
                    return self._error(
                        404, f"no such endpoint {self.path}; try /v1/chat/completions"
                    )
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": [
                            {
                                "id": outer.model_name,
                                "object": "model",
                                "owned_by": "local",
                            }
                        ],
                    },
                )

            def do_POST(self):
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._error(
                        404, f"no such endpoint {self.path}; try /v1/chat/completions"
                    )
                if not self._authorised():
                    return self._error(401, "missing or wrong API key")
                try:
                    length = int(self.headers.get("Content-Length", "0"))
                    request = json.loads(self.rfile.read(length).decode("utf-8"))
                    if not isinstance(request, dict):
                        raise ValueError("the body must be a JSON object")
                except (ValueError, UnicodeDecodeError) as error:
                    return self._error(400, f"the body is not a JSON object: {error}")
                if request.get("model") not in (None, outer.model_name):
                    return self._error(
                        404,
                        f"no model {request.get('model')!r} here; this server has "
                        f"{outer.model_name!r}",
                    )
                temperature = request.get("temperature", 0)
                if not isinstance(temperature, (int, float)) or temperature != 0:
                    return self._error(
                        400,
                        f"this server decodes greedily: temperature must be 0, "
                        f"got {temperature!r}",
                    )
                max_tokens = request.get("max_tokens", 256)
                if (
                    not isinstance(max_tokens, int)
                    or isinstance(max_tokens, bool)
                    or max_tokens < 1
                ):
                    return self._error(
                        400,
                        f"max_tokens must be a positive integer, got {max_tokens!r}",
                    )
                stream = request.get("stream", False) is True
                with outer._serve:
                    try:
                        if stream:
                            return self._stream(request.get("messages"), max_tokens)
                        generation = outer.model.chat(
                            request.get("messages"), max_tokens
                        )
                    except (ValueError, TypeError, ContextOverflow) as error:
                        return self._error(400, str(error))
                    except (ModelError, RecordMissing) as error:
                        return self._error(503, str(error))
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{time.monotonic_ns()}",
                        "object": "chat.completion",
                        "model": outer.model_name,
                        "choices": [
                            {
                                "index": 0,
                                "message": {
                                    "role": "assistant",
                                    "content": generation.text,
                                },
                                "finish_reason": generation.finish_reason,
                            }
                        ],
                        "usage": {
                            "prompt_tokens": generation.prompt_tokens,
                            "completion_tokens": generation.completion_tokens,
                            "total_tokens": generation.prompt_tokens
                            + generation.completion_tokens,
                        },
                    },
                )

            def _stream(self, messages, max_tokens: int) -> None:
                started = False

                def event(payload: dict | str) -> None:
                    data = payload if isinstance(payload, str) else json.dumps(payload)
                    chunk = f"data: {data}\n\n".encode()
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()

                def start() -> None:
                    nonlocal started
                    if not started:
                        self.send_response(200)
                        self.send_header("Content-Type", "text/event-stream")
                        self.send_header("Transfer-Encoding", "chunked")
                        self.end_headers()
                        started = True

                def chunk(delta: dict, finish_reason: str | None) -> dict:
                    return {
                        "object": "chat.completion.chunk",
                        "model": outer.model_name,
                        "choices": [
                            {"index": 0, "delta": delta, "finish_reason": finish_reason}
                        ],
                    }

                def piece(text: str) -> None:
                    start()
                    event(chunk({"content": text}, None))

                try:
                    generation = outer.model.chat(messages, max_tokens, on_text=piece)
                except (ValueError, TypeError, ContextOverflow) as error:
                    if not started:
                        return self._error(400, str(error))
                    raise
                except (ModelError, RecordMissing) as error:
                    if not started:
                        return self._error(503, str(error))
                    raise
                start()
                event(chunk({}, generation.finish_reason))
                event("[DONE]")
                outer.log.append((self.path, 200))  # before the stream's last byte
                self.wfile.write(b"0\r\n\r\n")

        return Handler
