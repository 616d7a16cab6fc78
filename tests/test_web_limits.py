"""chainrule serve against careless and hostile clients: idle and slow connections end at the
read deadline, open connections are bounded, pages of other origins and bodies that are not
JSON cannot change state, a training run's work is bounded, and under a load test of valid and
hostile clients the server keeps answering and gives its threads back."""

import ast
import contextlib
import dataclasses
import http.client
import json
import os
import re
import select
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from test_web import call, connect, events, start, stop, stream

from chainrule.apps.web import playground
from chainrule.apps.web.connections import (
    ADMIT_SECONDS,
    MAX_CONNECTIONS,
    READ_SECONDS,
    Connections,
)

WEB = Path(__file__).resolve().parents[1] / "src" / "chainrule" / "apps" / "web"

#: The load test: clients at once, and seconds. The issue asks for 200 clients for 30 s; the
#: normal run takes 8 s of it (CHAINRULE_LOAD_SECONDS=30 runs the whole of it).
LOAD_CLIENTS = 200
LOAD_SECONDS = float(os.environ.get("CHAINRULE_LOAD_SECONDS", "8"))
INFO_SECONDS = 1.0  # the most /api/info may take while the load runs


@pytest.fixture
def server():
    server = start(use_graphviz=False)
    yield server
    stop(server)


def raw(server, method, path, body=b"", headers=()):
    """(status, JSON) of a request with exactly these headers (and Content-Length)."""
    conn = connect(server)
    headers = dict(headers)
    conn.putrequest(method, path, skip_host="Host" in headers, skip_accept_encoding=True)
    for name, value in headers.items():
        conn.putheader(name, value)
    conn.putheader("Content-Length", str(len(body)))
    conn.endheaders(body)
    response = conn.getresponse()
    data = json.loads(response.read())
    conn.close()
    return response.status, data


def wait_for_threads(baseline, seconds):
    """The thread count once it is back to ``baseline``, or after ``seconds``."""
    deadline = time.monotonic() + seconds
    while threading.active_count() > baseline and time.monotonic() < deadline:
        time.sleep(0.05)
    return threading.active_count()


# Idle and slow connections.


def test_idle_and_slow_connections_are_closed_at_the_read_deadline(server):
    baseline = threading.active_count()
    address = server.server_address[:2]
    start_time = time.monotonic()  # before the server starts waiting for any of them
    idle = [socket.create_connection(address) for _ in range(30)]
    slowloris = [socket.create_connection(address) for _ in range(20)]
    for sock in slowloris:
        sock.sendall(b"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    slow_body = [socket.create_connection(address) for _ in range(10)]
    for sock in slow_body:
        sock.sendall(
            b"POST /api/graph HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Content-Length: 50\r\n\r\n{"w1": '
        )
    time.sleep(0.5)
    assert threading.active_count() == baseline + 60  # one thread per open connection
    closed, replies = {}, {}
    while len(closed) < 60 and time.monotonic() - start_time < READ_SECONDS + 5:
        for sock in slowloris:  # a header line every half second: never a whole request
            if sock not in closed:
                with contextlib.suppress(OSError):  # closed since the last look
                    sock.sendall(b"X-Slow: 1\r\n")
        open_ = [sock for sock in idle + slowloris + slow_body if sock not in closed]
        readable, _, _ = select.select(open_, [], [], 0.5)
        for sock in readable:
            replies[sock] = _read_until_closed(sock)
            closed[sock] = time.monotonic() - start_time
    for sock in idle + slowloris + slow_body:
        sock.close()
    times = sorted(closed.values())
    print(f"60 slow connections closed after {times[0]:.2f} to {times[-1]:.2f} s")
    assert len(closed) == 60
    assert times[0] >= READ_SECONDS and times[-1] <= READ_SECONDS + 1.5
    assert all(replies[sock] == b"" for sock in idle + slowloris)  # closed without a reply
    for sock in slow_body:
        assert replies[sock].startswith(b"HTTP/1.1 408 ")
        assert b'"error":"the body did not arrive within 5 s' in replies[sock]
    assert wait_for_threads(baseline, 2.0) == baseline
    assert len(server.connections) == 0


def _read_until_closed(sock):
    data = b""
    with contextlib.suppress(ConnectionResetError):  # after a write to the closed socket
        while chunk := sock.recv(65536):
            data += chunk
    return data


def test_past_the_connection_bound_the_longest_idle_connections_make_room(server):
    baseline = threading.active_count()
    address = server.server_address[:2]
    idle = []
    for _ in range(MAX_CONNECTIONS + 16):
        idle.append(socket.create_connection(address))
        time.sleep(0.002)  # so that the server sees them in this order
    time.sleep(0.3)
    started = time.monotonic()
    status, _, info = call(server, "GET", "/api/info")
    took = time.monotonic() - started
    assert status == 200 and took < INFO_SECONDS, took
    assert info["connections"] <= MAX_CONNECTIONS
    assert threading.active_count() <= baseline + MAX_CONNECTIONS
    # The 17 oldest were closed to make room (16 for the later idle ones, 1 for the request);
    # the newest are still open.
    readable, _, _ = select.select(idle, [], [], 0.5)
    assert set(readable) == set(idle[:17])
    assert all(sock.recv(1) == b"" for sock in readable)
    for sock in idle:
        sock.close()
    assert wait_for_threads(baseline, 2.0) == baseline


def test_when_every_connection_is_busy_a_new_one_gets_503(server):
    server.connections = Connections(limit=2)
    slow = {"steps": 2000, "every": 1, "delay_ms": 20}
    streams = [stream(server, slow) for _ in range(2)]  # both slots busy streaming
    for _, _, response in streams:
        assert next(events(response))["type"] == "start"
    started = time.monotonic()
    status, response, data = call(server, "GET", "/api/info")
    took = time.monotonic() - started
    assert (status, data["status"]) == (503, 503)
    assert data["error"].startswith("the server is busy: 2 connections are open, its limit")
    assert response.getheader("Retry-After") == "1"
    assert ADMIT_SECONDS <= took < ADMIT_SECONDS + 1
    for _, conn, response in streams:  # closing the streams stops the runs and frees the slots
        response.close()
        conn.close()
    deadline = time.monotonic() + 5
    while len(server.runs) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert call(server, "GET", "/api/info")[2]["runs"] == 0


# State-changing requests from other origins, or with other content types.

JSON = {"Content-Type": "application/json"}


@pytest.mark.parametrize(
    ("headers", "status", "message"),
    [
        (  # the request: any page the user visits could send it
            {"Origin": "http://elsewhere", "Content-Type": "text/plain"},
            403,
            r"POST /api/train from the page at 'http://elsewhere' is refused; only this "
            r"server's own page \(http://127\.0\.0\.1:\d+\) may change its state",
        ),
        ({"Origin": "http://elsewhere", **JSON}, 403, r"from the page at 'http://elsewhere'"),
        ({"Origin": "null", **JSON}, 403, r"from the page at 'null' is refused"),
        ({"Origin": "http://127.0.0.1:1", **JSON}, 403, r"from the page at 'http://127\.0\.0"),
        ({"Origin": "https://127.0.0.1", **JSON}, 403, r"from the page at 'https://127"),
        ({"Sec-Fetch-Site": "cross-site", **JSON}, 403, r"from a cross-site page is refused"),
        ({"Sec-Fetch-Site": "same-site", **JSON}, 403, r"from a same-site page is refused"),
        (
            {"Content-Type": "text/plain"},
            415,
            r"^POST /api/train takes a JSON body with Content-Type: application/json; got "
            r"Content-Type 'text/plain'$",
        ),
        ({"Content-Type": "application/x-www-form-urlencoded"}, 415, r"got Content-Type 'app"),
        ({"Content-Type": "multipart/form-data; boundary=x"}, 415, r"got Content-Type 'mult"),
        ({}, 415, r"got no Content-Type"),
    ],
)
def test_state_changing_requests_from_elsewhere_or_not_json_are_refused(
    server, headers, status, message
):
    got, data = raw(server, "POST", "/api/train", b"{}", headers)
    assert (got, data["status"]) == (status, status)
    assert re.search(message, data["error"]), data["error"]
    assert len(server.runs) == 0  # no run was started


def test_every_state_changing_route_checks_origin_and_content_type(server):
    for path in ["/api/graph", "/api/expression", "/api/train", "/api/train/0123abcd/stop"]:
        assert raw(server, "POST", path, b"{}", {"Origin": "http://a.example", **JSON})[0] == 403
        assert raw(server, "POST", path, b"{}", {"Content-Type": "text/plain"})[0] == 415


def test_same_origin_and_programs_without_origin_may_start_runs(server):
    port = server.server_address[1]
    own = f"http://127.0.0.1:{port}"
    accepted = [
        {"Origin": own, "Sec-Fetch-Site": "same-origin", **JSON},
        {"Origin": own, "Content-Type": "Application/JSON; charset=utf-8"},
        JSON,  # curl, Python: no Origin
        {"Host": f"localhost:{port}", "Origin": f"http://localhost:{port}", **JSON},
    ]
    for number, headers in enumerate(accepted, 1):
        status, data = raw(server, "POST", "/api/train", b"{}", headers)
        assert status == 200, data
        assert len(server.runs) == number


def test_the_page_sends_its_state_changing_requests_as_json():
    script = (WEB / "static" / "app.js").read_text()
    assert script.count("fetch(") == 1  # every request goes through postJSON
    post_json = script[script.index("async function postJSON") :].split("\n}\n")[0]
    assert 'headers: { "Content-Type": "application/json" }' in post_json
    assert "fetch(url" in post_json and 'method: "POST"' in post_json


@pytest.mark.parametrize(
    ("length", "status", "message"),
    [
        ("\u00b2", 411, r"send a JSON body with a Content-Length header"),  # a digit to isdigit
        ("9" * 5000, 413, r"the body is 99999999999999999999 bytes; the limit is 16384"),
    ],
)
def test_odd_content_lengths_are_refused_not_crashes(server, length, status, message):
    host, port = server.server_address[:2]
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(
            b"POST /api/graph HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {length}\r\n\r\n".encode("latin-1")
        )
        reply = _read_until_closed(sock).decode("latin-1")
    assert reply.startswith(f"HTTP/1.1 {status} ")
    assert re.search(message, json.loads(reply.split("\r\n\r\n", 1)[1])["error"])


def test_no_module_of_the_server_can_run_code_it_is_sent():
    # The expression box parses with ast and walks the tree; nothing reaches these.
    forbidden = {"eval", "exec", "compile", "__import__", "pickle", "marshal", "os.system"}
    for path in sorted(WEB.glob("*.py")):
        tree = ast.parse(path.read_text())
        names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
        names |= {
            f"{node.value.id}.{node.attr}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
        }
        imported = {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
        }
        assert not (names | imported) & forbidden, path.name


# A training run's work.


def test_info_reports_the_limits(server):
    limits = call(server, "GET", "/api/info")[2]["limits"]
    assert limits["work"] == playground.MAX_WORK == 1_000_000_000
    assert limits["activation_cost"] == {"tanh": 1, "relu": 1, "sigmoid": 4, "gelu": 14}
    assert limits["pause_seconds"] == 60 and limits["runs"] == 4
    assert limits["connections"] == MAX_CONNECTIONS and limits["read_seconds"] == READ_SECONDS


LARGEST_BEFORE = {  # what the limits allowed before the work bound: about 230 s of two cores
    "dataset": "spirals",
    "hidden": [64] * 4,
    "activation": "gelu",
    "steps": 2000,
    "every": 1,
    "grid": 80,
}


def test_a_run_past_the_work_limit_is_refused_with_the_limit_named(server):
    status, _, data = call(server, "POST", "/api/train", LARGEST_BEFORE)
    assert status == 400
    assert data["error"] == (
        "train: this run is 5.29e+10 units of work; the limit is 1e+09. Work is "
        "(2 × 2000 steps × 300 points + 2000 events × (80² grid + 300 points)) × 259 units × "
        "14 for gelu: use fewer steps, fewer or narrower layers, a larger every, a smaller "
        "grid or a cheaper activation"
    )
    status, _, data = call(server, "POST", "/api/train", {"steps": 2000, "delay_ms": 200})
    assert status == 400
    assert data["error"] == (
        "train: the pauses add up to 80 s (400 events × 200 ms); the limit is 60 s: use a "
        "shorter delay_ms or a larger every"
    )
    assert len(server.runs) == 0


def test_the_largest_allowed_gelu_run_takes_seconds(server):
    # gelu costs the most per unit; at every=1 and an 80×80 grid, boundaries cost the most.
    config = {**LARGEST_BEFORE, "steps": _largest_steps(LARGEST_BEFORE)}
    started = time.monotonic()
    _, conn, response = stream(server, config)
    received = list(events(response))
    conn.close()
    took = time.monotonic() - started
    print(f"the largest gelu run allowed ({config['steps']} steps) took {took:.1f} s")
    assert received[-1]["type"] == "done" and received[-1]["step"] == config["steps"]
    assert took < 20


def _largest_steps(request):
    """The most steps the work limit allows with the rest of ``request``."""
    low, high = 1, playground.MAX_STEPS
    while low < high:
        steps = (low + high + 1) // 2
        config = playground.TrainConfig(**{**request, "hidden": tuple(request["hidden"])})
        if playground.work(dataclasses.replace(config, steps=steps)) <= playground.MAX_WORK:
            low = steps
        else:
            high = steps - 1
    return low


# The load test.


def test_under_load_the_server_answers_and_gives_its_threads_back(tmp_path):
    server = start(use_graphviz=False)
    try:
        host, port = server.server_address[:2]
        marker = tmp_path / "code-ran"
        baseline = threading.active_count()
        latencies, peak, done = [], [baseline], threading.Event()

        def probe():
            while not done.is_set():
                started = time.monotonic()
                conn = http.client.HTTPConnection(host, port, timeout=10)
                try:
                    conn.request("GET", "/api/info")
                    status = conn.getresponse().status
                except OSError as exc:
                    status = repr(exc)
                conn.close()
                latencies.append((time.monotonic() - started, status))
                peak[0] = max(peak[0], threading.active_count() - 1)  # less the probe
                done.wait(0.1)

        clients = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("web_load.py")), host, str(port),
             str(LOAD_CLIENTS), str(LOAD_SECONDS), str(marker)],
            stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        time.sleep(1.0)  # let the clients connect before timing /api/info
        watcher = threading.Thread(target=probe)
        watcher.start()
        out, _ = clients.communicate(timeout=LOAD_SECONDS + 60)
        done.set()
        watcher.join()
        after = wait_for_threads(baseline, READ_SECONDS + 3)
    finally:
        stop(server)
    report = json.loads(out)
    results = report["results"]
    served = sum(n for counts in results.values() for s, n in counts.items() if s.isdigit())
    worst = max(seconds for seconds, _ in latencies)
    print(
        f"{LOAD_CLIENTS} clients for {LOAD_SECONDS:g} s: {served} requests answered, "
        f"/api/info answered {len(latencies)} times, worst {worst * 1e3:.0f} ms; threads "
        f"{baseline} before, {peak[0]} at most, {after} after"
    )
    print(json.dumps(results, sort_keys=True))
    print("held open (min s, max s, count):", report["held"])
    assert clients.returncode == 0
    assert all(status == 200 for _, status in latencies), latencies
    assert worst < INFO_SECONDS and len(latencies) >= LOAD_SECONDS * 3
    assert peak[0] <= baseline + MAX_CONNECTIONS
    assert after == baseline
    for name, counts in results.items():  # every exchange ended as it should
        # A connection whose request the server has not read yet is one "waiting for its
        # request" and may be closed to make room (connections.py): rare, never more.
        unread = counts.get("closed", 0) if "closed" not in report["expected"][name] else 0
        assert set(counts) - {"closed"} <= set(report["expected"][name]), (name, counts)
        assert unread <= 0.01 * sum(counts.values()), (name, counts)
    for name in ["info", "graph", "expression", "page"]:  # valid requests were served
        assert results[name].get("200", 0) > 0.9 * sum(results[name].values()), name
    for name in ["idle", "slowloris"]:  # none outlived the read deadline
        assert report["held"][name][1] <= READ_SECONDS + 1.5
    assert served > 1000
    assert not marker.exists()  # the hostile expression ran no code
