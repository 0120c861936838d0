// plotly.js: how the pages get plotly.js, and what every interactive chart of theirs shares.
//
// plotly.js is 4.8 MB: it is loaded on first use with a classic script tag, so the run list
// never waits for it, and once per page (every view that plots loads it through here). The
// base configuration is spread into each chart's own (which may drop other mode-bar
// buttons): no plotly logo, a chart that follows its box, PNG downloads at twice the size,
// no uploads, and no "Double-click to zoom back out" toast: plotly pins it over the page's
// top right corner, on the controls there (the Scalars card says how to zoom out instead).
//
// Every chart takes its colours from the theme (core/theme.js): chartLayout() gives a new
// figure's, and a change of theme restyles every plotly chart of the page in place
// (Plotly.relayout of those colours only: no data is fetched or rebuilt).

import { chartColours, onThemeChange } from '../core/theme.js';

export const PLOT_CONFIG = Object.freeze({
  displaylogo: false,
  responsive: true,
  showTips: false,
  modeBarButtonsToRemove: ['select2d', 'lasso2d', 'sendChartToCloud'],
  toImageButtonOptions: { format: 'png', scale: 2 },
});

// Plotly's date axes show times as UTC; shifting by the offset shows them as local time.
const TZ_MS = new Date().getTimezoneOffset() * 60_000;

// An axis without grid lines says so with this colour (it is left alone on a theme change).
export const NO_GRID = 'rgba(0,0,0,0)';

let plotlyLoading = null;

/**
 * The theme's part of a plotly layout: backgrounds, fonts and the hover box (`font`: the
 * font's other settings). Axes take theirs from axisColours().
 */
export function chartLayout(font = {}) {
  const c = chartColours();
  return {
    font: { ...font, color: c.text },
    paper_bgcolor: c.background,
    plot_bgcolor: c.background,
    hoverlabel: {
      namelength: -1,
      bgcolor: c.hoverBackground,
      bordercolor: c.hoverBorder,
      font: { color: c.text },
    },
  };
}

/** An axis title `text` in the theme's muted colour (`size` in px). */
export function axisTitle(text, size = 10) {
  return { text, standoff: 4, font: { size, color: chartColours().muted } };
}

/** The theme's grid colour. */
export function gridColour() {
  return chartColours().grid;
}

/** The relayout giving a chart of `layout` the theme's colours (its axes, its 3-D scenes). */
function themeUpdate(layout) {
  const c = chartColours();
  const update = {
    'font.color': c.text,
    paper_bgcolor: c.background,
    plot_bgcolor: c.background,
    'hoverlabel.bgcolor': c.hoverBackground,
    'hoverlabel.bordercolor': c.hoverBorder,
    'hoverlabel.font.color': c.text,
  };
  const axes = (prefix, holder) => {
    for (const [name, axis] of Object.entries(holder ?? {})) {
      if (!/^[xyz]axis\d*$/.test(name) || !axis) continue;
      if (axis.gridcolor !== NO_GRID) update[`${prefix}${name}.gridcolor`] = c.grid;
      if (axis.title?.text) update[`${prefix}${name}.title.font.color`] = c.muted;
    }
  };
  axes('', layout);
  for (const [name, scene] of Object.entries(layout)) {
    if (/^scene\d*$/.test(name)) axes(`${name}.`, scene);
  }
  return update;
}

onThemeChange(() => {
  const Plotly = window.Plotly;
  if (!Plotly) return; // no chart drawn yet: each takes the theme when drawn
  for (const div of document.querySelectorAll('.js-plotly-plot')) {
    if (!div.layout) continue;
    Plotly.relayout(div, themeUpdate(div.layout)).catch((error) => {
      console.error('A chart could not take the new theme:', error);
    });
  }
});

/** plotly.js (window.Plotly), loaded on first use (one copy per page). */
export function loadPlotly() {
  plotlyLoading ??= new Promise((resolve, reject) => {
    const script = document.createElement('script');
    script.src = new URL('static/vendor/plotly.min.js', document.baseURI).href;
    script.onload = () => resolve(window.Plotly);
    script.onerror = () => reject(new Error('plotly.js could not be loaded'));
    document.head.append(script);
  });
  return plotlyLoading;
}

/** An x in the API's units as plotly's x (wall times become local-time dates). */
export function toPlotX(axis, value) {
  return axis === 'wall' ? value * 1000 - TZ_MS : value;
}

/** A plotly x (a number, or a date string on the wall axis) in the API's units. */
export function fromPlotX(axis, value) {
  if (axis !== 'wall') return Number(value);
  if (typeof value === 'number') return (value + TZ_MS) / 1000;
  const [day, time = '00:00:00'] = String(value).trim().split(' ');
  return (Date.parse(`${day}T${time.replace(/(\.\d{3})\d+/, '$1')}Z`) + TZ_MS) / 1000;
}
