// The page: the pending pods (with search), one pod's explanation, the what-if panel, and the
// multi-cluster tab. Routes live in the URL's fragment: #/pod/<namespace>/<name> and #/multicluster.

import { api, explainPod } from "./api.js";
import { bytes, cpu, h, painted, podHref, put } from "./dom.js";
import { renderDevices, renderExplanation } from "./explain_view.js";
import { renderMulticluster } from "./multicluster.js";
import { comparison, simulationView, whatIfPanel } from "./whatif.js";

const $ = (id) => document.getElementById(id);
const state = { profile: "", open: null, live: null, facts: new Map(), nodes: [], loading: 0 };
// Render timings, for people (the footer) and for the tests: fetchMs from request to both answers parsed,
// renderMs from there to the explanation painted.
window.uiTimings = [];

function setStatus(text) { $("status").textContent = text; }

async function loadOverview() {
  try {
    const o = await api.overview();
    const cache = o.cache || {};
    put($("service"), `extender ${o.version} · ${o.source === "apiserver" ? "live cluster" : "cluster dump"} · `,
      `${cache.nodes ?? "?"} nodes, ${cache.pending_pods ?? "?"} pending pods`,
      o.ready ? "" : ` · cache syncing (${(o.unsynced || []).join(", ")})`);
    put($("profile"), h("option", { value: "" }, "the pod's own profile"),
      o.profiles.map((p) => h("option", { value: p }, p)));
    $("profile").value = state.profile;
  } catch (err) {
    put($("service"), `service unavailable: ${err.message}`);
  }
}

async function loadPods() {
  const q = $("pod-search").value;
  try {
    const answer = await api.pods(q);
    if ($("pod-search").value !== q) return; // a newer search is on its way
    $("pod-count").textContent = answer.total > answer.pods.length
      ? `${answer.pods.length} of ${answer.total} pending pods` : `${answer.total} pending pod(s)`;
    put($("pods"), answer.pods.map((p) => h("li", {},
      h("a", { href: podHref(p.namespace, p.name), class: "pod-link", dataset: { pod: `${p.namespace}/${p.name}` },
        "aria-current": state.open && state.open.key === `${p.namespace}/${p.name}` ? "page" : undefined },
        h("span", { class: "pod-ns" }, p.namespace), "/", h("span", { class: "pod-n" }, p.name)),
      h("span", { class: "pod-req muted" }, `cpu ${cpu(p.cpu)} · mem ${bytes(p.memory)}${p.claims ? ` · ${p.claims} claim(s)` : ""}`))));
  } catch (err) {
    $("pod-count").textContent = err.message;
  }
}

function factsOf(nodes) {
  return new Map(nodes.map((n) => [n.name, n]));
}

async function openPod(namespace, name) {
  const ticket = ++state.loading;
  const key = `${namespace}/${name}`;
  state.open = { namespace, name, key };
  for (const a of document.querySelectorAll(".pod-link")) {
    if (a.dataset.pod === key) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  const detail = $("detail");
  put(detail, h("p", { class: "muted" }, `explaining ${key} on every node…`));
  setStatus("");
  const started = performance.now();
  let result, nodes;
  try {
    [result, { nodes }] = await Promise.all([explainPod(namespace, name, state.profile), api.nodes()]);
  } catch (err) {
    if (ticket !== state.loading) return;
    put(detail, h("p", { class: "error", role: "alert" }, `${key}: ${err.message}`),
      h("button", { type: "button", onclick: () => openPod(namespace, name) }, "try again"));
    return;
  }
  if (ticket !== state.loading) return;
  const arrived = performance.now();
  state.live = result;
  state.nodes = nodes;
  state.facts = factsOf(nodes);
  const view = h("div", { id: "explanation" });
  const side = h("div", { id: "whatif-slot" });
  put(detail, view, side);
  const drawn = renderExplanation(view, result, state.facts);
  const built = performance.now();
  await painted();
  const done = performance.now();
  const timing = { pod: key, nodes: Object.keys(result.nodes || {}).length, fetchMs: Math.round(arrived - started),
    renderMs: Math.round(done - arrived), buildMs: Math.round(built - arrived), paintMs: Math.round(done - built) };
  window.uiTimings.push(timing);
  setStatus(`explained ${timing.nodes} nodes: answer in ${timing.fetchMs} ms, drawn in ${timing.renderMs} ms`);
  document.body.dataset.ready = key;
  loadDevices(namespace, name, result, drawn.devices, ticket);
  loadWhatIf(namespace, name, side, ticket);
}

async function loadDevices(namespace, name, result, section, ticket) {
  const dra = result.prefilter && result.prefilter.DynamicResources;
  if (!dra || dra.code === "Skip") return;
  try {
    const answer = await api.devices(namespace, name, state.profile);
    if (ticket === state.loading) renderDevices(section, answer);
  } catch (err) {
    section.hidden = false;
    put(section, h("p", { class: "error" }, `devices: ${err.message}`));
  }
}

async function loadWhatIf(namespace, name, slot, ticket) {
  let pod;
  try {
    pod = await api.pod(namespace, name);
  } catch (err) {
    put(slot, h("p", { class: "error" }, `what-if: ${err.message}`));
    return;
  }
  if (ticket !== state.loading) return;
  const back = () => {
    const view = $("explanation");
    const drawn = renderExplanation(view, state.live, state.facts);
    loadDevices(namespace, name, state.live, drawn.devices, state.loading);
  };
  put(slot, whatIfPanel({
    yaml: pod.yaml, nodes: state.nodes, profile: () => state.profile,
    onExplained: (answer) => {
      const facts = new Map(state.facts);
      for (const n of answer.nodes) facts.set(n.name, n);
      const banner = comparison(state.live, answer.explain, answer.applied, back);
      const drawn = renderExplanation($("explanation"), answer.explain, facts, { banner });
      if (answer.devices) renderDevices(drawn.devices, answer.devices);
      $("explanation").scrollIntoView({ block: "start" });
      document.body.dataset.whatif = String(Number(document.body.dataset.whatif || 0) + 1);
    },
    onSimulated: (answer) => {
      const old = $("simulation");
      const view = simulationView(answer, answer.applied);
      if (old) old.replaceWith(view); else slot.append(view);
      view.scrollIntoView({ block: "start" });
    },
  }));
}

function route() {
  const hash = location.hash || "#/";
  const pod = hash.match(/^#\/pod\/([^/]+)\/([^/]+)$/);
  const multi = hash === "#/multicluster";
  $("pods-view").hidden = multi;
  $("mc-view").hidden = !multi;
  $("tab-pods").setAttribute("aria-selected", String(!multi));
  $("tab-mc").setAttribute("aria-selected", String(multi));
  if (multi) {
    if (!$("mc-view").dataset.loaded) { $("mc-view").dataset.loaded = "1"; renderMulticluster($("mc-view")); }
    return;
  }
  if (pod) openPod(decodeURIComponent(pod[1]), decodeURIComponent(pod[2]));
}

let searchTimer = 0;
$("pod-search").addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(loadPods, 150);
});
$("profile").addEventListener("change", () => {
  state.profile = $("profile").value;
  if (state.open) openPod(state.open.namespace, state.open.name);
});
$("refresh").addEventListener("click", () => {
  loadOverview();
  loadPods();
  if (state.open && $("mc-view").hidden) openPod(state.open.namespace, state.open.name);
});
window.addEventListener("hashchange", route);
loadOverview();
loadPods();
route();
