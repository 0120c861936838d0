// landscapeplots.js: the plotly figures of one loss landscape: the 3-D surface and the 2-D
// contour, each with the training path (a point per epoch or step of the interval, labelled)
// and the convergence point.
//
// Builders are pure: a /landscape answer in, {data, layout} out. Every trace carries `meta`
// (run, tag, kind: surface, contour, path, convergence) so a test can tell what it draws.
// Strings from the files (the unit, the decomposition) reach plotly only through
// plotlyText, and never through a hover template, where plotly reads placeholders.

import { plotlyText } from '../core/dom.js';
import { chartColours } from '../core/theme.js';
import { chartLayout, gridColour } from '../plots/plotly.js';

const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const COLOURS = 'Viridis';
const PATH = '#e8710a';
const CONVERGENCE = '#d93025';
const MAX_LABELS = 12; // path points labelled on the chart (evenly picked; hover names every one)
export const DEFAULT_EYE = [1.6, 1.6, 0.9]; // a little further out and lower than plotly's

/** "epoch 3", "step 40" or "3": an interval entry in the landscape's unit. */
export function entryLabel(unit, entry) {
  return unit ? `${unit} ${entry}` : String(entry);
}

/** The name of interval `entries` ([1, 2, 3]) in `unit`: "epochs 1–3". */
export function intervalLabel(unit, entries) {
  const first = entries[0];
  const last = entries[entries.length - 1];
  const span = first === last ? String(first) : `${first}–${last}`;
  return unit ? `${unit}s ${span}` : span;
}

/** The titles of the grid's axes: "PCA direction 1", "PCA direction 2". */
function axisTitles(landscape) {
  const name = landscape.metadata.decomposition || 'direction';
  const base = name === 'direction' ? name : `${name} direction`;
  return [1, 2].map((n) => plotlyText(`${base} ${n}`));
}

/** Per path point: its label on the chart ('' when thinned out) and its hover text (markup). */
function pathLabels(landscape) {
  const { path, metadata } = landscape;
  const count = path.intervals.length;
  const stride = Math.max(1, Math.ceil(count / MAX_LABELS));
  const text = [];
  const hover = [];
  path.intervals.forEach((entry, i) => {
    const label = entryLabel(metadata.unit, entry);
    const shown = i % stride === 0 || i === count - 1;
    text.push(shown ? plotlyText(label) : '');
    const step = path.steps && metadata.unit !== 'step' ? ` · step ${path.steps[i]}` : '';
    hover.push(`${plotlyText(`${label}${step}`)}<br>loss ${formatLoss(path.z[i])}`);
  });
  return { text, hover };
}

function meta(landscape, kind) {
  return { run: landscape.run, tag: landscape.tag, kind };
}

function title(text) {
  return { text, font: { size: 11, color: chartColours().muted } };
}

function pathTraces(landscape, threeD) {
  const out = [];
  const { path } = landscape;
  if (path && path.x.length) {
    const { text, hover } = pathLabels(landscape);
    out.push({
      type: threeD ? 'scatter3d' : 'scatter',
      mode: 'lines+markers+text',
      name: 'training path',
      x: path.x,
      y: path.y,
      ...(threeD && { z: path.z }),
      text,
      customdata: hover,
      textposition: 'top center',
      textfont: { size: 11 }, // the layout's font colour: the theme's
      hovertemplate: '%{customdata}<extra></extra>',
      line: { color: PATH, width: threeD ? 6 : 2.5 },
      marker: { color: PATH, size: threeD ? 4 : 7, line: { color: '#ffffff', width: 1 } },
      meta: meta(landscape, 'path'),
    });
  }
  const point = landscape.convergence_point;
  if (point) {
    out.push({
      type: threeD ? 'scatter3d' : 'scatter',
      mode: 'markers',
      name: 'convergence point',
      x: [point[0]],
      y: [point[1]],
      ...(threeD && { z: [point[2]] }),
      hovertemplate: `convergence point<br>loss ${formatLoss(point[2])}<extra></extra>`,
      marker: threeD
        ? { color: CONVERGENCE, size: 7, symbol: 'diamond' }
        : { color: CONVERGENCE, size: 15, symbol: 'star', line: { color: '#ffffff', width: 1 } },
      meta: meta(landscape, 'convergence'),
    });
  }
  return out;
}

/** A loss as hover text: five significant digits, or what it is when not finite. */
export function formatLoss(value) {
  return typeof value === 'number' && Number.isFinite(value)
    ? String(Number(value.toPrecision(5)))
    : 'not finite';
}

function legend() {
  return { orientation: 'h', x: 0, y: 1.02, yanchor: 'bottom', font: { size: 10 } };
}

/** The 3-D surface of `landscape` seen from `eye` ([x, y, z]). */
export function surfaceFigure(landscape, eye) {
  const [xTitle, yTitle] = axisTitles(landscape);
  const axis = (text) => ({ title: title(text), gridcolor: gridColour(), exponentformat: 'e' });
  return {
    data: [
      {
        type: 'surface',
        name: 'loss',
        x: landscape.x,
        y: landscape.y,
        z: landscape.z,
        colorscale: COLOURS,
        opacity: 0.92, // the path runs on the surface: let it show through
        colorbar: { title: { text: 'loss', font: { size: 11 } }, thickness: 12, len: 0.8 },
        contours: { z: { show: true, usecolormap: true, project: { z: true }, width: 1 } },
        hovertemplate: 'x %{x:.4g}<br>y %{y:.4g}<br>loss %{z:.5g}<extra></extra>',
        meta: meta(landscape, 'surface'),
      },
      ...pathTraces(landscape, true),
    ],
    layout: {
      autosize: true,
      margin: { l: 8, r: 0, t: 24, b: 8 },
      ...chartLayout({ family: FONT, size: 11 }),
      showlegend: true,
      legend: legend(),
      uirevision: 'landscape', // keeps the user's rotation across redraws of the same view
      scene: {
        xaxis: axis(xTitle),
        yaxis: axis(yTitle),
        zaxis: axis('loss'),
        camera: { eye: { x: eye[0], y: eye[1], z: eye[2] } },
        aspectmode: 'cube',
      },
    },
  };
}

/** The 2-D contour of `landscape`, the path and convergence point drawn over it. */
export function contourFigure(landscape) {
  const [xTitle, yTitle] = axisTitles(landscape);
  const axis = (text) => ({
    title: { ...title(text), standoff: 4 },
    gridcolor: gridColour(),
    zeroline: false,
    automargin: true,
    exponentformat: 'e',
  });
  return {
    data: [
      {
        type: 'contour',
        name: 'loss',
        x: landscape.x,
        y: landscape.y,
        z: landscape.z,
        colorscale: COLOURS,
        colorbar: { title: { text: 'loss', font: { size: 11 } }, thickness: 12, len: 0.9 },
        contours: { coloring: 'heatmap', showlabels: true, labelfont: { size: 9, color: '#fff' } },
        line: { width: 0.5, color: 'rgba(255,255,255,0.5)' },
        hovertemplate: 'x %{x:.4g}<br>y %{y:.4g}<br>loss %{z:.5g}<extra></extra>',
        meta: meta(landscape, 'contour'),
      },
      ...pathTraces(landscape, false),
    ],
    layout: {
      autosize: true,
      margin: { l: 60, r: 10, t: 24, b: 44 },
      ...chartLayout({ family: FONT, size: 11 }),
      showlegend: true,
      legend: legend(),
      hovermode: 'closest',
      uirevision: 'landscape',
      xaxis: axis(xTitle),
      yaxis: axis(yTitle),
    },
  };
}
