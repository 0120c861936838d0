// scalars.js: the Scalars view, the selected runs overlaid with one chart card per tag
// (none selected: the most recent runs with scalars, see widgets/runsidebar.js shownRuns).
//
// It owns the view's controls (tag filter, smoothing, x axis: step, time or another scalar
// tag joined on step, log scale, min-max envelope, groups of runs (groups.js), zoom reset,
// downloads), the list of the runs shown with their colours, and the set of cards, grouped
// by tag prefix (taggroups.js: a collapsed group holds none). Cards draw only while on
// screen (an IntersectionObserver).
// Smoothing is done by the server on the full-resolution series, so a curve does not change
// with zoom or downsampling; a zoom asks the server for that range at full detail.

import { downloadUrl } from '../core/api.js';
import { collator, el, toolbar } from '../core/dom.js';
import { AXES, MAX_SMOOTHING } from '../core/state.js';
import { CardWatch } from '../widgets/cardwatch.js';
import { Colours } from '../widgets/colours.js';
import { RunsSidebar } from '../widgets/runsidebar.js';
import { TagFilter } from '../widgets/tagfilter.js';
import { TagCard } from './card.js';
import { GroupControls, groupDownloadUrl, groupOptions } from './groups.js';
import { snapshotLink } from './snapshotlink.js';
import { TagGroups } from './taggroups.js';

const AXIS_LABELS = { step: 'Step', relative: 'Relative', wall: 'Wall time' };
const SMOOTHING_COMMIT_MS = 200; // the slider refetches at most this often while dragged
// state keys that redraw the charts, and those that change the download links too
// (`scalars`: the grouping of the runs, groups.js)
const RELOAD_KEYS = ['smoothing', 'axis', 'xtag', 'log', 'envelope', 'scalars'];
const LINK_KEYS = ['axis', 'xtag', 'scalars', 'smoothing'];

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
    this.tagGroups = new TagGroups({
      cards: this.cards,
      watch: this.watch,
      create: (tag) => {
        const card = new TagCard(tag, this);
        card.setRuns(this.shown.runs, this.#axis());
        return card;
      },
    });
    this.#build(root);
    this.#syncControls(store.state);
    store.subscribe((state, changed) => this.#onState(state, changed));
  }

  /** Take a new /runs response; `force` reloads the charts on screen even if nothing changed. */
  setRuns(data, force = false) {
    this.meta = new Map(data.runs.map((run) => [run.id, run]));
    // a group colour chosen (groups.js; its colour comes with the groups) moves this
    this.annotationsVersion = data.annotations_version;
    this.loaded = true;
    const shown = this.sidebar.shown(this.meta);
    if (this.#signature(shown) === this.signature && !force) {
      this.sidebar.update(shown); // the runs shown are the same, but not what they are among
      return;
    }
    this.#rebuild(shown);
    this.#reloadVisible();
  }

  /** What a card needs to load: the runs, the axis settings, the grouping, the tag's zoom. */
  context(tag) {
    const { smoothing, log, zoom, envelope } = this.store.state;
    const axis = this.#axis();
    return {
      runs: this.shown.runs,
      axis,
      smoothing,
      log,
      envelope,
      group: groupOptions(this.store.state),
      zoom: zoom[tag],
      style: this.style,
    };
  }

  /** The x axis the server is asked for: step, relative, wall or tag:<the x tag>. */
  #axis() {
    const { axis, xtag } = this.store.state;
    return xtag ? `tag:${xtag}` : axis;
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
        // ranges do not carry across axes
        onclick: () => this.store.set({ axis, xtag: '', zoom: {} }),
      }),
    );
    this.xTagSelect = el('select', {
      class: 'select x-tag-select',
      'aria-label': 'X axis: a scalar tag',
      title: 'Plot against another scalar of the same run (epoch, tokens seen ...), by step',
      onchange: () => this.store.set({ xtag: this.xTagSelect.value, zoom: {} }),
    });
    this.groupControls = new GroupControls(this.store, () => this.#reloadVisible());
    this.envelopeToggle = el('button', {
      type: 'button',
      class: 'toggle envelope-toggle',
      text: 'Envelope',
      title: 'Shade the min-max of the points each drawn point stands for (spikes always show)',
      onclick: () => this.store.set({ envelope: !this.store.state.envelope }),
    });
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
        this.xTagSelect,
        this.logToggle,
        this.envelopeToggle,
        ...this.groupControls.elements,
        el('span', { class: 'grow' }),
        this.resetAll,
        el('span', { class: 'download muted' }, 'Download', this.csv, this.json),
        snapshotLink(() => ({
          runs: this.shown.runs,
          filter: this.store.state.tags,
          smoothing: this.store.state.smoothing,
          envelope: this.store.state.envelope,
          group: groupOptions(this.store.state),
        })),
      ),
      this.sidebar.element(el('div', { class: 'cards' }, this.message, this.tagGroups.element)),
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
    } else if (RELOAD_KEYS.some((key) => changed.has(key))) {
      // the groups' downloads carry the grouping and the smoothing
      if (LINK_KEYS.some((key) => changed.has(key))) this.#updateLinks();
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
      const pressed = !state.xtag && button.dataset.axis === state.axis;
      button.setAttribute('aria-pressed', String(pressed));
    }
    this.#syncXTags(state);
    this.logToggle.setAttribute('aria-pressed', String(state.log));
    this.envelopeToggle.setAttribute('aria-pressed', String(state.envelope));
    this.groupControls.sync(state);
    this.sidebar.sync();
    this.resetAll.disabled = !Object.keys(state.zoom).length;
  }

  /** What, of the data, decides the cards and their curves (`shown`: the runs shown). */
  #signature(shown) {
    return JSON.stringify([
      this.annotationsVersion,
      shown.runs.map((id) => {
        const run = this.meta.get(id);
        const colour = run?.annotation?.colour;
        return [id, run && [run.updated, run.points, run.status, run.tags.scalar, run.ranks, colour]];
      }),
    ]);
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
    this.xTags = [...all].sort(collator.compare);
    this.#syncXTags(this.store.state);

    // the cards of the open prefix groups (a filter that leaves no tag out opens none)
    this.tagGroups.update(tags, tags.length < all.size ? filter : '');
    this.#updateLinks();
    this.#showMessage(shown, all.size, tags.length);
  }

  #renderRunLegend(shown) {
    this.sidebar.list.replaceChildren(
      ...shown.runs.map((id) => {
        const run = this.meta.get(id);
        const ranks = run && run.ranks.length > 1 ? run.ranks : [null];
        const swatches = this.sidebar.swatches(
          id,
          ranks.map((rank) => this.style(id, rank)),
          run,
        );
        const remove = this.sidebar.remove(id, shown);
        const name = el('span', { class: 'run-name', title: id, text: id });
        const note =
          this.loaded && !run
            ? el('span', { class: 'badge warn', text: 'not found' })
            : ranks.length > 1
              ? el('span', { class: 'muted', text: `${ranks.length} ranks` })
              : null;
        return el('li', {}, swatches, name, note, remove);
      }),
    );
  }

  /** The x tag choices: the scalar tags of the runs shown (and the URL's, even if none has it). */
  #syncXTags(state) {
    const tags = this.xTags ?? [];
    const choices = state.xtag && !tags.includes(state.xtag) ? [state.xtag, ...tags] : tags;
    const key = JSON.stringify(choices);
    if (key !== this.xTagKey) {
      this.xTagKey = key;
      this.xTagSelect.replaceChildren(
        el('option', { value: '', text: 'X: a tag…' }),
        ...choices.map((tag) => el('option', { value: tag, text: tag })),
      );
    }
    this.xTagSelect.value = state.xtag;
    this.xTagSelect.classList.toggle('active', Boolean(state.xtag));
  }

  #updateLinks() {
    const { runs } = this.shown;
    const axis = this.#axis();
    const { smoothing } = this.store.state;
    const group = groupOptions(this.store.state);
    const url = (format) =>
      group
        ? groupDownloadUrl(runs, this.shownTags, format, axis, group, smoothing)
        : downloadUrl(runs, this.shownTags, format, axis);
    this.csv.href = url('csv');
    this.json.href = url('json');
    for (const card of this.cards.values()) card.setRuns(runs, axis);
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
