"""chainrule serve: the expression box's parser, the HTTP API and event stream, and the page
driven in a real browser (Chromium through Playwright)."""

import http.client
import inspect
import json
import math
import re
import socket
import statistics
import subprocess
import sys
import threading
import time

import pytest

from chainrule import DomainError, Value
from chainrule.apps.web import playground
from chainrule.apps.web.expression import (
    MAX_LENGTH,
    ExpressionError,
    differentiate,
    evaluate,
    parse,
)
from chainrule.apps.web.graph import TEACHING_VALUES, describe, teaching_graph
from chainrule.apps.web.server import MAX_BODY, MAX_RUNS, make_server

# The expression box: good expressions match Values built by hand.

VALUES = {"x": 0.7, "y": 1.3, "a": 0.5, "b": -1.2, "w1": 0.2, "w2": 0.4, "x1": -0.4, "x2": 0.5}

GOOD = {
    "x*y + sin(x)": lambda x, y: x * y + x.sin(),
    "tanh(a*b) ** 2": lambda a, b: (a * b).tanh() ** 2,
    "-x / (1 + exp(-y))": lambda x, y: -x / (1 + (-y).exp()),
    "x ** y": lambda x, y: x**y,
    "2 ** x - x ** -1.5": lambda x: 2**x - x**-1.5,
    "sqrt(x) * log(y) - abs(x - y)": lambda x, y: x.sqrt() * y.log() - (x - y).abs(),
    "sigmoid(w1*x1 + w2*x2) + 0.5*(w1**2 + w2**2)": (
        lambda w1, x1, w2, x2: (w1 * x1 + w2 * x2).sigmoid() + 0.5 * (w1**2 + w2**2)
    ),
    "relu(x) + leaky_relu(-x, 0.1) + softplus(x) + cos(x) * tan(y)": (
        lambda x, y: x.relu() + (-x).leaky_relu(0.1) + x.softplus() + x.cos() * y.tan()
    ),
    "+x - -y + x*x*x": lambda x, y: x - -y + x * x * x,
}


@pytest.mark.parametrize("text", list(GOOD))
def test_expression_matches_values_built_by_hand(text):
    build = GOOD[text]
    names = list(inspect.signature(build).parameters)
    assert parse(text).variables == tuple(names)
    leaves = {name: Value(VALUES[name], label=name) for name in names}
    expected = build(*leaves.values())
    expected.backward()
    got = differentiate(text, VALUES)
    assert got.data == pytest.approx(expected.data, rel=1e-12)
    inputs = {node.label: node for node in _leaves(got)}
    for name in names:
        assert inputs[name].grad == pytest.approx(leaves[name].grad, rel=1e-12, abs=1e-15)


def _leaves(root):
    from chainrule.scalar.value import topological_order

    return [node for node in topological_order(root) if not node._prev]


def test_expression_labels_variables_numbers_and_the_result():
    f = evaluate("3*x + 2", {"x": 1.5})
    assert f.label == "f" and f.data == 6.5
    assert sorted(node.label for node in _leaves(f)) == ["2", "3", "x"]


def test_constant_expression_folds_to_a_number():
    f = differentiate("2 ** 10 / 4", {})
    assert f.data == 256.0 and f.grad == 1.0


HOSTILE = {
    "x.__class__": r"attribute access \(a\.b\) is not allowed \(column 1\)",
    "x.__class__.__bases__[0].__subclasses__()": r"only functions named in the list can be called",
    "__import__('os')": r"__import__\(\) is not an allowed function \(column 1\); the functions",
    "__import__": r"the name '__import__' is not allowed; names must not start with _",
    "_x + 1": r"the name '_x' is not allowed",
    "open('/etc/passwd')": r"open\(\) is not an allowed function",
    "getattr(x, 'y')": r"getattr\(\) is not an allowed function",
    "lambda: 1": r"lambda is not allowed",
    "[x for x in y]": r"comprehensions are not allowed",
    "sum(x for x in y)": r"sum\(\) is not an allowed function",
    "(x for x in y)": r"comprehensions are not allowed",
    "x[0]": r"subscripts \(a\[i\]\) are not allowed",
    "exp(x=1)": r"keyword arguments \(x=\.\.\.\) are not allowed in exp\(\)",
    "exp(**k)": r"keyword arguments \(\*\*=\.\.\.\) are not allowed",
    "exp(x, y)": r"exp\(\) takes 1 argument\(s\), got 2",
    "leaky_relu(x, y)": r"the slope must be a number",
    "exp": r"exp is a function; call it as exp\(\.\.\.\)",
    "9**9**9": r"the exponent 3\.8742e\+08 is too large; exponents must be at most 100",
    "x ** 1000": r"the exponent 1000 is too large",
    "x ** -101": r"the exponent -101 is too large",
    "x % 2": r"the operator % is not allowed",
    "x // 2": r"the operator // is not allowed",
    "~x": r"the operator ~ is not allowed",
    "x < y": r"comparisons are not allowed",
    "x and y": r"and/or are not allowed",
    "x if y else 1": r"if/else is not allowed",
    "f'{x}'": r"f-strings are not allowed",
    "(x, y)": r"tuples are not allowed",
    "'abc' * 3": r"the constant 'abc' is not allowed; only real numbers",
    "b'x'": r"the constant b'x' is not allowed",
    "True + x": r"the constant True is not allowed",
    "1j * x": r"the constant 1j is not allowed",
    "1e300 * x": r"the number 1e\+300 is larger than 1e\+09",
    "import os": r"invalid syntax at column 1",
    "x = 1": r"invalid syntax",
    "x; y": r"invalid syntax",
    "": r"is empty; type one such as",
    "a" * (MAX_LENGTH + 1): r"is 501 characters long; the limit is 500",
    "-" * 30 + "x": r"is nested more than 30 levels deep",
    "*".join(["(" + "+".join(["x"] * 15) + ")"] * 8): r"has more than 200 parts",
    "a+b+c+d+e+f+g+h+i": r"uses 9 variables; the limit is 8",
    "v" * 25: r"is longer than 24 characters",
    "exp(700) * exp(700)": r"exp\(700\) \* exp\(700\) is inf, too large for a float",
}


@pytest.mark.parametrize("text", list(HOSTILE))
def test_hostile_expression_is_refused_with_a_message(text):
    values = dict.fromkeys("abcdefghixyv", 1.0)
    with pytest.raises(ExpressionError, match="^expression: .*" + HOSTILE[text]):
        differentiate(text, values)


def test_expression_must_be_a_string():
    with pytest.raises(ExpressionError, match="expression: must be a string, got list"):
        parse(["x"])


@pytest.mark.parametrize(
    ("text", "values", "message"),
    [
        ("log(x)", {"x": -1.0}, r"log: undefined at -1.0 for Value 'x'; log needs a positive"),
        ("x / (x - x)", {"x": 2.0}, r"div: undefined at x=2.0, y=0.0 for Value .x."),
        ("sqrt(x)", {"x": 0.0}, r"sqrt: derivative undefined at 0.0"),
        ("x ** 0.5", {"x": -4.0}, r"pow: undefined at x=-4.0, y=0.5"),
        ("exp(x)", {"x": 1000.0}, r"exp: undefined at 1000.0 for Value 'x'"),
    ],
)
def test_domain_errors_come_back_as_messages(text, values, message):
    with pytest.raises(DomainError, match=message):
        differentiate(text, values)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"x": 1.0}, r"no value given for the variable 'y'"),
        ({"x": "1", "y": 1.0}, r"the value of 'x' must be a number, got str"),
        ({"x": True, "y": 1.0}, r"the value of 'x' must be a number, got bool"),
        ({"x": math.inf, "y": 1.0}, r"the value of 'x' is inf; values must be finite"),
        ({"x": 1e10, "y": 1.0}, r"the value of 'x' is 10000000000.0"),
    ],
)
def test_variable_values_are_checked(values, message):
    with pytest.raises(ExpressionError, match=message):
        evaluate("x * y", values)


def test_describe_lists_nodes_in_order_with_depths():
    data = describe(teaching_graph(TEACHING_VALUES), list(TEACHING_VALUES), use_graphviz=False)
    names = [node["name"] for node in data["nodes"]]
    assert names[-1] == "f" and set(TEACHING_VALUES) <= set(names)
    assert data["nodes"][-1]["depth"] == max(node["depth"] for node in data["nodes"])
    assert data["svg"] is None and data["renderer"] == "builtin"
    assert "<table>" in data["trace_html"]


# The HTTP API, against a server on a free port in a thread.


def start(use_graphviz=None):
    server = make_server(port=0, use_graphviz=use_graphviz)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server


def stop(server):
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def server():
    server = start()
    yield server
    stop(server)


@pytest.fixture(scope="module")
def plain_server():
    """A server that draws graphs with the page's built-in layout, as without Graphviz."""
    server = start(use_graphviz=False)
    yield server
    stop(server)


def connect(server):
    host, port = server.server_address[:2]
    return http.client.HTTPConnection(host, port, timeout=30)


def call(server, method, path, body=None, headers=None, connection=None):
    """(status, headers, decoded JSON or text) of one request; a state-changing one says its
    body is JSON, as the page's requests do, unless ``headers`` says otherwise."""
    conn = connection or connect(server)
    if body is not None and not isinstance(body, (bytes, str)):
        body = json.dumps(body)
    if method != "GET":
        headers = {"Content-Type": "application/json", **(headers or {})}
    conn.request(method, path, body=body, headers=headers or {})
    response = conn.getresponse()
    raw = response.read()
    if connection is None:
        conn.close()
    if response.getheader("Content-Type", "").startswith("application/json"):
        return response.status, response, json.loads(raw)
    return response.status, response, raw.decode()


def teaching_gradients(values):
    f = teaching_graph(values)
    return f.data, {node.label: node.grad for node in _leaves(f) if node.label in values}


def test_page_and_static_files_are_served(server):
    status, response, text = call(server, "GET", "/")
    assert status == 200 and response.getheader("Content-Type").startswith("text/html")
    assert "<title>chainrule: see the gradients</title>" in text
    assert 'src="/static/app.js"' in text and "http" not in text.split("<body>")[0].lower()
    for name, kind in [("app.js", "text/javascript"), ("style.css", "text/css")]:
        status, response, _ = call(server, "GET", f"/static/{name}")
        assert status == 200 and response.getheader("Content-Type").startswith(kind)


def test_info_lists_choices_and_limits(server):
    status, _, info = call(server, "GET", "/api/info")
    assert status == 200
    assert info["datasets"] == ["blobs", "moons", "spirals", "xor"]
    assert info["activations"] == ["tanh", "relu", "sigmoid", "gelu"]
    assert info["limits"]["length"] == MAX_LENGTH
    assert info["teaching"]["values"] == TEACHING_VALUES


def test_graph_endpoint_gives_chainrule_gradients_and_svg(server, dot_program):
    values = {"w1": 1.25, "w2": -0.5, "x1": 2.0, "x2": 0.75}
    status, response, data = call(server, "POST", "/api/graph", values)
    assert status == 200
    value, gradients = teaching_gradients(values)
    assert data["value"] == value and data["gradients"] == gradients
    assert data["renderer"] == "graphviz" and data["svg"].startswith("<svg")
    assert "grad" in data["svg"] and "<table>" in data["trace_html"]
    assert response.getheader("Server-Timing").startswith("app;dur=")


def test_graph_endpoint_without_graphviz_sends_nodes_for_the_page(plain_server):
    status, _, data = call(plain_server, "POST", "/api/graph", TEACHING_VALUES)
    assert status == 200 and data["svg"] is None and data["renderer"] == "builtin"
    assert len(data["nodes"]) == 14 and data["nodes"][-1]["name"] == "f"


def test_slider_updates_take_well_under_100_ms_on_the_server(server):
    connection = connect(server)  # one kept-alive connection, as the page's fetches use
    times = []
    for i in range(40):
        values = dict(TEACHING_VALUES, w1=-2 + 0.1 * i)
        status, _, data = call(server, "POST", "/api/graph", values, connection=connection)
        assert status == 200
        times.append(data["server_ms"])
    connection.close()
    median = statistics.median(times)
    print(f"server time per slider update: median {median:.1f} ms, max {max(times):.1f} ms")
    assert median < 100


def test_expression_endpoint_differentiates_with_given_and_default_values(server):
    body = {"expression": "x*y + sin(x)", "values": {"x": 2.0, "z": 5.0}}
    status, _, data = call(server, "POST", "/api/expression", body)
    assert status == 200
    assert data["variables"] == ["x", "y"] and data["values"] == {"x": 2.0, "y": 1.0}
    assert data["gradients"] == {"x": 1.0 + math.cos(2.0), "y": 2.0}
    assert data["value"] == 2.0 + math.sin(2.0)


@pytest.mark.parametrize(
    ("method", "path", "body", "headers", "status", "message"),
    [
        ("POST", "/api/graph", "{'w1': 1}", None, 400, r"malformed JSON: Expecting property"),
        ("POST", "/api/graph", "[1, 2]", None, 400, r"the body must be a JSON object, got list"),
        ("POST", "/api/graph", b"\xff\xfe", None, 400, r"malformed JSON: 'utf-8' codec"),
        ("POST", "/api/graph", '{"w1": NaN}', None, 400, r"malformed JSON: NaN is not valid"),
        ("POST", "/api/graph", {"w1": 1}, None, 400, r"graph: missing field 'w2'; send numbers"),
        ("POST", "/api/graph", dict(TEACHING_VALUES, w1="a"), None, 400, r"'w1' must be a num"),
        ("POST", "/api/graph", dict(TEACHING_VALUES, w1=1e308 * 10), None, 400, r"malformed"),
        ("POST", "/api/graph", dict(TEACHING_VALUES, w3=1), None, 400, r"unknown field 'w3'"),
        ("POST", "/api/graph", "x" * (MAX_BODY + 1), None, 413, r"the limit is 16384"),
        ("POST", "/api/expression", {}, None, 400, r"missing field 'expression'"),
        ("POST", "/api/expression", {"expression": "x", "values": [1]}, None, 400, r"object"),
        ("POST", "/api/expression", {"expression": "x.y"}, None, 400, r"attribute access"),
        ("POST", "/api/expression", {"expression": "__import__('os')"}, None, 400, r"__import_"),
        ("POST", "/api/expression", {"expression": "9**9**9"}, None, 400, r"exponent 3\.87"),
        ("POST", "/api/expression", {"expression": "log(-x)"}, None, 400, r"log: undefined"),
        ("POST", "/api/expression", {"expression": 3}, None, 400, r"must be a string, got int"),
        ("POST", "/api/train", {"dataset": "iris"}, None, 400, r"unknown dataset 'iris'"),
        ("POST", "/api/train", {"hidden": "16,x"}, None, 400, r"hidden must be layer widths"),
        ("POST", "/api/train", {"hidden": [8] * 5}, None, 400, r"hidden has 5 layers; the limit"),
        ("POST", "/api/train", {"hidden": [1000]}, None, 400, r"between 1 and 64, got 1000"),
        ("POST", "/api/train", {"lr": 0}, None, 400, r"lr must be between 1e-05 and 10"),
        ("POST", "/api/train", {"lr": "fast"}, None, 400, r"lr must be a number, got 'fast'"),
        ("POST", "/api/train", {"steps": 10**6}, None, 400, r"steps must be between 1 and 2000"),
        ("POST", "/api/train", {"steps": 1.5}, None, 400, r"steps must be an integer"),
        ("POST", "/api/train", {"activation": "swish"}, None, 400, r"unknown activation"),
        ("POST", "/api/train", {"epochs": 3}, None, 400, r"unknown field 'epochs'"),
        ("GET", "/api/train/0123abcd/events", None, None, 404, r"no run '0123abcd'"),
        ("POST", "/api/train/0123abcd/stop", None, None, 404, r"no run '0123abcd' to stop"),
        ("GET", "/nowhere", None, None, 404, r"no page or API at '/nowhere'"),
        ("GET", "/static/secret.py", None, None, 404, r"no static file 'secret.py'"),
        ("GET", "/static/../server.py", None, None, 404, r"no page or API"),
        ("GET", "/api/graph", None, None, 405, r"GET /api/graph is not allowed; use POST"),
        ("DELETE", "/", None, None, 405, r"DELETE / is not allowed; use GET"),
        ("OPTIONS", "/", None, None, 405, r"method OPTIONS is not allowed"),
    ],
)
def test_bad_requests_get_a_json_error(server, method, path, body, headers, status, message):
    got, response, data = call(server, method, path, body, headers)
    assert (got, data["status"]) == (status, status)
    assert re.search(message, data["error"]), data["error"]
    assert call(server, "GET", "/api/info")[0] == 200  # still serving


def test_requests_addressed_to_another_host_name_are_refused(server):
    status, _, data = call(server, "GET", "/api/info", headers={"Host": "evil.example:8000"})
    assert status == 421 and "not 'evil.example:8000'" in data["error"]
    assert call(server, "GET", "/", headers={"Host": "localhost:1"})[0] == 200


def test_post_without_content_length_is_refused(server):
    conn = connect(server)
    conn.putrequest("POST", "/api/graph")
    conn.putheader("Content-Type", "application/json")
    conn.endheaders()
    response = conn.getresponse()
    assert response.status == 411
    assert "Content-Length" in json.loads(response.read())["error"]
    conn.close()


def test_garbage_on_the_socket_gets_a_json_error_and_the_server_keeps_serving(server):
    with socket.create_connection(server.server_address[:2], timeout=10) as sock:
        sock.sendall(b"\x00\x01 not http at all\r\n\r\n")
        reply = b""
        while chunk := sock.recv(65536):  # the server closes the connection after the reply
            reply += chunk
    reply = reply.decode("latin-1")
    assert reply.startswith("HTTP/1.1 400") and '{"error":"Bad request' in reply
    assert call(server, "GET", "/api/info")[0] == 200


def stream(server, body):
    """Start a run and return its (connection, response) streaming events."""
    status, _, run = call(server, "POST", "/api/train", body)
    assert status == 200, run
    conn = connect(server)
    conn.request("GET", run["events"])
    response = conn.getresponse()
    assert response.status == 200
    assert response.getheader("Content-Type").startswith("text/event-stream")
    return run, conn, response


def events(response):
    """The JSON events of a server-sent event stream, as they arrive."""
    for line in response:
        line = line.decode().rstrip("\n")
        if line.startswith("data: "):
            yield json.loads(line[len("data: ") :])


def test_training_stream_yields_events_with_rising_accuracy_on_moons(server):
    run, conn, response = stream(server, {"dataset": "moons", "steps": 300, "every": 10})
    received = list(events(response))
    conn.close()
    start, steps, done = received[0], received[1:-1], received[-1]
    assert start["type"] == "start" and start["classes"] == 2 and len(start["x"]) == 200
    assert [event["step"] for event in steps] == list(range(10, 301, 10))
    assert sum(len(event["losses"]) for event in steps) == 300
    assert len(steps[-1]["grid"]) == start["grid_size"] ** 2
    accuracies = [event["accuracy"] for event in steps]
    assert accuracies[-1] > 0.95 and accuracies[-1] > accuracies[0]
    assert steps[-1]["loss"] < steps[0]["loss"]
    assert done == {**done, "type": "done", "step": 300, "stopped": False}
    assert call(server, "GET", run["events"])[0] == 404  # each run streams once


def test_stop_endpoint_ends_the_run(server):
    body = {"steps": 2000, "every": 1, "delay_ms": 20}
    run, conn, response = stream(server, body)
    received = events(response)
    assert next(received)["type"] == "start" and next(received)["type"] == "step"
    assert call(server, "POST", run["stop"], {})[2] == {"id": run["id"], "stopping": True}
    last = list(received)[-1]
    conn.close()
    assert last["type"] == "done" and last["stopped"] and last["step"] < 2000


def test_closing_the_stream_stops_the_training_thread(server):
    run, conn, response = stream(server, {"steps": 2000, "every": 1, "delay_ms": 20})
    assert next(events(response))["type"] == "start"
    conn.close()
    response.close()
    deadline = time.monotonic() + 10
    while call(server, "GET", "/api/info")[2]["runs"] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert call(server, "GET", "/api/info")[2]["runs"] == 0


def test_too_many_runs_at_once_are_refused():
    server = start(use_graphviz=False)
    try:
        for _ in range(MAX_RUNS):
            assert call(server, "POST", "/api/train", {})[0] == 200
        status, _, data = call(server, "POST", "/api/train", {})
        assert status == 429 and "stop one first" in data["error"]
    finally:
        stop(server)


def test_playground_config_takes_a_string_of_widths_and_defaults():
    config = playground.TrainConfig.from_json({"hidden": " 8, 4 ", "lr": 0.1})
    assert config.hidden == (8, 4) and config.lr == 0.1 and config.dataset == "moons"
    assert playground.TrainConfig.from_json({"hidden": ""}).hidden == ()


def test_import_chainrule_and_its_command_line_do_not_load_the_web_server():
    code = "import sys, chainrule, chainrule.apps.cli; print('http.server' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_chainrule_serve_prints_its_address_and_serves():
    process = subprocess.Popen(
        [sys.executable, "-m", "chainrule", "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        line = process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, line
        conn = http.client.HTTPConnection("127.0.0.1", int(match.group(1)), timeout=10)
        conn.request("GET", "/api/info")
        assert conn.getresponse().status == 200
        conn.close()
    finally:
        process.terminate()
        process.wait(timeout=10)


# The page in a browser.


@pytest.fixture
def page(chromium, server):
    context = chromium.new_context(viewport={"width": 1280, "height": 1000})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(server.url)
    page.wait_for_selector("#grad-w1[data-value]")
    yield page
    context.close()
    assert errors == []


def shown(page, selector):
    return float(page.get_attribute(selector, "data-value"))


def wait_for_value(page, selector, expected, timeout=10_000):
    page.wait_for_function(
        "([selector, expected]) => {"
        "  const element = document.querySelector(selector);"
        "  return element && Math.abs(Number(element.dataset.value) - expected)"
        "    <= 1e-12 * Math.max(1, Math.abs(expected));"
        "}",
        arg=[selector, expected],
        timeout=timeout,
    )


def test_moving_a_slider_shows_the_gradient_chainrule_computes(page, tmp_path):
    value, gradients = teaching_gradients(TEACHING_VALUES)
    assert shown(page, "#grad-w1") == pytest.approx(gradients["w1"], rel=1e-12)
    page.fill("#slider-w1", "1.5")  # sets the value and fires input, as a drag does
    for _ in range(10):  # and step another slider with the keyboard, one event per press
        page.press("#slider-x2", "ArrowRight")
    values = dict(TEACHING_VALUES, w1=1.5, x2=0.6)
    value, gradients = teaching_gradients(values)
    for name, gradient in gradients.items():
        wait_for_value(page, f"#grad-{name}", gradient)
    wait_for_value(page, "#value-f", value)
    assert page.text_content("#grad-w1") == f"{gradients['w1']:.4f}"
    assert page.locator("#graph svg").count() == 1
    assert "grad" in page.text_content("#graph") and page.locator("#trace table").count() == 1
    assert re.match(r"server \d+\.\d ms", page.text_content("#timing"))
    page.screenshot(path=tmp_path / "sliders.png", full_page=True)


def test_hostile_expression_is_refused_on_the_page(page, tmp_path):
    page.wait_for_selector("#expr-grads td[data-name='x']")
    wait_for_value(page, "#expr-grads td[data-name='x']", 1.0 + math.cos(1.0))
    page.fill("#expr-vars input[data-name='x']", "2")
    wait_for_value(page, "#expr-grads td[data-name='x']", 1.0 + math.cos(2.0))
    page.fill("#expr", "__import__('os').system('echo hacked')")
    page.click("#expr-go")
    error = page.locator("#expr-error")
    error.wait_for(state="visible")
    assert "only functions named in the list can be called" in error.text_content()
    assert page.locator("#expr-result").is_hidden()
    page.fill("#expr", "9**9**9")
    page.press("#expr", "Enter")
    page.locator("#expr-error", has_text="exponent 3.8742e+08 is too large").wait_for()
    page.screenshot(path=tmp_path / "refused.png", full_page=True)
    page.fill("#expr", "tanh(a*b) ** 2")
    page.click("#expr-go")
    page.wait_for_selector("#expr-grads td[data-name='b']")
    assert page.locator("#expr-error").is_hidden()


def test_training_on_moons_shows_accuracy_rising_above_95_percent(page, tmp_path):
    page.select_option("#dataset", "moons")
    page.fill("#hidden", "16,16")
    page.fill("#steps", "300")
    page.click("#train")
    page.wait_for_selector("#train-status[data-state='done']", timeout=60_000)
    accuracies = page.evaluate("window.chainruleTraining.accuracies")
    assert accuracies[-1] > 0.95 and accuracies[-1] > accuracies[0]
    assert shown(page, "#accuracy") == accuracies[-1]
    assert page.text_content("#train-step") == "300"
    assert page.is_disabled("#stop") and page.is_enabled("#train")
    page.screenshot(path=tmp_path / "training.png", full_page=True)


def test_stop_button_stops_training_and_bad_settings_show_a_message(page):
    page.fill("#steps", "2000")
    page.click("#train")
    page.wait_for_selector("#train-status[data-state='running']")
    page.click("#stop")
    page.wait_for_selector("#train-status[data-state='stopped']", timeout=20_000)
    assert int(page.text_content("#train-step")) < 2000
    page.fill("#hidden", "16,16,16,16,16")
    page.click("#train")
    page.wait_for_selector("#train-error:not([hidden])")
    assert "hidden has 5 layers" in page.text_content("#train-error")


def test_page_draws_graphs_itself_without_graphviz(chromium, plain_server, tmp_path):
    context = chromium.new_context()
    page = context.new_page()
    page.goto(plain_server.url)
    page.wait_for_selector("#graph svg.builtin-graph")
    assert "built-in layout" in page.text_content("#renderer-note")
    assert page.locator("#graph svg.builtin-graph g.node").count() == 14
    page.fill("#slider-w2", "-1")
    _, gradients = teaching_gradients(dict(TEACHING_VALUES, w2=-1.0))
    wait_for_value(page, "#grad-w2", gradients["w2"])
    page.screenshot(path=tmp_path / "builtin.png", full_page=True)
    context.close()
