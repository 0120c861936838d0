// pluginview.js: what the Images, Histograms and Tensors views share.
//
// A toolbar with the tag filter (the `tags` regular expression, shared with Scalars) and a
// checkbox per tag (unticked tags are kept in the URL as `off`), a sidebar listing the
// runs shown with their colours (the selected ones; none selected: the most recent runs
// with the view's data, see widgets/runsidebar.js), and a grid of cards. Images and tensors
// group their cards by tag, one card per run side by side; histograms have one card per
// tag with a chart per run. A card loads only while on screen (an IntersectionObserver calls
// show/hide) and reloads when the poller reports that one of its runs changed.
//
// A card is any object with `element`, `runs` (the run ids it shows), `visible`, and the
// methods show(), hide(), refresh() (its runs changed), sync(state, changed) and destroy().
// SeriesCard (seriescard.js) is the card of one (run, tag) with a panel per rank.

import { collator, el, plural, toolbar } from '../core/dom.js';
import { CardWatch } from '../widgets/cardwatch.js';
import { Colours } from '../widgets/colours.js';
import { RunsSidebar } from '../widgets/runsidebar.js';
import { TagFilter } from '../widgets/tagfilter.js';

export class PluginView {
  /**
   * The view `view` (its name in the URL) of `plugin`'s tags; `noun` names them in messages
   * ("images"); `grouped`: a section per tag with a card per run (else a card per tag).
   * Subclasses provide createCard(tag, run) (run: null when not grouped) and may provide
   * controls() (toolbar elements) and syncControls(state); they call start() once built.
   */
  constructor(root, store, { plugin, view, noun, grouped }) {
    Object.assign(this, { root, store, plugin, view, noun, grouped });
    this.meta = new Map(); // run id -> its /runs entry
    this.loaded = false;
    this.cards = new Map(); // card key -> card
    this.groups = new Map(); // tag -> its section (grouped views)
    this.signatures = new Map(); // run id -> what of it the cards show, as JSON
    this.colours = new Colours();
    this.byElement = new WeakMap();
    this.watch = new CardWatch(300, (element) => {
      const card = this.byElement.get(element);
      return card && this.cards.has(card.key) ? card : null;
    });
    this.#build(root);
    store.subscribe((state, changed) => this.#onState(state, changed));
  }

  /** Finish construction (after the subclass' fields exist): draw the controls. */
  start() {
    this.#syncAll(this.store.state);
  }

  /** Take a new /runs response; `force` reloads every card even if its runs did not change. */
  setRuns(data, force = false) {
    this.meta = new Map(data.runs.map((run) => [run.id, run]));
    const first = !this.loaded;
    this.loaded = true;
    const before = this.signatures;
    const shown = this.sidebar.shown(this.meta);
    this.signatures = new Map(shown.runs.map((id) => [id, this.#signature(id)]));
    const changed = new Set(
      [...this.signatures].filter(([id, sig]) => force || before.get(id) !== sig).map(([id]) => id),
    );
    const gone = [...before.keys()].some((id) => !this.signatures.has(id));
    if (first || changed.size || gone) this.#rebuild(shown);
    else this.sidebar.update(shown); // the same runs shown, but maybe among more or fewer
    for (const card of this.cards.values()) {
      if (card.runs.some((id) => changed.has(id))) card.refresh();
    }
  }

  /** A series' colour and label: a run's ranks are told apart when it has several. */
  style(run, rank, ranked) {
    return this.colours.style(run, rank, ranked);
  }

  /** The colour swatches of a run: one per rank when it has several. */
  swatches(id) {
    return el(
      'span',
      { class: 'swatches' },
      ...this.#styles(id).map(({ colour, label }) =>
        el('span', { class: 'swatch', title: label, style: `background:${colour}` }),
      ),
    );
  }

  /** The colour and label of each series of run `id`: one per rank when it has several. */
  #styles(id) {
    const ranks = this.meta.get(id)?.ranks ?? [];
    return ranks.length > 1
      ? ranks.map((rank) => this.style(id, rank, true))
      : [this.style(id, null, false)];
  }

  /** The URL state now. */
  get state() {
    return this.store.state;
  }

  controls() {
    return [];
  }

  syncControls() {}

  #signature(id) {
    const run = this.meta.get(id);
    const colour = run?.annotation?.colour;
    return JSON.stringify(run && [run.updated, run.status, run.tags[this.plugin], run.ranks, colour]);
  }

  #build(root) {
    this.tagFilter = new TagFilter(this.store);
    this.allBox = el('input', {
      type: 'checkbox',
      'aria-label': `Show every ${this.plugin} tag that matches the filter`,
      onchange: () => this.#tickAll(this.allBox.checked),
    });
    this.tagPicks = el('div', { class: 'tag-picks', role: 'group', 'aria-label': 'Tags' });
    this.tagPicks.addEventListener('change', (event) => {
      const tag = event.target.dataset?.tag;
      if (tag !== undefined) this.#tick(tag, event.target.checked);
    });
    this.sidebar = new RunsSidebar(this.store, {
      plugin: this.plugin,
      noun: this.noun,
      listClass: 'run-legend plugin-legend',
    });
    this.grid = el('div', { class: this.grouped ? 'tag-groups' : 'pcard-grid' });
    this.message = el('p', { class: 'empty-note', hidden: true });
    root.append(
      toolbar(
        ...this.tagFilter.elements,
        ...this.controls(),
      ),
      el(
        'div',
        { class: 'tag-bar' },
        el('label', { class: 'tag-pick all' }, this.allBox, 'All'),
        this.tagPicks,
      ),
      this.sidebar.element(el('div', { class: 'view-cards' }, this.message, this.grid)),
    );
  }

  #onState(state, changed) {
    this.#syncAll(state);
    if (['runs', 'tags', 'off'].some((key) => changed.has(key))) this.#rebuild();
    for (const card of this.cards.values()) card.sync(state, changed);
  }

  #syncAll(state) {
    this.tagFilter.sync(state);
    this.sidebar.sync();
    this.syncControls(state);
  }

  #tick(tag, on) {
    const item = `${this.plugin}:${tag}`;
    const off = this.state.off.filter((entry) => entry !== item);
    if (!on) off.push(item);
    this.store.set({ off });
  }

  #tickAll(on) {
    const shown = new Set(this.matching.map((tag) => `${this.plugin}:${tag}`));
    const off = this.state.off.filter((entry) => !shown.has(entry));
    this.store.set({ off: on ? off : [...off, ...shown] });
  }

  /** Rebuild the run legend, the tag checkboxes and the set of cards (kept where still shown). */
  #rebuild(shown = this.sidebar.shown(this.meta)) {
    const { tags: filter, off } = this.state;
    const { runs } = shown;
    this.signatures = new Map(runs.map((id) => [id, this.#signature(id)]));
    this.colours.assign(runs, this.meta);
    this.sidebar.update(shown);
    this.#renderRunLegend(shown);
    const tagsOf = new Map(); // tag -> the runs shown that have it
    for (const id of runs) {
      for (const tag of this.meta.get(id)?.tags[this.plugin] ?? []) {
        if (!tagsOf.has(tag)) tagsOf.set(tag, []);
        tagsOf.get(tag).push(id);
      }
    }
    const matches = this.tagFilter.matcher(filter);
    const all = [...tagsOf.keys()].sort(collator.compare);
    this.matching = all.filter(matches);
    const prefix = `${this.plugin}:`;
    const unticked = new Set(
      off.filter((e) => e.startsWith(prefix)).map((e) => e.slice(prefix.length)),
    );
    const visible = this.matching.filter((tag) => !unticked.has(tag));
    this.tagFilter.counted(visible.length, all.length);
    this.#renderTagPicks(unticked);

    const wanted = new Map(); // card key -> [tag, run]
    for (const tag of visible) {
      if (!this.grouped) wanted.set(JSON.stringify([tag]), [tag, null]);
      else for (const run of tagsOf.get(tag)) wanted.set(JSON.stringify([tag, run]), [tag, run]);
    }
    this.watch.drop(this.cards, wanted);
    const order = [];
    for (const [key, [tag, run]] of wanted) {
      let card = this.cards.get(key);
      if (!card) {
        card = this.createCard(tag, run);
        card.key = key;
        this.cards.set(key, card);
        this.byElement.set(card.element, card);
        this.watch.add(card);
      }
      if (!this.grouped) card.setRuns?.(tagsOf.get(tag));
      order.push([tag, card]);
    }
    this.#place(order, visible);
    this.#showMessage(runs, all.length, visible.length);
  }

  /** Put the cards in tag order (moving an element keeps what it shows). */
  #place(order, shown) {
    if (!this.grouped) {
      for (const [, card] of order) this.grid.append(card.element);
      return;
    }
    const keep = new Set(shown);
    for (const [tag, group] of this.groups) {
      if (!keep.has(tag)) {
        group.remove();
        this.groups.delete(tag);
      }
    }
    for (const tag of shown) {
      let group = this.groups.get(tag);
      if (!group) {
        group = el(
          'section',
          { class: 'tag-group', dataset: { tag } },
          el('h2', { class: 'group-title', title: tag, text: tag }),
          el('div', { class: 'group-cards' }),
        );
        this.groups.set(tag, group);
      }
      this.grid.append(group);
    }
    for (const [tag, card] of order) this.groups.get(tag).lastChild.append(card.element);
  }

  #renderTagPicks(unticked) {
    const boxes = this.matching.map((tag) =>
      el(
        'label',
        { class: 'tag-pick', title: tag },
        el('input', { type: 'checkbox', checked: !unticked.has(tag), dataset: { tag } }),
        el('span', { text: tag }),
      ),
    );
    this.tagPicks.replaceChildren(...boxes);
    const ticked = this.matching.filter((tag) => !unticked.has(tag)).length;
    this.allBox.checked = ticked > 0 && ticked === this.matching.length;
    this.allBox.indeterminate = ticked > 0 && ticked < this.matching.length;
    this.allBox.disabled = !this.matching.length;
  }

  #renderRunLegend(shown) {
    this.sidebar.list.replaceChildren(
      ...shown.runs.map((id) => {
        const run = this.meta.get(id);
        const count = run?.tags[this.plugin]?.length ?? 0;
        const remove = this.sidebar.remove(id, shown);
        const dashboard = el('a', {
          class: 'link',
          title: `Training dashboard of ${id}`,
          text: 'Dashboard',
          href: this.store.href({ view: 'run', runs: [id] }),
        });
        const note =
          this.loaded && !run
            ? el('span', { class: 'badge warn', text: 'not found' })
            : el('span', { text: count ? plural(count, 'tag') : `no ${this.noun}` });
        return el(
          'li',
          {},
          this.sidebar.swatches(id, this.#styles(id), run),
          el(
            'span',
            { class: 'legend-text' },
            el('span', { class: 'legend-name', title: id, text: id }),
            el('span', { class: 'legend-sub muted' }, note, ' · ', dashboard),
          ),
          remove,
        );
      }),
    );
  }

  #showMessage(runs, tagCount, shownCount) {
    let text = '';
    if (!this.loaded) text = 'Loading…';
    else if (!runs.length) text = `No run has recorded ${this.noun} yet.`;
    else if (!tagCount) text = `The selected runs have no ${this.noun} yet.`;
    else if (!shownCount) text = 'No tag matches the filter (or every tag is unticked).';
    this.message.textContent = text;
    this.message.hidden = !text;
  }
}
