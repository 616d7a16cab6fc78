// The page of `chainrule serve`: asks the server for graphs, gradients and training events
// and draws them. All the differentiation happens on the server, in chainrule.
"use strict";

const $ = (id) => document.getElementById(id);
const SVG_NS = "http://www.w3.org/2000/svg";
const CLASS_COLOURS = ["#3b6fb6", "#e07b24", "#3c9a4b", "#c8453c"];
const CLASS_SHADES = ["#d5e2f4", "#fbe2cc", "#d6ecd9", "#f4d3d0"];

// Four decimals, or scientific notation where four decimals would hide the number (as viz.py).
function fmt(x) {
  if (x === null || x === undefined) return "–";
  if (x !== 0 && Number.isFinite(x) && !(Math.abs(x) >= 1e-4 && Math.abs(x) < 1e6)) {
    return x.toExponential(4);
  }
  return x.toFixed(4);
}

async function postJSON(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  let data;
  try {
    data = await response.json();
  } catch (_) {
    data = { error: `the server answered ${response.status} without JSON` };
  }
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

function showError(element, message) {
  element.textContent = message || "";
  element.hidden = !message;
}

// Send at most one request at a time; while one is out, remember only that another is due,
// so a fast slider always ends on its latest value without queueing stale requests.
function latestOnly(task) {
  let running = false;
  let due = false;
  return async function run() {
    if (running) {
      due = true;
      return;
    }
    running = true;
    try {
      await task();
    } finally {
      running = false;
      if (due) {
        due = false;
        run();
      }
    }
  };
}

// Graphs: Graphviz's SVG when the server has dot, else a layered layout drawn here.

function showGraph(data, graphElement, traceElement) {
  if (data.svg) {
    graphElement.innerHTML = data.svg; // made by Graphviz from labels the server checked
  } else {
    graphElement.replaceChildren(layoutGraph(data.nodes));
  }
  traceElement.innerHTML = data.trace_html; // chainrule.trace_table escapes every cell
  const note = $("renderer-note");
  if (data.renderer === "builtin") {
    note.textContent =
      "Graphviz's dot program was not found on the server, so graphs are drawn by this " +
      "page's built-in layout (install graphviz for the full drawing).";
    note.hidden = false;
  }
}

function svgElement(name, attributes, text) {
  const element = document.createElementNS(SVG_NS, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value);
  if (text !== undefined) element.textContent = text;
  return element;
}

function layoutGraph(nodes) {
  const width = 170, height = 58, gapX = 50, gapY = 14, pad = 8;
  const columns = [];
  nodes.forEach((node, i) => {
    (columns[node.depth] = columns[node.depth] || []).push(i);
  });
  const place = [];
  columns.forEach((column, depth) => {
    column.forEach((i, row) => {
      place[i] = { x: pad + depth * (width + gapX), y: pad + row * (height + gapY) };
    });
  });
  const rows = Math.max(...columns.map((column) => column.length));
  const svg = svgElement("svg", {
    class: "builtin-graph",
    width: pad * 2 + columns.length * (width + gapX) - gapX,
    height: pad * 2 + rows * (height + gapY) - gapY,
    role: "img",
    "aria-label": "computation graph",
  });
  nodes.forEach((node, i) => {
    for (const parent of node.parents) {
      const from = place[parent], to = place[i];
      const x1 = from.x + width, y1 = from.y + height / 2, x2 = to.x, y2 = to.y + height / 2;
      const mid = (x1 + x2) / 2;
      svg.appendChild(svgElement("path", {
        d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`,
        class: "edge",
      }));
    }
  });
  nodes.forEach((node, i) => {
    const { x, y } = place[i];
    const group = svgElement("g", { class: node.parents.length ? "node op" : "node leaf" });
    group.appendChild(svgElement("rect", { x, y, width, height, rx: 6 }));
    const title = node.parents.length ? `${node.name} = ${node.expression}` : node.name;
    group.appendChild(svgElement("text", { x: x + 8, y: y + 17, class: "title" }, title));
    group.appendChild(svgElement("text", { x: x + 8, y: y + 34 }, `data ${fmt(node.data)}`));
    group.appendChild(svgElement("text", { x: x + 8, y: y + 50 }, `grad ${fmt(node.grad)}`));
    svg.appendChild(group);
  });
  return svg;
}

function setNumber(element, value) {
  element.textContent = fmt(value);
  element.dataset.value = String(value);
}

// 1. The teaching function and its sliders.

const SLIDERS = ["w1", "w2", "x1", "x2"];

const updateTeaching = latestOnly(async () => {
  const values = {};
  for (const name of SLIDERS) values[name] = Number($(`slider-${name}`).value);
  const start = performance.now();
  try {
    const data = await postJSON("/api/graph", values);
    showError($("teaching-error"), "");
    showGraph(data, $("graph"), $("trace"));
    for (const name of SLIDERS) {
      setNumber($(`val-${name}`), data.values[name]);
      setNumber($(`grad-${name}`), data.gradients[name]);
    }
    setNumber($("value-f"), data.value);
    const graphviz = data.renderer === "graphviz" ? `, Graphviz ${data.svg_ms.toFixed(1)} ms` : "";
    $("timing").textContent =
      `server ${data.server_ms.toFixed(1)} ms${graphviz}; ` +
      `round trip ${(performance.now() - start).toFixed(1)} ms`;
    $("teaching").dataset.updates = String(Number($("teaching").dataset.updates || 0) + 1);
  } catch (error) {
    showError($("teaching-error"), error.message);
  }
});

for (const name of SLIDERS) {
  $(`slider-${name}`).addEventListener("input", (event) => {
    $(`show-${name}`).textContent = Number(event.target.value).toFixed(2);
    updateTeaching();
  });
}

// 2. The expression box.

function variableInputs() {
  const values = {};
  for (const input of $("expr-vars").querySelectorAll("input")) {
    values[input.dataset.name] = Number(input.value);
  }
  return values;
}

function buildVariableInputs(names, values) {
  const box = $("expr-vars");
  const current = [...box.querySelectorAll("input")].map((input) => input.dataset.name);
  if (current.join(",") === names.join(",")) return;
  box.replaceChildren();
  for (const name of names) {
    const id = `var-${names.indexOf(name)}`;
    const label = document.createElement("label");
    label.htmlFor = id;
    label.textContent = name;
    const input = document.createElement("input");
    Object.assign(input, { id, type: "number", step: "0.1", value: String(values[name]) });
    input.dataset.name = name;
    input.addEventListener("input", () => updateExpression());
    box.append(label, input);
  }
}

const updateExpression = latestOnly(async () => {
  const text = $("expr").value;
  const start = performance.now();
  try {
    const data = await postJSON("/api/expression", { expression: text, values: variableInputs() });
    showError($("expr-error"), "");
    buildVariableInputs(data.variables, data.values);
    const body = $("expr-grads").tBodies[0];
    body.replaceChildren();
    for (const name of data.variables) {
      const row = body.insertRow();
      row.insertCell().textContent = name;
      setNumber(row.insertCell(), data.values[name]);
      const cell = row.insertCell();
      cell.dataset.name = name;
      setNumber(cell, data.gradients[name]);
    }
    setNumber($("expr-value"), data.value);
    $("expr-timing").textContent =
      `(server ${data.server_ms.toFixed(1)} ms, round trip ` +
      `${(performance.now() - start).toFixed(1)} ms)`;
    showGraph(data, $("expr-graph"), $("expr-trace"));
    $("expr-result").hidden = false;
  } catch (error) {
    $("expr-result").hidden = true;
    showError($("expr-error"), error.message);
  }
});

$("expr-form").addEventListener("submit", (event) => {
  event.preventDefault();
  updateExpression();
});

// 3. The training playground.

const training = { source: null, stopUrl: null, start: null, losses: [], accuracies: [] };
window.chainruleTraining = training; // read by the browser tests

function setTrainState(state, note) {
  $("train-status").dataset.state = state;
  $("train-note").textContent = note || "";
  const running = state === "running" || state === "starting";
  $("train").disabled = running;
  $("stop").disabled = !running;
}

function drawBoundary(grid) {
  const canvas = $("boundary");
  const context = canvas.getContext("2d");
  const { bounds, grid_size: side, x, y, labels } = training.start;
  context.clearRect(0, 0, canvas.width, canvas.height);
  if (grid) {
    const cell = canvas.width / side;
    grid.forEach((k, i) => {
      context.fillStyle = CLASS_SHADES[k % CLASS_SHADES.length];
      context.fillRect((i % side) * cell, Math.floor(i / side) * cell, cell + 0.5, cell + 0.5);
    });
  }
  const [x0, x1, y0, y1] = bounds;
  x.forEach((xi, i) => {
    const px = ((xi - x0) / (x1 - x0)) * canvas.width;
    const py = ((y1 - y[i]) / (y1 - y0)) * canvas.height;
    context.beginPath();
    context.arc(px, py, 3.2, 0, 2 * Math.PI);
    context.fillStyle = CLASS_COLOURS[labels[i] % CLASS_COLOURS.length];
    context.fill();
    context.strokeStyle = "white";
    context.lineWidth = 0.8;
    context.stroke();
  });
}

function drawLoss() {
  const canvas = $("loss");
  const context = canvas.getContext("2d");
  const losses = training.losses.filter((v) => v !== null && v > 0);
  context.clearRect(0, 0, canvas.width, canvas.height);
  if (!losses.length) return;
  const left = 44, bottom = canvas.height - 24, top = 10, right = canvas.width - 10;
  const logs = losses.map(Math.log10);
  const high = Math.ceil(Math.max(...logs)), low = Math.floor(Math.min(...logs));
  const span = Math.max(high - low, 1);
  const steps = Math.max(training.start.steps, 2);
  context.strokeStyle = "#bbb";
  context.fillStyle = "#555";
  context.font = "11px sans-serif";
  context.lineWidth = 1;
  for (let power = low; power <= high; power++) {
    const py = bottom - ((power - low) / span) * (bottom - top);
    context.beginPath();
    context.moveTo(left, py);
    context.lineTo(right, py);
    context.stroke();
    context.fillText(`1e${power}`, 4, py + 4);
  }
  context.fillText("step", right - 24, canvas.height - 6);
  context.fillText(String(steps), right - 60, canvas.height - 6);
  context.fillText("1", left, canvas.height - 6);
  context.strokeStyle = "#c8453c";
  context.lineWidth = 2;
  context.beginPath();
  logs.forEach((value, i) => {
    const px = left + (i / (steps - 1)) * (right - left);
    const py = bottom - ((value - low) / span) * (bottom - top);
    if (i === 0) context.moveTo(px, py);
    else context.lineTo(px, py);
  });
  context.stroke();
}

function onTrainingEvent(event) {
  if (event.type === "start") {
    training.start = event;
    training.losses = [];
    training.accuracies = [];
    drawBoundary(null);
    drawLoss();
    setTrainState("running", `(${event.parameters} parameters)`);
  } else if (event.type === "step") {
    training.losses.push(...event.losses);
    training.accuracies.push(event.accuracy);
    $("train-step").textContent = String(event.step);
    setNumber($("train-loss"), event.loss);
    $("accuracy").textContent = `${(100 * event.accuracy).toFixed(1)}%`;
    $("accuracy").dataset.value = String(event.accuracy);
    drawBoundary(event.grid);
    drawLoss();
  } else if (event.type === "done") {
    finishTraining();
    let state = event.stopped ? "stopped" : "done";
    let note = event.stopped ? "(stopped)" : "(done)";
    if (event.diverged) {
      state = "diverged";
      note = "(the loss is no longer finite: try a smaller learning rate)";
    }
    setTrainState(state, note);
  } else if (event.type === "error") {
    finishTraining();
    showError($("train-error"), event.error);
    setTrainState("error");
  }
}

function finishTraining() {
  if (training.source) training.source.close();
  training.source = null;
}

$("train-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  finishTraining();
  showError($("train-error"), "");
  setTrainState("starting");
  const request = {
    dataset: $("dataset").value,
    hidden: $("hidden").value,
    activation: $("activation").value,
    optimizer: $("optimizer").value,
    lr: $("lr").value === "" ? null : Number($("lr").value),
    steps: $("steps").value === "" ? null : Number($("steps").value),
    every: 5,
    delay_ms: 15,
  };
  try {
    const run = await postJSON("/api/train", request);
    training.stopUrl = run.stop;
    const source = new EventSource(run.events);
    training.source = source;
    source.onmessage = (message) => onTrainingEvent(JSON.parse(message.data));
    source.onerror = () => {
      if (training.source !== source) return;
      finishTraining();
      showError($("train-error"), "the training stream was interrupted");
      setTrainState("error");
    };
  } catch (error) {
    showError($("train-error"), error.message);
    setTrainState("error");
  }
});

$("stop").addEventListener("click", async () => {
  if (!training.stopUrl) return;
  try {
    await postJSON(training.stopUrl, {});
  } catch (_) {
    finishTraining(); // closing the stream stops the run on the server too
    setTrainState("stopped", "(stopped)");
  }
});

updateTeaching();
updateExpression();
