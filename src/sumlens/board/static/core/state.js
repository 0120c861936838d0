// state.js: what the dashboard shows, kept in the URL hash.
//
// The hash is the single source of truth, so a reload or a shared link gives the same view:
//   #/scalars?run=./a&run=./b&tags=loss&smoothing=0.9&axis=wall&log=1&zoom={"loss":{...}}
//   #/runs?runtag=baseline&q=lr&hidden=1
//   #/images?run=./a&off=image:input&at=[["image","./a",0,"img",40]]&bright=120
//   #/tensors?run=./a&slice=[["./a",null,"act","[1,:,:]"]]&bins=50
// Only values that differ from the defaults are written. Changing the view pushes a history
// entry (the back button works); every other change replaces the current one.
// The `run` view is one run's training dashboard: it shows the first selected run.
// The views, their settings parameters and the plugin views come from views.js.

import { VIEWS } from '../views.js';

const VIEW_NAMES = VIEWS.map((view) => view.name);
// view ids a release renamed: an old bookmark's id -> the view it opens now
const RENAMED_VIEWS = new Map([['prcurves', 'pr_curves']]);
const VIEW_OPTIONS = Object.fromEntries(
  VIEWS.filter((view) => view.param).map((view) => [view.name, view.param]),
);
// ^ views whose own settings ride in one URL parameter each, as a JSON object that the
//   view's module reads and checks itself (state[view] is {} when missing or invalid)
export const AXES = ['step', 'relative', 'wall'];
export const SORTS = ['name', 'created', 'updated'];
export const MAX_SMOOTHING = 0.999;
export const HISTOGRAM_MODES = ['offset', 'overlay', 'distribution'];
// the plugins whose cards pick a step, and those whose tags can be unticked
const STEP_PLUGINS = VIEWS.filter((view) => view.plugin && view.steps).map((view) => view.plugin);
const TAG_PLUGINS = VIEWS.filter((view) => view.plugin).map((view) => view.plugin);
export const BINS = [10, 20, 30, 50, 100];
export const MAX_DIGITS = 8;

const DEFAULTS = Object.freeze({
  view: 'runs',
  runs: [], // selected run ids, in the order they were picked (it fixes their colours)
  q: '', // run search text
  regex: false, // run search is a regular expression
  sort: 'name',
  desc: false,
  tags: '', // tag filter (regular expression)
  runtag: '', // run list: show only the runs with this run tag (runs/annotations.js)
  showHidden: false, // run list: show the hidden and archived runs too (runs/lifecycle.js)
  smoothing: 0.6,
  axis: 'step',
  xtag: '', // scalars: a scalar tag as the x axis, joined on step (overrides `axis` there)
  envelope: false, // scalars: each downsampling bucket's min-max band
  log: false, // log-scale y
  // tag -> {x: [start, end] in the axis' units, y: [lo, hi] as plotly has it}; either may be absent
  zoom: {},
  off: [], // unticked tags of the plugin views, as "plugin:tag"
  at: {}, // cardKey(plugin, run, rank, tag) -> the step picked (none: follow the newest)
  slices: {}, // cardKey('tensor', run, rank, tag) -> the slice typed, e.g. "[0,:,:]"
  bright: 100, // image brightness, percent
  contrast: 100, // image contrast, percent
  hmode: 'offset', // histograms: offset (ridges), overlay or distribution
  bins: 30, // buckets of a tensor slice's value histogram
  digits: 4, // decimals shown in tensor tables
  // each view with a `param` (graph, lineage, landscape): its own settings, checked by it
  ...Object.fromEntries(Object.keys(VIEW_OPTIONS).map((view) => [view, {}])),
});

/** The key of one card's picks in `at` and `slices` (rank: null for files without one). */
export function cardKey(plugin, run, rank, tag) {
  return JSON.stringify([plugin, run, rank ?? null, tag]);
}

function isRank(value) {
  return value === null || Number.isInteger(value);
}

/** `at` from its URL form, [[plugin, run, rank, tag, step], ...]; invalid entries dropped. */
function parseSteps(text) {
  const at = {};
  for (const entry of parseList(text)) {
    const [plugin, run, rank, tag, step] = entry;
    if (entry.length !== 5 || !STEP_PLUGINS.includes(plugin)) continue;
    if (typeof run !== 'string' || typeof tag !== 'string' || !isRank(rank)) continue;
    if (Number.isSafeInteger(step)) at[cardKey(plugin, run, rank, tag)] = step;
  }
  return at;
}

/** `slices` from its URL form, [[run, rank, tag, slice], ...]; invalid entries dropped. */
function parseSlices(text) {
  const slices = {};
  for (const entry of parseList(text)) {
    const [run, rank, tag, slice] = entry;
    if (entry.length !== 4 || typeof run !== 'string' || typeof tag !== 'string') continue;
    if (isRank(rank) && typeof slice === 'string' && slice.length <= 200) {
      slices[cardKey('tensor', run, rank, tag)] = slice;
    }
  }
  return slices;
}

function parseList(text) {
  if (!text) return [];
  try {
    const raw = JSON.parse(text);
    return Array.isArray(raw) ? raw.filter(Array.isArray) : [];
  } catch {
    return [];
  }
}

function parseObject(text) {
  if (!text) return {};
  try {
    const raw = JSON.parse(text);
    return raw && typeof raw === 'object' && !Array.isArray(raw) ? raw : {};
  } catch {
    return {};
  }
}

function parseNumber(text, fallback, lo, hi, integer = false) {
  const value = integer ? Number.parseInt(text, 10) : Number.parseFloat(text);
  return Number.isFinite(value) ? Math.min(Math.max(value, lo), hi) : fallback;
}

function finitePair(value) {
  return Array.isArray(value) && value.length === 2 && value.every(Number.isFinite)
    ? [value[0], value[1]]
    : undefined;
}

function parseZoom(text) {
  const zoom = {};
  if (!text) return zoom;
  let raw;
  try {
    raw = JSON.parse(text);
  } catch {
    return zoom;
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return zoom;
  for (const [tag, entry] of Object.entries(raw)) {
    const x = finitePair(entry?.x);
    const y = finitePair(entry?.y);
    if (x || y) zoom[tag] = { ...(x && { x }), ...(y && { y }) };
  }
  return zoom;
}

/** The state a hash (`#/view?query`) describes; anything missing or invalid is a default. */
export function parseHash(hash) {
  const text = hash.replace(/^#\/?/, '');
  const cut = text.indexOf('?');
  const named = cut < 0 ? text : text.slice(0, cut);
  const view = RENAMED_VIEWS.get(named) ?? named;
  const params = new URLSearchParams(cut < 0 ? '' : text.slice(cut + 1));
  const smoothing = Number.parseFloat(params.get('smoothing'));
  return {
    view: VIEW_NAMES.includes(view) ? view : DEFAULTS.view,
    runs: [...new Set(params.getAll('run'))],
    q: params.get('q') ?? DEFAULTS.q,
    regex: params.get('re') === '1',
    sort: SORTS.includes(params.get('sort')) ? params.get('sort') : DEFAULTS.sort,
    desc: params.get('desc') === '1',
    tags: params.get('tags') ?? DEFAULTS.tags,
    runtag: params.get('runtag') ?? DEFAULTS.runtag,
    showHidden: params.get('hidden') === '1',
    smoothing: Number.isFinite(smoothing)
      ? Math.min(Math.max(smoothing, 0), MAX_SMOOTHING)
      : DEFAULTS.smoothing,
    axis: AXES.includes(params.get('axis')) ? params.get('axis') : DEFAULTS.axis,
    xtag: params.get('xtag') ?? DEFAULTS.xtag,
    envelope: params.get('env') === '1',
    log: params.get('log') === '1',
    zoom: parseZoom(params.get('zoom')),
    off: [...new Set(params.getAll('off'))].filter((item) =>
      TAG_PLUGINS.some((plugin) => item.startsWith(`${plugin}:`)),
    ),
    at: parseSteps(params.get('at')),
    slices: parseSlices(params.get('slice')),
    bright: parseNumber(params.get('bright'), DEFAULTS.bright, 0, 400, true),
    contrast: parseNumber(params.get('contrast'), DEFAULTS.contrast, 0, 400, true),
    hmode: HISTOGRAM_MODES.includes(params.get('hmode')) ? params.get('hmode') : DEFAULTS.hmode,
    bins: BINS.includes(Number(params.get('bins'))) ? Number(params.get('bins')) : DEFAULTS.bins,
    digits: parseNumber(params.get('digits'), DEFAULTS.digits, 0, MAX_DIGITS, true),
    ...Object.fromEntries(
      Object.entries(VIEW_OPTIONS).map(([option, name]) => [option, parseObject(params.get(name))]),
    ),
  };
}

/** The hash of `state` (the inverse of parseHash). */
export function formatHash(state) {
  const params = new URLSearchParams();
  for (const run of state.runs) params.append('run', run);
  if (state.q) params.set('q', state.q);
  if (state.regex) params.set('re', '1');
  if (state.sort !== DEFAULTS.sort) params.set('sort', state.sort);
  if (state.desc) params.set('desc', '1');
  if (state.tags) params.set('tags', state.tags);
  if (state.runtag) params.set('runtag', state.runtag);
  if (state.showHidden) params.set('hidden', '1');
  if (state.smoothing !== DEFAULTS.smoothing) params.set('smoothing', String(state.smoothing));
  if (state.axis !== DEFAULTS.axis) params.set('axis', state.axis);
  if (state.xtag) params.set('xtag', state.xtag);
  if (state.envelope) params.set('env', '1');
  if (state.log) params.set('log', '1');
  if (Object.keys(state.zoom).length) params.set('zoom', JSON.stringify(state.zoom));
  for (const item of state.off) params.append('off', item);
  const at = Object.entries(state.at).map(([key, step]) => [...JSON.parse(key), step]);
  if (at.length) params.set('at', JSON.stringify(at));
  const slices = Object.entries(state.slices).map(([key, slice]) => [
    ...JSON.parse(key).slice(1),
    slice,
  ]);
  if (slices.length) params.set('slice', JSON.stringify(slices));
  if (state.bright !== DEFAULTS.bright) params.set('bright', String(state.bright));
  if (state.contrast !== DEFAULTS.contrast) params.set('contrast', String(state.contrast));
  if (state.hmode !== DEFAULTS.hmode) params.set('hmode', state.hmode);
  if (state.bins !== DEFAULTS.bins) params.set('bins', String(state.bins));
  if (state.digits !== DEFAULTS.digits) params.set('digits', String(state.digits));
  for (const [view, name] of Object.entries(VIEW_OPTIONS)) {
    if (Object.keys(state[view]).length) params.set(name, JSON.stringify(state[view]));
  }
  const query = params.toString();
  return `#/${state.view}${query ? `?${query}` : ''}`;
}

/**
 * The current state and its listeners. `set` updates the URL and calls every listener with
 * the new state and the set of keys that changed; so does a hash change from outside
 * (back/forward, an edited address).
 */
export class Store {
  #state;
  #listeners = new Set();

  constructor() {
    this.#state = parseHash(location.hash);
    window.addEventListener('hashchange', () => this.#replace(parseHash(location.hash)));
  }

  get state() {
    return this.#state;
  }

  /** Merge `patch` into the state; a change of view adds a history entry. */
  set(patch) {
    const next = { ...this.#state, ...patch };
    const hash = formatHash(next);
    if (hash !== location.hash) {
      const push = next.view !== this.#state.view;
      history[push ? 'pushState' : 'replaceState'](null, '', hash);
    }
    this.#replace(next);
  }

  /** The hash the state would have with `patch` applied (for links). */
  href(patch) {
    return formatHash({ ...this.#state, ...patch });
  }

  subscribe(listener) {
    this.#listeners.add(listener);
  }

  #replace(next) {
    const changed = new Set(
      Object.keys(next).filter(
        (key) => JSON.stringify(next[key]) !== JSON.stringify(this.#state[key]),
      ),
    );
    if (!changed.size) return;
    this.#state = next;
    for (const listener of this.#listeners) listener(next, changed);
  }
}
