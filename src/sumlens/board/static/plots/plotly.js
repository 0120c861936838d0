// plotly.js: how the pages get plotly.js, and what every interactive chart of theirs shares.
//
// plotly.js is 4.8 MB: it is loaded on first use with a classic script tag, so the run list
// never waits for it, and once per page (every view that plots loads it through here). The
// base configuration is spread into each chart's own (which may drop other mode-bar
// buttons): no plotly logo, a chart that follows its box, PNG downloads at twice the size,
// no uploads, and no "Double-click to zoom back out" toast: plotly pins it over the page's
// top right corner, on the controls there (the Scalars card says how to zoom out instead).

export const PLOT_CONFIG = Object.freeze({
  displaylogo: false,
  responsive: true,
  showTips: false,
  modeBarButtonsToRemove: ['select2d', 'lasso2d', 'sendChartToCloud'],
  toImageButtonOptions: { format: 'png', scale: 2 },
});

// Plotly's date axes show times as UTC; shifting by the offset shows them as local time.
const TZ_MS = new Date().getTimezoneOffset() * 60_000;

let plotlyLoading = null;

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
