// lineage_parcoords.js: the parallel-coordinates chart of the model lineage, drawn on a
// canvas of its own, whose brushes are the table's filters.
//
// One vertical axis per column (numbers on a linear scale, or a log scale when they are
// all positive and span 100x or more; text with few distinct values as evenly spaced
// categories), one line per run. The runs that pass every filter are drawn coloured over
// a faint layer of all runs, which is drawn only when the data changes, so a brush redraws
// one layer: 10,000 lines in a few tens of milliseconds even where WebGL is software
// (plotly's parcoords needs WebGL). Dragging along an axis brushes it: the range (or the
// categories) becomes that column's filter; a click on an axis clears its brush.
// Axis names, ticks and categories are HTML text over the canvas, never markup, laid out
// so that none can overlap another: axes stand at least MIN_GAP apart (the chart scrolls
// sideways when they do not fit), a name wraps onto two lines within its share of the
// width (the whole name on hover), a number axis shows its two ends in four significant
// digits, and a category axis names as many of its values as fit, each cut to the gap.

import { el, perFrame } from '../core/dom.js';
import { SideScroll } from './sidescroll.js';

const HEIGHT = 272;
const TOP = 50; // room for the axis names (two lines) and the top ticks above the axes
const BOTTOM = 18; // room for the bottom ticks
const PAD = 44; // px left of the first axis and right of the last (more for categories)
const CATEGORY_ROOM = 96; // px right of a last axis of categories, for their names
const MIN_GAP = 64; // px between two axes at least
const MAX_NAME = 128; // px of an axis name's box at most
const LABEL_GAP = 6; // px kept free between two labels side by side
const LINE = 13; // px between two category names at least (else some are left out)
const GRAB = 14; // px either side of an axis where a drag brushes it
const MAX_CATEGORIES = 12;
const RAMP = ['#3b4cc0', '#6a8bef', '#9abbff', '#f6a385', '#e7745b', '#b40426'];

/** Whether `column` is worth an axis: numbers that vary, text with a few distinct values. */
export function axisable(column) {
  if (column.type === 'number') return Number.isFinite(column.min) && column.max > column.min;
  return column.distinct.length > 1 && column.distinct.length <= MAX_CATEGORIES;
}

function scaleOf(column) {
  if (column.type !== 'number') {
    const k = column.distinct.length;
    return { text: true, t: (rank) => (rank < 0 ? NaN : 1 - (rank + 0.5) / k) };
  }
  const { min, max } = column;
  const log = min > 0 && max / min >= 100;
  const f = log ? Math.log10 : (v) => v;
  const lo = f(min);
  const span = f(max) - lo;
  return {
    log,
    t: (v) => (span > 0 ? (f(v) - lo) / span : 0.5),
    inverse: (t) => (log ? 10 ** (lo + t * span) : lo + t * span),
  };
}

function roundTo(value) {
  return Number(value.toPrecision(6));
}

/** A tick's text: four significant digits, exponents for the very large and small. */
function tickText(value) {
  const size = Math.abs(value);
  if (size !== 0 && (size >= 1e6 || size < 1e-3)) {
    return value.toExponential(2).replace(/\.?0+e/, 'e').replace('e+', 'e');
  }
  return String(Number(value.toPrecision(4)));
}

export class ParallelCoords {
  /** `onBrush(id, filter or null, done)`: an axis was brushed (done: the drag ended). */
  constructor(onBrush) {
    this.drawFrontSoon = perFrame(() => this.#drawFront()); // brushes move per mouse event
    this.onBrush = onBrush;
    this.back = el('canvas', { class: 'lin-pc-layer' });
    this.front = el('canvas', { class: 'lin-pc-layer' });
    this.labels = el('div', { class: 'lin-pc-labels' });
    this.stage = el('div', { class: 'lin-pc-stage' }, this.back, this.front, this.labels);
    this.scroller = el(
      'div',
      { class: 'lin-pc', role: 'img', 'aria-label': 'Parallel coordinates of the runs' },
      this.stage,
    );
    this.element = new SideScroll(this.scroller, this.stage, 'lin-pc-scroll').element;
    this.axes = [];
    this.passing = new Int32Array(0);
    this.filters = {};
    this.stage.addEventListener('pointerdown', (event) => this.#startBrush(event));
    new ResizeObserver(() => this.#layout()).observe(this.scroller);
  }

  /** Draw `rows` (Int32Array) of `table` on `axes` (columns), coloured by `colour`. */
  setData(table, axes, rows, colour) {
    this.table = table;
    this.axes = axes.map((column) => ({ column, scale: scaleOf(column) }));
    this.rows = rows;
    this.colour = colour && colour.type === 'number' && Number.isFinite(colour.min) ? colour : null;
    this.#layout();
  }

  /**
   * Colour the `passing` rows (Int32Array); `filters` gives the brushes drawn. Drawn in
   * the next frame (several calls in one frame draw once), so the table updates first.
   */
  setFilters(filters, passing) {
    this.filters = filters;
    this.passing = passing;
    this.drawFrontSoon();
  }

  #layout() {
    const shown = this.scroller.clientWidth;
    if (!shown || !this.table) return;
    const n = this.axes.length;
    const right = this.axes[n - 1]?.scale.text ? CATEGORY_ROOM : PAD;
    const width = Math.max(shown, PAD + right + (n - 1) * MIN_GAP); // else it scrolls
    const ratio = window.devicePixelRatio || 1;
    this.stage.style.width = `${width}px`;
    this.stage.style.height = `${HEIGHT}px`;
    for (const canvas of [this.back, this.front]) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(HEIGHT * ratio);
      canvas.style.width = `${width}px`;
      canvas.style.height = `${HEIGHT}px`;
      canvas.getContext('2d').setTransform(ratio, 0, 0, ratio, 0, 0);
    }
    this.width = width;
    const span = width - PAD - right;
    this.axes.forEach((axis, i) => {
      axis.x = n === 1 ? width / 2 : PAD + (i * span) / (n - 1);
    });
    this.axes.forEach((axis, i) => {
      const before = i === 0 ? axis.x : (axis.x - this.axes[i - 1].x) / 2;
      const after = i === n - 1 ? width - axis.x : (this.axes[i + 1].x - axis.x) / 2;
      axis.room = 2 * Math.min(before, after) - LABEL_GAP; // a centred label's width
      axis.beside = (i === n - 1 ? width : this.axes[i + 1].x) - axis.x - 2 * LABEL_GAP;
    });
    this.#project();
    this.#drawLabels();
    this.#drawBack();
    this.#drawFront();
  }

  /** Each row's y on each axis (NaN: no value), computed once per layout. */
  #project() {
    const rows = this.table.runs.length;
    const n = this.axes.length;
    const ys = new Float32Array(rows * n);
    const h = HEIGHT - TOP - BOTTOM;
    this.axes.forEach((axis, a) => {
      const { column, scale } = axis;
      const keys = column.type === 'number' ? column.values : column.rank;
      for (let row = 0; row < rows; row += 1) {
        ys[row * n + a] = TOP + (1 - scale.t(keys[row])) * h;
      }
    });
    this.ys = ys;
  }

  /** The axis names, end ticks and category names (see the top of this file). */
  #drawLabels() {
    const nodes = [];
    const h = HEIGHT - TOP - BOTTOM;
    const centred = (x, width) => `left:${x - width / 2}px;width:${width}px`;
    for (const axis of this.axes) {
      const { column, scale, x } = axis;
      const nameWidth = Math.min(MAX_NAME, axis.room);
      nodes.push(
        el('span', {
          class: `lin-pc-name kind-${column.kind}`,
          style: centred(x, nameWidth),
          text: column.label,
          title: `${column.label}${scale.log ? ' (log scale)' : ''}: drag along the axis to filter`,
          dataset: { col: column.id },
        }),
      );
      if (scale.text) {
        const k = column.distinct.length;
        const every = Math.ceil(LINE / (h / k)); // name every value, or every 2nd, 3rd ...
        column.distinct.forEach((value, rank) => {
          if (rank % every) return;
          const y = TOP + ((rank + 0.5) / k) * h;
          nodes.push(
            el('span', {
              class: 'lin-pc-tick lin-pc-category',
              style: `left:${x + LABEL_GAP}px;top:${y}px;max-width:${axis.beside}px`,
              text: value,
              title: value,
              dataset: { col: column.id },
            }),
          );
        });
      } else {
        for (const [value, top, end] of [
          [column.max, TOP - 8, 'max'],
          [column.min, HEIGHT - BOTTOM + 8, 'min'],
        ]) {
          nodes.push(
            el('span', {
              class: 'lin-pc-tick lin-pc-end',
              style: `${centred(x, axis.room)};top:${top}px`,
              text: tickText(value),
              title: `${column.label} ${end}: ${value}`,
              dataset: { col: column.id, end },
            }),
          );
        }
      }
    }
    this.labels.replaceChildren(...nodes);
  }

  #path(ctx, rows) {
    const n = this.axes.length;
    const ys = this.ys;
    const xs = this.axes.map((axis) => axis.x);
    for (const row of rows) {
      let pen = false;
      const base = row * n;
      for (let a = 0; a < n; a += 1) {
        const y = ys[base + a];
        if (Number.isNaN(y)) {
          pen = false;
        } else if (pen) ctx.lineTo(xs[a], y);
        else {
          ctx.moveTo(xs[a], y);
          pen = true;
        }
      }
    }
  }

  #drawBack() {
    const ctx = this.back.getContext('2d');
    ctx.clearRect(0, 0, this.width, HEIGHT);
    ctx.strokeStyle = 'rgba(120, 130, 145, 0.18)';
    ctx.lineWidth = 1;
    ctx.beginPath();
    this.#path(ctx, this.rows);
    ctx.stroke();
    ctx.strokeStyle = '#9aa0a6';
    ctx.beginPath();
    for (const { x } of this.axes) {
      ctx.moveTo(x, TOP);
      ctx.lineTo(x, HEIGHT - BOTTOM);
    }
    ctx.stroke();
  }

  #drawFront() {
    if (!this.width || !this.ys) return;
    const ctx = this.front.getContext('2d');
    ctx.clearRect(0, 0, this.width, HEIGHT);
    ctx.lineWidth = this.passing.length > 2000 ? 1 : 1.6;
    const alpha = this.passing.length > 2000 ? 0.35 : 0.85;
    ctx.globalAlpha = alpha;
    if (!this.colour) {
      ctx.strokeStyle = '#1a73e8';
      ctx.beginPath();
      this.#path(ctx, this.passing);
      ctx.stroke();
    } else {
      const buckets = RAMP.map(() => []);
      const { values, min, max } = this.colour;
      const span = max - min || 1;
      for (const row of this.passing) {
        const v = values[row];
        const b = Number.isNaN(v)
          ? 0
          : Math.min(RAMP.length - 1, Math.floor(((v - min) / span) * RAMP.length));
        buckets[b].push(row);
      }
      buckets.forEach((rows, b) => {
        if (!rows.length) return;
        ctx.strokeStyle = RAMP[b];
        ctx.beginPath();
        this.#path(ctx, rows);
        ctx.stroke();
      });
    }
    ctx.globalAlpha = 1;
    this.#drawBrushes(ctx);
  }

  #drawBrushes(ctx) {
    ctx.fillStyle = 'rgba(26, 115, 232, 0.18)';
    ctx.strokeStyle = '#1a73e8';
    for (const axis of this.axes) {
      const span = this.#brushPixels(axis, this.filters[axis.column.id]);
      if (!span) continue;
      ctx.fillRect(axis.x - 7, span[0], 14, Math.max(2, span[1] - span[0]));
      ctx.strokeRect(axis.x - 7, span[0], 14, Math.max(2, span[1] - span[0]));
    }
  }

  /** The pixel span [top, bottom] of an axis' filter, or null (none, or not a range). */
  #brushPixels(axis, filter) {
    if (!filter) return null;
    const h = HEIGHT - TOP - BOTTOM;
    const y = (t) => TOP + (1 - Math.min(1, Math.max(0, t))) * h;
    if (axis.scale.text) {
      if (!filter.in) return null;
      const ranks = filter.in
        .map((value) => axis.column.distinct.indexOf(value))
        .filter((rank) => rank >= 0);
      if (!ranks.length) return null;
      const ys = ranks.map((rank) => y(axis.scale.t(rank)));
      return [Math.min(...ys) - 4, Math.max(...ys) + 4];
    }
    if (filter.lo === undefined && filter.hi === undefined) return null;
    const { column, scale } = axis;
    const hi = filter.hi ?? column.max;
    const lo = filter.lo ?? column.min;
    return [y(scale.t(Math.min(hi, column.max))), y(scale.t(Math.max(lo, column.min)))];
  }

  #startBrush(event) {
    const box = this.stage.getBoundingClientRect(); // where the chart is scrolled to
    const x = event.clientX - box.left;
    const axis = this.axes.find((a) => Math.abs(a.x - x) <= GRAB);
    if (!axis || event.button !== 0) return;
    event.preventDefault();
    this.stage.setPointerCapture?.(event.pointerId);
    const y0 = event.clientY - box.top;
    const brushAt = (e) => {
      const y1 = e.clientY - box.top;
      if (Math.abs(y1 - y0) < 3) return null;
      return this.#filterOf(axis, Math.min(y0, y1), Math.max(y0, y1));
    };
    const move = (e) => this.onBrush(axis.column.id, brushAt(e), false);
    const up = (e) => {
      this.stage.removeEventListener('pointermove', move);
      this.stage.removeEventListener('pointerup', up);
      this.stage.removeEventListener('pointercancel', up);
      this.onBrush(axis.column.id, brushAt(e), true);
    };
    this.stage.addEventListener('pointermove', move);
    this.stage.addEventListener('pointerup', up);
    this.stage.addEventListener('pointercancel', up);
  }

  /** The filter a brush from pixel `top` to `bottom` on `axis` stands for. */
  #filterOf(axis, top, bottom) {
    const h = HEIGHT - TOP - BOTTOM;
    const t = (y) => 1 - (y - TOP) / h;
    const { column, scale } = axis;
    if (scale.text) {
      const picked = column.distinct.filter((_, rank) => {
        const y = TOP + (1 - scale.t(rank)) * h;
        return y >= top && y <= bottom;
      });
      return picked.length ? { in: picked } : null;
    }
    const hi = scale.inverse(Math.min(1, t(top)));
    const lo = scale.inverse(Math.max(0, t(bottom)));
    // widened to 6 significant digits so the brushed ends stay inside
    return { lo: roundDown(lo), hi: roundUp(hi) };
  }
}

function roundDown(value) {
  const r = roundTo(value);
  return r > value ? roundTo(value - Math.abs(value) * 1e-6) : r;
}

function roundUp(value) {
  const r = roundTo(value);
  return r < value ? roundTo(value + Math.abs(value) * 1e-6) : r;
}
