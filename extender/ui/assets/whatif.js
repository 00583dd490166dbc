// What if: edit the pod (YAML, checked by the service: errors name the line) or the cluster (cordon,
// uncordon, empty copies of a node, a taint removed), then explain or simulate on a copy. The service never
// writes: not to the cluster, not to its own cache.

import { api } from "./api.js";
import { h, put } from "./dom.js";

const OPS = {
  cordon: "cordon the node",
  uncordon: "uncordon the node",
  copy: "add empty copies of the node",
  untaint: "remove a taint from the node",
};

function taintText(t) {
  return `${t.key}${t.value ? `=${t.value}` : ""}:${t.effect}`;
}

/**
 * The panel. pod: {namespace, name}; nodes: the node facts; profile(): the profile chosen (or "");
 * onExplained(answer), onSimulated(answer): what to draw with the service's answer.
 */
export function whatIfPanel({ yaml, nodes, profile, onExplained, onSimulated }) {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const edits = [];
  const text = h("textarea", { id: "whatif-yaml", spellcheck: "false", rows: "16", "aria-label": "pod YAML" });
  text.value = yaml;
  const error = h("p", { id: "whatif-error", class: "error", role: "alert", hidden: true });
  const list = h("ul", { id: "whatif-edits", class: "edits" });
  const names = h("datalist", { id: "whatif-node-names" }, nodes.map((n) => h("option", { value: n.name })));
  const op = h("select", { id: "edit-op", "aria-label": "edit" },
    Object.entries(OPS).map(([value, label]) => h("option", { value }, label)));
  const node = h("input", { id: "edit-node", list: "whatif-node-names", placeholder: "node name", "aria-label": "node" });
  const count = h("input", { id: "edit-count", type: "number", min: "1", max: "1000", value: "1", "aria-label": "copies" });
  const taint = h("select", { id: "edit-taint", "aria-label": "taint" });
  const add = h("button", { type: "button", id: "edit-add" }, "add edit");
  const replicas = h("input", { id: "whatif-replicas", type: "number", min: "1", max: "1000", value: "3", "aria-label": "replicas" });
  const explainButton = h("button", { type: "button", id: "whatif-explain", class: "primary" }, "Explain on a copy");
  const simulateButton = h("button", { type: "button", id: "whatif-simulate" }, "Simulate on a copy");
  const reset = h("button", { type: "button", id: "whatif-reset" }, "reset");
  const status = h("p", { id: "whatif-status", class: "muted", "aria-live": "polite" });

  const syncInputs = () => {
    count.hidden = op.value !== "copy";
    taint.hidden = op.value !== "untaint";
    const found = byName.get(node.value);
    put(taint, ...(found ? found.taints : []).map((t, i) => h("option", { value: String(i) }, taintText(t))));
    if (op.value === "untaint" && found && !found.taints.length) put(taint, h("option", { value: "" }, "(no taints)"));
  };
  op.addEventListener("change", syncInputs);
  node.addEventListener("input", syncInputs);
  syncInputs();

  const drawEdits = () => put(list, edits.map((e, i) => h("li", {}, e.label, " ",
    h("button", { type: "button", class: "link", "aria-label": `remove edit ${i + 1}`,
      onclick: () => { edits.splice(i, 1); drawEdits(); } }, "remove"))));

  const fail = (message) => { error.hidden = false; error.textContent = message; };
  add.addEventListener("click", () => {
    error.hidden = true;
    const found = byName.get(node.value);
    if (!found) return fail(`no node named ${JSON.stringify(node.value)} in the cluster`);
    const edit = { op: op.value, node: found.name };
    let label = `${op.value} ${found.name}`;
    if (op.value === "copy") {
      edit.count = Number(count.value);
      label = `add ${edit.count} empty cop${edit.count === 1 ? "y" : "ies"} of ${found.name}`;
    }
    if (op.value === "untaint") {
      const t = found.taints[Number(taint.value)];
      if (!t) return fail(`${found.name} has no taint to remove`);
      edit.taint = t;
      label = `remove taint ${taintText(t)} from ${found.name}`;
    }
    edits.push({ ...edit, label });
    drawEdits();
  });

  const run = async (mode) => {
    error.hidden = true;
    status.textContent = mode === "explain" ? "explaining on a copy…" : "simulating on a copy…";
    const body = { pod: text.value, changes: edits.map(({ label, ...e }) => e), mode, profile: profile() || null };
    if (mode === "simulate") body.replicas = Number(replicas.value);
    try {
      const answer = await api.whatIf(body);
      status.textContent = "";
      if (mode === "explain") onExplained(answer); else onSimulated(answer);
    } catch (err) {
      status.textContent = "";
      fail(err.message);
      if (err.line) {  // put the cursor on the line the service named
        const lines = text.value.split("\n");
        const start = lines.slice(0, err.line - 1).reduce((n, l) => n + l.length + 1, 0);
        text.focus();
        text.setSelectionRange(start, start + (lines[err.line - 1] || "").length);
      }
    }
  };
  explainButton.addEventListener("click", () => run("explain"));
  simulateButton.addEventListener("click", () => run("simulate"));
  reset.addEventListener("click", () => { text.value = yaml; edits.length = 0; drawEdits(); error.hidden = true; });

  return h("section", { class: "whatif card", id: "whatif" },
    h("h3", {}, "What if…"),
    h("p", { class: "legend" }, "Edit the pod or the cluster, then explain or simulate on a copy. ",
      "Nothing is written: not to the cluster, not to the extender's cache."),
    h("label", { class: "block" }, "Pod (YAML)", text), error,
    h("fieldset", {}, h("legend", {}, "Cluster edits"), names,
      h("div", { class: "tools" }, op, node, count, taint, add), list),
    h("div", { class: "tools" }, explainButton, h("label", {}, "replicas ", replicas), simulateButton, reset),
    status);
}

/** "before -> after" in a few words, for the what-if banner. */
export function comparison(before, after, applied, onBack) {
  const line = (label, result) => {
    const o = (result && result.outcome) || {};
    const feasible = (o.feasibleNodes || []).length, all = Object.keys((result && result.nodes) || {}).length;
    return h("li", {}, h("b", {}, label), ` ${o.status || result.error || "?"}: ${feasible}/${all} nodes feasible`,
      o.best && o.best.length ? `; kube-scheduler would pick ${o.best[0].node}` : "");
  };
  return h("div", { class: "banner", id: "whatif-banner", role: "status" },
    h("p", {}, h("b", {}, "What-if, on a copy of the cluster"), " (nothing was written). ",
      applied.length ? `Edits: ${applied.join("; ")}.` : "No cluster edits."),
    h("ul", {}, line("before:", before), line("after:", after)),
    h("button", { type: "button", id: "whatif-back", onclick: onBack }, "back to the cluster as it is"));
}

/** A simulation's answer: where each replica went, which did not fit and why, the nodes it filled. */
export function simulationView(answer, applied) {
  const sim = answer.simulation;
  const util = sim.utilization;
  return h("section", { class: "card", id: "simulation" },
    h("h3", {}, `Simulation on a copy: ${sim.scheduled.length} of ${sim.scheduled.length + sim.unschedulable.length} replicas placed`),
    h("p", { class: "legend" }, `profile ${answer.profile}; `, applied.length ? `edits: ${applied.join("; ")}` : "no cluster edits",
      ". Each replica is placed as kube-scheduler would, and counted for the next."),
    h("table", { class: "plain" }, h("thead", {}, h("tr", {}, h("th", {}, "pod"), h("th", {}, "node"), h("th", {}, "score"),
      h("th", {}, "feasible nodes"))),
    h("tbody", {}, sim.scheduled.map((p) => h("tr", {}, h("td", {}, p.pod), h("td", {}, p.node),
      h("td", {}, p.score ?? "only feasible node"), h("td", {}, p.feasibleNodes))),
    sim.unschedulable.map((p) => h("tr", { class: "bad" }, h("td", {}, p.pod), h("td", { colspan: "3" }, p.message))))),
    Object.keys(util.after).length ? h("table", { class: "plain" },
      h("thead", {}, h("tr", {}, h("th", {}, "node"), h("th", {}, "cpu %"), h("th", {}, "memory %"), h("th", {}, "pods"))),
      h("tbody", {}, Object.entries(util.after).map(([n, a]) => {
        const b = util.before[n] || { cpu: 0, memory: 0, pods: 0 };
        return h("tr", {}, h("td", {}, n), h("td", {}, `${b.cpu} → ${a.cpu}`), h("td", {}, `${b.memory} → ${a.memory}`),
          h("td", {}, `${b.pods} → ${a.pods}`));
      }))) : null);
}
