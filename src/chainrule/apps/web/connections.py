"""How ``chainrule serve`` holds its connections, so that idle or slow clients cannot pile up
threads: each request (line, headers and body) must arrive within `READ_SECONDS` of the server
starting to wait for it, and at most `MAX_CONNECTIONS` connections are open at once.

When every slot is taken, a new connection closes the one that has waited longest for its next
request (an idle keep-alive connection, or a client sending a request byte by byte), once that
one has waited `GRACE_SECONDS`: a connection younger than that is most likely a request still
being read on a busy machine, and closing it would lose a request that was on its way. Only
when no connection has waited that long within `ADMIT_SECONDS` is the new one refused with
503. A person's page therefore gets in even while something else holds many connections open.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import socket
import threading
import time

READ_SECONDS = 5.0  # for a whole request, from the moment the server waits for it
WRITE_SECONDS = 10.0  # for the client to take each reply or event off the socket
MAX_CONNECTIONS = 64  # open at once, over all clients
ADMIT_SECONDS = 1.0  # how long a new connection waits for a closed idle one's slot
GRACE_SECONDS = 0.25  # a connection waiting for its request less long is not closed for room


class DeadlineReader(io.RawIOBase):
    """A socket as a raw stream whose reads all end by `deadline` (a `time.monotonic` time),
    however slowly the bytes trickle in; past it a read raises TimeoutError.

    Each read sets the socket's timeout to the time left and then back to `WRITE_SECONDS`,
    which bounds the writes in between.
    """

    def __init__(self, sock: socket.socket) -> None:
        super().__init__()
        self._sock = sock
        self.deadline = math.inf

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        """Receive into ``buffer`` what arrives before the deadline (0 at end of stream)."""
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"the request did not arrive within {READ_SECONDS:g} s")
        self._sock.settimeout(left)
        try:
            return self._sock.recv_into(buffer)
        finally:
            self._sock.settimeout(WRITE_SECONDS)


class Connections:
    """The server's open connections: a bound on how many, and which of them are waiting for a
    request (those may be closed to make room). Thread-safe."""

    def __init__(self, limit: int = MAX_CONNECTIONS) -> None:
        self.limit = limit
        self._slots = threading.BoundedSemaphore(limit)
        self._lock = threading.Lock()
        self._open = 0
        self._waiting: dict[socket.socket, float] = {}  # socket -> when it began to wait

    def admit(self) -> bool:
        """Take a slot for a new connection, closing the longest-waiting one (if it has waited
        `GRACE_SECONDS`) when none is free; False when none frees within `ADMIT_SECONDS`."""
        deadline = time.monotonic() + ADMIT_SECONDS
        closed = False
        while not self._slots.acquire(blocking=False):
            if not closed:
                closed, eligible_in = self._close_longest_waiting()
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            # After a close, its thread gives the slot back; else look again when the oldest
            # waiting connection has waited long enough to be closed.
            if self._slots.acquire(timeout=left if closed else min(left, eligible_in)):
                break
        with self._lock:
            self._open += 1
        return True

    def release(self, sock: socket.socket) -> None:
        """Give back the slot of a connection that has ended."""
        with self._lock:
            self._waiting.pop(sock, None)
            self._open -= 1
        self._slots.release()

    def waiting(self, sock: socket.socket) -> None:
        """Mark a connection as waiting for a request: it may be closed to make room."""
        with self._lock:
            self._waiting[sock] = time.monotonic()

    def busy(self, sock: socket.socket) -> None:
        """Mark a connection as answering a request it has read in full."""
        with self._lock:
            self._waiting.pop(sock, None)

    def _close_longest_waiting(self) -> tuple[bool, float]:
        """Close the longest-waiting connection if it has waited `GRACE_SECONDS`: (True, 0);
        else (False, the seconds until one will have)."""
        with self._lock:
            if not self._waiting:
                return False, ADMIT_SECONDS
            sock = min(self._waiting, key=self._waiting.__getitem__)
            waited = time.monotonic() - self._waiting[sock]
            if waited < GRACE_SECONDS:
                return False, GRACE_SECONDS - waited
            del self._waiting[sock]
        # Its thread, blocked reading, sees the end of the stream and ends.
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)
        return True, 0.0

    def __len__(self) -> int:
        with self._lock:
            return self._open


def refuse(sock: socket.socket, limit: int) -> None:
    """Answer a connection there is no room for with a 503 JSON error, without blocking."""
    message = f"the server is busy: {limit} connections are open, its limit; try again shortly"
    body = json.dumps({"error": message, "status": 503}).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n"
    )
    with contextlib.suppress(OSError):
        sock.setblocking(False)
        # Read what the client has sent so far: closing with unread bytes resets the
        # connection, and the client would lose the reply.
        with contextlib.suppress(OSError):
            sock.recv(65536)
        sock.send(head.encode() + body)


__all__ = [
    "ADMIT_SECONDS", "Connections", "DeadlineReader", "GRACE_SECONDS", "MAX_CONNECTIONS",
    "READ_SECONDS", "WRITE_SECONDS", "refuse",
]  # fmt: skip
