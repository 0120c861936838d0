// views.js: what the views over the selected runs share: the Scalars view (scalars.js) and
// the Images, Histograms and Tensors views (pluginview.js).
//
// Each has a colour per series (a run, or a rank of a distributed run), a tag filter in its
// toolbar (the `tags` regular expression, one for every view), a sidebar listing the
// selected runs beside its cards, and cards that draw only while on screen.

import { compileRegex, el, plural } from './dom.js';

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

/** A view's toolbar. */
export function toolbar(...children) {
  return el('div', { class: 'toolbar' }, ...children);
}

/**
 * The sidebar of the selected runs (`runList`, under a heading with `editLink` to the Runs
 * page) beside `cards`, the element holding a view's cards.
 */
export function runsBeside(runList, editLink, cards) {
  return el(
    'div',
    { class: 'scalars-body' },
    el(
      'aside',
      { class: 'sidebar' },
      el('div', { class: 'sidebar-head' }, el('h2', { text: 'Runs' }), editLink),
      runList,
    ),
    cards,
  );
}

/** The button of the sidebar that takes run `id` out of the selection. */
export function removeRun(store, id) {
  return el('button', {
    class: 'icon-button',
    type: 'button',
    title: 'Remove from the selection',
    'aria-label': `Remove ${id}`,
    text: '×',
    onclick: () => store.set({ runs: store.state.runs.filter((r) => r !== id) }),
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
