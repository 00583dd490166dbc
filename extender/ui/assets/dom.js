// Building DOM without ever parsing HTML: every string from the cluster (pod and node names, labels,
// reasons) becomes a text node or an attribute value, so none of it can turn into markup or script.

const SVG_NS = "http://www.w3.org/2000/svg";

function fill(el, attrs, children) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key === "text") el.textContent = String(value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** An HTML element: h("td", {class: "x", title: reason}, "text", otherNode). */
export function h(tag, attrs, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

/** An SVG element, the same way. */
export function s(tag, attrs, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}

/** Replace an element's children. */
export function put(el, ...children) {
  el.replaceChildren();
  return fill(el, {}, children);
}

export function cpu(milli) {
  return milli % 1000 === 0 ? `${milli / 1000}` : `${(milli / 1000).toFixed(milli % 100 === 0 ? 1 : 3)}`;
}

export function bytes(n) {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${Number.isInteger(n) ? n : n.toFixed(1)}${units[i]}`;
}

/** "#/pod/<ns>/<name>": the fixed prefix keeps a hostile name from becoming a javascript: link. */
export function podHref(namespace, name) {
  return `#/pod/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
}

/** Wait until the browser has painted what was just put in the DOM (at most a second: a page that gets no
 * animation frames, in a background tab or a stalled headless compositor, must not wait for ever). */
export function painted() {
  return new Promise((resolve) => {
    const fallback = setTimeout(resolve, 1000);
    requestAnimationFrame(() => requestAnimationFrame(() => {
      clearTimeout(fallback);
      resolve();
    }));
  });
}
