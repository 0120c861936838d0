// scalars.js: the Scalars view, the selected runs overlaid with one chart card per tag
// (none selected: the most recent runs with scalars, see widgets/runsidebar.js shownRuns).
//
// It owns the view's controls (tag filter, smoothing, x axis, log scale, zoom reset,
// downloads), the list of the runs shown with their colours, and the set of cards. Cards
// draw only while on screen (an IntersectionObserver). Smoothing is done by the server on
// the full-resolution series, so a curve does not change with zoom or downsampling; a zoom
// asks the server for that range at full detail.

import { downloadUrl } from '../core/api.js';
import { collator, el, toolbar } from '../core/dom.js';
import { AXES, MAX_SMOOTHING } from '../core/state.js';
import { CardWatch } from '../widgets/cardwatch.js';
import { Colours } from '../widgets/colours.js';
import { RunsSidebar } from '../widgets/runsidebar.js';
import { TagFilter } from '../widgets/tagfilter.js';
import { TagCard } from './card.js';

const AXIS_LABELS = { step: 'Step', relative: 'Relative', wall: 'Wall time' };
const SMOOTHING_COMMIT_MS = 200; // the slider refetches at most this often while dragged

export class ScalarsView {
  constructor(root, store) {
    this.store = store;
    this.meta = new Map(); // run id -> its /runs entry
    this.loaded = false;
    this.cards = new Map(); // tag -> TagCard
    this.colours = new Colours();
    this.signature = '';
    this.sidebar = new RunsSidebar(store, { plugin: 'scalar', noun: 'scalars' });
    this.shown = this.sidebar.shown(this.meta); // the runs shown (#rebuild)
    this.watch = new CardWatch(200, (element) => this.cards.get(element.dataset.tag));
    this.#build(root);
    this.#syncControls(store.state);
    store.subscribe((state, changed) => this.#onState(state, changed));
  }

  /** Take a new /runs response; `force` reloads the charts on screen even if nothing changed. */
  setRuns(data, force = false) {
    this.meta = new Map(data.runs.map((run) => [run.id, run]));
    this.loaded = true;
    const shown = this.sidebar.shown(this.meta);
    if (this.#signature(shown) === this.signature && !force) {
      this.sidebar.update(shown); // the runs shown are the same, but not what they are among
      return;
    }
    this.#rebuild(shown);
    this.#reloadVisible();
  }

  /** What a card needs to load: the runs, the axis settings and the tag's zoom. */
  context(tag) {
    const { axis, smoothing, log, zoom } = this.store.state;
    return { runs: this.shown.runs, axis, smoothing, log, zoom: zoom[tag], style: this.style };
  }

  /** The user zoomed the chart of `tag` ({x, y}: null where that axis shows everything). */
  zoomed(tag, { x, y }) {
    const zoom = { ...this.store.state.zoom };
    if (x || y) zoom[tag] = { ...(x && { x }), ...(y && { y }) };
    else delete zoom[tag];
    this.store.set({ zoom });
  }

  /** A series' colour and label; a run's ranks are separate series, "run (rank 1)". */
  style = (run, rank) => {
    const ranked = (this.meta.get(run)?.ranks.length ?? 0) > 1 && rank !== null;
    return this.colours.style(run, rank, ranked);
  };

  #build(root) {
    this.tagFilter = new TagFilter(this.store);
    this.slider = el('input', {
      type: 'range',
      min: '0',
      max: String(MAX_SMOOTHING),
      step: '0.001',
      class: 'smoothing-slider',
      'aria-label': 'Smoothing',
      oninput: () => this.#smoothingInput(this.slider.value, false),
      onchange: () => this.#smoothingInput(this.slider.value, true),
    });
    this.smoothingBox = el('input', {
      type: 'number',
      min: '0',
      max: String(MAX_SMOOTHING),
      step: '0.01',
      class: 'smoothing-value',
      'aria-label': 'Smoothing weight',
      onchange: () => this.#smoothingInput(this.smoothingBox.value, true),
    });
    this.axisButtons = AXES.map((axis) =>
      el('button', {
        type: 'button',
        class: 'segment',
        dataset: { axis },
        text: AXIS_LABELS[axis],
        onclick: () => this.store.set({ axis, zoom: {} }), // ranges do not carry across axes
      }),
    );
    this.logToggle = el('button', {
      type: 'button',
      class: 'toggle log-toggle',
      text: 'Log y',
      title: 'Logarithmic y axis',
      onclick: () => {
        const { log, zoom } = this.store.state;
        this.store.set({ log: !log, zoom: withoutY(zoom) }); // y ranges are in the old scale
      },
    });
    this.resetAll = el('button', {
      type: 'button',
      class: 'button reset-zoom',
      text: 'Reset zoom',
      onclick: () => this.store.set({ zoom: {} }),
    });
    const link = (format) =>
      el('a', { class: 'button', text: format, title: 'Download every curve shown', download: '' });
    this.csv = link('CSV');
    this.json = link('JSON');
    this.grid = el('div', { class: 'card-grid' });
    this.message = el('p', { class: 'empty-note', hidden: true });
    root.append(
      toolbar(
        ...this.tagFilter.elements,
        el('label', { class: 'control' }, 'Smoothing', this.slider, this.smoothingBox),
        el(
          'div',
          { class: 'segmented', role: 'group', 'aria-label': 'X axis' },
          ...this.axisButtons,
        ),
        this.logToggle,
        el('span', { class: 'grow' }),
        this.resetAll,
        el('span', { class: 'download muted' }, 'Download', this.csv, this.json),
      ),
      this.sidebar.element(el('div', { class: 'cards' }, this.message, this.grid)),
    );
  }

  #smoothingInput(text, commit) {
    const value = Math.min(Math.max(Number.parseFloat(text) || 0, 0), MAX_SMOOTHING);
    this.smoothingBox.value = String(value);
    this.slider.value = String(value);
    clearTimeout(this.smoothingTimer);
    const commitNow = () => this.store.set({ smoothing: value });
    if (commit) commitNow();
    else this.smoothingTimer = setTimeout(commitNow, SMOOTHING_COMMIT_MS);
  }

  #onState(state, changed) {
    this.#syncControls(state);
    if (changed.has('runs') || changed.has('tags')) {
      this.#rebuild();
      if (changed.has('runs')) this.#reloadVisible();
    } else if (['smoothing', 'axis', 'log'].some((key) => changed.has(key))) {
      this.#reloadVisible();
    } else if (changed.has('zoom')) {
      for (const card of this.cards.values()) card.zoomTo(state.zoom[card.tag]);
    }
  }

  #syncControls(state) {
    this.tagFilter.sync(state);
    // Not while the user edits them (a committed value would jump back under the cursor).
    const smoothing = String(state.smoothing);
    if (document.activeElement !== this.smoothingBox) this.smoothingBox.value = smoothing;
    if (document.activeElement !== this.slider) this.slider.value = smoothing;
    for (const button of this.axisButtons) {
      button.setAttribute('aria-pressed', String(button.dataset.axis === state.axis));
    }
    this.logToggle.setAttribute('aria-pressed', String(state.log));
    this.sidebar.sync();
    this.resetAll.disabled = !Object.keys(state.zoom).length;
  }

  /** What, of the data, decides the cards and their curves (`shown`: the runs shown). */
  #signature(shown) {
    return JSON.stringify(
      shown.runs.map((id) => {
        const run = this.meta.get(id);
        return [id, run && [run.updated, run.points, run.status, run.tags.scalar, run.ranks]];
      }),
    );
  }

  /** Rebuild the run legend and the set of cards (kept where their tag still shows). */
  #rebuild(shown = this.sidebar.shown(this.meta)) {
    this.shown = shown;
    this.signature = this.#signature(shown);
    const { runs } = shown;
    const { tags: filter } = this.store.state;
    this.colours.assign(runs, this.meta);
    this.sidebar.update(shown);
    this.#renderRunLegend(shown);
    const all = new Set();
    for (const id of runs) for (const tag of this.meta.get(id)?.tags.scalar ?? []) all.add(tag);
    const tags = [...all].filter(this.tagFilter.matcher(filter)).sort(collator.compare);
    this.tagFilter.counted(tags.length, all.size);
    this.shownTags = tags;

    this.watch.drop(this.cards, new Set(tags));
    for (const tag of tags) {
      let card = this.cards.get(tag);
      if (!card) {
        card = new TagCard(tag, this);
        this.cards.set(tag, card);
        this.watch.add(card);
      }
      this.grid.append(card.element); // in tag order (moving an element keeps its chart)
    }
    this.#updateLinks();
    this.#showMessage(shown, all.size, tags.length);
  }

  #renderRunLegend(shown) {
    this.sidebar.list.replaceChildren(
      ...shown.runs.map((id) => {
        const run = this.meta.get(id);
        const ranks = run && run.ranks.length > 1 ? run.ranks : [null];
        const swatches = ranks.map((rank) =>
          el('span', {
            class: 'swatch',
            title: this.style(id, rank).label,
            style: `background:${this.style(id, rank).colour}`,
          }),
        );
        const remove = this.sidebar.remove(id, shown);
        const name = el('span', { class: 'run-name', title: id, text: id });
        const note =
          this.loaded && !run
            ? el('span', { class: 'badge warn', text: 'not found' })
            : ranks.length > 1
              ? el('span', { class: 'muted', text: `${ranks.length} ranks` })
              : null;
        return el('li', {}, el('span', { class: 'swatches' }, ...swatches), name, note, remove);
      }),
    );
  }

  #updateLinks() {
    const { runs } = this.shown;
    this.csv.href = downloadUrl(runs, this.shownTags, 'csv');
    this.json.href = downloadUrl(runs, this.shownTags, 'json');
    for (const card of this.cards.values()) card.setRuns(runs);
  }

  #showMessage(shown, tagCount, shownCount) {
    let text = '';
    if (!this.loaded) text = 'Loading…';
    else if (!shown.runs.length) text = 'No run has recorded scalars yet.';
    else if (!tagCount) text = 'The selected runs have no scalars yet.';
    else if (!shownCount) text = 'No tag matches the filter.';
    this.message.textContent = text;
    this.message.hidden = !text;
  }

  #reloadVisible() {
    for (const card of this.cards.values()) card.load();
  }
}

function withoutY(zoom) {
  const out = {};
  for (const [tag, { x }] of Object.entries(zoom)) if (x) out[tag] = { x };
  return out;
}
