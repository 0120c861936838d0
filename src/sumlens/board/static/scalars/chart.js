// chart.js: one tag's plotly chart.
//
// It turns a /scalars response into traces (per run and rank: the raw values as a faint
// line, the server-smoothed values bold, as TensorBoard draws them; with the envelope, a
// faint band from each bucket's min to its max under them) and reports the user's zoom in
// the API's units (steps, seconds since the series' start, epoch seconds, the x tag's
// values), so the view can fetch the points of exactly that range. Along a tag axis the
// points come in step order, as the server joined them. Groups of runs (groups.js) draw a
// centre line over a band on top; their members faintly, or not at all. Plotly's SVG
// `scatter` is used, not `scattergl`: a browser allows only ~16 WebGL contexts per page.

import { plotlyText } from '../core/dom.js';
import {
  PLOT_CONFIG,
  axisTitle,
  chartLayout,
  fromPlotX,
  gridColour,
  loadPlotly,
  toPlotX,
} from '../plots/plotly.js';
import { envelopeTraces } from '../widgets/envelope.js';
import { groupTraces, memberTrace } from '../widgets/grouptraces.js';

const AXIS_TITLES = { step: 'step', relative: 'relative time (s)', wall: 'wall time' };
const MAX_LEGEND = 8; // more series than this: no legend (the hover and the run list name them)
const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const ZOOM_KEY = /^[xy]axis\.(range|autorange)/; // a relayout's keys that zoom

const CONFIG = {
  ...PLOT_CONFIG,
  doubleClick: 'autosize', // back to the full range (not to the range the page loaded with)
  modeBarButtonsToRemove: [...PLOT_CONFIG.modeBarButtonsToRemove, 'resetScale2d'],
};

const TAG_AXIS = 'tag:'; // an axis "tag:<name>": the x tag's values, joined on step by the server

/** The x title of `axis` (a tag axis: the tag's name). */
function axisName(axis) {
  return AXIS_TITLES[axis] ?? axis.slice(TAG_AXIS.length);
}

/** Plotly x of `points` (a series or its envelope) whose series starts at `firstWall`. */
function xValues(points, axis, firstWall) {
  if (axis === 'step') return points.step;
  if (axis.startsWith(TAG_AXIS)) return points.x;
  return points.wall.map((wall) =>
    axis === 'relative' ? wall - firstWall : toPlotX('wall', wall),
  );
}

/** Plotly x of a group's points (along any axis but step the server gives each its x). */
function groupX(group, axis) {
  if (axis === 'step') return group.step;
  return axis === 'wall' ? group.x.map((x) => toPlotX('wall', x)) : group.x;
}

/** The traces of a response; a member of a group (`looks`, groups.js) is faint or hidden. */
function traces(response, axis, style, uid, looks) {
  const bands = []; // drawn first, under every line
  const out = [];
  for (const series of response.series) {
    const { colour, label } = style(series.run, series.rank);
    const id = uid(`${series.run}\u0000${series.rank}`);
    const firstWall = series.range.wall[0];
    const x = xValues(series, axis, firstWall);
    const mode = series.shown === 1 ? 'markers' : 'lines';
    const name = plotlyText(label);
    const meta = { run: series.run, rank: series.rank, tag: series.tag };
    const look = looks?.get(`${series.run}\u0000${series.rank}`);
    if (look) {
      if (!look.hidden) out.push(memberTrace(series, x, look.colour, meta, plotlyText));
      continue;
    }
    if (series.envelope) {
      const bandX = xValues(series.envelope, axis, firstWall);
      bands.push(...envelopeTraces(series, bandX, colour, id, meta));
    }
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
  return [...bands, ...out];
}

function layout(axis, log, zoom, seriesCount) {
  const xRange = zoom?.x ? { range: zoom.x.map((v) => toPlotX(axis, v)), autorange: false } : {};
  const yRange = zoom?.y ? { range: [...zoom.y], autorange: false } : {};
  return {
    autosize: true,
    margin: { l: 56, r: 14, t: 8, b: 38 },
    ...chartLayout({ family: FONT, size: 11 }),
    hovermode: 'x unified',
    showlegend: seriesCount > 1 && seriesCount <= MAX_LEGEND,
    legend: { orientation: 'h', x: 0, y: -0.22, yanchor: 'top', font: { size: 10 } },
    uirevision: 'chart', // keeps hidden legend entries across refreshes
    xaxis: {
      type: axis === 'wall' ? 'date' : 'linear',
      autorange: true,
      ...xRange,
      title: axisTitle(axisName(axis)),
      gridcolor: gridColour(),
      zeroline: false,
      automargin: true,
    },
    yaxis: {
      type: log ? 'log' : 'linear',
      autorange: true,
      ...yRange,
      gridcolor: gridColour(),
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
   * `style(run, rank)` gives each series' colour and label; `groups` ({response, looks,
   * colours}, groups.js), the groups of the runs, drawn over them.
   */
  async draw(response, { axis, log, zoom, style, groups }) {
    this.axis = axis;
    const data = traces(response, axis, style, (key) => this.#uid(key), groups?.looks);
    if (groups) {
      const xOf = (group) => groupX(group, axis);
      data.push(...groupTraces(groups.response, xOf, groups.colours, plotlyText));
    }
    const Plotly = await loadPlotly();
    const lines = data.filter((trace) => ['smoothed', 'group-center'].includes(trace.meta.kind));
    const seriesCount = lines.length;
    await Plotly.react(this.div, data, layout(axis, log, zoom, seriesCount), CONFIG);
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
    if (!Object.keys(event).some((key) => ZOOM_KEY.test(key))) {
      return; // a resize, a legend click, a change of theme ...
    }
    const { xaxis, yaxis } = this.div.layout;
    this.onZoom({
      x: xaxis.autorange ? null : xaxis.range.map((v) => fromPlotX(this.axis, v)),
      y: yaxis.autorange ? null : [...yaxis.range],
    });
  }
}
