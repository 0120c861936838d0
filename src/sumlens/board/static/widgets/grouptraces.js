// grouptraces.js: how a group of runs is drawn in a scalar chart, for the Scalars view
// (scalars/card.js, scalars/chart.js) and for a snapshot's page (board/snapshot, which
// inlines this file after colours.js: so it imports nothing; group colours are
// colours.js's GroupColours, handed in). A group is its centre line over a band filled in
// its colour (BAND_OPACITY); its members are drawn faintly in the same colour (memberTrace)
// or hidden. The std band is the sample standard deviation (board/query/group_stats.py), and
// its label says so. Names reach plotly through `escape` (the pages' plotlyText), never as
// markup.

export const BAND_LABELS = {
  std: '± sample std',
  minmax: 'min–max',
  'p25-75': '25–75%',
  'p10-90': '10–90%',
};
const BAND_OPACITY = '4d'; // the band's fill: the group colour at 30% (hex alpha)
const MEMBER_OPACITY = 0.3;

/**
 * How each member series of `groups` (a /scalars/groups answer) is drawn: a map from
 * `${run}\u0000${rank}` to {colour, hidden} (the first group the series is in gives it);
 * `members` is 'faint' or 'hidden'.
 */
export function memberLooks(groups, members, colours) {
  const looks = new Map();
  for (const group of groups.groups) {
    for (const { run, rank } of group.members) {
      const key = `${run}\u0000${rank}`;
      const hidden = members === 'hidden';
      if (!looks.has(key)) looks.set(key, { colour: colours.colour(group.name), hidden });
    }
  }
  return looks;
}

/** A member drawn faintly: its smoothed line, thin, in its group's colour, no hover. */
export function memberTrace(series, x, colour, meta, escape) {
  return {
    type: 'scatter',
    mode: series.shown === 1 ? 'markers' : 'lines',
    x,
    y: series.smoothed,
    name: escape(series.run),
    showlegend: false,
    hoverinfo: 'skip',
    opacity: MEMBER_OPACITY,
    line: { color: colour, width: 1 },
    marker: { color: colour, size: 4 },
    meta: { ...meta, kind: 'member' },
  };
}

/**
 * The traces of each group: its band (the low line, then the high line filling down to it)
 * and its centre line on top. `xOf(group)` gives the plotly x of a group's points,
 * `colours.colour(name)` a group's colour.
 */
export function groupTraces(groups, xOf, colours, escape) {
  const bands = [];
  const lines = [];
  for (const group of groups.groups) {
    const colour = colours.colour(group.name);
    const x = xOf(group);
    const meta = { run: null, rank: null, tag: group.tag, group: group.name };
    const band = BAND_LABELS[groups.band] ?? groups.band;
    const label = `${group.name} (${groups.stat} ${band}, ${group.members.length})`;
    const edge = {
      type: 'scatter',
      mode: 'lines',
      x,
      legendgroup: `group-${group.name}`,
      showlegend: false,
      hoverinfo: 'skip',
      line: { color: colour, width: 0 },
    };
    bands.push(
      { ...edge, y: group.low, meta: { ...meta, kind: 'group-low' } },
      {
        ...edge,
        y: group.high,
        fill: 'tonexty',
        fillcolor: `${colour}${BAND_OPACITY}`,
        meta: { ...meta, kind: 'group-high' },
      },
    );
    lines.push({
      type: 'scatter',
      mode: group.shown === 1 ? 'markers' : 'lines',
      x,
      y: group.center,
      // each point's members, and its band's ends, for the hover
      customdata: group.count.map((count, i) => [count, group.low[i], group.high[i]]),
      name: escape(label),
      legendgroup: `group-${group.name}`,
      hovertemplate:
        `%{y:.5~g} <span style="color:#80868b">${groups.stat} of %{customdata[0]}, ` +
        `${band} %{customdata[1]:.4~g} to %{customdata[2]:.4~g}</span>`,
      line: { color: colour, width: 2.5 },
      marker: { color: colour, size: 6 },
      meta: { ...meta, kind: 'group-center' },
    });
  }
  return [...bands, ...lines];
}
