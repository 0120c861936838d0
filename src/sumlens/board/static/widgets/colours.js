// colours.js: the colours of a view's series (a run, or a rank of a distributed run), the
// same in every view, on every page and after a reload.
//
// A series' colour follows from its name, not from the order runs were selected in: its
// key (the run id, or run id and rank) is hashed to a preferred colour of the palette. Two
// series shown together that prefer the same colour would be told apart by nothing, so
// among the series shown the one whose hash is lower keeps it and the other takes the next
// free colour of the palette (each probing from its preferred one). That order depends on
// the names alone, so the same runs always get the same colours; a run gives up its
// preferred colour only while a run that prefers the same one, and comes first, is shown
// with it. When more series are shown than the palette has colours, they are coloured in
// rounds of the palette. A run's `annotation.colour` (from /runs, chosen with the picker of
// the runs sidebar, stored in the workspace) overrides all of this; its ranks then take
// shades of it.
//
// The palette is Okabe & Ito's colour-blind-safe one ("Color Universal Design", 2008)
// without its black, which vanishes on the dark theme; its yellow, the faintest on white,
// comes last and is nobody's preferred colour: a run gets it only when the others are taken.

export const PALETTE = [
  '#0072b2', '#e69f00', '#009e73', '#cc79a7', '#56b4e9', '#d55e00', '#f0e442',
];
const PREFERRED = PALETTE.length - 1; // the colours a hash may land on: all but the yellow

const HEX = /^#[0-9a-f]{6}$/i;

/** A 32-bit FNV-1a hash of `text` (its UTF-16 code units): spread, cheap and stable. */
function hash(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The key of a series: the run, or the run and its rank when the run's ranks are apart. */
function seriesKey(run, rank, ranked) {
  return ranked ? `${run}\u0000${rank}` : run;
}

/** The palette colour `key` prefers (the one it gets while nothing shown competes). */
export function preferredColour(key) {
  return PALETTE[hash(key) % PREFERRED];
}

/** `hex` mixed with white by `t` (0: itself, 1: white), as #rrggbb. */
function lighter(hex, t) {
  const n = Number.parseInt(hex.slice(1), 16);
  const mix = (shift) => Math.round(((n >> shift) & 255) * (1 - t) + 255 * t);
  return `#${[16, 8, 0].map((s) => mix(s).toString(16).padStart(2, '0')).join('')}`;
}

/** The colour chosen for run `entry` (a /runs entry) in its annotation, or null. */
export function chosenColour(entry) {
  const colour = entry?.annotation?.colour;
  return typeof colour === 'string' && HEX.test(colour) ? colour.toLowerCase() : null;
}

/** The colours of a view's series; assign() them for the series shown, then ask style(). */
export class Colours {
  #byKey = new Map();

  /** A series' colour and label; `ranked`: a run's ranks are told apart, "run (rank 1)". */
  style(run, rank, ranked) {
    const key = seriesKey(run, rank, ranked);
    const colour = this.#byKey.get(key) ?? preferredColour(key);
    return { colour, label: ranked ? `${run} (rank ${rank})` : run };
  }

  /** Colour the series of `runs`, the runs shown (`meta`: run id -> its /runs entry). */
  assign(runs, meta) {
    this.#byKey.clear();
    const automatic = [];
    for (const id of runs) {
      const entry = meta.get(id);
      const ranks = entry?.ranks ?? [];
      const chosen = chosenColour(entry);
      const keys = ranks.length > 1 ? ranks.map((rank) => seriesKey(id, rank, true)) : [id];
      keys.forEach((key, i) => {
        if (chosen) this.#byKey.set(key, lighter(chosen, (0.6 * i) / keys.length));
        else automatic.push({ key, hash: hash(key) });
      });
    }
    automatic.sort((a, b) => a.hash - b.hash || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    let taken = new Set(); // palette indices given in this round
    for (const { key, hash: h } of automatic) {
      if (taken.size === PALETTE.length) taken = new Set(); // the next round
      let index = h % PREFERRED;
      while (taken.has(index)) index = (index + 1) % PALETTE.length;
      taken.add(index);
      this.#byKey.set(key, PALETTE[index]);
    }
  }
}
