"""A TCP proxy that loses the reply to one COMMIT, for the store's fault tests."""

from __future__ import annotations

import socket
import threading


class CommitCutter:
    """A TCP proxy on 127.0.0.1 in front of a server at ``port``. Once armed
    (``armed.set()``), it passes the next COMMIT on to the server, waits for
    the server's reply and cuts the connection instead of passing the reply
    back: the server has committed, and the client cannot know. ``cut`` is
    set when it has done so. The connection string through it is
    ``dsn.replace(f"port={port}", f"port={proxy.port}")``."""

    def __init__(self, port: int):
        self.target = port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.armed, self.cut = threading.Event(), threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:  # closed
                return
            server = socket.create_connection(("127.0.0.1", self.target))
            sent = threading.Event()  # a COMMIT went to the server
            for pair in ((client, server, True), (server, client, False)):
                threading.Thread(
                    target=self._pump, args=(*pair, sent), daemon=True
                ).start()

    def _pump(self, source, sink, upstream: bool, sent: threading.Event):
        try:
            while data := source.recv(65536):
                if upstream and self.armed.is_set() and b"COMMIT\x00" in data:
                    self.armed.clear()
                    sent.set()
                elif not upstream and sent.is_set():
                    self.cut.set()
                    break  # the reply to COMMIT is lost
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                end.close()

    def close(self):
        self.listener.close()
