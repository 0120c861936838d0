// chart.js: one tag's plotly chart.
//
// It turns a /scalars response into traces (per run and rank: the raw values as a faint
// line, the server-smoothed values bold, as TensorBoard draws them) and reports the user's
// zoom in the API's units (steps, seconds since the series' start, epoch seconds), so the
// view can fetch the points of exactly that range. Plotly's SVG `scatter` is used, not
// `scattergl`: a browser allows only ~16 WebGL contexts per page.

import { plotlyText } from '../core/dom.js';
import { PLOT_CONFIG, fromPlotX, loadPlotly, toPlotX } from '../plots/plotly.js';

const AXIS_TITLES = { step: 'step', relative: 'relative time (s)', wall: 'wall time' };
const MAX_LEGEND = 8; // more series than this: no legend (the hover and the run list name them)
const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const GRID = '#eceff3';

const CONFIG = {
  ...PLOT_CONFIG,
  doubleClick: 'autosize', // back to the full range (not to the range the page loaded with)
  modeBarButtonsToRemove: [...PLOT_CONFIG.modeBarButtonsToRemove, 'resetScale2d'],
};

function xValues(series, axis) {
  if (axis === 'step') return series.step;
  const first = series.range.wall[0];
  return series.wall.map((wall) => (axis === 'relative' ? wall - first : toPlotX('wall', wall)));
}

function traces(response, axis, style, uid) {
  const out = [];
  for (const series of response.series) {
    const { colour, label } = style(series.run, series.rank);
    const id = uid(`${series.run}\u0000${series.rank}`);
    const x = xValues(series, axis);
    const mode = series.shown === 1 ? 'markers' : 'lines';
    const name = plotlyText(label);
    const meta = { run: series.run, rank: series.rank, tag: series.tag };
    out.push(
      {
        type: 'scatter',
        mode,
        uid: `raw-${id}`,
        x,
        y: series.value,
        name,
        legendgroup: `series-${id}`,
        showlegend: false,
        hoverinfo: 'skip',
        opacity: 0.25,
        line: { color: colour, width: 1 },
        marker: { color: colour, size: 4 },
        meta: { ...meta, kind: 'raw' },
      },
      {
        type: 'scatter',
        mode,
        uid: `smoothed-${id}`,
        x,
        y: series.smoothed,
        customdata: series.value,
        name,
        legendgroup: `series-${id}`,
        hovertemplate:
          response.smoothing > 0
            ? '%{y:.5~g}  <span style="color:#80868b">raw %{customdata:.5~g}</span>'
            : '%{y:.5~g}',
        line: { color: colour, width: 2 },
        marker: { color: colour, size: 6 },
        meta: { ...meta, kind: 'smoothed' },
      },
    );
  }
  return out;
}

function layout(axis, log, zoom, seriesCount) {
  const xRange = zoom?.x ? { range: zoom.x.map((v) => toPlotX(axis, v)), autorange: false } : {};
  const yRange = zoom?.y ? { range: [...zoom.y], autorange: false } : {};
  return {
    autosize: true,
    margin: { l: 56, r: 14, t: 8, b: 38 },
    font: { family: FONT, size: 11, color: '#3c4043' },
    paper_bgcolor: '#ffffff',
    plot_bgcolor: '#ffffff',
    hovermode: 'x unified',
    hoverlabel: { namelength: -1, bgcolor: 'rgba(255,255,255,0.96)', bordercolor: '#dadce0' },
    showlegend: seriesCount > 1 && seriesCount <= MAX_LEGEND,
    legend: { orientation: 'h', x: 0, y: -0.22, yanchor: 'top', font: { size: 10 } },
    uirevision: 'chart', // keeps hidden legend entries across refreshes
    xaxis: {
      type: axis === 'wall' ? 'date' : 'linear',
      autorange: true,
      ...xRange,
      title: { text: AXIS_TITLES[axis], standoff: 4, font: { size: 10, color: '#80868b' } },
      gridcolor: GRID,
      zeroline: false,
      automargin: true,
    },
    yaxis: {
      type: log ? 'log' : 'linear',
      autorange: true,
      ...yRange,
      gridcolor: GRID,
      zeroline: false,
      automargin: true,
      exponentformat: 'e',
    },
  };
}

export class ScalarChart {
  /** A chart in `div`; `onZoom({x, y})` gets each zoom (null: that axis shows everything). */
  constructor(div, onZoom) {
    this.div = div;
    this.onZoom = onZoom;
    this.listening = false;
    this.axis = 'step';
    this.uids = new Map(); // series key -> a number: plotly puts uids into CSS selectors
  }

  /**
   * Draw `response` (a /scalars answer) on `axis`, log-scale y if `log`, showing `zoom`.
   * `style(run, rank)` gives each series' colour and label.
   */
  async draw(response, { axis, log, zoom, style }) {
    this.axis = axis;
    const data = traces(response, axis, style, (key) => this.#uid(key));
    const Plotly = await loadPlotly();
    await Plotly.react(this.div, data, layout(axis, log, zoom, data.length / 2), CONFIG);
    if (!this.listening) {
      this.div.on('plotly_relayout', (event) => this.#relayout(event));
      this.listening = true;
    }
  }

  /** Back to the full range (reported through onZoom like a double click). */
  resetZoom() {
    return window.Plotly.relayout(this.div, { 'xaxis.autorange': true, 'yaxis.autorange': true });
  }

  /** Free the plot (its SVG, listeners and data). */
  purge() {
    window.Plotly?.purge(this.div);
    this.listening = false;
  }

  #uid(key) {
    if (!this.uids.has(key)) this.uids.set(key, this.uids.size);
    return this.uids.get(key);
  }

  #relayout(event) {
    if (!Object.keys(event).some((key) => key.startsWith('xaxis') || key.startsWith('yaxis'))) {
      return; // a resize, a legend click ...
    }
    const { xaxis, yaxis } = this.div.layout;
    this.onZoom({
      x: xaxis.autorange ? null : xaxis.range.map((v) => fromPlotX(this.axis, v)),
      y: yaxis.autorange ? null : [...yaxis.range],
    });
  }
}
