// Charts drawn as SVG: horizontal bars, a heat map and a histogram. Labels are text nodes (never markup).

import { h, s } from "./dom.js";

const BAR = 20;
const GAP = 6;

/**
 * Horizontal bars. items: [{label, value, part?, title?}] (part: a darker leading segment, e.g. "first
 * rejection"); onPick(label) when a bar is clicked.
 */
export function barChart(items, { max, width = 460, labelWidth = 190, onPick, legend } = {}) {
  if (!items.length) return h("p", { class: "muted" }, "nothing to show");
  const top = Math.max(max || 0, ...items.map((i) => i.value), 1);
  const plot = width - labelWidth - 50;
  const height = items.length * (BAR + GAP);
  const svg = s("svg", { class: "chart bars", viewBox: `0 0 ${width} ${height}`, width, height, role: "img" });
  items.forEach((item, i) => {
    const y = i * (BAR + GAP);
    const full = Math.max(1, Math.round((item.value / top) * plot));
    const g = s("g", { class: onPick ? "pick" : "", dataset: { label: item.label },
      onclick: onPick ? () => onPick(item.label) : undefined },
      s("title", {}, item.title || `${item.label}: ${item.value}`),
      s("text", { x: labelWidth - 8, y: y + BAR - 6, "text-anchor": "end", class: "label" },
        item.label.length > 28 ? `${item.label.slice(0, 27)}…` : item.label),
      s("rect", { x: labelWidth, y, width: full, height: BAR, class: "bar" }),
      item.part ? s("rect", { x: labelWidth, y, width: Math.max(1, Math.round((item.part / top) * plot)),
        height: BAR, class: "bar-part" }) : null,
      s("text", { x: labelWidth + full + 6, y: y + BAR - 6, class: "value" }, String(item.value)));
    svg.append(g);
  });
  return h("div", { class: "chart-wrap" }, svg, legend ? h("p", { class: "legend" }, legend) : null);
}

/**
 * A heat map of rows x columns; cells: Map "row\u0000col" -> {feasible, total}. Colour: share feasible.
 */
export function heatMap(rows, cols, cells, { onPick } = {}) {
  if (!rows.length || !cols.length) return h("p", { class: "muted" }, "nothing to show");
  const cw = 96, ch = 34, left = 110, topPad = 44;
  const width = left + cols.length * cw + 4, height = topPad + rows.length * ch + 4;
  const svg = s("svg", { class: "chart heat", viewBox: `0 0 ${width} ${height}`, width, height, role: "img" });
  cols.forEach((col, j) => {
    svg.append(s("text", { x: left + j * cw + cw / 2, y: topPad - 10, "text-anchor": "middle", class: "label" },
      s("title", {}, col || "(none)"), (col || "(none)").slice(0, 13)));
  });
  rows.forEach((row, i) => {
    svg.append(s("text", { x: left - 8, y: topPad + i * ch + ch / 2 + 4, "text-anchor": "end", class: "label" },
      s("title", {}, row || "(none)"), (row || "(none)").slice(0, 15)));
    cols.forEach((col, j) => {
      const cell = cells.get(`${row}\u0000${col}`);
      const x = left + j * cw, y = topPad + i * ch;
      if (!cell) {
        svg.append(s("rect", { x: x + 1, y: y + 1, width: cw - 2, height: ch - 2, class: "heat-empty" }));
        return;
      }
      const share = cell.feasible / cell.total;
      const fill = cell.feasible === 0 ? "hsl(4 70% 88%)" : `hsl(140 ${35 + 30 * share}% ${82 - 40 * share}%)`;
      svg.append(s("g", { class: onPick ? "pick" : "", dataset: { zone: row, pool: col },
        onclick: onPick ? () => onPick(row, col) : undefined },
        s("title", {}, `zone ${row || "(none)"}, pool ${col || "(none)"}: ${cell.feasible} of ${cell.total} nodes feasible`),
        s("rect", { x: x + 1, y: y + 1, width: cw - 2, height: ch - 2, fill, class: "heat-cell" }),
        s("text", { x: x + cw / 2, y: y + ch / 2 + 4, "text-anchor": "middle", class: "value" },
          `${cell.feasible}/${cell.total}`)));
    });
  });
  return h("div", { class: "chart-wrap" }, svg,
    h("p", { class: "legend" }, "feasible / all nodes of each zone and pool; greener: more of them feasible"));
}

/** A histogram of values (e.g. total scores) with an optional marked value (the node picked). */
export function histogram(values, { mark, bins = 20, width = 460, height = 150, label = "total score" } = {}) {
  if (!values.length) return h("p", { class: "muted" }, "no feasible node: nothing was scored");
  const lo = Math.min(...values), hi = Math.max(...values);
  const span = hi - lo || 1;
  const n = hi === lo ? 1 : bins;
  const counts = new Array(n).fill(0);
  for (const v of values) counts[Math.min(n - 1, Math.floor(((v - lo) / span) * n))]++;
  const top = Math.max(...counts);
  const pad = 24, plotW = width - 2 * pad, plotH = height - 40;
  const bw = plotW / n;
  const svg = s("svg", { class: "chart hist", viewBox: `0 0 ${width} ${height}`, width, height, role: "img" });
  counts.forEach((count, i) => {
    const bh = Math.round((count / top) * plotH);
    const from = lo + (span * i) / n, to = lo + (span * (i + 1)) / n;
    svg.append(s("g", {}, s("title", {}, `${count} node(s) with ${label} ${Math.round(from)}–${Math.round(to)}`),
      s("rect", { x: pad + i * bw + 1, y: 10 + plotH - bh, width: Math.max(1, bw - 2), height: bh, class: "bar" })));
  });
  svg.append(s("text", { x: pad, y: height - 8, class: "label" }, String(lo)));
  svg.append(s("text", { x: width - pad, y: height - 8, "text-anchor": "end", class: "label" }, String(hi)));
  if (mark !== undefined && mark !== null) {
    const x = pad + (hi === lo ? plotW / 2 : ((mark - lo) / span) * plotW);
    svg.append(s("line", { x1: x, x2: x, y1: 6, y2: 10 + plotH, class: "mark" }));
    svg.append(s("text", { x: Math.min(width - 60, x + 4), y: 18, class: "mark-label" }, `picked: ${mark}`));
  }
  return h("div", { class: "chart-wrap" }, svg,
    h("p", { class: "legend" }, `${values.length} feasible node(s) by ${label} (the weighted sum of the score plugins)`));
}
