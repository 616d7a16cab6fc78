"""The checks a request to ``chainrule serve`` passes before a route sees it: the host it is
addressed to, where a state-changing request comes from, its content type, and its body's size,
arrival and JSON. Each refusal is a `RequestError` carrying its HTTP status.

A web page elsewhere can make the user's browser send requests here; the host check keeps a
page from reaching a loopback server through its own domain name, and the origin and content
type checks keep it from starting runs (a cross-origin page cannot send a JSON content type
without the browser asking first, and this server answers no such preflight).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from email.message import Message
from http import HTTPStatus
from typing import BinaryIO
from urllib.parse import urlsplit

from ...errors import ChainruleError

MAX_BODY = 16_384  # bytes in a request body
LOOPBACK_NAMES = {"127.0.0.1", "localhost", "[::1]"}
#: Requests that change state: each must be JSON, from this server's own page or from no page.
STATE_CHANGING = {"POST", "PUT", "DELETE", "PATCH"}


class RequestError(ChainruleError, ValueError):
    """A request the server refuses: the HTTP status and a message for the JSON reply."""

    def __init__(self, status: int, message: str, headers: Mapping[str, str] | None = None):
        super().__init__(message)
        self.status = status
        self.headers = dict(headers or {})


def check_host(headers: Message, is_loopback: bool) -> None:
    """On loopback, refuse a request addressed to any name but a loopback one."""
    host = headers.get("Host")
    if not is_loopback or host is None:
        return
    name = host[: host.find("]") + 1] if host.startswith("[") else host.split(":")[0]
    if name.lower() not in LOOPBACK_NAMES:
        raise RequestError(
            HTTPStatus.MISDIRECTED_REQUEST,
            f"this server answers only on 127.0.0.1 and localhost, not {host[:100]!r}",
        )


def check_origin(method: str, path: str, headers: Message, own: str) -> None:
    """Refuse a request that a page of another origin than ``own`` sent (a browser says so in
    Origin and Sec-Fetch-Site); programs, which send neither, are let through.

    >>> from email.message import Message
    >>> headers = Message(); headers["Origin"] = "http://elsewhere"
    >>> check_origin("POST", "/api/train", headers, "http://127.0.0.1:8000")
    Traceback (most recent call last):
    ...
    chainrule.apps.web.checks.RequestError: POST /api/train from the page at 'http://elsewhere' is refused; only this server's own page (http://127.0.0.1:8000) may change its state
    """  # noqa: E501
    site = headers.get("Sec-Fetch-Site", "same-origin").lower()
    origin = headers.get("Origin")
    if site in ("same-origin", "none") and (origin is None or _same_origin(origin, own)):
        return
    sender = f"the page at {origin[:100]!r}" if origin else f"a {site[:20]} page"
    raise RequestError(
        HTTPStatus.FORBIDDEN,
        f"{method} {path} from {sender} is refused; only this server's own page ({own})"
        " may change its state",
    )


def check_content_type(method: str, path: str, headers: Message) -> None:
    """Refuse a state-changing request whose body is not declared JSON."""
    given = headers.get("Content-Type")
    if (given or "").split(";")[0].strip().lower() != "application/json":
        got = f"Content-Type {given[:100]!r}" if given else "no Content-Type"
        raise RequestError(
            HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
            f"{method} {path} takes a JSON body with Content-Type: application/json; got {got}",
        )


def read_body(headers: Message, rfile: BinaryIO, read_seconds: float) -> bytes:
    """The whole body of at most `MAX_BODY` bytes; ``rfile`` raises TimeoutError when it does
    not arrive by the request's deadline (``read_seconds`` after the request began)."""
    length = headers.get("Content-Length")
    if length is None or not (length.isascii() and length.isdigit()):
        raise RequestError(
            HTTPStatus.LENGTH_REQUIRED, "send a JSON body with a Content-Length header"
        )
    if len(length) > 12 or int(length) > MAX_BODY:
        raise RequestError(
            HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
            f"the body is {length[:20]} bytes; the limit is {MAX_BODY}",
        )
    try:
        body = rfile.read(int(length))
    except TimeoutError:
        raise RequestError(
            HTTPStatus.REQUEST_TIMEOUT,
            f"the body did not arrive within {read_seconds:g} s of the request starting",
        ) from None
    if len(body) < int(length):
        raise RequestError(
            HTTPStatus.BAD_REQUEST, f"the body ended after {len(body)} of its {length} bytes"
        )
    return body


def parse_json(body: bytes) -> dict:
    """A body as a JSON object (NaN and infinities refused), or a RequestError saying why not.

    >>> parse_json(b'{"x": 1}')
    {'x': 1}
    >>> parse_json(b"[1]")
    Traceback (most recent call last):
    ...
    chainrule.apps.web.checks.RequestError: the body must be a JSON object, got list
    """
    try:
        request = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise RequestError(HTTPStatus.BAD_REQUEST, f"malformed JSON: {exc}") from None
    if not isinstance(request, dict):
        raise RequestError(
            HTTPStatus.BAD_REQUEST, f"the body must be a JSON object, got {type(request).__name__}"
        )
    return request


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def _same_origin(origin: str, own: str) -> bool:
    """Whether ``origin`` (an Origin header) is ``own``: http, same host, same port."""
    try:
        given, expected = urlsplit(origin), urlsplit(own)
        return (
            given.scheme == "http"
            and not (given.path or given.query or given.username)
            and (given.hostname, given.port or 80) == (expected.hostname, expected.port or 80)
        )
    except ValueError:  # a port that is not a number, or out of range
        return False


__all__ = [
    "LOOPBACK_NAMES", "MAX_BODY", "RequestError", "STATE_CHANGING", "check_content_type",
    "check_host", "check_origin", "parse_json", "read_body",
]  # fmt: skip
