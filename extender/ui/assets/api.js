// The service's JSON: the web view's API (relative to /ui/) and the engine's own /explain.

export class ApiError extends Error {
  constructor(status, body) {
    super((body && (body.Error || body.error)) || `HTTP ${status}`);
    this.status = status;
    this.line = body && body.line;
    this.column = body && body.column;
  }
}

async function answer(resp) {
  const text = await resp.text();
  let body = null;
  try { body = text ? JSON.parse(text) : null; } catch { body = { Error: text.slice(0, 500) }; }
  if (!resp.ok) throw new ApiError(resp.status, body);
  return body;
}

export async function getJSON(path) {
  return answer(await fetch(path, { headers: { accept: "application/json" } }));
}

export async function postJSON(path, body) {
  return answer(await fetch(path, {
    method: "POST", headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
  }));
}

const seg = encodeURIComponent;

/** The engine's explanation of a pod the cache holds, with the profile chosen (or the pod's own). */
export function explainPod(namespace, name, profile) {
  const where = profile ? `../profiles/${seg(profile)}/explain` : "../explain";
  return getJSON(`${where}/${seg(namespace)}/${seg(name)}`);
}

export const api = {
  overview: () => getJSON("api/overview"),
  pods: (q) => getJSON(`api/pods?q=${seg(q || "")}`),
  pod: (namespace, name) => getJSON(`api/pods/${seg(namespace)}/${seg(name)}`),
  nodes: () => getJSON("api/nodes"),
  devices: (namespace, name, profile) =>
    getJSON(`api/devices/${seg(namespace)}/${seg(name)}${profile ? `?profile=${seg(profile)}` : ""}`),
  whatIf: (body) => postJSON("api/whatif", body),
  clusters: () => getJSON("api/multicluster"),
  place: (yaml) => postJSON("api/multicluster/place", { yaml }),
};
