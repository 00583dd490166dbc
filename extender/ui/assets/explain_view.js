// One explanation (the JSON GET /explain answers) drawn for people: the outcome as kube-scheduler words it,
// the node it would pick, pictures (rejections per plugin, feasibility by zone and pool, scores), the
// per-node x per-plugin table, and the devices of a DRA pod. Fields this page does not know yet are shown
// as they come under "More from explain", so a newer engine's additions are never hidden.

import { barChart, heatMap, histogram } from "./charts.js";
import { h, put } from "./dom.js";
import { VirtualTable } from "./table.js";

const PASSING = new Set(["Success", "Skip"]);
const KNOWN_RESULT = new Set(["error", "pod", "profile", "schedulerName", "unknown_nodes", "nodes", "prefilter",
  "outcome", "note", "bound", "version"]);
const KNOWN_OUTCOME = new Set(["status", "message", "feasibleNodes", "reasons", "best", "tiedAtTop", "scoreError"]);
const VERDICT = { Success: "✓", Skip: "skip", Unschedulable: "✗", UnschedulableAndUnresolvable: "✗✗", Error: "error" };

/** Camel-case names may break between words (zero-width spaces), so long plugin names wrap in headers. */
function breakable(name) {
  return name.replace(/([a-z])([A-Z])/g, "$1\u200b$2");
}

function pluginsOf(nodes, field) {
  const seen = new Set();
  for (const entry of Object.values(nodes)) for (const name of Object.keys(entry[field] || {})) seen.add(name);
  return [...seen];
}

/** The table's rows: one per node, with its facts (zone, pool) and its first rejecting plugin. */
export function nodeRows(result, facts) {
  const rows = [];
  for (const [name, entry] of Object.entries(result.nodes || {})) {
    const rejecting = [];
    for (const plugin in entry.filters) if (!PASSING.has(entry.filters[plugin].code)) rejecting.push(plugin);
    const fact = facts.get(name) || {};
    rows.push(new NodeRow(name, entry, fact.zone || "", fact.pool || "", rejecting));
  }
  return rows;
}

/** One node of the table. Its reasons text is built when first read (a drawn row, a search), not for all. */
class NodeRow {
  constructor(name, entry, zone, pool, rejecting) {
    this.name = name;
    this.entry = entry;
    this.zone = zone;
    this.pool = pool;
    this.feasible = !!entry.feasible;
    this.rejecting = rejecting;
    this.first = rejecting.length ? rejecting[0] : "";
    this.text = null;
  }

  get reasons() {
    if (this.text === null) {
      const filters = this.entry.filters;
      this.text = this.rejecting.map((p) => `${p}: ${(filters[p].reasons || []).join(", ") || filters[p].code}`).join("; ");
    }
    return this.text;
  }
}

function versionText(version) {
  if (version === undefined || version === null) return null;
  if (typeof version !== "object") return String(version);
  return Object.entries(version).map(([k, v]) => `${k} ${typeof v === "object" ? JSON.stringify(v) : v}`).join(", ");
}

function extras(object, known) {
  const items = Object.entries(object || {}).filter(([k]) => !known.has(k));
  return items.map(([k, v]) => h("div", { class: "extra" }, h("dt", {}, k),
    h("dd", {}, h("pre", {}, typeof v === "string" ? v : JSON.stringify(v, null, 2)))));
}

function summary(result) {
  const outcome = result.outcome || {};
  const status = result.error ? "Error" : outcome.status || "unknown";
  const version = versionText(result.version);
  const meta = [
    h("span", {}, "profile ", h("b", {}, result.profile || "?")),
    h("span", {}, "schedulerName ", h("b", {}, result.schedulerName || "?")),
    version ? h("span", { class: "version" }, "Kubernetes ", h("b", {}, version)) : null,
  ];
  const lines = [
    h("div", { class: "pod-title" }, h("span", { class: `badge ${status}`, dataset: { status } }, status),
      h("h2", { class: "pod-name" }, result.pod || "(pod)")),
    h("p", { class: "meta" }, meta),
    result.note ? h("p", { class: "note" }, result.note) : null,
    result.bound ? h("p", { class: "note" }, result.bound.message) : null,
  ];
  if (result.error) {
    lines.push(h("pre", { class: "outcome error", id: "outcome-message" }, result.error));
    return lines;
  }
  lines.push(h("pre", { class: `outcome ${status}`, id: "outcome-message" }, outcome.message || ""));
  const best = outcome.best || [];
  if (best.length) {
    const tied = outcome.tiedAtTop || [];
    lines.push(h("p", { class: "pick", id: "pick" }, "kube-scheduler would pick ",
      h("b", { class: "node-name" }, best[0].node), ` (total ${best[0].total}, answered ${best[0].score ?? "-"} of 10)`,
      tied.length > 1 ? ` — or, at random, any of the ${tied.length} nodes tied at the top: ${tied.join(", ")}` : ""));
  }
  if (outcome.scoreError) lines.push(h("p", { class: "note" }, `scoring fails: ${outcome.scoreError}`));
  const rejected = Object.entries(result.prefilter || {}).filter(([, v]) => !PASSING.has(v.code));
  for (const [plugin, v] of rejected) {
    lines.push(h("p", { class: "note prefilter" }, `PreFilter ${plugin}: ${v.code}: ${(v.reasons || []).join(", ")}`));
  }
  if ((result.unknown_nodes || []).length) {
    lines.push(h("p", { class: "note" }, `nodes not in the cache: ${result.unknown_nodes.join(", ")}`));
  }
  const more = [...extras(result, KNOWN_RESULT), ...extras(outcome, KNOWN_OUTCOME)];
  if (more.length) lines.push(h("details", { class: "more", open: true }, h("summary", {}, "More from explain"),
    h("dl", {}, more)));
  return lines;
}

function columns(result) {
  const nodes = result.nodes || {};
  const cols = [
    { id: "node", label: "node", width: 170, cls: "sticky", value: (r) => r.name, cell: (r) => ({ text: r.name, title: r.name }) },
    { id: "zone", label: "zone", width: 90, value: (r) => r.zone, cell: (r) => ({ text: r.zone, title: r.zone }) },
    { id: "pool", label: "pool", width: 90, value: (r) => r.pool, cell: (r) => ({ text: r.pool, title: r.pool }) },
    { id: "fits", label: "fits", width: 44, value: (r) => (r.feasible ? 1 : 0),
      cell: (r) => ({ text: r.feasible ? "yes" : "no", cls: r.feasible ? "ok" : "bad" }) },
  ];
  for (const plugin of pluginsOf(nodes, "filters")) {
    cols.push({ id: `f:${plugin}`, label: breakable(plugin), width: 112, cls: "verdict", title: `filter plugin ${plugin}`,
      value: (r) => { const v = r.entry.filters[plugin]; return v ? v.code : ""; },
      cell: (r) => {
        const v = r.entry.filters[plugin];
        if (!v) return { text: "" };
        const reasons = (v.reasons || []).join(", ");
        return { text: VERDICT[v.code] || v.code, code: v.code, cls: PASSING.has(v.code) ? "pass" : "fail",
          title: `${plugin}: ${v.code}${reasons ? `: ${reasons}` : ""}` };
      } });
  }
  for (const plugin of pluginsOf(nodes, "scores")) {
    cols.push({ id: `s:${plugin}`, label: breakable(plugin), width: 104, cls: "score", title: `score plugin ${plugin}: raw/normalized/weighted`,
      value: (r) => { const sc = r.entry.scores[plugin]; return sc && !sc.skipped ? sc.weighted : -1; },
      cell: (r) => {
        const sc = r.entry.scores && r.entry.scores[plugin];
        if (!sc) return { text: "-" };
        if (sc.skipped) return { text: "skip", title: `${plugin} skipped (weighted ${sc.weighted})` };
        return { text: `${sc.raw}/${sc.normalized}/${sc.weighted}`, title: `${plugin}: raw ${sc.raw}, normalized ${sc.normalized}, weighted ${sc.weighted}` };
      } });
  }
  const scored = (r) => r.feasible && Object.keys(r.entry.scores || {}).length > 0;
  cols.push(
    { id: "total", label: "total", width: 60, cls: "num", value: (r) => (scored(r) ? r.entry.total : -1),
      cell: (r) => ({ text: scored(r) ? String(r.entry.total) : "-" }) },
    { id: "answer", label: "0..10", width: 50, cls: "num", title: "the prioritize answer (0..10)",
      value: (r) => r.entry.extender_score ?? -1, cell: (r) => ({ text: String(r.entry.extender_score ?? "-") }) },
    { id: "reasons", label: "reasons", width: 520, cls: "reasons", value: (r) => r.reasons,
      cell: (r) => ({ text: r.reasons, title: r.reasons }) });
  return cols;
}

function reasonBars(rows, onPick) {
  const counts = new Map();
  for (const row of rows) {
    for (const plugin of row.rejecting) {
      const c = counts.get(plugin) || { total: 0, first: 0 };
      c.total++;
      if (plugin === row.first) c.first++;
      counts.set(plugin, c);
    }
  }
  const items = [...counts.entries()].sort((a, b) => b[1].total - a[1].total || a[0].localeCompare(b[0]))
    .map(([plugin, c]) => ({ label: plugin, value: c.total, part: c.first,
      title: `${plugin} rules out ${c.total} node(s); it is the first to on ${c.first} (those count in the FitError message)` }));
  if (!items.length) return h("p", { class: "muted" }, "no filter plugin rules out any node");
  return barChart(items, { max: rows.length, onPick,
    legend: "nodes each filter plugin rules out; darker: where it is the first to (what kube-scheduler counts)" });
}

function heat(rows, onPick) {
  const cells = new Map();
  const zones = new Set(), pools = new Set();
  for (const row of rows) {
    zones.add(row.zone); pools.add(row.pool);
    const key = `${row.zone}\u0000${row.pool}`;
    const cell = cells.get(key) || { feasible: 0, total: 0 };
    cell.total++;
    if (row.feasible) cell.feasible++;
    cells.set(key, cell);
  }
  const sorted = (set) => [...set].sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  return heatMap(sorted(zones), sorted(pools), cells, { onPick });
}

function option(value, label, selected) {
  return h("option", { value, selected: selected || undefined }, label);
}

/**
 * Draw an explanation into `root`. facts: Map node -> {zone, pool}. Returns {table, painted} where painted
 * resolves once the table is on screen.
 */
export function renderExplanation(root, result, facts, { banner } = {}) {
  const rows = nodeRows(result, facts);
  const table = new VirtualTable({ label: "nodes", key: (r) => r.name });
  table.setColumns(columns(result));

  const search = h("input", { type: "search", id: "node-search", placeholder: "node, zone, pool or reason", "aria-label": "filter nodes" });
  const show = h("select", { id: "node-show", "aria-label": "which nodes" },
    option("all", "all nodes"), option("feasible", "feasible"), option("infeasible", "not feasible"));
  const plugins = [...new Set(rows.flatMap((r) => r.rejecting))].sort();
  const rejectedBy = h("select", { id: "node-plugin", "aria-label": "rejected by plugin" },
    option("", "rejected by any plugin or none"), plugins.map((p) => option(p, `rejected by ${p}`)));
  const zoneSel = h("select", { id: "node-zone", "aria-label": "zone" }, option("*", "every zone"),
    [...new Set(rows.map((r) => r.zone))].sort().map((z) => option(z, z || "(no zone)")));
  const poolSel = h("select", { id: "node-pool", "aria-label": "pool" }, option("*", "every pool"),
    [...new Set(rows.map((r) => r.pool))].sort().map((p) => option(p, p || "(no pool)")));
  const clear = h("button", { type: "button", id: "node-clear" }, "clear filters");

  const apply = () => {
    const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    const mode = show.value, plugin = rejectedBy.value, zone = zoneSel.value, pool = poolSel.value;
    const active = words.length || mode !== "all" || plugin || zone !== "*" || pool !== "*";
    table.setFilter(active ? (r) => {
      if (mode === "feasible" && !r.feasible) return false;
      if (mode === "infeasible" && r.feasible) return false;
      if (plugin && !r.rejecting.includes(plugin)) return false;
      if (zone !== "*" && r.zone !== zone) return false;
      if (pool !== "*" && r.pool !== pool) return false;
      if (words.length) {
        const hay = `${r.name} ${r.zone} ${r.pool} ${r.reasons}`.toLowerCase();
        return words.every((w) => hay.includes(w));
      }
      return true;
    } : null);
  };
  search.addEventListener("input", apply);
  for (const el of [show, rejectedBy, zoneSel, poolSel]) el.addEventListener("change", apply);
  clear.addEventListener("click", () => {
    search.value = ""; show.value = "all"; rejectedBy.value = ""; zoneSel.value = "*"; poolSel.value = "*";
    apply();
  });
  const pickPlugin = (plugin) => { rejectedBy.value = plugin; show.value = "all"; apply(); };
  const pickCell = (zone, pool) => { zoneSel.value = zone; poolSel.value = pool; apply(); };

  const totals = rows.filter((r) => r.feasible && Object.keys(r.entry.scores || {}).length).map((r) => r.entry.total);
  const best = (result.outcome && result.outcome.best) || [];
  const devices = h("section", { class: "devices", id: "devices", hidden: true });
  put(root,
    banner || null,
    h("section", { class: "summary" }, summary(result)),
    result.error ? null : h("section", { class: "charts" },
      h("figure", { class: "card", id: "chart-reasons" }, h("figcaption", {}, "Nodes ruled out, by plugin"),
        reasonBars(rows, pickPlugin)),
      h("figure", { class: "card", id: "chart-zones" }, h("figcaption", {}, "Feasible nodes by zone and pool"),
        heat(rows, pickCell)),
      h("figure", { class: "card", id: "chart-scores" }, h("figcaption", {}, "Score distribution"),
        histogram(totals, { mark: best.length ? best[0].total : undefined }))),
    devices,
    result.error ? null : h("section", { class: "nodes" },
      h("h3", {}, "Every node, every plugin"),
      h("p", { class: "legend" }, "filters: ✓ passes, ✗ rejects, ✗✗ rejects and preemption cannot help, skip: not run; ",
        "scores: raw/normalized/weighted; total: the weighted sum; 0..10: the prioritize answer. Click a column to sort."),
      h("div", { class: "tools" }, search, show, rejectedBy, zoneSel, poolSel, clear),
      table.el));
  table.sortBy("total", -1, rows);
  return { table, devices, rows };
}

/** Fill the devices section from device_choices' answer. */
export function renderDevices(section, answer) {
  if (!answer || (!answer.claims.length && !answer.prefilter)) { section.hidden = true; return; }
  section.hidden = false;
  const parts = [h("h3", {}, "Devices (Dynamic Resource Allocation)"),
    h("p", {}, `claims: ${answer.claims.join(", ") || "(none)"}`)];
  if (!answer.plugin) parts.push(h("p", { class: "note" }, "this profile does not run DynamicResources"));
  if (answer.prefilter) {
    parts.push(h("p", { class: "note" }, `PreFilter DynamicResources: ${answer.prefilter.code}: ${answer.prefilter.reasons.join(", ")}`));
  }
  const fits = Object.entries(answer.nodes || {});
  if (fits.length) {
    parts.push(h("p", {}, `${fits.length} node(s) could allocate the claims (the allocator's first solution on each):`));
    parts.push(h("table", { class: "plain", id: "device-choices" },
      h("thead", {}, h("tr", {}, h("th", {}, "node"), h("th", {}, "claim"), h("th", {}, "request"), h("th", {}, "device"))),
      h("tbody", {}, fits.flatMap(([node, v]) => Object.entries(v.claims).flatMap(([claim, devices]) =>
        (devices.length ? devices : [{ request: "", driver: "", pool: "", device: "(already allocated)" }]).map((d) =>
          h("tr", {}, h("td", {}, node), h("td", {}, claim), h("td", {}, d.request),
            h("td", {}, d.driver ? `${d.driver}/${d.pool}/${d.device}` : d.device))))))));
  } else if (!answer.prefilter) {
    parts.push(h("p", {}, "no node could allocate the claims"));
  }
  const rejected = Object.entries(answer.rejected || {});
  if (rejected.length) {
    parts.push(h("ul", { class: "rejected" }, rejected.map(([reason, count]) => h("li", {}, `${count} node(s): ${reason}`))));
  }
  const inventory = Object.entries(answer.inventory || {});
  if (inventory.length) {
    parts.push(h("details", { open: true }, h("summary", {}, "Devices on each node (in use: held by another claim)"),
      h("table", { class: "plain", id: "device-inventory" },
        h("thead", {}, h("tr", {}, h("th", {}, "node"), h("th", {}, "devices"))),
        h("tbody", {}, inventory.map(([node, devices]) => h("tr", {}, h("td", {}, node),
          h("td", {}, devices.map((d) => h("span", { class: d.inUse ? "device used" : "device free",
            title: `${d.driver}/${d.pool}/${d.device}${d.inUse ? " (in use)" : ""}` }, d.device)))))))));
  }
  put(section, parts);
}
