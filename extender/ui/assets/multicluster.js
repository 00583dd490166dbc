// Multi-cluster: where Karmada would put a ResourceBinding's replicas on the member clusters, and why each
// filtered cluster was left out (the same placement as POST /multicluster/schedule and `extender place`).

import { api } from "./api.js";
import { barChart } from "./charts.js";
import { h, put } from "./dom.js";

const EXAMPLE = `# A ResourceBinding (add a PropagationPolicy to override its placement, and Cluster
# objects to place on those instead of the service's member clusters), as karmadactl prints them.
apiVersion: work.karmada.io/v1alpha2
kind: ResourceBinding
metadata:
  name: nginx-deployment
  namespace: default
spec:
  resource:
    apiVersion: apps/v1
    kind: Deployment
    namespace: default
    name: nginx
  replicas: 12
  replicaRequirements:
    resourceRequest: {cpu: 500m, memory: 1Gi}
  placement:
    clusterAffinity:
      labelSelector:
        matchLabels: {env: prod}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        dynamicWeight: AvailableReplicas
`;

function clustersTable(clusters) {
  if (!clusters.length) {
    return h("p", { class: "note" }, "The service has no member clusters: start it with ",
      h("code", {}, "extender serve --member-clusters FILE"), ", or add Cluster objects to the YAML below.");
  }
  return h("table", { class: "plain", id: "mc-members" },
    h("thead", {}, h("tr", {}, ["cluster", "provider", "region", "zones", "labels", "taints"].map((t) => h("th", {}, t)))),
    h("tbody", {}, clusters.map((c) => h("tr", {}, h("td", {}, c.name), h("td", {}, c.provider), h("td", {}, c.region),
      h("td", {}, c.zones.join(", ")), h("td", {}, Object.entries(c.labels).map(([k, v]) => `${k}=${v}`).join(", ")),
      h("td", {}, c.taints.join(", "))))));
}

function resultView(answer) {
  const ok = !answer.error;
  const placed = answer.clusters.reduce((n, c) => n + c.replicas, 0);
  const rows = answer.rows;
  return [
    h("div", { class: "pod-title" }, h("span", { class: `badge ${ok ? "Schedulable" : "Unschedulable"}` }, ok ? "Scheduled" : "Not scheduled"),
      h("h2", {}, answer.binding)),
    h("pre", { class: `outcome ${ok ? "Schedulable" : "Unschedulable"}`, id: "mc-message" },
      ok ? `${placed} replica(s) to ${answer.clusters.length} cluster(s)` : answer.error),
    answer.affinityName ? h("p", {}, `cluster affinity term: ${answer.affinityName}`) : null,
    ok ? h("figure", { class: "card" }, h("figcaption", {}, "Replicas per cluster"),
      barChart(answer.clusters.map((c) => ({ label: c.name, value: c.replicas })), {})) : null,
    h("table", { class: "plain", id: "mc-result" },
      h("thead", {}, h("tr", {}, ["cluster", "provider / region", "replicas", "feasible", "score", "available", "selected", "filtered out because"]
        .map((t) => h("th", {}, t)))),
      h("tbody", {}, rows.map((r) => h("tr", { class: r.feasible ? "" : "bad", dataset: { cluster: r.name } },
        h("td", {}, r.name), h("td", {}, [r.provider, r.region].filter(Boolean).join(" / ")),
        h("td", { class: "num" }, String(r.replicas)), h("td", {}, r.feasible ? "yes" : "no"),
        h("td", { class: "num" }, r.score ?? "-"), h("td", { class: "num" }, r.available ?? "-"),
        h("td", {}, r.feasible ? (r.selected ? "yes" : "no") : "-"),
        h("td", { class: "reasons" }, r.filtered.join("; ")))))),
  ];
}

export async function renderMulticluster(root) {
  const members = h("div", {}, h("p", { class: "muted" }, "loading member clusters…"));
  const text = h("textarea", { id: "mc-yaml", spellcheck: "false", rows: "22", "aria-label": "ResourceBinding YAML" });
  text.value = EXAMPLE;
  const error = h("p", { id: "mc-error", class: "error", role: "alert", hidden: true });
  const result = h("section", { id: "mc-answer" });
  const placeButton = h("button", { type: "button", id: "mc-place", class: "primary" }, "Place replicas");
  placeButton.addEventListener("click", async () => {
    error.hidden = true;
    try {
      put(result, resultView(await api.place(text.value)));
    } catch (err) {
      error.hidden = false;
      error.textContent = err.message;
      put(result);
    }
  });
  put(root, h("h2", {}, "Multi-cluster placement (Karmada)"),
    h("p", { class: "legend" }, "Where karmada-scheduler would put a ResourceBinding's replicas, and why each cluster was ",
      "filtered out. Nothing is written."),
    members, h("label", { class: "block" }, "ResourceBinding (YAML)", text), error,
    h("div", { class: "tools" }, placeButton), result);
  try {
    put(members, clustersTable((await api.clusters()).clusters));
  } catch (err) {
    put(members, h("p", { class: "error" }, err.message));
  }
}
