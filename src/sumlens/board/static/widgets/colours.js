// colours.js: the colours of a view's series (a run, or a rank of a distributed run), the
// same in every view, on every page and after a reload.
//
// A series' colour follows from its name, not from the order runs were selected in: its
// key (the run id, or run id and rank) is hashed to a preferred colour of the palette. Two
// series shown together that prefer the same colour would be told apart by nothing, so
// among the series shown the one whose hash is lower keeps it and the other takes the next
// free colour (each probing from its preferred one: the other preferred colours, then the
// rest of the palette in order). That order depends on the names alone, so the same runs
// always get the same colours; a run gives up its preferred colour only while a run that
// prefers the same one, and comes first, is shown with it. When more series are shown than
// the palette has colours, they are coloured in rounds of the palette. A run's
// `annotation.colour` (from /runs, chosen with the picker of the runs sidebar, stored in
// the workspace) overrides all of this; its ranks then take shades of it. Groups of runs
// are coloured by the same rule (paletteColours), away from their members' colours
// (grouptraces.js GroupColours).
//
// The palette is Okabe & Ito's colour-blind-safe one ("Color Universal Design", 2008)
// without its black, which vanishes on the dark theme, in an order where each colour is
// far from the one before (CIEDE2000 37 or more) and the first PREFERRED are far from one
// another (38 or more): the only colours a hash lands on, so two runs never get blue and
// sky blue, or orange and vermilion, unless more runs are shown than there are
// preferred colours. Sky blue, vermilion and yellow (the faintest on white) come after.

export const PALETTE = [
  '#0072b2', // blue
  '#e69f00', // orange
  '#009e73', // bluish green
  '#cc79a7', // reddish purple
  '#d55e00', // vermilion
  '#56b4e9', // sky blue
  '#f0e442', // yellow
];
export const PREFERRED = 4; // the colours a hash may land on: the first four

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

/** The first palette index from preferred `start` that `free(index)` allows: the other
 * preferred colours in turn, then the rest in order; -1 when none is. */
function probe(start, free) {
  for (let k = 0; k < PREFERRED; k += 1) {
    const index = (start + k) % PREFERRED;
    if (free(index)) return index;
  }
  for (let index = PREFERRED; index < PALETTE.length; index += 1) if (free(index)) return index;
  return -1;
}

/**
 * Palette colours for `items` ({key, avoid}: a series or group key and a Set of colours it
 * should not take, e.g. its members'), distinct among them (in rounds of the palette when
 * there are more), each its preferred colour or the next free one; an `avoid`ed colour is
 * taken only when every other is. Decided by the keys' hashes alone: a Map key -> colour.
 */
export function paletteColours(items) {
  const ordered = items
    .map(({ key, avoid }) => ({ key, avoid: avoid ?? new Set(), hash: hash(key) }))
    .sort((a, b) => a.hash - b.hash || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const given = new Map();
  let taken = new Set(); // palette indices given in this round
  for (const { key, avoid, hash: h } of ordered) {
    if (taken.size === PALETTE.length) taken = new Set(); // the next round
    const start = h % PREFERRED;
    let index = probe(start, (i) => !taken.has(i) && !avoid.has(PALETTE[i]));
    if (index < 0) index = probe(start, (i) => !taken.has(i));
    taken.add(index);
    given.set(key, PALETTE[index]);
  }
  return given;
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
        else automatic.push({ key });
      });
    }
    for (const [key, colour] of paletteColours(automatic)) this.#byKey.set(key, colour);
  }
}

/** The colours of run `id`'s series on a page: each rank's when its ranks are told apart
 * (`meta`: run id -> its /runs entry; `style(run, rank)`: the page's). */
export function seriesColours(meta, style, id) {
  const ranks = meta.get(id)?.ranks ?? [];
  return (ranks.length > 1 ? ranks : [null]).map((rank) => style(id, rank).colour);
}

/**
 * The colours of the groups of runs a page draws (the Scalars view, a snapshot's page: the
 * same rule for both): the one chosen for a group; else by the palette's rule from its
 * name (paletteColours), distinct among the groups, and away from the colours of its
 * members and of the runs drawn alone (their series' colours, `runColours(run)`), so a
 * group never looks like one of its runs while the palette has another colour. Colours are
 * given over every group of the grouping (a groups answer's `all_groups`), not those of one
 * chart, so each chart and the snapshot agree.
 */
export class GroupColours {
  #byName = new Map();
  #runColours;

  constructor(runColours) {
    this.#runColours = runColours;
  }

  /** Colour the groups of `grouped` (a groups answer: `all_groups` and `single`). */
  assign(grouped) {
    this.#byName.clear();
    const chosen = new Set();
    for (const { name, colour } of grouped.all_groups) {
      const valid = chosenColour({ annotation: { colour } });
      if (valid) {
        this.#byName.set(name, valid);
        chosen.add(valid);
      }
    }
    const alone = grouped.single.flatMap((run) => this.#runColours(run));
    const automatic = grouped.all_groups
      .filter(({ name }) => !this.#byName.has(name))
      .map(({ name, runs }) => ({
        key: `group:${name}`,
        avoid: new Set([...chosen, ...alone, ...runs.flatMap((run) => this.#runColours(run))]),
      }));
    for (const [key, colour] of paletteColours(automatic)) {
      this.#byName.set(key.slice('group:'.length), colour);
    }
  }

  /** Group `name`'s colour (its preferred one for a group not assigned). */
  colour(name) {
    return this.#byName.get(name) ?? preferredColour(`group:${name}`);
  }
}
