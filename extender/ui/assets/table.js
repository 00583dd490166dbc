// A virtualized, sortable, filterable table: only the rows in view (plus a margin) exist in the DOM, so
// 5,000 nodes scroll as smoothly as 30. Rows have a fixed height; row elements are reused while scrolling.

import { h } from "./dom.js";

const ROW_HEIGHT = 26;
const OVERSCAN = 4;

// One collator for every comparison: localeCompare with options builds a new one per call (slow at 5,000 rows).
const collator = new Intl.Collator(undefined, { numeric: true });

function compare(a, b) {
  const na = typeof a === "number", nb = typeof b === "number";
  if (na && nb) return a - b;
  if (na !== nb) return na ? -1 : 1; // numbers before text ("-" for no score)
  return collator.compare(String(a), String(b));
}

/**
 * columns: [{id, label, width, title?, value(row) -> sort key, cell(row) -> {text, cls?, title?, code?}}]
 * rows: any objects; key(row) names each row (data-row on its element).
 */
export class VirtualTable {
  constructor({ label, key, onRowClick }) {
    this.key = key;
    this.onRowClick = onRowClick;
    this.columns = [];
    this.rows = [];
    this.rank = new Map();
    this.view = [];
    this.filter = null;
    this.sort = null; // {id, dir: 1 | -1}
    this.pool = [];
    this.head = h("div", { class: "vt-head", role: "row" });
    this.spacer = h("div", { class: "vt-spacer" });
    this.body = h("div", { class: "vt-body", tabindex: "0", role: "table", "aria-label": label },
      this.head, this.spacer);
    this.count = h("div", { class: "vt-count", "aria-live": "polite" });
    this.el = h("div", { class: "vt" }, this.body, this.count);
    this.frame = 0;
    this.fallback = 0;
    this.body.addEventListener("scroll", () => this.schedule());
    // Sizes are read once the browser has laid the table out (a ResizeObserver runs then, layout clean):
    // reading them while building would force a layout of the whole page in the middle of the first render.
    this.measured = false;
    new ResizeObserver(() => {
      this.headHeight = this.head.offsetHeight;
      this.measured = true;
      this.schedule();
    }).observe(this.body);
  }

  setColumns(columns) {
    this.columns = columns;
    const template = columns.map((c) => `${c.width}px`).join(" ");
    this.el.style.setProperty("--vt-cols", template);
    this.el.style.setProperty("--vt-width", `${columns.reduce((sum, c) => sum + c.width, 0)}px`);
    this.head.replaceChildren(...columns.map((c) => {
      const button = h("button", { type: "button", class: "vt-sort", title: c.title || `sort by ${c.label}`,
        dataset: { col: c.id }, onclick: () => this.sortBy(c.id) }, c.label);
      return h("div", { class: `vt-th ${c.cls || ""}`, role: "columnheader", "aria-sort": "none",
        dataset: { col: c.id } }, button);
    }));
    this.pool.forEach((row) => row.remove());
    this.pool = [];
  }

  setRows(rows) {
    this.setRowsQuietly(rows);
    this.refresh();
  }

  /** New rows, ranked by key once: equal sort values then keep that order at the cost of a number compare.
   * (Plain string order: ten times quicker than the collator at 5,000 rows, on the first render's path.) */
  setRowsQuietly(rows) {
    this.rows = rows;
    const keyed = rows.map((row) => [this.key(row), row]);
    keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    this.rank = new Map(keyed.map(([, row], i) => [row, i]));
  }

  setFilter(fn) {
    this.filter = fn;
    this.refresh();
  }

  /** Sort by a column (again: the other way), optionally with new rows; then draw. */
  sortBy(id, dir, rows) {
    if (rows) this.setRowsQuietly(rows);
    const same = this.sort && this.sort.id === id;
    this.sort = { id, dir: dir || (same ? -this.sort.dir : 1) };
    for (const th of this.head.children) {
      const on = th.dataset.col === id;
      th.setAttribute("aria-sort", on ? (this.sort.dir === 1 ? "ascending" : "descending") : "none");
    }
    this.refresh();
  }

  /** Filter and sort again, then draw. */
  refresh() {
    let view = this.filter ? this.rows.filter(this.filter) : this.rows.slice();
    if (this.sort) {
      const col = this.columns.find((c) => c.id === this.sort.id);
      if (col) {
        const dir = this.sort.dir;
        const keyed = view.map((row) => [col.value(row), this.rank.get(row), row]);
        keyed.sort((a, b) => dir * compare(a[0], b[0]) || a[1] - b[1]);
        view = keyed.map((k) => k[2]);
      }
    }
    this.view = view;
    this.spacer.style.height = `${view.length * ROW_HEIGHT}px`;
    this.count.textContent = view.length === this.rows.length ? `${view.length} nodes`
      : `${view.length} of ${this.rows.length} nodes shown`;
    this.draw();
  }

  schedule() {
    if (this.frame) return;
    const run = () => {
      cancelAnimationFrame(this.frame);
      clearTimeout(this.fallback);
      this.frame = 0;
      this.draw();
    };
    this.frame = requestAnimationFrame(run);
    // A page that gets no animation frames (a background tab, a compositor that stopped asking for frames,
    // as headless Chromium's sometimes does) still draws the rows scrolled into view.
    this.fallback = setTimeout(run, 100);
  }

  rowElement(index) {
    let row = this.pool[index];
    if (!row) {
      row = h("div", { class: "vt-row", role: "row" },
        this.columns.map((c) => h("div", { class: `vt-td ${c.cls || ""}`, role: "cell", dataset: { col: c.id } })));
      if (this.onRowClick) row.addEventListener("click", () => this.onRowClick(row.dataset.row));
      this.spacer.append(row);
      this.pool[index] = row;
    }
    return row;
  }

  /** Put the rows in view into the DOM (reusing row elements). */
  draw() {
    // Before the first layout: the top of the table, as tall as its CSS says (62vh, at least 320px).
    const top = this.measured ? Math.max(0, this.body.scrollTop - this.headHeight) : 0;
    const height = this.measured ? this.body.clientHeight : Math.max(320, window.innerHeight * 0.62);
    const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(this.view.length, Math.ceil((top + height) / ROW_HEIGHT) + OVERSCAN);
    let used = 0;
    for (let i = first; i < last; i++, used++) {
      const data = this.view[i];
      const row = this.rowElement(used);
      row.hidden = false;
      row.style.transform = `translateY(${i * ROW_HEIGHT}px)`;
      row.dataset.row = this.key(data);
      row.dataset.index = String(i);
      const cells = row.children;
      for (let c = 0; c < this.columns.length; c++) {
        const out = this.columns[c].cell(data);
        const cell = cells[c];
        cell.textContent = out.text;
        cell.className = `vt-td ${this.columns[c].cls || ""} ${out.cls || ""}`;
        if (out.title) cell.title = out.title; else cell.removeAttribute("title");
        if (out.code) cell.dataset.code = out.code; else delete cell.dataset.code;
      }
    }
    for (let i = used; i < this.pool.length; i++) this.pool[i].hidden = true;
  }
}
