// figures.js: the plotly figures of the plugin pages (histograms as ridges, overlaid lines
// or percentile bands; a tensor slice's value histogram; the dashboard's small scalar
// chart), and drawing them.
//
// Builders are pure: data in, {data, layout} out; every trace carries `meta` (run, rank,
// tag, kind and, for one step's curve, its step) so a test or a hover can tell what it is.
// plotly.js comes from the loader in plotly.js (one copy per page, loaded on first use).
// Names enter plotly only escaped (plotlyText) and through `name`, never into a hover
// template, where plotly would read them as markup or placeholders. SVG traces only: a
// browser allows few WebGL contexts per page.

import { plotlyText } from '../core/dom.js';
import { binCentres, commonRange, percentiles, pickEvenly, rebin } from './histmath.js';
import { chartColours } from '../core/theme.js';
import {
  NO_GRID,
  PLOT_CONFIG,
  axisTitle as themedTitle,
  chartLayout,
  gridColour,
  loadPlotly,
  toPlotX,
} from './plotly.js';

export const HISTOGRAM_BINS = 40; // common bins of a histogram chart
export const MAX_CURVES = 100; // steps drawn per series as ridges or lines (evenly picked)
export const PREVIEW_CURVES = 30; // ... in a dashboard preview
const PANEL_HEIGHT = 220; // px of one series' ridges when a chart stacks several
const PANEL_GAP = 34; // px between two of them, where the next one's name goes

const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const AXIS_TITLES = { step: 'step', relative: 'relative time (s)', wall: 'wall time' };
const PREVIEW_CONFIG = { displayModeBar: false, responsive: true, staticPlot: true };
const SCALAR_COLOURS = ['#12a0a5', '#5b7ff0'];

/** Draw `figure` in `div` (a preview: no toolbar, no interaction). */
export async function drawFigure(div, figure, { preview = false } = {}) {
  const Plotly = await loadPlotly();
  await Plotly.react(div, figure.data, figure.layout, preview ? PREVIEW_CONFIG : PLOT_CONFIG);
}

/** Free the figure in `div` (its SVG, listeners and data). */
export function purgeFigure(div) {
  window.Plotly?.purge(div);
}

function rgb(hex) {
  const n = Number.parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/**
 * `hex` faded towards the chart's background (`amount` > 0: white in the light theme, the
 * dark grey in the dark one) or darkened towards black (< 0), as an rgba() string.
 */
function shade(hex, amount, alpha = 1) {
  const target = amount >= 0 ? rgb(chartColours().background) : [0, 0, 0];
  const t = Math.abs(amount);
  const [r, g, b] = rgb(hex).map((c, i) => Math.round(c + (target[i] - c) * t));
  return `rgba(${r},${g},${b},${alpha})`;
}

function axisStyle(extra = {}) {
  return {
    gridcolor: gridColour(),
    zeroline: false,
    automargin: true,
    exponentformat: 'e',
    ...extra,
  };
}

function baseLayout(preview, { xaxis = {}, yaxis = {}, ...rest } = {}) {
  return {
    autosize: true,
    margin: preview ? { l: 36, r: 8, t: 6, b: 24 } : { l: 56, r: 14, t: 8, b: 38 },
    ...chartLayout({ family: FONT, size: preview ? 10 : 11 }),
    showlegend: false,
    hovermode: 'closest',
    legend: { orientation: 'h', x: 0, y: -0.2, yanchor: 'top', font: { size: 10 } },
    xaxis: axisStyle(xaxis),
    yaxis: axisStyle(yaxis),
    ...rest,
  };
}

function axisTitle(text, preview) {
  return preview ? undefined : themedTitle(text);
}

/** Where each histogram of a series lies on `axis` (plotly units: wall times are dates). */
function positions(histograms, axis) {
  const first = histograms[0]?.wall ?? 0;
  return histograms.map((h) => {
    if (axis === 'step') return h.step;
    if (axis === 'relative') return h.wall - first;
    return toPlotX('wall', h.wall);
  });
}

function meta(series, kind, step) {
  return { run: series.run, rank: series.rank, tag: series.tag, kind, step };
}

/**
 * The curves a ridge or overlay chart draws: per series at most `maxCurves` steps, each
 * re-binned onto the chart's common bins.
 */
function curves(seriesList, maxCurves) {
  const [lo, hi] = commonRange(seriesList.flatMap((s) => s.histograms));
  const out = [];
  for (const series of seriesList) {
    const picked = pickEvenly(series.histograms.length, maxCurves);
    picked.forEach((index, k) => {
      const h = series.histograms[index];
      out.push({
        series,
        index,
        h,
        counts: Array.from(rebin(h, lo, hi, HISTOGRAM_BINS)),
        age: picked.length > 1 ? k / (picked.length - 1) : 1, // 0 first ... 1 newest
      });
    });
  }
  return { lo, hi, out };
}

function peakOf(items) {
  let peak = 0;
  for (const item of items) for (const c of item.counts) peak = Math.max(peak, c);
  return peak || 1;
}

/**
 * Ridges (TensorBoard's offset view, MindInsight's front view): each step's distribution
 * as a filled curve standing on its place on the vertical axis (step, relative or wall
 * time, earliest at the top), later ones in front. Several series (runs, ranks) get a
 * chart each, stacked (as TensorBoard draws them), on one value axis: the same x range,
 * and each with its own step labels and name.
 */
export function ridgeFigure(seriesList, { axis, preview = false, maxCurves = MAX_CURVES }) {
  const { lo, hi, out } = curves(seriesList, maxCurves);
  const centres = binCentres(lo, hi, HISTOGRAM_BINS);
  const stacked = seriesList.length > 1;
  const data = [];
  const layout = baseLayout(preview, {
    xaxis: { title: axisTitle('value', preview), range: [lo, hi] },
    margin: preview ? { l: 8, r: 34, t: 6, b: 24 } : { l: 20, r: 56, t: 8, b: 38 },
  });
  const area = stacked ? seriesList.length * (PANEL_HEIGHT + PANEL_GAP) - PANEL_GAP : 0;
  if (stacked) {
    layout.margin.t = PANEL_GAP;
    layout.height = area + layout.margin.t + layout.margin.b;
    layout.annotations = [];
  }
  seriesList.forEach((series, i) => {
    const items = out.filter((item) => item.series === series);
    const yaxis = i === 0 ? 'y' : `y${i + 1}`;
    const panel = ridgePanel(series, items, { axis, preview, lo, hi, centres, maxCurves });
    for (const trace of panel.data) data.push({ ...trace, yaxis });
    const top = i * (PANEL_HEIGHT + PANEL_GAP);
    const domain = stacked ? [1 - (top + PANEL_HEIGHT) / area, 1 - top / area] : [0, 1];
    layout[i === 0 ? 'yaxis' : `yaxis${i + 1}`] = axisStyle({ ...panel.yaxis, domain });
    if (stacked) {
      layout.annotations.push({
        xref: 'paper',
        yref: 'paper',
        x: 0,
        y: domain[1],
        xanchor: 'left',
        yanchor: 'bottom',
        yshift: 4,
        showarrow: false,
        text: plotlyText(series.label),
        font: { size: 11, color: series.colour },
      });
    }
  });
  if (stacked) layout.xaxis.anchor = `y${seriesList.length}`; // the value ticks at the bottom
  return { data, layout };
}

/** One series' ridges (`items`: its curves) and its vertical axis, for ridgeFigure. */
function ridgePanel(series, items, { axis, preview, lo, hi, centres, maxCurves }) {
  const where = positions(series.histograms, axis);
  for (const item of items) item.pos = where[item.index];
  const spots = items.map((item) => item.pos);
  const span = spots.length ? Math.max(...spots) - Math.min(...spots) : 0;
  const curvesDrawn = Math.max(1, Math.min(series.histograms.length, maxCurves));
  const height = span > 0 ? (span / Math.max(1, curvesDrawn - 1)) * 2.5 : 1;
  const peak = peakOf(items);
  items.sort((a, b) => a.pos - b.pos); // the back (earliest, top) first
  const ticks = [...new Set(spots)].sort((a, b) => a - b);
  const tickvals = pickEvenly(ticks.length, preview ? 5 : 8).map((i) => ticks[i]);
  const data = items.map(({ h, counts, pos, age }) => ({
    type: 'scatter',
    mode: 'lines',
    x: [lo, ...centres, hi],
    y: [pos, ...counts.map((c) => pos - (height * c) / peak), pos],
    customdata: [0, ...counts, 0],
    fill: 'toself',
    fillcolor: shade(series.colour, 0.82 - 0.5 * age, 0.92),
    line: { color: shade(series.colour, -0.15 * age), width: preview ? 0.8 : 1 },
    hoveron: 'points',
    name: plotlyText(series.label),
    legendgroup: series.key,
    showlegend: false,
    hovertemplate:
      `%{fullData.name}<br>step ${h.step}<br>%{x:.4~g}: %{customdata:.4~g}<extra></extra>`,
    meta: meta(series, 'ridge', h.step),
  }));
  const yaxis = {
    type: axis === 'wall' ? 'date' : 'linear',
    autorange: 'reversed',
    ...(axis === 'step' ? { tickmode: 'array', tickvals } : {}), // only steps drawn
    side: 'right',
    anchor: 'x',
    gridcolor: NO_GRID,
    title: axisTitle(AXIS_TITLES[axis], preview),
  };
  return { data, yaxis };
}

/** Each step's distribution as a line, all over one another, lighter for earlier steps. */
export function overlayFigure(seriesList, { preview = false, maxCurves = MAX_CURVES } = {}) {
  const { lo, hi, out } = curves(seriesList, maxCurves);
  const centres = binCentres(lo, hi, HISTOGRAM_BINS);
  const shownInLegend = new Set();
  const data = out.map(({ series, h, counts, age }) => {
    const legend = seriesList.length > 1 && age === 1 && !shownInLegend.has(series.key);
    if (legend) shownInLegend.add(series.key);
    return {
      type: 'scatter',
      mode: 'lines',
      x: centres,
      y: counts,
      line: { color: shade(series.colour, 0.8 * (1 - age)), width: age === 1 ? 2 : 1.2 },
      name: plotlyText(series.label),
      legendgroup: series.key,
      showlegend: legend,
      hovertemplate: `%{fullData.name}<br>step ${h.step}<br>%{x:.4~g}: %{y:.4~g}<extra></extra>`,
      meta: meta(series, 'line', h.step),
    };
  });
  if (seriesList.length === 1 && out.length > 1 && !preview) {
    // the colour key: steps from light to dark, as a colour bar
    const [series] = seriesList;
    const steps = out.map((item) => item.h.step);
    data.push({
      type: 'scatter',
      mode: 'markers',
      x: [null],
      y: [null],
      hoverinfo: 'skip',
      showlegend: false,
      marker: {
        color: [Math.min(...steps), Math.max(...steps)],
        cmin: Math.min(...steps),
        cmax: Math.max(...steps),
        colorscale: [
          [0, shade(series.colour, 0.8)],
          [1, shade(series.colour, 0)],
        ],
        showscale: true,
        colorbar: { title: { text: 'step', side: 'right' }, thickness: 8, len: 0.8, x: 1.01 },
      },
      meta: meta(series, 'colour-key'),
    });
  }
  return {
    data,
    layout: baseLayout(preview, {
      showlegend: !preview && seriesList.length > 1,
      xaxis: { title: axisTitle('value', preview), range: [lo, hi] },
      yaxis: { title: axisTitle('count', preview), rangemode: 'tozero' },
    }),
  };
}

const BANDS = [
  [0, 8, 0.14],
  [1, 7, 0.22],
  [2, 6, 0.3],
  [3, 5, 0.4],
];

/**
 * TensorBoard's distribution view: per series, bands between symmetric percentiles of every
 * kept step (0-100, 7-93, 16-84, 31-69 %) and the median, along `axis`.
 */
export function distributionFigure(seriesList, { axis, preview = false }) {
  const data = [];
  const steps = new Set();
  for (const series of seriesList) {
    const rows = [];
    const pos = positions(series.histograms, axis);
    series.histograms.forEach((h, i) => {
      const values = percentiles(h);
      if (values) rows.push({ x: pos[i], step: h.step, values });
      steps.add(h.step);
    });
    const x = rows.map((row) => row.x);
    const column = (k) => rows.map((row) => row.values[k]);
    const name = plotlyText(series.label);
    for (const [low, high, alpha] of BANDS) {
      data.push(
        {
          type: 'scatter',
          mode: 'lines',
          x,
          y: column(low),
          line: { width: 0, color: series.colour },
          hoverinfo: 'skip',
          showlegend: false,
          name,
          legendgroup: series.key,
          meta: meta(series, 'band-low'),
        },
        {
          type: 'scatter',
          mode: 'lines',
          x,
          y: column(high),
          fill: 'tonexty',
          fillcolor: shade(series.colour, 0, alpha),
          line: { width: 0, color: series.colour },
          hoverinfo: 'skip',
          showlegend: false,
          name,
          legendgroup: series.key,
          meta: meta(series, 'band'),
        },
      );
    }
    data.push({
      type: 'scatter',
      mode: rows.length === 1 ? 'markers' : 'lines',
      x,
      y: column(4),
      customdata: rows.map((row) => [row.step, row.values[0], row.values[8]]),
      line: { width: 2, color: series.colour },
      marker: { color: series.colour, size: 6 },
      name,
      legendgroup: series.key,
      showlegend: seriesList.length > 1,
      hovertemplate:
        '%{fullData.name}<br>step %{customdata[0]}<br>median %{y:.4~g}' +
        '<br>min %{customdata[1]:.4~g} · max %{customdata[2]:.4~g}<extra></extra>',
      meta: meta(series, 'median'),
    });
  }
  return {
    data,
    layout: baseLayout(preview, {
      showlegend: !preview && seriesList.length > 1,
      hovermode: 'closest',
      xaxis: {
        type: axis === 'wall' ? 'date' : 'linear',
        title: axisTitle(AXIS_TITLES[axis], preview),
        // few steps: tick each one (no step 2.5)
        ...(axis === 'step' && steps.size <= 10
          ? { tickmode: 'array', tickvals: [...steps].sort((a, b) => a - b) }
          : {}),
      },
      yaxis: { title: axisTitle('value', preview) },
    }),
  };
}

/** A histogram of `mode` (offset, overlay or distribution) of `seriesList` along `axis`. */
export function histogramFigure(mode, seriesList, options) {
  if (mode === 'overlay') return overlayFigure(seriesList, options);
  if (mode === 'distribution') return distributionFigure(seriesList, options);
  return ridgeFigure(seriesList, options);
}

/** The value histogram of a tensor slice ({edges, counts} from /tensor) as bars. */
export function valueHistogramFigure(histogram, { preview = false } = {}) {
  const { edges, counts } = histogram;
  const x = counts.map((_, i) => (edges[i] + edges[i + 1]) / 2);
  const width = counts.map((_, i) => edges[i + 1] - edges[i]);
  const { accent } = chartColours();
  return {
    data: [
      {
        type: 'bar',
        x,
        y: counts,
        width: width.map((w) => (w > 0 ? w : undefined)),
        marker: { color: shade(accent, 0, 0.75), line: { color: accent, width: 0.5 } },
        customdata: counts.map((_, i) => [edges[i], edges[i + 1]]),
        hovertemplate: '[%{customdata[0]:.4~g}, %{customdata[1]:.4~g}): %{y}<extra></extra>',
        meta: { kind: 'bins' },
      },
    ],
    layout: baseLayout(preview, {
      bargap: 0.04,
      xaxis: { title: axisTitle('value', preview) },
      yaxis: { title: axisTitle('count', preview), rangemode: 'tozero' },
    }),
  };
}

/**
 * The dashboard's scalar preview: up to two tags of one rank, the second on a right-hand
 * axis (as MindInsight draws its two), from /scalars `series`.
 */
export function scalarPreviewFigure(seriesList, tags) {
  const { muted } = chartColours();
  const data = seriesList.map((series) => {
    const which = tags.indexOf(series.tag);
    return {
      type: 'scatter',
      mode: series.shown === 1 ? 'markers' : 'lines',
      x: series.step,
      y: series.value,
      yaxis: which === 1 ? 'y2' : 'y',
      name: plotlyText(series.tag),
      line: { color: SCALAR_COLOURS[which] ?? muted, width: 1.6 },
      marker: { color: SCALAR_COLOURS[which] ?? muted, size: 5 },
      meta: { run: series.run, rank: series.rank, tag: series.tag, kind: 'scalar' },
    };
  });
  const layout = baseLayout(true, {
    showlegend: true,
    legend: { orientation: 'h', x: 0, y: 1.02, yanchor: 'bottom', font: { size: 10 } },
    margin: { l: 40, r: tags.length > 1 ? 40 : 8, t: 22, b: 24 },
    xaxis: {},
    yaxis: { tickfont: { color: SCALAR_COLOURS[0] } },
  });
  if (tags.length > 1) {
    layout.yaxis2 = axisStyle({
      overlaying: 'y',
      side: 'right',
      showgrid: false,
      tickfont: { color: SCALAR_COLOURS[1] },
    });
  }
  return { data, layout };
}
