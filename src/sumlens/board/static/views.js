// views.js: what the views over the selected runs share: the Scalars view (scalars.js) and
// the Images, Histograms and Tensors views (pluginview.js).
//
// Each has a colour per series (a run, or a rank of a distributed run), a tag filter in its
// toolbar (the `tags` regular expression, one for every view), a sidebar listing the runs
// shown beside its cards, and cards that draw only while on screen. The runs shown are the
// selected ones; while none is selected, the most recently updated runs that hold the
// view's data (shownRuns), as TensorBoard shows every run, and the sidebar says so.

import { compileRegex, el, formatCount, plural } from './dom.js';

const DEFAULT_RUNS = 10; // runs shown while none is selected (the most recent ones)
const collator = new Intl.Collator('en', { numeric: true });

export const PALETTE = [
  '#1a73e8', '#e8710a', '#12b5cb', '#e52592', '#7cb342',
  '#9334e6', '#f9ab00', '#425066', '#d93025', '#00897b',
];

/** The colours of a view's series: each new series takes the palette's next colour. */
export class Colours {
  #byKey = new Map();

  /** A series' colour and label; `ranked`: a run's ranks are told apart, "run (rank 1)". */
  style(run, rank, ranked) {
    const key = ranked ? `${run}\u0000${rank}` : run;
    if (!this.#byKey.has(key)) this.#byKey.set(key, PALETTE[this.#byKey.size % PALETTE.length]);
    return { colour: this.#byKey.get(key), label: ranked ? `${run} (rank ${rank})` : run };
  }

  /** Hand the colours out again in the order of `runs` (`meta`: run id -> its /runs entry). */
  assign(runs, meta) {
    this.#byKey.clear();
    for (const id of runs) {
      const ranks = meta.get(id)?.ranks ?? [];
      if (ranks.length > 1) for (const rank of ranks) this.style(id, rank, true);
      else this.style(id, null, false);
    }
  }
}

/** The tag filter of a view's toolbar (typing sets the URL's `tags`) and the tag count. */
export class TagFilter {
  constructor(store) {
    this.input = el('input', {
      type: 'search',
      class: 'search-input',
      placeholder: 'Filter tags (regex)',
      'aria-label': 'Filter tags (regular expression)',
      oninput: () => store.set({ tags: this.input.value }),
    });
    this.count = el('span', { class: 'count muted' });
    this.elements = [el('div', { class: 'search' }, this.input), this.count];
  }

  /** Say how many of the `total` tags are shown. */
  counted(shown, total) {
    this.count.textContent = `${shown} of ${plural(total, 'tag')}`;
  }

  /** Show the URL's filter (unless it is what the box holds). */
  sync(state) {
    if (this.input.value !== state.tags) this.input.value = state.tags;
  }

  /**
   * A test of the tags `filter` lets through: every tag when it is empty or not a valid
   * regular expression (the box is then marked, and its title says why).
   */
  matcher(filter) {
    const { re, error } = filter ? compileRegex(filter) : {};
    this.input.classList.toggle('invalid', Boolean(error));
    this.input.title = error ?? '';
    return (tag) => !re || re.test(tag);
  }
}

/**
 * The runs a view shows: `selected` (state.runs) when any is, else the DEFAULT_RUNS most
 * recently updated runs of `meta` (run id -> /runs entry) holding `plugin` data, by name.
 * One pass over the listing and no request: 10,000 runs listed still show 10 (`among`
 * says how many could have been). `implicit`: nothing was selected.
 */
export function shownRuns(selected, meta, plugin) {
  if (selected.length) return { runs: selected, implicit: false, among: selected.length };
  const newest = []; // at most DEFAULT_RUNS entries, most recent first
  let among = 0;
  for (const run of meta.values()) {
    if (!run.tags[plugin]?.length) continue;
    among += 1;
    if (newest.length === DEFAULT_RUNS && !newer(run, newest[newest.length - 1])) continue;
    let at = newest.length;
    while (at > 0 && newer(run, newest[at - 1])) at -= 1;
    newest.splice(at, 0, run);
    if (newest.length > DEFAULT_RUNS) newest.pop();
  }
  const runs = newest.map((run) => run.id).sort(collator.compare);
  return { runs, implicit: true, among };
}

/** Whether run `a` was updated after `b` (the same time: the first by name). */
function newer(a, b) {
  return a.updated !== b.updated ? a.updated > b.updated : collator.compare(a.id, b.id) < 0;
}

/**
 * The sidebar's line saying which runs are shown while none is selected, with a link to
 * the Runs page to choose others (hidden while runs are selected).
 */
export class ShownNote {
  constructor(store, noun) {
    this.store = store;
    this.noun = noun; // what the view shows ("scalars", "images")
    this.text = el('span');
    this.link = el('a', { class: 'link', text: 'Choose runs' });
    this.element = el('p', { class: 'shown-note', hidden: true }, this.text, ' ', this.link);
  }

  /** Say what `shown` (a shownRuns answer) is. */
  update(shown) {
    const { runs, implicit, among } = shown;
    this.element.hidden = !implicit || !runs.length;
    if (this.element.hidden) return;
    const what = `runs with ${this.noun}`;
    const which =
      runs.length === among
        ? among === 1
          ? `the only run with ${this.noun}`
          : `all ${formatCount(among)} ${what}`
        : `the ${runs.length} most recently updated of ${formatCount(among)} ${what}`;
    this.text.textContent = `No runs selected: showing ${which}.`;
    this.link.setAttribute('href', this.store.href({ view: 'runs' }));
  }
}

/** A view's toolbar. */
export function toolbar(...children) {
  return el('div', { class: 'toolbar' }, ...children);
}

/**
 * The sidebar of the runs shown (`runList`, under a heading with `editLink` to the Runs
 * page, then `note`, a ShownNote's element) beside `cards`, the element holding the cards.
 */
export function runsBeside(runList, editLink, note, cards) {
  return el(
    'div',
    { class: 'scalars-body' },
    el(
      'aside',
      { class: 'sidebar' },
      el('div', { class: 'sidebar-head' }, el('h2', { text: 'Runs' }), editLink),
      note,
      runList,
    ),
    cards,
  );
}

/**
 * The button of the sidebar that takes run `id` out of the view: the runs `shown` but it
 * become the selection (so one of the runs shown while none was selected can go too).
 */
export function removeRun(store, id, shown) {
  return el('button', {
    class: 'icon-button',
    type: 'button',
    title: 'Remove from the view',
    'aria-label': `Remove ${id}`,
    text: '×',
    onclick: () => store.set({ runs: shown.filter((r) => r !== id) }),
  });
}

/**
 * The cards of a view drawn only while on screen: a card coming on screen (within `margin`
 * pixels) is shown, one leaving it hidden. `cardOf(element)` is the card of an element
 * watched (or none).
 */
export class CardWatch {
  constructor(margin, cardOf) {
    this.observer = new IntersectionObserver(
      (entries) => {
        for (const entry of entries) {
          const card = cardOf(entry.target);
          if (!card) continue;
          if (entry.isIntersecting && !card.visible) card.show();
          else if (!entry.isIntersecting && card.visible) card.hide();
        }
      },
      { rootMargin: `${margin}px 0px` },
    );
  }

  /** Watch a new card. */
  add(card) {
    this.observer.observe(card.element);
  }

  /** Destroy the cards of `cards` (key -> card) whose key `keep` lacks, and forget them. */
  drop(cards, keep) {
    for (const [key, card] of cards) {
      if (keep.has(key)) continue;
      this.observer.unobserve(card.element);
      card.destroy();
      cards.delete(key);
    }
  }
}
