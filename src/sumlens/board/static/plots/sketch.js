// sketch.js: the training dashboard's previews as plain SVG, without plotly.
//
// A preview is a picture that links to its full view: it needs no hover, zoom or toolbar,
// and plotly.js takes most of a second to start in a fresh page (measured in
// benchmarks/bench_board.py, table (c)), longer than the rest of the dashboard. So the
// previews' figures (built by figures.js, as for the full views) are drawn here, from the
// part of plotly's figure format they use: `scatter` traces as lines or markers, a
// `toself` fill, a second y axis on the right, a reversed y axis, fixed x ranges, y tick
// values and a legend of names. Text goes in as text nodes, never as markup. Its text and
// grid take the theme's colours through CSS (style.css's --chart-text, --chart-grid), so a
// change of theme needs no redraw.

const SVG = 'http://www.w3.org/2000/svg';
const FONT_SIZE = 10;
// SVG's attributes take no var(): the theme's colours go into style attributes, and a trace
// without a colour is drawn in currentColor, the text's.
const TEXT = 'var(--chart-text)';
const GRID = 'var(--chart-grid)';
const FALLBACK = { width: 320, height: 220 }; // a div not laid out yet
const TICKS = 5;

const resized = new ResizeObserver((entries) => {
  for (const entry of entries) {
    const figure = entry.target.sketch;
    if (figure && entry.contentRect.width > 0) render(entry.target, figure);
  }
});

/** Draw `figure` (plotly's {data, layout}) in `div` as a static SVG; redrawn on resize. */
export function drawSketch(div, figure) {
  div.sketch = figure;
  render(div, figure);
  resized.observe(div);
}

/** Forget the sketch in `div` (its SVG and its resize watch). */
export function clearSketch(div) {
  resized.unobserve(div);
  div.sketch = null;
  div.replaceChildren();
}

function node(tag, attrs = {}, text = null) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs)) element.setAttribute(name, String(value));
  if (text !== null) element.textContent = text;
  return element;
}

/** Ticks at 1, 2 or 5 times a power of ten within [lo, hi], about `count` of them. */
export function niceTicks(lo, hi, count) {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const ticks = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + step * 1e-9; t += step) {
    ticks.push(Math.abs(t) < step * 1e-9 ? 0 : t);
  }
  return ticks;
}

function label(value) {
  if (value === 0) return '0';
  const size = Math.abs(value);
  if (size >= 1e5 || size < 1e-3) return value.toExponential(1).replace('e+', 'e');
  return String(Number(value.toPrecision(4)));
}

function extent(values, given) {
  if (Array.isArray(given) && given.length === 2) return given.map(Number);
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (Number.isFinite(v)) {
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
  }
  if (lo === Infinity) return [0, 1];
  if (lo === hi) return [lo - (Math.abs(lo) || 1) / 2, hi + (Math.abs(hi) || 1) / 2];
  const pad = (hi - lo) * 0.04;
  return [lo - pad, hi + pad];
}

function numbers(list) {
  return Array.from(list ?? [], (v) => (v === null ? Number.NaN : Number(v)));
}

function render(div, { data, layout }) {
  const width = div.clientWidth || FALLBACK.width;
  const height = div.clientHeight || FALLBACK.height;
  const margin = { l: 36, r: 8, t: 6, b: 24, ...(layout.margin ?? {}) };
  const inner = {
    w: Math.max(1, width - margin.l - margin.r),
    h: Math.max(1, height - margin.t - margin.b),
  };
  const traces = data.map((trace) => ({ trace, x: numbers(trace.x), y: numbers(trace.y) }));
  const xRange = extent(traces.flatMap((t) => t.x), layout.xaxis?.range);
  const axes = {};
  for (const name of ['y', 'y2']) {
    const spec = layout[name === 'y' ? 'yaxis' : 'yaxis2'] ?? {};
    const mine = traces.filter((t) => (t.trace.yaxis ?? 'y') === name);
    if (!mine.length) continue;
    axes[name] = { spec, range: extent(mine.flatMap((t) => t.y), spec.range) };
  }
  const px = (x) => margin.l + ((x - xRange[0]) / (xRange[1] - xRange[0])) * inner.w;
  const pyOf = ({ spec, range }) => {
    const reversed = spec.autorange === 'reversed';
    return (y) => {
      const t = (y - range[0]) / (range[1] - range[0]);
      return margin.t + (reversed ? t : 1 - t) * inner.h;
    };
  };
  const svg = node('svg', {
    class: 'sketch',
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    'font-size': FONT_SIZE,
    'font-family': 'system-ui, sans-serif',
    style: `fill: ${TEXT}; color: ${TEXT}`,
  });
  for (const [name, axis] of Object.entries(axes)) {
    const py = pyOf(axis);
    const right = name === 'y2' || axis.spec.side === 'right';
    const ticks = axis.spec.tickvals ?? niceTicks(axis.range[0], axis.range[1], TICKS);
    const colour = axis.spec.tickfont?.color;
    for (const tick of ticks) {
      const y = py(Number(tick));
      if (y < margin.t - 0.5 || y > margin.t + inner.h + 0.5) continue;
      if (name === 'y' && axis.spec.gridcolor !== 'rgba(0,0,0,0)') {
        const grid = { x1: margin.l, x2: margin.l + inner.w, y1: y, y2: y };
        grid.style = `stroke: ${GRID}`;
        svg.append(node('line', grid));
      }
      const x = right ? margin.l + inner.w + 4 : margin.l - 4;
      const anchor = right ? 'start' : 'end';
      const at = { x, y: y + 3, 'text-anchor': anchor, ...(colour && { fill: colour }) };
      svg.append(node('text', at, label(Number(tick))));
    }
  }
  for (const tick of niceTicks(xRange[0], xRange[1], TICKS)) {
    const x = px(tick);
    const at = { x, y: height - margin.b + 13, 'text-anchor': 'middle' };
    svg.append(node('text', at, label(tick)));
  }
  const plot = node('g');
  svg.append(plot);
  for (const { trace, x, y } of traces) {
    const axis = axes[trace.yaxis ?? 'y'];
    if (!axis) continue;
    const py = pyOf(axis);
    const points = [];
    for (let i = 0; i < x.length; i += 1) {
      if (Number.isFinite(x[i]) && Number.isFinite(y[i])) points.push([px(x[i]), py(y[i])]);
    }
    const colour = trace.line?.color ?? trace.marker?.color ?? 'currentColor';
    if ((trace.mode ?? 'lines').includes('lines') && points.length > 1) {
      const path = points.map(([a, b], i) => `${i ? 'L' : 'M'}${a.toFixed(1)},${b.toFixed(1)}`);
      const filled = trace.fill === 'toself';
      plot.append(
        node('path', {
          d: path.join('') + (filled ? 'Z' : ''),
          fill: filled ? (trace.fillcolor ?? colour) : 'none',
          stroke: colour,
          'stroke-width': trace.line?.width ?? 1.5,
          'stroke-linejoin': 'round',
        }),
      );
    } else {
      for (const [a, b] of points) {
        plot.append(node('circle', { cx: a, cy: b, r: 2.5, fill: colour }));
      }
    }
  }
  if (layout.showlegend) {
    let x = margin.l;
    for (const { trace } of traces) {
      const colour = trace.line?.color ?? 'currentColor';
      const text = String(trace.meta?.tag ?? trace.name ?? '');
      const swatch = { x1: x, x2: x + 14, y1: 9, y2: 9, stroke: colour, 'stroke-width': 2 };
      svg.append(node('line', swatch), node('text', { x: x + 18, y: 12 }, text));
      x += 30 + Math.min(text.length, 40) * 6;
    }
  }
  div.replaceChildren(svg);
}
