// The page: ask a registered graph, watch its steps stream in, approve a paused query, and see the
// answer as text, a table and a drawing. It talks to LangGraph's server API on the same origin
// (assistants, threads, runs) and to two routes of its own (/ui/api/graphs, /ui/api/picture).
"use strict";

const $ = (id) => document.getElementById(id);
const state = {
  assistants: [], thread: null, graphContext: false, defaultGraph: "", picture: null, running: false, pending: false,
  view: 0, // which view the page shows: a reply for an earlier one (a thread since left) is dropped
};
window.reflexionPage = state; // what a test (or a curious user) can read

// -- talking to the server ------------------------------------------------------------------------

async function api(path, body, method) {
  const response = await fetch(path, {
    method: method || (body === undefined ? "GET" : "POST"),
    headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = text; }
  if (!response.ok) {
    const said = data && (data.error || data.detail || data.message);
    throw new Error(`${method || "request"} ${path}: ${response.status} ${said || text || response.statusText}`);
  }
  return data;
}

// A run's event stream, read with fetch (EventSource cannot POST): events are separated by a blank
// line, and the server ends its lines with CRLF.
async function stream(threadId, payload, onEvent) {
  const response = await fetch(`/threads/${threadId}/runs/stream`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify({ ...payload, stream_mode: ["updates"] }),
  });
  if (!response.ok) throw new Error(`the run could not start: ${response.status} ${await response.text()}`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (value) buffer += decoder.decode(value, { stream: true });
    const blocks = buffer.split(/\r?\n\r?\n/);
    buffer = blocks.pop();
    for (const block of blocks) {
      let event = "message";
      const data = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
      }
      if (data.length) onEvent(event, JSON.parse(data.join("\n")));
    }
    if (done) break;
  }
}

// -- small renderers ------------------------------------------------------------------------------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

// Markdown as the answers use it: headings, fenced code, tables, lists, bold and inline code. The
// text is escaped first, so nothing in an answer becomes markup of its own.
function markdown(text) {
  const lines = String(text || "").split("\n");
  const out = [];
  const inline = (s) => escapeHtml(s).replace(/`([^`]+)`/g, "<code>$1</code>").replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.startsWith("```")) {
      const code = [];
      for (i++; i < lines.length && !lines[i].startsWith("```"); i++) code.push(lines[i]);
      out.push(`<pre><code>${escapeHtml(code.join("\n"))}</code></pre>`);
    } else if (line.trim().startsWith("|")) {
      const rows = [];
      for (; i < lines.length && lines[i].trim().startsWith("|"); i++) rows.push(lines[i]);
      i--;
      const cells = (row) => row.trim().replace(/^\||\|$/g, "").split("|").map((c) => c.trim());
      const body = rows.filter((r) => !/^\s*\|?\s*:?-{2,}/.test(r)).map(cells);
      const [head, ...rest] = body;
      out.push(`<table><thead><tr>${(head || []).map((c) => `<th>${inline(c)}</th>`).join("")}</tr></thead><tbody>${rest
        .map((r) => `<tr>${r.map((c) => `<td>${inline(c)}</td>`).join("")}</tr>`).join("")}</tbody></table>`);
    } else if (/^#{1,6} /.test(line)) {
      const level = Math.min(6, line.indexOf(" ") + 2);
      out.push(`<h${level}>${inline(line.replace(/^#+ /, ""))}</h${level}>`);
    } else if (/^\s*[-*] /.test(line)) {
      const items = [];
      for (; i < lines.length && /^\s*[-*] /.test(lines[i]); i++) items.push(`<li>${inline(lines[i].replace(/^\s*[-*] /, ""))}</li>`);
      i--;
      out.push(`<ul>${items.join("")}</ul>`);
    } else if (line.trim()) {
      out.push(`<p>${inline(line)}</p>`);
    }
  }
  return out.join("\n");
}

function showError(error) {
  const box = $("error");
  box.textContent = error ? String(error.message || error) : "";
  box.hidden = !error;
}

function cellText(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

// -- the table: every row, sortable, a page at a time ---------------------------------------------

const PAGE = 25;

function renderTable(columns, rows) {
  const box = $("table-box");
  box.replaceChildren();
  $("rows-title").textContent = `Rows (${rows.length})`;
  if (!rows.length) {
    box.append(el("p", {}, "No rows."));
    return;
  }
  const view = { key: null, descending: false, page: 0 };
  const names = columns.length ? columns : rows[0].map((_, i) => `column ${i + 1}`);
  const draw = () => {
    const sorted = rows.slice();
    if (view.key !== null) {
      const k = view.key;
      sorted.sort((a, b) => {
        const x = a[k], y = b[k];
        const order = typeof x === "number" && typeof y === "number" ? x - y : cellText(x).localeCompare(cellText(y));
        return view.descending ? -order : order;
      });
    }
    const pages = Math.max(1, Math.ceil(sorted.length / PAGE));
    view.page = Math.min(view.page, pages - 1);
    const shown = sorted.slice(view.page * PAGE, (view.page + 1) * PAGE);
    const head = names.map((name, k) =>
      el("th", {
        "aria-sort": view.key === k ? (view.descending ? "descending" : "ascending") : "none",
        onclick: () => { view.descending = view.key === k ? !view.descending : false; view.key = k; draw(); },
      }, name));
    const table = el("table", { id: "rows" }, el("thead", {}, el("tr", {}, head)),
      el("tbody", {}, shown.map((row) => el("tr", {}, row.map((cell) => el("td", {}, cellText(cell)))))));
    const pager = el("div", { class: "pager" },
      el("button", { type: "button", class: "quiet", onclick: () => { view.page--; draw(); } }, "‹ Previous"),
      `Page ${view.page + 1} of ${pages}`,
      el("button", { type: "button", class: "quiet", onclick: () => { view.page++; draw(); } }, "Next ›"));
    pager.children[0].disabled = view.page === 0;
    pager.children[1].disabled = view.page >= pages - 1;
    box.replaceChildren(table, pages > 1 ? pager : "");
  };
  draw();
}

// -- the drawing ----------------------------------------------------------------------------------

const PALETTE = ["#2f6fdf", "#e0803a", "#3aa675", "#b548c6", "#d64545", "#8c6d3f", "#3fa7b8", "#7a7f2a"];
const colours = new Map();
const colourOf = (label) => {
  if (!colours.has(label)) colours.set(label, PALETTE[colours.size % PALETTE.length]);
  return colours.get(label);
};

function showNode(node) {
  const card = $("node-card");
  const facts = Object.entries(node.properties || {}).flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, cellText(v))]);
  card.replaceChildren(el("strong", {}, `${node.caption}`), el("div", {}, (node.labels || []).join(", ")),
    el("dl", {}, facts), el("button", { type: "button", class: "quiet", onclick: () => { card.hidden = true; } }, "Close"));
  card.hidden = false;
}

let drawing = null; // one ForceGraph for the page: a new answer gives it new data

async function renderPicture(query, rows, graph) {
  const box = $("picture");
  const view = state.view;
  $("node-card").hidden = true;
  $("picture-note").textContent = "Looking up the answer's nodes…";
  let drawn;
  try {
    drawn = await api("/ui/api/picture", { query, rows: rows.slice(0, 1000), graph: graph || null });
  } catch (error) {
    if (view === state.view) $("picture-note").textContent = `No drawing: ${error.message}`;
    return;
  }
  if (view !== state.view) return; // the page has moved on
  state.picture = drawn;
  if (!drawn.nodes.length) {
    $("picture-note").textContent = "The answer holds no value a node of the graph has.";
    if (drawing) drawing.graphData({ nodes: [], links: [] });
    return;
  }
  const labels = [...new Set(drawn.nodes.map((n) => n.labels[0] || "node"))];
  const legend = el("span", { class: "legend" }, labels.map((l) => el("span", {}, el("i", { style: `background:${colourOf(l)}` }), l)));
  const found = drawn.nodes.filter((n) => n.found).length;
  $("picture-note").replaceChildren(`${found} node(s) hold the answer's values (ringed), with their neighbours. Click a node for its properties. `, legend);
  if (!drawing) {
    drawing = ForceGraph()(box)
      .width(box.clientWidth || 600)
      .height(460)
      .nodeId("id")
      // force-graph shows a label as HTML: the graph's own text is escaped
      .nodeLabel((n) => escapeHtml(`${(n.labels || []).join(":")} ${n.caption}`))
      .linkLabel((l) => escapeHtml(l.type))
      .linkDirectionalArrowLength(4).linkDirectionalArrowRelPos(1)
      .nodeCanvasObject((node, ctx, scale) => {
      const radius = node.found ? 6 : 4;
      ctx.beginPath();
      ctx.arc(node.x, node.y, radius, 0, 2 * Math.PI);
      ctx.fillStyle = colourOf(node.labels[0] || "node");
      ctx.fill();
      if (node.found) { ctx.lineWidth = 2 / scale; ctx.strokeStyle = "#1d2430"; ctx.stroke(); }
      if (node.found || scale > 1.6) {
        ctx.font = `${11 / scale}px system-ui, sans-serif`;
        ctx.fillStyle = "#1d2430";
        ctx.textAlign = "center";
        ctx.fillText(String(node.caption).slice(0, 30), node.x, node.y + radius + 10 / scale);
      }
      })
      .onNodeClick(showNode);
  }
  drawing.width(box.clientWidth || 600)
    .graphData({ nodes: drawn.nodes.map((n) => ({ ...n })), links: drawn.links.map((l) => ({ ...l })) });
}

// -- the answer -----------------------------------------------------------------------------------

function renderAnswer(values, graph) {
  $("answer").hidden = false;
  $("answer-text").innerHTML = markdown(values.answer || "(no answer)");
  const stopped = String(values.answer || "").split("\n").find((line) => line.startsWith("Stopped:"));
  $("answer-stop").textContent = stopped || `Stopped: ${values.stop_reason || "(no reason given)"}`;
  // an answer in words is shown open; one that restates the query and its rows (below) is folded
  $("answer-details").open = !String(values.answer || "").includes("```");
  $("answer-query").textContent = values.query || "(no query ran)";
  renderTable(values.columns || [], values.rows || []);
  if (values.rows && values.rows.length) renderPicture(values.query, values.rows, graph);
  else { $("picture").replaceChildren(); $("picture-note").textContent = "No rows to draw."; }
}

// -- the steps as they stream in ------------------------------------------------------------------

function lastToolCall(update) {
  const messages = (update && update.messages) || [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const calls = messages[i].tool_calls || [];
    if (calls.length) return calls[calls.length - 1].args || {};
  }
  return null;
}

function describeStep(node, update) {
  const parts = [el("span", { class: "node" }, node), " "];
  const call = lastToolCall(update);
  if (node === "draft" && call) {
    parts.push("drafted:", el("pre", {}, call.answer || ""));
  } else if (node === "revise" && call) {
    const score = call.score === undefined || call.score === null ? "no score" : `score ${call.score}`;
    parts.push(el("span", { class: "score" }, score), ` ${call.reflection || ""}`);
    const next = call.revised_query || call.answer;
    if (next) parts.push(el("pre", {}, next));
  } else if (node === "execute_tool") {
    const outcome = (update.outcomes || []).slice(-1)[0] || {};
    const check = outcome.check || {};
    const notes = [...(check.repairs || []).map((r) => r.why || JSON.stringify(r)), ...(check.findings || [])];
    if (outcome.error) parts.push(el("span", { class: "bad" }, `${outcome.error_type || "error"}: ${outcome.error}`));
    else if (!outcome.executed) parts.push("not run: the query already ran");
    else {
      const rows = outcome.rows || [];
      parts.push(`${rows.length} row(s)${outcome.truncated ? " (cut)" : ""}`);
      const shown = rows.slice(0, 3).map((row) => row.map(cellText).join(" · "));
      if (shown.length) parts.push(el("div", { class: "rows-preview" }, shown.join("; ") + (rows.length > 3 ? "; …" : "")));
    }
    if (notes.length) parts.push(el("div", {}, `check: ${notes.join("; ")}`));
  } else if (node === "reply") {
    parts.push("answered");
  } else {
    const said = update.cypher || update.query || update.error || (update.answer && String(update.answer).slice(0, 160));
    if (said) parts.push(el("pre", {}, said));
  }
  if (update.stop_reason) parts.push(el("div", {}, `stop: ${update.stop_reason}`));
  return el("li", { "data-node": node }, parts);
}

function askForApproval(request, resume) {
  const value = request.value || request;
  const action = (value.action_requests || [])[0] || {};
  const query = value.query || (action.args && action.args.query) || "";
  $("approval").hidden = false;
  $("approval-why").innerHTML = markdown(value.description || action.description || "The agent wants to run this query.");
  $("approval-query").value = query;
  state.pending = true;
  $("send").disabled = true; // a decision first: the run waits for it
  const decide = (decision) => {
    $("approval").hidden = true;
    state.pending = false;
    resume({ decisions: [decision] });
  };
  // Approve after changing the query runs the change: what is shown is what runs
  $("approve").onclick = () => ($("approval-query").value.trim() === query.trim()
    ? decide({ type: "approve" })
    : $("approve-edit").onclick());
  $("approve-edit").onclick = () =>
    decide({ type: "edit", edited_action: { name: action.name || "run_cypher", args: { query: $("approval-query").value } } });
  $("reject").onclick = () => decide({ type: "reject", message: $("reject-reason").value || "rejected from the web page" });
}

async function runOnce(threadId, payload, graph) {
  const view = state.view;
  let paused = null;
  await stream(threadId, payload, (event, data) => {
    if (event === "error") throw new Error(data.message || data.error || JSON.stringify(data));
    if (event !== "updates" || !data) return;
    if (view !== state.view) return;
    for (const [node, update] of Object.entries(data)) {
      if (node === "__interrupt__") paused = update[0];
      else $("steps").append(describeStep(node, update || {}));
    }
  });
  if (view !== state.view) return;
  if (paused) {
    askForApproval(paused, (resume) => go(threadId, { assistant_id: payload.assistant_id, command: { resume } }, graph));
    return;
  }
  const current = await api(`/threads/${threadId}/state`);
  renderAnswer(current.values || {}, graph);
  await loadThreads();
}

async function go(threadId, payload, graph) {
  state.running = true;
  $("send").disabled = true;
  try {
    await runOnce(threadId, payload, graph);
  } catch (error) {
    showError(error);
  } finally {
    state.running = false;
    $("send").disabled = state.pending;
  }
}

async function ask(event) {
  event.preventDefault();
  showError(null);
  const question = $("question").value.trim();
  if (!question) return;
  if (state.running || state.pending) return;
  const assistant = $("assistant").value;
  const graph = $("graph").value;
  try {
    if (!state.thread) {
      const metadata = { graph_id: assistant, graph, question: question.slice(0, 200) };
      state.thread = (await api("/threads", { metadata })).thread_id;
    }
  } catch (error) {
    showError(error);
    return;
  }
  state.view++;
  state.picture = null;
  $("history").append(el("div", { class: "history-turn" }, el("strong", {}, "You asked: "), question));
  $("thread-note").textContent = `thread ${state.thread.slice(0, 8)}`;
  $("steps").replaceChildren();
  $("steps-box").hidden = false;
  $("answer").hidden = true;
  $("approval").hidden = true;
  $("question").value = "";
  const payload = { assistant_id: assistant, input: { messages: [{ role: "user", content: question }] } };
  // a graph of the user's choosing; the server's own needs no word (and a Neo4j home database has no name)
  if (state.graphContext && graph && graph !== state.defaultGraph) payload.context = { graph };
  await go(state.thread, payload, graph);
}

// -- threads --------------------------------------------------------------------------------------

function firstQuestion(thread) {
  const asked = (thread.metadata && thread.metadata.question) || (thread.extracted && thread.extracted.question);
  return asked ? cellText(asked).slice(0, 80) : "(no question yet)";
}

async function loadThreads() {
  let threads = [];
  try {
    threads = await api("/threads/search", {
      limit: 30, sort_by: "updated_at", sort_order: "desc",
      // what the list shows, not every thread's whole state
      select: ["thread_id", "created_at", "updated_at", "metadata", "status"],
      extract: { question: "values.messages[0].content" },
    });
  } catch (error) {
    showError(error);
    return;
  }
  $("threads").replaceChildren(...threads.map((t) =>
    el("li", { "data-thread": t.thread_id, class: t.thread_id === state.thread ? "open" : "", onclick: () => openThread(t) },
      firstQuestion(t), el("small", {}, `${(t.metadata && t.metadata.graph_id) || ""} · ${t.status} · ${t.thread_id.slice(0, 8)}`))));
}

async function openThread(thread) {
  if (state.running) {
    showError("A run is streaming: wait for it to end (or to pause) before opening another thread.");
    return;
  }
  showError(null);
  const view = ++state.view;
  state.thread = thread.thread_id;
  state.pending = false;
  $("send").disabled = false;
  $("answer").hidden = true;
  const meta = thread.metadata || {};
  if (meta.graph_id) { $("assistant").value = meta.graph_id; await chooseAssistant(); }
  if (meta.graph) $("graph").value = meta.graph;
  $("thread-note").textContent = `thread ${state.thread.slice(0, 8)}: a question now follows up`;
  $("steps").replaceChildren();
  $("steps-box").hidden = true;
  $("approval").hidden = true;
  let current;
  try {
    current = await api(`/threads/${thread.thread_id}/state`);
  } catch (error) {
    if (view === state.view) showError(error);
    return;
  }
  if (view !== state.view) return; // another thread was opened meanwhile
  const messages = (current.values && current.values.messages) || [];
  $("history").replaceChildren(...messages.filter((m) => m.type === "human" || (m.type === "ai" && !(m.tool_calls || []).length))
    .map((m) => el("div", { class: "history-turn" }, el("strong", {}, m.type === "human" ? "You asked: " : "Answer: "), cellText(m.content).slice(0, 300))));
  const pending = (current.tasks || []).flatMap((t) => t.interrupts || []);
  const opened = thread.thread_id;
  if (pending.length) {
    askForApproval(pending[0], (resume) => go(opened, { assistant_id: $("assistant").value, command: { resume } }, $("graph").value));
  } else if (thread.status === "busy") {
    $("thread-note").textContent = `thread ${opened.slice(0, 8)} is running: open it again when it has answered`;
  } else if (current.values && current.values.answer !== undefined && current.values.answer !== null) {
    renderAnswer(current.values, $("graph").value);
  }
  await loadThreads();
}

function newThread() {
  if (state.running) {
    showError("A run is streaming: wait for it to end (or to pause) before starting another.");
    return;
  }
  state.view++;
  state.thread = null;
  state.pending = false;
  state.picture = null;
  $("send").disabled = false;
  $("table-box").replaceChildren();
  $("thread-note").textContent = "";
  for (const id of ["steps-box", "answer", "approval"]) $(id).hidden = true;
  $("history").replaceChildren();
  showError(null);
  loadThreads();
}

// -- start ----------------------------------------------------------------------------------------

async function chooseAssistant() {
  const chosen = state.assistants.find((a) => a.graph_id === $("assistant").value);
  state.graphContext = false;
  if (!chosen) return;
  try {
    const schemas = await api(`/assistants/${chosen.assistant_id}/schemas`);
    state.graphContext = Boolean(schemas.context_schema && schemas.context_schema.properties && schemas.context_schema.properties.graph);
  } catch (error) {
    showError(error);
  }
  $("graph").disabled = !state.graphContext;
}

async function start() {
  $("ask").addEventListener("submit", ask);
  $("new-thread").addEventListener("click", newThread);
  $("assistant").addEventListener("change", chooseAssistant);
  try {
    state.assistants = await api("/assistants/search", { limit: 50 });
    const ids = [...new Set(state.assistants.map((a) => a.graph_id))].sort();
    $("assistant").replaceChildren(...ids.map((id) => el("option", { value: id }, id)));
    if (ids.includes("kg_reflexion")) $("assistant").value = "kg_reflexion";
    await chooseAssistant();
  } catch (error) {
    showError(error);
  }
  try {
    const graphs = await api("/ui/api/graphs");
    state.defaultGraph = graphs.default;
    const options = graphs.graphs.map((g) => el("option", { value: g }, g === graphs.default ? `${g} (the server's)` : g));
    if (!graphs.default) options.unshift(el("option", { value: "" }, "(the server's)"));
    $("graph").replaceChildren(...options);
    $("graph").value = graphs.default;
  } catch (error) {
    $("graph").replaceChildren(el("option", { value: "" }, "(the server's)"));
    showError(error);
  }
  await loadThreads();
  document.body.dataset.ready = "true";
}

start();
