"""The HTTP side of ``chainrule serve``: routes, runs and the event stream, on the standard
library's ThreadingHTTPServer. What a request must pass is in `checks`, how connections are
bounded in `connections`; the work itself is in `graph`, `expression` and `playground`; the page
is ``static/`` (one HTML file, plain JavaScript, no CDN).
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import re
import secrets
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import asdict
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from urllib.parse import urlsplit

from ...errors import ChainruleError
from . import expression, playground
from .checks import (
    LOOPBACK_NAMES,
    MAX_BODY,
    STATE_CHANGING,
    RequestError,
    check_content_type,
    check_host,
    check_origin,
    parse_json,
    read_body,
)
from .connections import (
    MAX_CONNECTIONS,
    READ_SECONDS,
    WRITE_SECONDS,
    Connections,
    DeadlineReader,
    refuse,
)
from .graph import (
    SLIDER_RANGE,
    TEACHING_FUNCTION,
    TEACHING_VALUES,
    describe,
    has_dot,
    teaching_graph,
)

MAX_RUNS = 4  # training runs waiting for or streaming events, over all clients
PENDING_SECONDS = 60.0  # a run nobody starts streaming within this time is forgotten
DEFAULT_VALUE = 1.0  # for expression variables the request gives no value

STATIC = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
}

_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": (
        "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:"
    ),
    "Referrer-Policy": "no-referrer",
}


class Run:
    """One training run: its checked config and the event that stops it."""

    def __init__(self, config: playground.TrainConfig) -> None:
        self.config = config
        self.stop = threading.Event()
        self.created = time.monotonic()
        self.streaming = False


class Runs:
    """The runs the server knows, by id; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: dict[str, Run] = {}

    def create(self, config: playground.TrainConfig) -> str:
        """Register a run to be streamed; refuses past `MAX_RUNS` at once."""
        with self._lock:
            now = time.monotonic()
            for key, run in list(self._runs.items()):
                if not run.streaming and now - run.created > PENDING_SECONDS:
                    del self._runs[key]
            if len(self._runs) >= MAX_RUNS:
                raise RequestError(
                    HTTPStatus.TOO_MANY_REQUESTS,
                    f"train: {len(self._runs)} runs are already going (the limit is {MAX_RUNS});"
                    " stop one first",
                )
            key = secrets.token_hex(8)
            self._runs[key] = Run(config)
            return key

    def take(self, key: str) -> Run:
        """The run to stream now; each run streams once."""
        with self._lock:
            run = self._runs.get(key)
            if run is None:
                raise RequestError(HTTPStatus.NOT_FOUND, f"train: no run {key!r}; start one")
            if run.streaming:
                raise RequestError(HTTPStatus.CONFLICT, f"train: run {key!r} is already streaming")
            run.streaming = True
            return run

    def stop(self, key: str) -> None:
        """Ask a run to stop after its current step."""
        with self._lock:
            run = self._runs.get(key)
        if run is None:
            raise RequestError(HTTPStatus.NOT_FOUND, f"train: no run {key!r} to stop")
        run.stop.set()

    def finish(self, key: str) -> None:
        """Forget a run whose stream has ended."""
        with self._lock:
            self._runs.pop(key, None)

    def stop_all(self) -> None:
        """Ask every run to stop, so that their streams end."""
        with self._lock:
            runs = list(self._runs.values())
        for run in runs:
            run.stop.set()

    def __len__(self) -> int:
        with self._lock:
            return len(self._runs)


class PlaygroundServer(ThreadingHTTPServer):
    """The server: one thread per connection, so a training stream never blocks the sliders,
    and at most `MAX_CONNECTIONS` of them (see `connections`).

    ``use_graphviz`` None means: draw with Graphviz when its ``dot`` program is installed.
    """

    daemon_threads = True
    block_on_close = False  # closing stops the runs; idle connections end with the process
    # The default backlog of 5 drops new connections under a burst of clients, and the
    # client retries only after a second; waiting connections cost no thread.
    request_queue_size = 1024

    def __init__(
        self,
        address: tuple[str, int],
        use_graphviz: bool | None = None,
        verbose: bool = False,
    ) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, Handler)
        self.use_graphviz = has_dot() if use_graphviz is None else use_graphviz
        self.verbose = verbose
        self.runs = Runs()
        self.connections = Connections(MAX_CONNECTIONS)
        # On loopback, answer only requests addressed to a loopback name, so that a web page
        # elsewhere cannot reach this server by pointing its own domain at 127.0.0.1.
        self.is_loopback = address[0] in LOOPBACK_NAMES | {"::1"}

    def process_request(self, request, client_address) -> None:
        """Start a thread for a new connection if there is room, else answer 503."""
        if not self.connections.admit():
            refuse(request, self.connections.limit)
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self.connections.release(request)
            raise

    def process_request_thread(self, request, client_address) -> None:
        """Serve one connection, then give back its slot."""
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.connections.release(request)

    def handle_error(self, request, client_address) -> None:
        """Print a bug's traceback; a client that left, or stopped reading, is no bug."""
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)

    def server_close(self) -> None:
        """Stop listening and stop every run."""
        super().server_close()
        self.runs.stop_all()

    @property
    def url(self) -> str:
        """The page's address, such as ``http://127.0.0.1:8000/``."""
        host, port = self.server_address[:2]
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{port}/"


def make_server(
    host: str = "127.0.0.1", port: int = 8000, use_graphviz: bool | None = None
) -> PlaygroundServer:
    """A bound, not yet serving `PlaygroundServer` (port 0 picks a free port).

    >>> server = make_server(port=0)
    >>> server.url.startswith("http://127.0.0.1:")
    True
    >>> server.server_close()
    """
    return PlaygroundServer((host, port), use_graphviz=use_graphviz)


def serve(
    host: str = "127.0.0.1",
    port: int = 8000,
    use_graphviz: bool | None = None,
    log: Callable[[str], None] | None = None,
) -> int:
    """Run the page until Ctrl+C; prints its address first (through ``log``, print by default).

    Returns the exit code: 0, or 1 when the address cannot be used.
    """
    log = log or functools.partial(print, flush=True)
    try:
        server = make_server(host, port, use_graphviz)
    except OSError as exc:
        log(f"chainrule serve: cannot listen on {host}:{port}: {exc.strerror or exc}")
        return 1
    drawing = "Graphviz" if server.use_graphviz else "the built-in layout (no Graphviz dot)"
    log(f"chainrule serve: {server.url}  (graphs drawn by {drawing}; Ctrl+C stops)")
    if not server.is_loopback:
        log(f"chainrule serve: listening on {host}, so other machines can reach the page")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        log("chainrule serve: stopped")
    finally:
        server.server_close()
    return 0


# Request handlers: each takes the handler (and route parameters) and returns a JSON-ready
# dict, or writes its own reply and returns None.


def _page(handler: Handler, name: str = "index.html") -> None:
    if name not in STATIC:
        raise RequestError(HTTPStatus.NOT_FOUND, f"no static file {name!r}")
    handler.reply(HTTPStatus.OK, _static(name), STATIC[name])


@functools.cache
def _static(name: str) -> bytes:
    return resources.files(__package__).joinpath("static", name).read_bytes()


def _info(handler: Handler) -> dict:
    return {
        "renderer": "graphviz" if handler.server.use_graphviz else "builtin",
        "teaching": {
            "function": TEACHING_FUNCTION,
            "values": TEACHING_VALUES,
            "range": SLIDER_RANGE,
        },
        "functions": sorted(expression.FUNCTIONS),
        "limits": {
            "length": expression.MAX_LENGTH,
            "parts": expression.MAX_NODES,
            "depth": expression.MAX_DEPTH,
            "variables": expression.MAX_VARIABLES,
            "exponent": expression.MAX_EXPONENT,
            "number": expression.MAX_NUMBER,
            "layers": playground.MAX_LAYERS,
            "width": playground.MAX_WIDTH,
            "steps": playground.MAX_STEPS,
            "lr": playground.LR_RANGE,
            "work": playground.MAX_WORK,
            "activation_cost": playground.ACTIVATION_COST,
            "pause_seconds": playground.MAX_PAUSE_SECONDS,
            "runs": MAX_RUNS,
            "body": MAX_BODY,
            "connections": MAX_CONNECTIONS,
            "read_seconds": READ_SECONDS,
            "write_seconds": WRITE_SECONDS,
        },
        "datasets": sorted(playground.DATASETS),
        "activations": list(playground.ACTIVATIONS),
        "optimizers": list(playground.OPTIMIZERS),
        "defaults": asdict(playground.TrainConfig()),
        "runs": len(handler.server.runs),
        "connections": len(handler.server.connections),
    }


def _graph(handler: Handler) -> dict:
    start = time.perf_counter()
    request = handler.read_json()
    _no_unknown_fields(request, TEACHING_VALUES, "graph")
    values = {}
    for name in TEACHING_VALUES:
        if name not in request:
            raise RequestError(
                HTTPStatus.BAD_REQUEST,
                f"graph: missing field {name!r}; send numbers for {', '.join(TEACHING_VALUES)}",
            )
        values[name] = _finite(request[name], name, "graph")
    reply = describe(teaching_graph(values), list(values), handler.server.use_graphviz)
    reply["values"] = values
    reply["server_ms"] = (time.perf_counter() - start) * 1e3
    return reply


def _expression(handler: Handler) -> dict:
    start = time.perf_counter()
    request = handler.read_json()
    _no_unknown_fields(request, ("expression", "values"), "expression")
    if "expression" not in request:
        raise RequestError(HTTPStatus.BAD_REQUEST, "expression: missing field 'expression'")
    given = request.get("values", {})
    if not isinstance(given, dict):
        raise RequestError(
            HTTPStatus.BAD_REQUEST,
            f"expression: 'values' must be an object of numbers, got {type(given).__name__}",
        )
    parsed = expression.parse(request["expression"])
    values = {name: given.get(name, DEFAULT_VALUE) for name in parsed.variables}
    root = expression.differentiate(parsed, values)
    reply = describe(root, parsed.variables, handler.server.use_graphviz)
    reply["expression"] = parsed.text
    reply["variables"] = list(parsed.variables)
    reply["values"] = {name: float(value) for name, value in values.items()}
    reply["server_ms"] = (time.perf_counter() - start) * 1e3
    return reply


def _train(handler: Handler) -> dict:
    config = playground.TrainConfig.from_json(handler.read_json())
    key = handler.server.runs.create(config)
    return {"id": key, "events": f"/api/train/{key}/events", "stop": f"/api/train/{key}/stop"}


def _events(handler: Handler, key: str) -> None:
    runs = handler.server.runs
    run = runs.take(key)
    try:
        handler.send_response(HTTPStatus.OK)
        handler.send_header("Content-Type", "text/event-stream; charset=utf-8")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        for event in playground.train(run.config, run.stop):
            data = json.dumps(event, allow_nan=False, separators=(",", ":"))
            handler.wfile.write(f"data: {data}\n\n".encode())
            handler.wfile.flush()
    except (ConnectionError, TimeoutError):
        run.stop.set()  # the page closed the stream, or stopped reading it: stop training
    except Exception as exc:  # a bug: the headers are sent, so report it as a last event
        traceback.print_exc(file=sys.stderr)
        error = json.dumps({"type": "error", "error": f"internal error: {exc!r}"})
        with contextlib.suppress(OSError):
            handler.wfile.write(f"data: {error}\n\n".encode())
    finally:
        runs.finish(key)


def _stop(handler: Handler, key: str) -> dict:
    if handler.body:
        handler.read_json()  # it needs nothing, but what is sent must still be a JSON object
    handler.server.runs.stop(key)
    return {"id": key, "stopping": True}


def _no_unknown_fields(request: dict, known, where: str) -> None:
    unknown = sorted(set(request) - set(known))
    if unknown:
        raise RequestError(
            HTTPStatus.BAD_REQUEST,
            f"{where}: unknown field {unknown[0]!r}; the fields are {', '.join(known)}",
        )


def _finite(value: object, name: str, where: str) -> float:
    try:
        return expression.check_value(name, value)
    except expression.ExpressionError as exc:
        message = str(exc).replace("expression:", where + ":")
        raise RequestError(HTTPStatus.BAD_REQUEST, message) from None


_KEY = r"(?P<key>[0-9a-f]{1,64})"
ROUTES: list[tuple[re.Pattern, dict[str, Callable]]] = [
    (re.compile(r"/"), {"GET": _page}),
    (re.compile(r"/static/(?P<name>[\w.-]+)"), {"GET": _page}),
    (re.compile(r"/api/info"), {"GET": _info}),
    (re.compile(r"/api/graph"), {"POST": _graph}),
    (re.compile(r"/api/expression"), {"POST": _expression}),
    (re.compile(r"/api/train"), {"POST": _train}),
    (re.compile(rf"/api/train/{_KEY}/events"), {"GET": _events}),
    (re.compile(rf"/api/train/{_KEY}/stop"), {"POST": _stop}),
]


class Handler(BaseHTTPRequestHandler):
    """Dispatches each request to a route; every refusal is a JSON ``{"error": message}``."""

    protocol_version = "HTTP/1.1"  # keep-alive: a slider's requests reuse one connection
    # Headers and body go out in two writes; with Nagle's algorithm the second waits for the
    # client's delayed ACK, adding about 40 ms to every reply.
    disable_nagle_algorithm = True
    timeout = WRITE_SECONDS  # for the client to take a reply; reads keep their own deadline
    server_version = "chainrule"
    server: PlaygroundServer

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def do_PATCH(self) -> None:
        self._dispatch("PATCH")

    def setup(self) -> None:
        """Read the socket through a `DeadlineReader`."""
        super().setup()
        self.rfile.close()
        self.reader = DeadlineReader(self.connection)
        self.rfile = io.BufferedReader(self.reader)

    def handle_one_request(self) -> None:
        """Wait at most `READ_SECONDS` for the next request, and let the server close this
        connection to make room while it waits."""
        self.reader.deadline = time.monotonic() + READ_SECONDS
        self.server.connections.waiting(self.connection)
        self.body = b""
        super().handle_one_request()

    def _dispatch(self, method: str) -> None:
        path = urlsplit(self.path).path
        try:
            check_host(self.headers, self.server.is_loopback)
            route, params = self._route(method, path)
            if method in STATE_CHANGING:
                check_origin(method, path, self.headers, self._origin())
                check_content_type(method, path, self.headers)
                self.body = read_body(self.headers, self.rfile, READ_SECONDS)
            elif (
                self.headers.get("Content-Length", "0") != "0"
                or "Transfer-Encoding" in self.headers
            ):
                self.close_connection = True  # a body nobody reads: do not parse it as a request
            self.server.connections.busy(self.connection)
            reply = route(self, **params)
            if reply is not None:
                self.reply_json(HTTPStatus.OK, reply)
        except RequestError as exc:
            self.reply_error(exc.status, str(exc), exc.headers)
        except ChainruleError as exc:  # refused expressions, domain errors, bad training setups
            self.reply_error(HTTPStatus.BAD_REQUEST, str(exc))
        except (ConnectionError, TimeoutError):  # the client left, or stopped taking the reply
            self.close_connection = True
        except Exception as exc:  # a bug: say so, keep serving
            traceback.print_exc(file=sys.stderr)
            self.reply_error(HTTPStatus.INTERNAL_SERVER_ERROR, f"internal error: {exc!r}")

    def _route(self, method: str, path: str) -> tuple[Callable, dict[str, str]]:
        for pattern, methods in ROUTES:
            match = pattern.fullmatch(path)
            if match is None:
                continue
            if method not in methods:
                allowed = ", ".join(methods)
                raise RequestError(
                    HTTPStatus.METHOD_NOT_ALLOWED,
                    f"{method} {path} is not allowed; use {allowed}",
                    {"Allow": allowed},
                )
            return methods[method], match.groupdict()
        raise RequestError(HTTPStatus.NOT_FOUND, f"no page or API at {path[:100]!r}")

    def _origin(self) -> str:
        """The origin this request was addressed to, such as ``http://127.0.0.1:8000``."""
        host = self.headers.get("Host")
        return f"http://{host}" if host else self.server.url.rstrip("/")

    def read_json(self) -> dict:
        """The request body as a JSON object, or a RequestError saying what is wrong."""
        return parse_json(self.body)

    def reply(
        self, status: int, body: bytes, content_type: str, headers: Mapping[str, str] | None = None
    ) -> None:
        """Send a complete response."""
        headers = headers or {}
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for name, value in {**_SECURITY_HEADERS, **headers}.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def reply_json(self, status: int, data: dict, headers: Mapping[str, str] | None = None) -> None:
        """Send ``data`` as JSON (NaN and infinities are refused earlier, never sent)."""
        headers = headers or {}
        body = json.dumps(data, allow_nan=False, separators=(",", ":")).encode()
        if "server_ms" in data:
            headers = {**headers, "Server-Timing": f"app;dur={data['server_ms']:.2f}"}
        self.reply(status, body, "application/json", headers)

    def reply_error(
        self, status: int, message: str, headers: Mapping[str, str] | None = None
    ) -> None:
        """Send ``{"error": message, "status": status}`` and close the connection (the body
        of a refused request may be unread)."""
        # Answering now, so no longer a connection that may be closed to make room (an
        # unreadable request line is refused before `_dispatch` marks it busy).
        self.server.connections.busy(self.connection)
        self.close_connection = True
        headers = {**(headers or {}), "Connection": "close"}
        self.reply_json(status, {"error": message, "status": int(status)}, headers)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None):
        """The standard library's errors (malformed request line, unknown method) as JSON."""
        if self.request_version == "HTTP/0.9":  # an unreadable request line: answer in 1.1
            self.request_version = self.protocol_version
        if code == HTTPStatus.NOT_IMPLEMENTED:
            code, message = HTTPStatus.METHOD_NOT_ALLOWED, f"method {self.command} is not allowed"
        self.reply_error(code, message or HTTPStatus(code).phrase)

    def log_message(self, format: str, *args) -> None:
        if self.server.verbose:
            super().log_message(format, *args)


__all__ = ["Handler", "PlaygroundServer", "RequestError", "make_server", "serve"]
