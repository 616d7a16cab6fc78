"""The clients of the load test in tests/test_web_limits.py, run there as a separate process so
that they do not share the server's interpreter lock.

``python tests/web_load.py HOST PORT CLIENTS SECONDS MARKER`` runs CLIENTS coroutines for
SECONDS; each repeatedly picks one of `BEHAVIOURS` (valid requests and hostile ones) and records
what the server did. It prints one JSON object: per behaviour, how each exchange ended (an HTTP
status, "closed" when the server closed the connection without a reply, "reset"), and the
seconds the server took to close idle and slow connections. MARKER is a path that a request
tries to make the server create, through the expression box.
"""

from __future__ import annotations

import asyncio
import collections
import json
import random
import sys
import time


def request(method: str, path: str, body: bytes = b"", **headers: str) -> bytes:
    """One HTTP/1.1 request that asks the server to close the connection after its reply."""
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "Connection: close"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    if method == "POST":
        lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def post_json(path: str, data: object, **headers: str) -> bytes:
    headers.setdefault("Content_Type", "application/json")
    return request("POST", path, json.dumps(data).encode(), **headers)


GRAPH = {"w1": 0.2, "w2": 0.4, "x1": -0.4, "x2": 0.5}
SMALL_RUN = {"dataset": "xor", "hidden": "4", "steps": 20, "every": 5, "grid": 8}


def behaviours(marker: str) -> dict[str, tuple[bytes | None, set]]:
    """Each behaviour: the bytes it sends at once (None: its own script) and the endings that
    are right for it. 503 (no room) is right for any of them."""
    hostile_expression = f"__import__('os').system('touch {marker}')"
    plain, json_type = {"Content_Type": "text/plain"}, {"Content_Type": "application/json"}
    slow = {"closed", "reset"}  # the server closes these: at their deadline, or to make room
    return {
        "info": (request("GET", "/api/info"), {200}),
        "page": (request("GET", "/"), {200}),
        "graph": (post_json("/api/graph", GRAPH), {200}),
        "expression": (post_json("/api/expression", {"expression": "x*y + sin(x)"}), {200}),
        "train": (None, {200, 429}),
        "wrong_origin": (
            request("POST", "/api/train", b"{}", Origin="http://elsewhere", **plain),
            {403},
        ),
        "cross_site": (post_json("/api/train", {}, Sec_Fetch_Site="cross-site"), {403}),
        "wrong_type": (request("POST", "/api/train", b"{}", **plain), {415}),
        "oversized": (None, {413}),
        "malformed": (request("POST", "/api/graph", b"{not json", **json_type), {400}),
        "unknown_path": (request("GET", "/wp-admin/../../etc/passwd"), {404}),
        "hostile_expression": (
            post_json("/api/expression", {"expression": hostile_expression}),
            {400},
        ),
        "garbage": (b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03 not http\r\n\r\n", {400}),
        "idle": (None, slow),
        "slowloris": (None, slow),
        "slow_body": (None, {408} | slow),
    }


def status_of(reply: bytes) -> int | str:
    if not reply:
        return "closed"
    try:
        return int(reply.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return f"unreadable {reply[:40]!r}"


async def exchange(host: str, port: int, data: bytes) -> bytes:
    """Send ``data`` and read until the server closes the connection."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(data)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), 30)
    finally:
        writer.close()


async def held_open(host: str, port: int, first: bytes, drip: bytes | None) -> tuple[bytes, float]:
    """Send ``first``, then ``drip`` every half second (or nothing), until the server replies
    or closes; the reply and how long the server kept the connection."""
    reader, writer = await asyncio.open_connection(host, port)
    start = time.monotonic()
    try:
        writer.write(first)
        await writer.drain()
        while True:
            try:
                reply = await asyncio.wait_for(reader.read(65536), 0.5)
            except asyncio.TimeoutError:
                if drip:
                    writer.write(drip)
                    await writer.drain()
                continue
            if reply:
                reply += await asyncio.wait_for(reader.read(), 30)
            return reply, time.monotonic() - start
    finally:
        writer.close()


async def train(host: str, port: int) -> bytes:
    """Start a small run and, when the server has room for it, read its whole event stream."""
    reply = await exchange(host, port, post_json("/api/train", SMALL_RUN))
    if status_of(reply) != 200:
        return reply
    run = json.loads(reply.split(b"\r\n\r\n", 1)[1])
    stream = await exchange(host, port, request("GET", run["events"]))
    if status_of(stream) == 200 and b'"type":"done"' not in stream:
        return b"HTTP/1.1 599 stream-without-done\r\n\r\n"
    return stream


async def client(host, port, seed, deadline, kinds, results, held) -> None:
    rng = random.Random(seed)
    names = list(kinds)
    while time.monotonic() < deadline:
        name = rng.choice(names)
        data, _ = kinds[name]
        try:
            if name == "train":
                reply = await train(host, port)
            elif name == "oversized":
                head = request("POST", "/api/graph", Content_Type="application/json")
                head = head.replace(b"Content-Length: 0", b"Content-Length: 10000000")
                reply = await exchange(host, port, head)  # refused before any body is sent
            elif name in ("idle", "slowloris", "slow_body"):
                first = {
                    "idle": b"",
                    "slowloris": b"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n",
                    "slow_body": request(
                        "POST", "/api/graph", Content_Type="application/json"
                    ).replace(b"Content-Length: 0", b"Content-Length: 50")
                    + b'{"w1": ',
                }[name]
                reply, seconds = await held_open(
                    host, port, first, b"X-a: b\r\n" if name == "slowloris" else None
                )
                held[name].append(seconds)
            else:
                reply = await exchange(host, port, data)
            results[name][str(status_of(reply))] += 1
        except (ConnectionResetError, BrokenPipeError):
            results[name]["reset"] += 1
        except (OSError, asyncio.TimeoutError) as exc:
            results[name][f"error {type(exc).__name__}"] += 1


async def main(host: str, port: int, clients: int, seconds: float, marker: str) -> dict:
    kinds = behaviours(marker)
    results = collections.defaultdict(collections.Counter)
    held = collections.defaultdict(list)
    deadline = time.monotonic() + seconds
    await asyncio.gather(
        *(client(host, port, seed, deadline, kinds, results, held) for seed in range(clients))
    )
    return {
        "results": {name: dict(counts) for name, counts in results.items()},
        "expected": {name: sorted(map(str, ok | {503})) for name, (_, ok) in kinds.items()},
        "held": {name: [min(times), max(times), len(times)] for name, times in held.items()},
    }


if __name__ == "__main__":
    host, port, clients, seconds, marker = sys.argv[1:6]
    report = asyncio.run(main(host, int(port), int(clients), float(seconds), marker))
    print(json.dumps(report))
