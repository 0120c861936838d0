// landscape.js: the Loss landscape view (#/landscape?run=<id>): the landscapes MindSpore's
// SummaryLandscape (or sumlens') recorded for a run, as a 3-D surface and a 2-D contour
// with the training path and the convergence point; with two selected runs, both side by
// side, the same landscape of each, their surfaces turned together. With none selected,
// the most recently updated run holding a landscape (widgets/shownruns.js), said so.
//
// The toolbar picks the landscape: a *train* one (one per interval of epochs or steps,
// with the path training took) or the *result* one (around the final weights); what is
// drawn (surface, contour or both). The choice, and the camera, live in the URL
// (store.state.landscape, checked here), so a reload shows the same view. Each run's
// column is a LandscapePanel (landscapepanel.js); data loads only while the view is shown.

import { el, plural, toolbar } from '../core/dom.js';
import { RunsSidebar } from '../widgets/runsidebar.js';
import { LandscapePanel } from './landscapepanel.js';
import { DEFAULT_EYE, intervalLabel } from './landscapeplots.js';

const MAX_RUNS = 2; // runs drawn side by side
const KINDS = ['train', 'result'];
const KIND_LABELS = { train: 'Train', result: 'Result' };
const SHOWS = ['both', 'surface', 'contour'];
const SHOW_LABELS = { both: 'Both', surface: 'Surface', contour: 'Contour' };
const MAX_EYE = 100;
const INTERVAL = /^-?\d+(?:--?\d+)*$/; // MindInsight's interval id: entries joined by '-'

/** The view's settings from the URL, each checked (anything invalid is its default). */
export function readOptions(raw) {
  const kind = KINDS.includes(raw.kind) ? raw.kind : null; // null: train when there is one
  const interval =
    typeof raw.interval === 'string' && raw.interval.length <= 2000 && INTERVAL.test(raw.interval)
      ? raw.interval
      : null; // null: the first interval
  const show = SHOWS.includes(raw.show) ? raw.show : 'both';
  const eye =
    Array.isArray(raw.eye) &&
    raw.eye.length === 3 &&
    raw.eye.every((v) => Number.isFinite(v) && Math.abs(v) <= MAX_EYE) &&
    raw.eye.some((v) => v !== 0)
      ? raw.eye
      : null;
  return { kind, interval, show, eye };
}

/** The URL form of `options`: defaults left out. */
function writeOptions({ kind, interval, show, eye }) {
  return {
    ...(kind && { kind }),
    ...(interval && { interval }),
    ...(show !== 'both' && { show }),
    ...(eye && { eye }),
  };
}

export class LandscapeView {
  constructor(root, store) {
    this.root = root;
    this.store = store;
    this.meta = new Map(); // run id -> its /runs entry
    this.loaded = false;
    this.panels = new Map(); // run id -> LandscapePanel (the runs drawn)
    this.lastShown = null; // the [kind, interval, show] the panels were last asked to show
    this.#build(root);
    store.subscribe((state, changed) => this.#onState(state, changed));
    this.#syncControls();
    this.sidebar.sync();
  }

  /** Take a new /runs response; `forced` reloads every shown run. */
  setRuns(data, forced = false) {
    this.meta = new Map(data.runs.map((run) => [run.id, run]));
    this.loaded = true;
    if (this.#shown()) this.#refresh(forced, false);
  }

  get options() {
    return readOptions(this.store.state.landscape);
  }

  #shown() {
    return this.store.state.view === 'landscape';
  }

  #build(root) {
    this.kindButtons = KINDS.map((kind) =>
      el('button', {
        type: 'button',
        class: 'segment',
        dataset: { landKind: kind },
        text: KIND_LABELS[kind],
        onclick: () => this.#set({ kind }),
      }),
    );
    this.intervalSelect = el('select', {
      class: 'select land-interval',
      'aria-label': 'Interval of the train landscape',
      onchange: () => this.#set({ kind: 'train', interval: this.intervalSelect.value }),
    });
    this.intervalControl = el('label', { class: 'control' }, 'Interval', this.intervalSelect);
    this.showButtons = SHOWS.map((show) =>
      el('button', {
        type: 'button',
        class: 'segment',
        dataset: { landShow: show },
        text: SHOW_LABELS[show],
        onclick: () => this.#set({ show }),
      }),
    );
    this.resetButton = el('button', {
      type: 'button',
      class: 'button land-reset',
      text: 'Reset camera',
      title: 'Look at the surfaces from the default angle',
      onclick: () => this.#resetCamera(),
    });
    this.sidebar = new RunsSidebar(this.store, {
      plugin: 'landscape',
      noun: 'loss landscapes',
      count: 1, // nothing selected: the most recent run with one
      listClass: 'run-legend plugin-legend',
    });
    this.message = el('p', { class: 'empty-note land-message', hidden: true });
    this.grid = el('div', { class: 'land-panels' });
    root.append(
      toolbar(
        el('div', { class: 'segmented', role: 'group', 'aria-label': 'Landscape' },
          ...this.kindButtons),
        this.intervalControl,
        el('div', { class: 'segmented', role: 'group', 'aria-label': 'Draw' },
          ...this.showButtons),
        this.resetButton,
      ),
      this.sidebar.element(
        el('div', { class: 'view-cards land-body' }, this.message, this.grid),
      ),
    );
  }

  #set(patch) {
    const next = { ...this.options, ...patch };
    this.store.set({ landscape: writeOptions(next) });
  }

  #resetCamera() {
    this.#set({ eye: null });
  }

  #onState(state, changed) {
    this.sidebar.sync();
    if (!this.#shown()) {
      if (changed.has('view')) for (const panel of this.panels.values()) panel.hide();
      return;
    }
    if (!this.loaded) return;
    if (changed.has('view') || changed.has('runs')) this.#refresh(false, true);
    else if (changed.has('landscape')) this.#onOptions();
  }

  /** Only the camera changed: turn the surfaces; else show what the options pick. */
  #onOptions() {
    const eye = this.options.eye ?? DEFAULT_EYE;
    if (this.lastShown === JSON.stringify(this.#choiceKey())) {
      for (const panel of this.panels.values()) panel.turn(eye);
      return;
    }
    this.#showPanels();
  }

  #choiceKey() {
    const { kind, interval, show } = this.options;
    return [kind, interval, show];
  }

  /**
   * The runs drawn, their panels made (or kept) and their listings loaded (again when a
   * run changed, or every one when `forced`); the panels draw again when a listing changed
   * or `redraw` (the view or the selection changed).
   */
  async #refresh(forced, redraw) {
    const shown = this.sidebar.shown(this.meta);
    const drawn = shown.runs.slice(0, MAX_RUNS);
    for (const [id, panel] of this.panels) {
      if (!drawn.includes(id)) {
        panel.destroy();
        this.panels.delete(id);
      }
    }
    for (const id of drawn) {
      if (!this.panels.has(id)) {
        this.panels.set(id, new LandscapePanel(id, (eye) => this.#set({ eye: rounded(eye) })));
      }
    }
    this.grid.replaceChildren(...drawn.map((id) => this.panels.get(id).element));
    this.grid.dataset.runs = String(drawn.length);
    this.sidebar.update(shown);
    this.#renderRunLegend(shown);
    this.#sayWhy(shown, drawn);
    const loads = drawn.map((id) => {
      const run = this.meta.get(id);
      if (!run) return false; // not listed (yet): asked for once /runs has it
      const signature = JSON.stringify([run.updated, run.status, run.tags.landscape]);
      return this.panels.get(id).list(signature, forced);
    });
    const changed = await Promise.all(loads);
    if (!this.#shown()) return;
    if (redraw || changed.some(Boolean)) this.#showPanels();
  }

  #sayWhy({ runs }, drawn) {
    const lines = [];
    if (!runs.length) lines.push('No run holds a loss landscape yet.');
    const unknown = drawn.filter((id) => !this.meta.has(id));
    if (unknown.length) lines.push(`Not found (yet): ${unknown.join(', ')}.`);
    if (runs.length > MAX_RUNS) {
      lines.push(
        `Showing the first ${MAX_RUNS} of ${plural(runs.length, 'selected run')} side by side.`,
      );
    }
    this.message.textContent = lines.join(' ');
    this.message.hidden = !lines.length;
  }

  #renderRunLegend(shown) {
    this.sidebar.list.replaceChildren(
      ...shown.runs.map((id, i) =>
        el(
          'li',
          { class: i < MAX_RUNS ? 'land-legend-run' : 'land-legend-run muted' },
          el('span', { class: 'legend-name', title: id, text: id }),
          this.sidebar.remove(id, shown),
        ),
      ),
    );
  }

  /** The landscapes the drawn runs hold: kinds, and the intervals of train ones. */
  #available() {
    const kinds = new Set();
    const intervals = new Map(); // interval key -> {label, first: its first entry}
    for (const panel of this.panels.values()) {
      for (const entry of panel.listing ?? []) {
        if (!entry.kind) continue;
        kinds.add(entry.kind);
        if (entry.kind === 'train' && !intervals.has(entry.interval)) {
          const label = intervalLabel(entry.unit, entry.intervals);
          intervals.set(entry.interval, { label, first: entry.intervals[0] });
        }
      }
    }
    const ordered = [...intervals].sort((a, b) => a[1].first - b[1].first);
    return { kinds, intervals: new Map(ordered) };
  }

  /** What the options pick among what is available: {kind, interval}. */
  #choice(available) {
    const options = this.options;
    const trainFirst = available.kinds.has('train') || !available.kinds.has('result');
    const kind = options.kind ?? (trainFirst ? 'train' : 'result');
    const keys = [...available.intervals.keys()];
    const interval = keys.includes(options.interval) ? options.interval : (keys[0] ?? null);
    return { kind, interval };
  }

  #showPanels() {
    const available = this.#available();
    const choice = this.#choice(available);
    const { show, eye } = this.options;
    this.lastShown = JSON.stringify(this.#choiceKey());
    this.#syncControls(available, choice);
    this.root.dataset.kind = choice.kind;
    for (const panel of this.panels.values()) panel.show(choice, show, eye ?? DEFAULT_EYE);
  }

  #syncControls(available = { kinds: new Set(), intervals: new Map() }, choice = {}) {
    const { show } = this.options;
    for (const button of this.kindButtons) {
      const kind = button.dataset.landKind;
      button.setAttribute('aria-pressed', String(kind === choice.kind));
      button.disabled = !available.kinds.has(kind) && kind !== choice.kind;
    }
    for (const button of this.showButtons) {
      button.setAttribute('aria-pressed', String(button.dataset.landShow === show));
    }
    const options = [...available.intervals].map(([key, { label }]) =>
      el('option', { value: key, text: label }),
    );
    this.intervalSelect.replaceChildren(...options);
    if (choice.interval) this.intervalSelect.value = choice.interval;
    this.intervalSelect.disabled = choice.kind !== 'train' || options.length < 2;
    this.intervalControl.hidden = !options.length;
    this.resetButton.disabled = show === 'contour';
  }
}

function rounded(eye) {
  return eye.map((value) => Math.round(value * 1000) / 1000);
}
