// colouring.js: the colours of an embedding's points, by a metadata column: categories take
// the palette's colours in turn, numbers a step of the Viridis scale (NaN grey), no column
// one colour. Given as a colour index per point and the colours, so the 2-D scatter sets a
// fill style once per colour rather than once per point.

export const PALETTE = [
  '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
  '#bcbd22', '#17becf',
];
export const PLAIN = '#5b7ff0';
export const MATCH = '#d62728'; // the ring of a search's match
const MISSING = '#b0b4ba';
// Viridis at nine evenly spaced stops (the scale plotly names 'Viridis').
const VIRIDIS = [
  [68, 1, 84], [71, 45, 123], [59, 82, 139], [44, 114, 142], [33, 145, 140],
  [40, 174, 128], [94, 201, 98], [173, 220, 48], [253, 231, 37],
];
const STEPS = 64; // colours a number column is drawn in

/** Viridis at `t` in [0, 1] as a CSS colour. */
function viridis(t) {
  const at = t * (VIRIDIS.length - 1);
  const i = Math.min(Math.floor(at), VIRIDIS.length - 2);
  const f = at - i;
  const [r, g, b] = VIRIDIS[i].map((c, k) => Math.round(c + (VIRIDIS[i + 1][k] - c) * f));
  return `rgb(${r},${g},${b})`;
}

/** Viridis as a CSS gradient from bottom (low) to top (high), for a colour bar. */
export const VIRIDIS_GRADIENT = `linear-gradient(to top, ${VIRIDIS.map(
  (_, i) => viridis(i / (VIRIDIS.length - 1)),
).join(', ')})`;

/**
 * The colours of `count` points by `column` (null: none): `index` (Uint8Array, a colour
 * per point), `colours` (CSS colours), and for a number column `scale` ({name, min, max}).
 */
export function pointColours(column, count) {
  const index = new Uint8Array(count);
  if (column?.kind === 'category') {
    for (let i = 0; i < count; i += 1) index[i] = column.codes[i] % PALETTE.length;
    return { index, colours: PALETTE, scale: null };
  }
  if (column?.kind !== 'number') return { index, colours: [PLAIN], scale: null };
  let min = Infinity;
  let max = -Infinity;
  for (const v of column.values) {
    if (v === null || !Number.isFinite(v)) continue;
    min = Math.min(min, v);
    max = Math.max(max, v);
  }
  const span = max > min ? max - min : 1;
  for (let i = 0; i < count; i += 1) {
    const v = column.values[i];
    const known = v !== null && Number.isFinite(v);
    index[i] = known ? Math.round(((v - min) / span) * (STEPS - 1)) : STEPS;
  }
  const colours = Array.from({ length: STEPS }, (_, s) => viridis(s / (STEPS - 1)));
  colours.push(MISSING);
  return { index, colours, scale: min <= max ? { name: column.name, min, max } : null };
}
