// The toolwright admin page: plain JavaScript, no build step, no outside
// resources. Every URL is relative, so the page works wherever the
// application mounts the admin router. Data enters the page only through
// textContent, never as HTML.
"use strict";

const TOKEN_KEY = "toolwright-admin-token";
const LOG_EVERY_MS = 2000;
const REFRESH_EVERY_MS = 5000;
const LOG_KEEP = 500;
const MASK = "[redacted]";

const state = {
  tools: [],
  generation: null,
  toolsEtag: null,
  approvals: [],
  approvalsEtag: null,
  // The cursor of the page after those shown (null: none follows), and
  // how many the operator asked to see ("Show more" raises it).
  approvalsNext: null,
  approvalsWanted: 0,
  approvalsMissing: false,
  logNext: 0,
  logEtag: null,
  logCaughtUp: false,
  logLost: 0,
  logMissing: false,
  detail: null,
  timers: [],
};

const $ = (id) => document.getElementById(id);

// ---- DOM building -------------------------------------------------------

function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else el.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

function time(ms) {
  if (typeof ms !== "number") return "";
  const d = new Date(ms);
  return isNaN(d) ? String(ms) : d.toISOString().replace("T", " ").slice(0, 19) + "Z";
}

// JSON as text, with masked values marked so that they stand out.
function jsonBlock(value, label) {
  const pre = h("pre", { class: "json", tabindex: "0", "aria-label": label || null });
  const text = JSON.stringify(value, null, 2);
  if (text === undefined) {
    pre.textContent = "none";
    return pre;
  }
  const quoted = JSON.stringify(MASK);
  let at = 0;
  for (;;) {
    const found = text.indexOf(quoted, at);
    if (found < 0) break;
    pre.append(text.slice(at, found), h("mark", { class: "masked", title: "secret, masked by the server", text: quoted }));
    at = found + quoted.length;
  }
  pre.append(text.slice(at));
  return pre;
}

function jsonInline(value) {
  const code = h("code", { class: "args" });
  const text = JSON.stringify(value);
  if (text === undefined) return code;
  const quoted = JSON.stringify(MASK);
  let at = 0;
  for (;;) {
    const found = text.indexOf(quoted, at);
    if (found < 0) break;
    code.append(text.slice(at, found), h("mark", { class: "masked", title: "secret, masked by the server", text: quoted }));
    at = found + quoted.length;
  }
  code.append(text.slice(at));
  return code;
}

function effectBadge(effect) {
  return h("span", { class: "badge effect-" + (effect || "unknown"), text: effect || "?" });
}

function tagPill(tag) {
  return h("button", {
    type: "button",
    class: "pill",
    title: "Show the tools tagged " + tag,
    onclick: () => {
      $("filter").value = tag;
      renderTools();
      $("filter").focus();
    },
    text: tag,
  });
}

// A policy decision arrives as "allow" or as {"decision": "deny", "reason": ...}.
function decisionText(decision) {
  if (!decision) return "";
  if (typeof decision === "string") return decision;
  if (decision.decision) return decision.reason ? decision.decision + ": " + decision.reason : decision.decision;
  return JSON.stringify(decision);
}

// ---- messages -----------------------------------------------------------

let noticeTimer = null;

function notice(text) {
  const el = $("notice");
  el.textContent = text;
  el.hidden = false;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => { el.hidden = true; }, 8000);
}

function problem(text) {
  const el = $("problem");
  el.textContent = text;
  el.hidden = !text;
}

// ---- the API ------------------------------------------------------------

class Refused extends Error {}

class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

// One request to the admin API: the bearer token, JSON in and out, and
// the conditional headers. A 401 signs the page out.
async function api(path, options = {}) {
  const headers = { Accept: "application/json", Authorization: "Bearer " + (token() || "") };
  if (options.ifMatch) headers["If-Match"] = options.ifMatch;
  if (options.ifNoneMatch) headers["If-None-Match"] = options.ifNoneMatch;
  let body;
  if (options.body !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(options.body);
  }
  let response;
  try {
    response = await fetch(path, { method: options.method || "GET", headers, body, cache: "no-store", credentials: "omit" });
  } catch (error) {
    throw new HttpError(0, "The server cannot be reached (" + error.message + ").");
  }
  if (response.status === 401) {
    signOut(true);
    throw new Refused("refused");
  }
  const etag = response.headers.get("ETag");
  if (response.status === 304) return { status: 304, etag, data: null };
  let data = null;
  const text = await response.text();
  if (text) {
    try {
      data = JSON.parse(text);
    } catch (_) {
      data = { error: text };
    }
  }
  if (!response.ok) {
    const message = data && data.error ? data.error : response.statusText || "request failed";
    throw new HttpError(response.status, message);
  }
  return { status: response.status, etag, data };
}

function report(error, what) {
  if (error instanceof Refused) return;
  problem(what + ": " + error.message + (error.status ? " (HTTP " + error.status + ")" : ""));
}

// ---- tools --------------------------------------------------------------

async function loadTools(force) {
  const result = await api("api/tools", { ifNoneMatch: force ? null : state.toolsEtag });
  if (result.status === 304) return false;
  state.tools = result.data.tools || [];
  state.generation = result.data.generation;
  state.toolsEtag = result.etag;
  renderTools();
  if (state.detail) {
    const fresh = state.tools.find((tool) => tool.name === state.detail);
    if (fresh) renderDetail(fresh);
  }
  return true;
}

function matches(tool, needle) {
  if (!needle) return true;
  const haystack = [tool.name, tool.key, ...(tool.tags || [])];
  return haystack.some((text) => text && text.toLowerCase().includes(needle));
}

function renderTools() {
  const needle = $("filter").value.trim().toLowerCase();
  const groups = new Map();
  for (const tool of state.tools) {
    if (!matches(tool, needle)) continue;
    const ns = tool.namespace || "";
    if (!groups.has(ns)) groups.set(ns, []);
    groups.get(ns).push(tool);
  }
  $("generation").textContent = state.generation === null ? "" : "generation " + state.generation;
  const container = clear($("tool-groups"));
  $("tools-empty").hidden = groups.size > 0 || state.tools.length === 0;
  const names = [...groups.keys()].sort((a, b) => (a === "" ? 1 : b === "" ? -1 : a.localeCompare(b)));
  for (const ns of names) {
    const tools = groups.get(ns).sort((a, b) => a.name.localeCompare(b.name));
    const title = ns || "no namespace";
    const headingId = "ns-" + (ns || "none").replace(/[^A-Za-z0-9_-]/g, "_");
    container.append(
      h("section", { class: "group", "aria-labelledby": headingId },
        h("h3", { id: headingId }, title, " ", h("span", { class: "muted", text: "(" + tools.length + ")" })),
        h("div", { class: "table-wrap" },
          h("table", { class: "stack tools" },
            h("thead", {}, h("tr", {},
              h("th", { scope: "col", text: "Tool" }),
              h("th", { scope: "col", text: "Effect" }),
              h("th", { scope: "col", text: "Tags" }),
              h("th", { scope: "col", text: "Status" }),
              h("th", { scope: "col", text: "Action" }))),
            h("tbody", {}, tools.map(toolRow))))));
  }
}

function toolRow(tool) {
  const status = tool.enabled
    ? h("span", { class: "status on", text: "enabled" })
    : h("span", { class: "status off" }, "disabled",
      tool.disabled && tool.disabled.reason ? h("span", { class: "reason", text: tool.disabled.reason }) : null);
  return h("tr", { class: tool.enabled ? "" : "is-disabled", dataset: { tool: tool.name } },
    cell("Tool",
      h("button", { type: "button", class: "link tool-name", onclick: () => openDetail(tool.name), text: tool.name }),
      h("div", { class: "muted small", text: tool.key })),
    cell("Effect", effectBadge(tool.effect)),
    cell("Tags", (tool.tags || []).length ? h("span", { class: "pills" }, tool.tags.map(tagPill)) : h("span", { class: "muted", text: "none" })),
    cell("Status", status),
    cell("Action", switchButton(tool)));
}

function cell(label, ...children) {
  return h("td", { "data-label": label }, h("div", { class: "cell" }, ...children));
}

function switchButton(tool) {
  return tool.enabled
    ? h("button", { type: "button", class: "danger", onclick: () => disableTool(tool), "aria-label": "Disable " + tool.name, text: "Disable" })
    : h("button", { type: "button", onclick: () => enableTool(tool), "aria-label": "Enable " + tool.name, text: "Enable" });
}

function path(name) {
  return "api/tools/" + encodeURIComponent(name);
}

async function disableTool(tool) {
  // The change is made against the tools as the operator saw them when
  // deciding, even if the page reloads them while the dialog is open.
  const seen = state.toolsEtag;
  const reason = await ask({
    title: "Disable " + tool.name,
    what: "Callers will no longer see or call " + tool.key + ".",
    label: "Why (recorded with the change)",
    ok: "Disable",
    required: true,
  });
  if (reason === null) return;
  await change(path(tool.name) + "/disable", { reason }, tool.name + " disabled", seen);
}

async function enableTool(tool) {
  await change(path(tool.name) + "/enable", {}, tool.name + " enabled", state.toolsEtag);
}

// A change to the registry, made only if the registry is still as `seen`
// (an ETag): otherwise 412, the tools are reloaded, and the operator told.
async function change(url, body, done, seen) {
  problem("");
  try {
    await api(url, { method: "POST", body, ifMatch: seen });
    notice(done + ".");
  } catch (error) {
    if (error instanceof HttpError && (error.status === 412 || error.status === 428)) {
      notice("The tools changed since the page loaded them, so nothing was changed. They are reloaded: check, then try again.");
    } else {
      report(error, "Not changed");
    }
  }
  try {
    await loadTools(true);
  } catch (error) {
    report(error, "Loading the tools failed");
  }
}

// ---- detail -------------------------------------------------------------

let detailReturn = null;

async function openDetail(name) {
  detailReturn = document.activeElement;
  state.detail = name;
  const known = state.tools.find((tool) => tool.name === name);
  if (known) renderDetail(known);
  $("detail").hidden = false;
  $("tools").hidden = true;
  $("detail-title").focus();
  try {
    const result = await api(path(name));
    if (state.detail === name) renderDetail(result.data);
  } catch (error) {
    report(error, "Loading " + name + " failed");
  }
}

function closeDetail() {
  state.detail = null;
  $("detail").hidden = true;
  $("tools").hidden = false;
  // The table was redrawn if the tool changed: find its row again.
  const name = detailReturn && detailReturn.classList.contains("tool-name") ? detailReturn.textContent : null;
  const again = name ? document.querySelector('tr[data-tool="' + CSS.escape(name) + '"] .tool-name') : null;
  (again || (detailReturn && document.contains(detailReturn) ? detailReturn : $("filter"))).focus();
}

function row(label, value) {
  return [h("dt", { text: label }), h("dd", {}, value)];
}

// What the detail view shows in its own rows; any other field of a tool
// (title, idempotent, ...) is listed after them as it comes.
const SHOWN = new Set(["name", "key", "namespace", "description", "effect", "tags", "enabled",
  "disabled", "deferred", "search_hint", "policy", "input_schema", "output_schema"]);

function renderDetail(tool) {
  $("detail-title").textContent = tool.name;
  const more = Object.keys(tool).filter((key) => !SHOWN.has(key)).sort()
    .map((key) => row(key.replace(/_/g, " "), typeof tool[key] === "string" ? tool[key] : JSON.stringify(tool[key])));
  const disabled = tool.disabled;
  const policy = tool.policy;
  const body = clear($("detail-body"));
  body.append(
    h("div", { class: "buttons" }, switchButton(tool)),
    h("dl", { class: "meta" },
      row("Key", h("code", { text: tool.key })),
      row("Namespace", tool.namespace || "none"),
      row("Description", tool.description || "none"),
      row("Effect", effectBadge(tool.effect)),
      row("Tags", (tool.tags || []).length ? h("span", { class: "pills" }, tool.tags.map(tagPill)) : "none"),
      row("Status", tool.enabled ? "enabled" : "disabled"),
      row("Deferred", tool.deferred ? "yes: found by a search" + (tool.search_hint ? " (hint: " + tool.search_hint + ")" : "") : "no: listed up front"),
      disabled ? row("Disabled", [disabled.reason || "", disabled.by ? " — by " + disabled.by : "", disabled.originally_by ? " (restored; originally by " + disabled.originally_by + ")" : "", disabled.at ? ", " + time(disabled.at) : ""].join("")) : null,
      row("Policy", policy ? decisionText(policy.decision) + (policy.rule ? " (rule " + policy.rule + ")" : " (the policy's fallback)") : "no policy"),
      more),
    ...(disabled && disabled.detail !== undefined
      ? [h("h3", { text: "Why it is disabled, in detail" }), jsonBlock(disabled.detail, "Why it is disabled, in detail")]
      : []),
    h("h3", { text: "Input schema" }),
    jsonBlock(tool.input_schema, "Input schema"),
    h("h3", { text: "Output schema" }),
    jsonBlock(tool.output_schema === null ? undefined : tool.output_schema, "Output schema"));
}

// ---- approvals ----------------------------------------------------------

// The first page, polled with its ETag; when it changed, the pages after
// it too, up to as many requests as were shown. Each page is bounded, so
// one requester's flood never makes the poll heavy.
async function loadApprovals(force) {
  if (state.approvalsMissing) return false;
  let result;
  try {
    result = await api("api/approvals", { ifNoneMatch: force ? null : state.approvalsEtag });
  } catch (error) {
    if (error instanceof HttpError && error.status === 404) {
      state.approvalsMissing = true;
      $("approvals-none").textContent = "This server keeps no approvals.";
      return false;
    }
    throw error;
  }
  if (result.status === 304) return false;
  let list = result.data.approvals || [];
  let next = result.data.next ?? null;
  while (next !== null && list.length < state.approvalsWanted) {
    const page = await approvalsAfter(next);
    list = list.concat(page.approvals);
    next = page.next;
  }
  state.approvals = list;
  state.approvalsNext = next;
  state.approvalsEtag = result.etag;
  renderApprovals();
  return true;
}

// The page of pending requests after the id `after`.
async function approvalsAfter(after) {
  const result = await api("api/approvals?after=" + encodeURIComponent(after));
  return { approvals: result.data.approvals || [], next: result.data.next ?? null };
}

async function moreApprovals() {
  if (state.approvalsNext === null) return;
  const page = await approvalsAfter(state.approvalsNext);
  const shown = new Set(state.approvals.map((approval) => approval.id));
  state.approvals = state.approvals.concat(page.approvals.filter((approval) => !shown.has(approval.id)));
  state.approvalsNext = page.next;
  state.approvalsWanted = state.approvals.length;
  renderApprovals();
}

function renderApprovals() {
  const list = clear($("approval-list"));
  $("approvals-none").hidden = state.approvals.length > 0;
  const more = state.approvalsNext !== null;
  $("approvals-count").textContent = state.approvals.length ? "(" + state.approvals.length + (more ? "+" : "") + ")" : "";
  $("more-approvals").hidden = !more;
  for (const approval of state.approvals) {
    const request = approval.request || {};
    const id = approval.id;
    const headingId = "approval-" + id;
    list.append(h("li", { class: "card", dataset: { approval: String(id) }, "aria-labelledby": headingId },
      h("h3", { id: headingId }, "Request " + id + ": ", h("code", { text: request.name || request.key || "?" })),
      h("dl", { class: "meta" },
        row("Tool", h("code", { text: request.key || "" })),
        row("Asked by", approval.requested_by || ""),
        row("Asked at", time(approval.requested_at)),
        row("Expires", time(approval.expires_at)),
        row("Arguments", jsonInline(request.arguments))),
      h("div", { class: "buttons" },
        h("button", { type: "button", class: "primary", onclick: () => decide(approval, "approve"), "aria-label": "Approve request " + id, text: "Approve" }),
        h("button", { type: "button", class: "danger", onclick: () => decide(approval, "reject"), "aria-label": "Reject request " + id, text: "Reject" }))));
  }
}

// Guarded by the request's own ETag: other requests coming in meanwhile
// do not stop the decision.
async function decide(approval, verdict) {
  const seen = approval.etag;
  const request = approval.request || {};
  const reason = await ask({
    title: (verdict === "approve" ? "Approve" : "Reject") + " request " + approval.id,
    what: (request.name || request.key) + ", asked by " + approval.requested_by + ".",
    label: verdict === "approve" ? "Reason (optional)" : "Why (the requester is told)",
    ok: verdict === "approve" ? "Approve" : "Reject",
    required: verdict === "reject",
  });
  if (reason === null) return;
  problem("");
  try {
    await api("api/approvals/" + encodeURIComponent(approval.id) + "/" + verdict, {
      method: "POST",
      body: { reason },
      ifMatch: seen,
    });
    notice("Request " + approval.id + (verdict === "approve" ? " approved." : " rejected."));
  } catch (error) {
    if (error instanceof HttpError && (error.status === 412 || error.status === 428)) {
      notice("Request " + approval.id + " changed since the page loaded it, so nothing was decided. The approvals are reloaded: check, then try again.");
    } else if (error instanceof HttpError && error.status === 409) {
      notice("Request " + approval.id + " is no longer pending.");
    } else {
      report(error, "Not decided");
    }
  }
  try {
    await loadApprovals(true);
  } catch (error) {
    report(error, "Loading the approvals failed");
  }
}

// ---- the log ------------------------------------------------------------

let logBusy = false;

async function pollLog() {
  if (logBusy || state.logMissing || !token()) return;
  logBusy = true;
  try {
    // Pages until caught up. The log's ETag names its latest entry, so it
    // is sent only once caught up: then an unchanged log answers 304.
    for (let pages = 0; pages < 20; pages++) {
      let result;
      try {
        result = await api("api/log?since=" + state.logNext, { ifNoneMatch: state.logCaughtUp ? state.logEtag : null });
      } catch (error) {
        if (error instanceof HttpError && error.status === 404) {
          state.logMissing = true;
          $("log-none").textContent = "This server keeps no execution log.";
          $("log-live").disabled = true;
          return;
        }
        throw error;
      }
      if (result.status === 304) return;
      const data = result.data;
      const entries = data.entries || [];
      state.logEtag = result.etag;
      if (typeof data.next === "number") state.logNext = data.next;
      state.logCaughtUp = !entries.length || state.logNext >= data.latest;
      if (data.lost) {
        state.logLost += data.lost;
        $("log-lost").textContent = state.logLost + " older entries were overwritten before this page read them.";
        $("log-lost").hidden = false;
      }
      if (entries.length) addLogEntries(entries);
      if (state.logCaughtUp) return;
    }
  } catch (error) {
    report(error, "Reading the log failed");
  } finally {
    logBusy = false;
  }
}

function addLogEntries(entries) {
  const rows = $("log-rows");
  for (const entry of entries) {
    rows.prepend(logRow(entry));
  }
  while (rows.children.length > LOG_KEEP) rows.lastElementChild.remove();
  $("log-table").hidden = rows.children.length === 0;
  $("log-none").hidden = rows.children.length > 0;
  // Something may have been decided or switched elsewhere.
  refreshSoon();
}

function logRow(entry) {
  const event = entry.event || {};
  let what = event.event || "event";
  let who = "";
  let outcome = "";
  let at = event.at || event.decided_at || event.requested_at;
  const details = [];
  if (event.event === "call") {
    what = "call " + (event.name || "");
    who = event.actor || "";
    outcome = h("span", { class: "badge outcome-" + (event.outcome === "ok" ? "ok" : "bad"), text: event.outcome || "" });
    if (event.key) details.push(h("div", {}, h("code", { text: event.key })));
    if (event.arguments !== undefined && event.arguments !== null) details.push(h("div", {}, jsonInline(event.arguments)));
    if (event.policy) details.push(h("div", { class: "small", text: "policy: " + decisionText(event.policy.decision) + (event.policy.rule ? " (" + event.policy.rule + ")" : "") }));
    if (event.approval) details.push(h("div", { class: "small", text: "approval " + (event.approval.use || "") + (event.approval.id !== undefined && event.approval.id !== null ? " #" + event.approval.id : "") }));
    if (event.error) details.push(h("div", { class: "error-text", text: event.error.message || event.error.model_message || "" }));
    if (typeof event.duration_ms === "number") details.push(h("div", { class: "muted small", text: event.duration_ms.toFixed(1) + " ms" }));
  } else if (event.event === "registry") {
    const kind = event.kind;
    const name = typeof kind === "string" ? kind : kind ? Object.keys(kind)[0] : "change";
    what = "registry " + name;
    const body = kind && typeof kind === "object" ? kind[name] : null;
    if (body && body.by) who = body.by;
    if (body && body.at) at = body.at;
    outcome = "generation " + event.generation;
    if (body && body.reason) details.push(h("div", { text: "reason: " + body.reason }));
    if (event.keys && event.keys.length) details.push(h("div", {}, h("code", { text: event.keys.join(", ") })));
  } else if (event.event === "approval") {
    what = "approval " + event.id;
    who = event.decided_by || "";
    outcome = event.status || "";
    const request = event.request || {};
    details.push(h("div", {}, h("code", { text: request.key || "" }), " asked by " + (event.requested_by || "")));
    if (request.arguments !== undefined) details.push(h("div", {}, jsonInline(request.arguments)));
    if (event.reason) details.push(h("div", { text: "reason: " + event.reason }));
  } else {
    details.push(jsonInline(event));
  }
  return h("tr", { dataset: { seq: String(entry.seq), kind: event.event || "", outcome: event.event === "call" ? event.outcome || "" : "" } },
    cell("#", String(entry.seq)),
    cell("Time", time(at)),
    cell("Event", what),
    cell("Who", who),
    cell("Outcome", outcome),
    cell("Details", details));
}

// ---- state export -------------------------------------------------------

async function loadState() {
  const result = await api("api/state");
  return result.data;
}

async function showState() {
  const button = $("state-show");
  const pre = $("state-json");
  if (!pre.hidden) {
    pre.hidden = true;
    button.setAttribute("aria-expanded", "false");
    button.textContent = "Show JSON";
    return;
  }
  try {
    const data = await loadState();
    pre.textContent = JSON.stringify(data, null, 2);
    pre.hidden = false;
    button.setAttribute("aria-expanded", "true");
    button.textContent = "Hide JSON";
  } catch (error) {
    report(error, "Reading the state failed");
  }
}

async function downloadState() {
  try {
    const data = await loadState();
    const blob = new Blob([JSON.stringify(data, null, 2) + "\n"], { type: "application/json" });
    const url = URL.createObjectURL(blob);
    const link = h("a", { href: url, download: "registry-state.json", hidden: true });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
    notice("The state is downloaded as registry-state.json.");
  } catch (error) {
    report(error, "Reading the state failed");
  }
}

// ---- the reason dialog --------------------------------------------------

// Asks for a reason; resolves to the text, or null when cancelled.
function ask({ title, what, label, ok, required }) {
  const dialog = $("ask");
  const reason = $("ask-reason");
  $("ask-title").textContent = title;
  $("ask-what").textContent = what;
  $("ask-label").textContent = label;
  $("ask-ok").textContent = ok;
  reason.value = "";
  reason.required = !!required;
  const opener = document.activeElement;
  return new Promise((resolve) => {
    const finish = (value) => {
      $("ask-form").removeEventListener("submit", onSubmit);
      $("ask-cancel").removeEventListener("click", onCancel);
      dialog.removeEventListener("cancel", onCancel);
      if (dialog.open) dialog.close();
      if (opener && document.contains(opener)) opener.focus();
      resolve(value);
    };
    const onSubmit = (event) => {
      event.preventDefault();
      const text = reason.value.trim();
      if (required && !text) {
        reason.setCustomValidity("Give a reason.");
        reason.reportValidity();
        reason.setCustomValidity("");
        return;
      }
      finish(text);
    };
    const onCancel = (event) => {
      event.preventDefault();
      finish(null);
    };
    $("ask-form").addEventListener("submit", onSubmit);
    $("ask-cancel").addEventListener("click", onCancel);
    dialog.addEventListener("cancel", onCancel);
    dialog.showModal();
    reason.focus();
  });
}

// ---- signing in and out -------------------------------------------------

function stopTimers() {
  for (const timer of state.timers) clearInterval(timer);
  state.timers = [];
}

function signOut(refused) {
  stopTimers();
  sessionStorage.removeItem(TOKEN_KEY);
  Object.assign(state, {
    tools: [], generation: null, toolsEtag: null, approvals: [], approvalsEtag: null,
    approvalsNext: null, approvalsWanted: 0,
    approvalsMissing: false, logNext: 0, logEtag: null, logCaughtUp: false, logLost: 0, logMissing: false,
    detail: null,
  });
  clear($("tool-groups"));
  clear($("approval-list"));
  clear($("log-rows"));
  $("log-lost").hidden = true;
  clear($("detail-body"));
  $("state-json").textContent = "";
  $("panel").hidden = true;
  $("nav").hidden = true;
  $("sign-out").hidden = true;
  $("signin").hidden = false;
  $("refused").hidden = !refused;
  problem("");
  $("token").value = "";
  $("token").focus();
}

let refreshPending = null;

function refreshSoon() {
  if (refreshPending) return;
  refreshPending = setTimeout(async () => {
    refreshPending = null;
    await refresh();
  }, 200);
}

async function refresh() {
  if (!token()) return;
  try {
    await loadTools(false);
    await loadApprovals(false);
  } catch (error) {
    report(error, "Loading failed");
  }
}

async function start() {
  $("signin").hidden = true;
  $("refused").hidden = true;
  try {
    await loadTools(true);
  } catch (error) {
    if (!(error instanceof Refused)) {
      $("signin").hidden = false;
      report(error, "Loading the tools failed");
    }
    return;
  }
  $("panel").hidden = false;
  $("nav").hidden = false;
  $("sign-out").hidden = false;
  $("tools").hidden = false;
  $("detail").hidden = true;
  document.body.classList.add("signed-in");
  try {
    await loadApprovals(true);
  } catch (error) {
    report(error, "Loading the approvals failed");
  }
  await pollLog();
  stopTimers();
  state.timers.push(setInterval(() => { if ($("log-live").checked) pollLog(); }, LOG_EVERY_MS));
  state.timers.push(setInterval(refresh, REFRESH_EVERY_MS));
}

function init() {
  $("signin-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const value = $("token").value.trim();
    if (!value) return;
    sessionStorage.setItem(TOKEN_KEY, value);
    $("token").value = "";
    start();
  });
  $("sign-out").addEventListener("click", () => {
    signOut(false);
    document.body.classList.remove("signed-in");
  });
  $("filter").addEventListener("input", renderTools);
  $("reload-tools").addEventListener("click", () => loadTools(true).catch((e) => report(e, "Loading the tools failed")));
  $("reload-approvals").addEventListener("click", () => loadApprovals(true).catch((e) => report(e, "Loading the approvals failed")));
  $("more-approvals").addEventListener("click", () => moreApprovals().catch((e) => report(e, "Loading more approvals failed")));
  $("detail-close").addEventListener("click", closeDetail);
  $("log-live").addEventListener("change", () => { if ($("log-live").checked) pollLog(); });
  $("state-show").addEventListener("click", showState);
  $("state-download").addEventListener("click", downloadState);
  // In-page links move focus to their section themselves: the page may
  // carry a <base> (mounted without a trailing slash), under which
  // "#tools" would name another URL.
  document.addEventListener("click", (event) => {
    const link = event.target.closest && event.target.closest('a[href^="#"]');
    if (!link) return;
    const target = document.getElementById(link.getAttribute("href").slice(1));
    if (!target) return;
    event.preventDefault();
    if (!target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
    target.scrollIntoView({ block: "start" });
    target.focus({ preventScroll: true });
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && state.detail && !$("ask").open) closeDetail();
  });
  if (token()) {
    start();
  } else {
    $("signin").hidden = false;
    $("token").focus();
  }
}

init();
