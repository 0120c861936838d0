// envelope.js: a scalar series' min-max envelope, the faint band between the lowest and the
// highest raw value of each of its buckets (the server's, on full resolution), so a spike
// the downsampling left out still shows. Drawn by the Scalars view (scalars/chart.js) and
// by a snapshot's page (board/snapshot, which inlines this file: so it imports nothing).

const ENVELOPE_OPACITY = 0.18;

/**
 * The band of `series.envelope` ({min, max} per bucket) at plotly x `x` in `colour`: the
 * min line, then the max line filling down to it. `uid` names the series' traces (a
 * plotly uid, so a redraw keeps them); `meta` goes on each, with its kind (min or max).
 */
export function envelopeTraces(series, x, colour, uid, meta) {
  const band = {
    type: 'scatter',
    mode: 'lines',
    x,
    legendgroup: `series-${uid}`,
    showlegend: false,
    hoverinfo: 'skip',
    opacity: ENVELOPE_OPACITY,
    line: { color: colour, width: 0 },
  };
  return [
    { ...band, uid: `min-${uid}`, y: series.envelope.min, meta: { ...meta, kind: 'min' } },
    {
      ...band,
      uid: `max-${uid}`,
      y: series.envelope.max,
      fill: 'tonexty',
      fillcolor: colour,
      meta: { ...meta, kind: 'max' },
    },
  ];
}
