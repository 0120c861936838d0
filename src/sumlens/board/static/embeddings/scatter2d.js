// scatter2d.js: the Embeddings view's 2-D scatter, drawn on a canvas of its own.
//
// plotly.js takes over a second to start in a fresh page, more than the rest of opening
// 100,000 points (benchmarks/bench_embedding_view.py), so the 2-D view never loads it: a
// square per point (the fill style set once per colour), the search's matches ringed on
// top, axes PC1 and PC2 with tick values, and a colour bar for a number column. The wheel
// zooms around the cursor, a drag pans, a double-click resets. The point nearest the
// pointer is looked up in a grid of screen cells (built on the first hover after each
// drawing) and its label shown in a tooltip as text. With thumbnails (a sprite image
// tiling one per tensors row), each point in view is its thumbnail, THUMB px on its longer
// side and framed in its colour, as long as at most THUMB_LIMIT points are in view (more
// would take a frame longer than a drag allows: zooming in shows them).

import { el, perFrame } from '../core/dom.js';
import { chartColours, onThemeChange } from '../core/theme.js';
import { niceTicks } from '../plots/sketch.js';
import { MATCH, VIRIDIS_GRADIENT } from './colouring.js';

const MARGIN = { left: 56, right: 12, top: 10, bottom: 38 };
const BAR_ROOM = 70; // the right margin beside a colour bar
const SIZE = 3; // a point's square, CSS px
const RING = 4.5; // a match's ring radius
const FONT = '10px system-ui, sans-serif';
const TICKS = 6;
const PAD = 0.04; // share of the points' extent left around them
const CELL = 16; // hover grid cell, CSS px
const REACH = 12; // farthest a hovered point may be from the pointer, CSS px
const MIN_SPAN = 1e-6; // the narrowest view, a share of the whole
const THUMB = 24; // a thumbnail's longer side, CSS px
const THUMB_LIMIT = 20000; // points in view up to which thumbnails are drawn

/**
 * Indices 0..keys.length-1 grouped by key (a counting sort; a key of -1 is left out):
 * group g is `members` from `starts[g]` to `starts[g + 1]`.
 */
function groupBy(keys, groups) {
  const starts = new Int32Array(groups + 1);
  for (const key of keys) if (key >= 0) starts[key + 1] += 1;
  for (let g = 1; g <= groups; g += 1) starts[g] += starts[g - 1];
  const next = starts.slice(0, -1);
  const members = new Int32Array(starts[groups]);
  keys.forEach((key, i) => {
    if (key >= 0) members[next[key]++] = i;
  });
  return { starts, members };
}

/** A number as a tick or colour bar shows it: four significant digits. */
function numberText(value) {
  return String(Number(value.toPrecision(4)));
}

/** The extent of `values`, padded. */
function padded(values) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  const pad = (hi - lo) * PAD || 1;
  return [lo - pad, hi + pad];
}

export class Scatter2D {
  constructor() {
    this.canvas = el('canvas', { class: 'scatter2d-canvas' });
    this.bar = el('div', { class: 'scatter2d-bar', hidden: true });
    this.tip = el('div', { class: 'scatter2d-tip', role: 'tooltip', hidden: true });
    this.element = el('div', { class: 'plot embedding-plot scatter2d' },
      this.canvas, this.bar, this.tip);
    this.element.scatter = this; // the browser tests find a point's position through it
    this.renderSoon = perFrame(() => this.#render());
    this.data = null;
    this.drag = null;
    this.canvas.addEventListener('wheel', (event) => this.#zoom(event), { passive: false });
    this.canvas.addEventListener('pointerdown', (event) => this.#startDrag(event));
    this.canvas.addEventListener('pointermove', (event) => this.#move(event));
    this.canvas.addEventListener('pointerup', () => { this.drag = null; });
    this.canvas.addEventListener('pointerleave', () => { this.tip.hidden = true; });
    this.canvas.addEventListener('dblclick', () => {
      this.view = { ...this.home };
      this.renderSoon();
    });
    new ResizeObserver(() => this.#layout()).observe(this.element);
    const untheme = onThemeChange(() => {
      if (this.element.isConnected) this.renderSoon(); // the axes take the theme's colours
      else if (this.data) untheme(); // drawn once and gone: its card was dropped
    });
  }

  /**
   * Draw point i at (x[i], y[i]) in colours[index[i]], with labels[i] on hover; `matches`
   * (point indices) ringed; `scale` ({name, min, max} or null) a Viridis colour bar;
   * `thumbnails` ({image, width, height, perRow, count, rows}: point i's thumbnail is
   * number rows[i] of the image, row by row) or null. The zoom is kept while x and y are
   * the same arrays.
   */
  setData({ x, y, index, colours, labels, matches, scale, thumbnails = null }) {
    if (x !== this.data?.x || y !== this.data?.y) {
      const [x0, x1] = padded(x);
      const [y0, y1] = padded(y);
      this.home = { x0, x1, y0, y1 };
      this.view = { ...this.home };
    }
    this.data = { x, y, colours, labels, matches, thumbnails,
      byColour: groupBy(index, colours.length) };
    this.#showBar(scale);
    this.tip.hidden = true;
    this.#layout();
  }

  /** Where point `i` is drawn, in the viewport's coordinates. */
  pointAt(i) {
    const box = this.canvas.getBoundingClientRect();
    return { x: box.left + this.#sx(this.data.x[i]), y: box.top + this.#sy(this.data.y[i]) };
  }

  #showBar(scale) {
    this.bar.hidden = !scale;
    if (!scale) return;
    this.bar.replaceChildren(
      el('span', { class: 'scatter2d-bar-name', title: scale.name, text: scale.name }),
      el('span', { text: numberText(scale.max) }),
      el('div', { class: 'scatter2d-ramp', style: `background: ${VIRIDIS_GRADIENT}` }),
      el('span', { text: numberText(scale.min) }),
    );
  }

  /** Size the canvas to its box (sharp at the screen's pixel ratio) and draw. */
  #layout() {
    const width = this.element.clientWidth;
    const height = this.element.clientHeight;
    if (!width || !height || !this.data) return;
    const ratio = window.devicePixelRatio || 1;
    this.canvas.width = Math.round(width * ratio);
    this.canvas.height = Math.round(height * ratio);
    this.ratio = ratio;
    const right = width - (this.bar.hidden ? MARGIN.right : BAR_ROOM);
    this.area = { left: MARGIN.left, top: MARGIN.top, right, bottom: height - MARGIN.bottom };
    this.#render();
  }

  #sx(x) {
    const { area, view } = this;
    return area.left + ((x - view.x0) / (view.x1 - view.x0)) * (area.right - area.left);
  }

  #sy(y) {
    const { area, view } = this;
    return area.bottom - ((y - view.y0) / (view.y1 - view.y0)) * (area.bottom - area.top);
  }

  /** Whether (px, py), in CSS px, lies in the plotting area. */
  #inside(px, py) {
    const { area } = this;
    return px >= area.left && px <= area.right && py >= area.top && py <= area.bottom;
  }

  /** Draw the axes, the points by colour, the matches' rings; the hover grid is stale. */
  #render() {
    if (!this.area) return;
    const { area, data } = this;
    const ctx = this.canvas.getContext('2d');
    ctx.setTransform(this.ratio, 0, 0, this.ratio, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    this.#drawAxes(ctx);
    const n = data.x.length;
    const sx = new Float32Array(n);
    const sy = new Float32Array(n);
    for (let i = 0; i < n; i += 1) {
      sx[i] = this.#sx(data.x[i]);
      sy[i] = this.#sy(data.y[i]);
    }
    ctx.save();
    ctx.beginPath();
    ctx.rect(area.left, area.top, area.right - area.left, area.bottom - area.top);
    ctx.clip();
    let inView = 0;
    for (let i = 0; i < n; i += 1) if (this.#inside(sx[i], sy[i])) inView += 1;
    const thumbnails = data.thumbnails && inView <= THUMB_LIMIT ? data.thumbnails : null;
    if (thumbnails) this.#drawThumbnails(ctx, sx, sy, thumbnails);
    else this.#drawSquares(ctx, sx, sy);
    this.element.dataset.thumbnails = thumbnails ? 'drawn' : data.thumbnails ? 'too many' : 'none';
    ctx.globalAlpha = 1;
    ctx.strokeStyle = MATCH;
    ctx.lineWidth = 2;
    ctx.beginPath();
    for (const i of data.matches) {
      ctx.moveTo(sx[i] + RING, sy[i]);
      ctx.arc(sx[i], sy[i], RING, 0, 2 * Math.PI);
    }
    ctx.stroke();
    ctx.restore();
    this.screen = { sx, sy };
    this.grid = null; // built on the next hover
  }

  /** Each point in the plotting area as a square of its colour. */
  #drawSquares(ctx, sx, sy) {
    const { data } = this;
    ctx.globalAlpha = 0.8;
    const half = SIZE / 2;
    const { starts, members } = data.byColour;
    data.colours.forEach((colour, c) => {
      ctx.fillStyle = colour;
      for (let k = starts[c]; k < starts[c + 1]; k += 1) {
        const i = members[k];
        if (this.#inside(sx[i], sy[i])) ctx.fillRect(sx[i] - half, sy[i] - half, SIZE, SIZE);
      }
    });
  }

  /** Each point in the plotting area as its thumbnail framed in its colour (a square where
   * the sprite has no thumbnail for its row). */
  #drawThumbnails(ctx, sx, sy, { image, width, height, perRow, count, rows }) {
    const { data } = this;
    const scale = THUMB / Math.max(width, height);
    const [w, h] = [width * scale, height * scale];
    const { starts, members } = data.byColour;
    ctx.globalAlpha = 1;
    ctx.lineWidth = 1;
    data.colours.forEach((colour, c) => {
      ctx.fillStyle = colour;
      ctx.strokeStyle = colour;
      for (let k = starts[c]; k < starts[c + 1]; k += 1) {
        const i = members[k];
        if (!this.#inside(sx[i], sy[i])) continue;
        const at = rows[i];
        if (at >= count) {
          ctx.fillRect(sx[i] - SIZE / 2, sy[i] - SIZE / 2, SIZE, SIZE);
          continue;
        }
        const [left, top] = [sx[i] - w / 2, sy[i] - h / 2];
        ctx.drawImage(image, (at % perRow) * width, Math.floor(at / perRow) * height,
          width, height, left, top, w, h);
        ctx.strokeRect(left - 0.5, top - 0.5, w + 1, h + 1);
      }
    });
  }

  /** The frame, grid lines, tick values and the axes' names PC1 and PC2. */
  #drawAxes(ctx) {
    const { area, view } = this;
    const colours = chartColours();
    ctx.font = FONT;
    ctx.fillStyle = colours.text;
    ctx.strokeStyle = colours.grid;
    ctx.lineWidth = 1;
    ctx.beginPath();
    ctx.textAlign = 'center';
    ctx.textBaseline = 'top';
    for (const t of niceTicks(view.x0, view.x1, TICKS)) {
      const x = Math.round(this.#sx(t)) + 0.5;
      ctx.moveTo(x, area.top);
      ctx.lineTo(x, area.bottom);
      ctx.fillText(numberText(t), x, area.bottom + 4);
    }
    ctx.textAlign = 'right';
    ctx.textBaseline = 'middle';
    for (const t of niceTicks(view.y0, view.y1, TICKS)) {
      const y = Math.round(this.#sy(t)) + 0.5;
      ctx.moveTo(area.left, y);
      ctx.lineTo(area.right, y);
      ctx.fillText(numberText(t), area.left - 4, y);
    }
    ctx.stroke();
    ctx.strokeStyle = colours.frame;
    ctx.strokeRect(area.left + 0.5, area.top + 0.5, area.right - area.left, area.bottom - area.top);
    ctx.textAlign = 'center';
    ctx.textBaseline = 'bottom';
    ctx.fillText('PC1', (area.left + area.right) / 2, this.element.clientHeight - 4);
    ctx.save();
    ctx.translate(12, (area.top + area.bottom) / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textBaseline = 'middle';
    ctx.fillText('PC2', 0, 0);
    ctx.restore();
  }

  /** The drawn points by screen cell of CELL px: `members` from `starts[cell]`. */
  #index() {
    const { sx, sy } = this.screen;
    const { area } = this;
    const cols = Math.ceil(area.right / CELL);
    const rows = Math.ceil(area.bottom / CELL);
    const cellOf = new Int32Array(sx.length).fill(-1);
    for (let i = 0; i < sx.length; i += 1) {
      if (!this.#inside(sx[i], sy[i])) continue;
      cellOf[i] = Math.floor(sx[i] / CELL) + Math.floor(sy[i] / CELL) * cols;
    }
    return { cols, rows, ...groupBy(cellOf, cols * rows) };
  }

  /** The drawn point nearest (px, py) within REACH px, or -1. */
  #nearest(px, py) {
    this.grid ??= this.#index();
    const { cols, rows, starts, members } = this.grid;
    const { sx, sy } = this.screen;
    let best = -1;
    let bestDistance = REACH * REACH;
    const cell = (v, last) => Math.min(last, Math.max(0, Math.floor(v / CELL)));
    const [c0, c1] = [cell(px - REACH, cols - 1), cell(px + REACH, cols - 1)];
    const [r0, r1] = [cell(py - REACH, rows - 1), cell(py + REACH, rows - 1)];
    for (let r = r0; r <= r1; r += 1) {
      for (let c = c0; c <= c1; c += 1) {
        const g = c + r * cols;
        for (let k = starts[g]; k < starts[g + 1]; k += 1) {
          const i = members[k];
          const distance = (sx[i] - px) ** 2 + (sy[i] - py) ** 2;
          if (distance < bestDistance) [best, bestDistance] = [i, distance];
        }
      }
    }
    return best;
  }

  #move(event) {
    if (this.drag) {
      const { area, drag } = this;
      const v = drag.view;
      const dx = ((event.clientX - drag.x) / (area.right - area.left)) * (v.x1 - v.x0);
      const dy = ((event.clientY - drag.y) / (area.bottom - area.top)) * (v.y1 - v.y0);
      this.view = { x0: v.x0 - dx, x1: v.x1 - dx, y0: v.y0 + dy, y1: v.y1 + dy };
      this.renderSoon();
      return;
    }
    if (!this.screen) return;
    const i = this.#nearest(event.offsetX, event.offsetY);
    this.tip.hidden = i < 0;
    if (i < 0) return;
    this.tip.textContent = this.data.labels[i];
    const { sx, sy } = this.screen;
    const left = sx[i] + 10;
    const fits = left + this.tip.offsetWidth <= this.element.clientWidth;
    this.tip.style.left = `${fits ? left : sx[i] - 10 - this.tip.offsetWidth}px`;
    this.tip.style.top = `${Math.max(0, sy[i] - this.tip.offsetHeight - 6)}px`;
  }

  #startDrag(event) {
    if (event.button !== 0 || !this.area) return;
    this.drag = { x: event.clientX, y: event.clientY, view: { ...this.view } };
    this.canvas.setPointerCapture(event.pointerId);
    this.tip.hidden = true;
  }

  /** Zoom in or out around the cursor, by the wheel's turn. */
  #zoom(event) {
    if (!this.area) return;
    event.preventDefault();
    const { area, view } = this;
    const turn = event.deltaMode ? event.deltaY * 16 : event.deltaY; // lines as ~16 px
    const factor = Math.exp(turn * 0.002);
    if ((view.x1 - view.x0) * factor < (this.home.x1 - this.home.x0) * MIN_SPAN) return;
    const fx = (event.offsetX - area.left) / (area.right - area.left);
    const fy = (area.bottom - event.offsetY) / (area.bottom - area.top);
    const x = view.x0 + fx * (view.x1 - view.x0);
    const y = view.y0 + fy * (view.y1 - view.y0);
    this.view = {
      x0: x - (x - view.x0) * factor, x1: x + (view.x1 - x) * factor,
      y0: y - (y - view.y0) * factor, y1: y + (view.y1 - y) * factor,
    };
    this.renderSoon();
  }
}
