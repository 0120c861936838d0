// taggroups.js: the Scalars view's tag cards grouped by prefix, so a run of thousands of
// tags opens quickly.
//
// A tag's group is the part of it before the first "/", as TensorBoard groups them; the
// tags without one ("loss", "lr") share one group, listed first, rather than a group each.
// Each group is a collapsible section with its tag count. A collapsed group holds no card
// at all; an open one holds the cards of its first PAGE tags and a "Show more" button that
// grows it as it comes into view, so an open group of thousands of tags builds a few dozen
// cards and the CardWatch fetches only those on screen. By default the first groups open
// until OPEN_BUDGET tags are open, the rest stay collapsed. A click on a group's header is
// remembered in localStorage (per prefix), so it survives a reload. While a tag filter is
// set, the groups holding a match open in order until FILTER_BUDGET matches are open (a
// click opens or closes one until the filter changes).

import { collator, el, formatCount } from '../core/dom.js';

const OPEN_BUDGET = 40; // tags opened by default, group by group in order
const FILTER_BUDGET = 240; // matching tags a filter opens, group by group in order
const PAGE = 48; // cards an open group shows at first, and adds per "Show more"
const STORE_KEY = 'sumlens.scalars.tagGroups'; // prefix -> true (open) / false (collapsed)
const MAX_REMEMBERED = 2000; // prefixes remembered; the oldest choices are forgotten first

const NO_PREFIX = ''; // the group of the tags without a "/"

/** The group of `tag`: its part before the first "/" (NO_PREFIX when it has none). */
export function prefixOf(tag) {
  const cut = tag.indexOf('/');
  return cut < 0 ? NO_PREFIX : tag.slice(0, cut);
}

function loadChoices() {
  try {
    const raw = JSON.parse(localStorage.getItem(STORE_KEY) ?? '{}');
    if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return new Map();
    return new Map(Object.entries(raw).filter(([, open]) => typeof open === 'boolean'));
  } catch {
    return new Map(); // unreadable or blocked storage: the defaults
  }
}

export class TagGroups {
  /**
   * Sections of cards in `cards` (tag -> card, shared with the view): `create(tag)` makes
   * the card of a tag, `watch` (a CardWatch) shows the cards on screen and destroys those
   * no open group holds any more.
   */
  constructor({ cards, watch, create }) {
    Object.assign(this, { cards, watch, create });
    this.element = el('div', { class: 'prefix-groups' });
    this.sections = new Map(); // prefix -> its section (see #section)
    this.choices = loadChoices(); // the user's clicks, kept across reloads
    this.defaults = new Map(); // prefix -> open by default (fixed once first seen)
    this.filterChoices = new Map(); // clicks while the current filter is set
    this.filter = '';
    this.tags = [];
    this.more = new IntersectionObserver(
      (entries) => {
        for (const entry of entries) if (entry.isIntersecting) entry.target.click();
      },
      { rootMargin: '300px 0px' },
    );
  }

  /**
   * Show `tags` (sorted, what the tag filter lets through); `filter`: the filter's text when
   * it leaves some tags out ('' when none or when it matches every tag).
   */
  update(tags, filter) {
    if (filter !== this.filter) this.filterChoices.clear();
    this.filter = filter;
    this.tags = tags;
    this.#render();
  }

  /** The prefixes of the groups shown and their tags, in order. */
  #grouped() {
    const groups = new Map();
    for (const tag of this.tags) {
      const prefix = prefixOf(tag);
      if (!groups.has(prefix)) groups.set(prefix, []);
      groups.get(prefix).push(tag);
    }
    const prefixes = [...groups.keys()].sort(collator.compare); // NO_PREFIX first
    let opened = 0;
    for (const prefix of prefixes) {
      if (!this.defaults.has(prefix)) this.defaults.set(prefix, opened < OPEN_BUDGET);
      if (this.defaults.get(prefix)) opened += groups.get(prefix).length;
    }
    this.matched = new Map(); // prefix -> open by the filter
    let matches = 0;
    for (const prefix of prefixes) {
      this.matched.set(prefix, matches < FILTER_BUDGET);
      matches += groups.get(prefix).length;
    }
    return prefixes.map((prefix) => [prefix, groups.get(prefix)]);
  }

  #isOpen(prefix) {
    if (this.filter) return this.filterChoices.get(prefix) ?? this.matched.get(prefix);
    return this.choices.get(prefix) ?? this.defaults.get(prefix);
  }

  #render() {
    const groups = this.#grouped();
    const wanted = new Map(); // tag -> its group's section, for the cards to hold
    const keep = new Set();
    for (const [prefix, tags] of groups) {
      const section = this.#section(prefix);
      keep.add(prefix);
      const open = this.#isOpen(prefix);
      const shown = open ? tags.slice(0, section.limit) : [];
      for (const tag of shown) wanted.set(tag, section);
      section.element.dataset.open = String(open);
      section.toggle.setAttribute('aria-expanded', String(open));
      section.count.textContent = formatCount(tags.length);
      const rest = tags.length - shown.length;
      section.moreButton.hidden = !open || rest <= 0;
      section.moreButton.textContent =
        `Show ${formatCount(Math.min(rest, PAGE))} more of ${formatCount(rest)}`;
      section.body.hidden = !open;
      this.element.append(section.element); // in prefix order
    }
    for (const [prefix, section] of this.sections) {
      if (keep.has(prefix)) continue;
      this.more.unobserve(section.moreButton);
      section.element.remove();
      this.sections.delete(prefix);
    }
    this.watch.drop(this.cards, wanted);
    for (const [tag, section] of wanted) {
      let card = this.cards.get(tag);
      if (!card) {
        card = this.create(tag);
        this.cards.set(tag, card);
        this.watch.add(card);
      }
      section.grid.append(card.element); // in tag order (moving an element keeps its chart)
    }
  }

  /** The section of `prefix` (made on first use): a header button and a grid of cards. */
  #section(prefix) {
    let section = this.sections.get(prefix);
    if (section) return section;
    const grid = el('div', { class: 'card-grid' });
    const moreButton = el('button', {
      type: 'button',
      class: 'button group-more',
      onclick: () => {
        section.limit += PAGE;
        this.#render();
      },
    });
    const count = el('span', { class: 'group-count badge' });
    const toggle = el(
      'button',
      {
        type: 'button',
        class: 'group-toggle',
        title:
          prefix === NO_PREFIX
            ? 'Show or hide the tags without a "/"'
            : `Show or hide the tags under ${prefix}/`,
        onclick: () => this.#toggle(prefix),
      },
      el('span', { class: 'caret', 'aria-hidden': 'true' }),
      el('span', { class: 'group-name', text: prefix === NO_PREFIX ? 'No prefix' : prefix }),
      count,
    );
    const body = el('div', { class: 'group-body' }, grid, moreButton);
    section = {
      element: el(
        'section',
        { class: 'prefix-group', dataset: { prefix } },
        el('h2', {}, toggle),
        body,
      ),
      toggle,
      count,
      body,
      grid,
      moreButton,
      limit: PAGE,
    };
    this.more.observe(moreButton);
    this.sections.set(prefix, section);
    return section;
  }

  #toggle(prefix) {
    const open = !this.#isOpen(prefix);
    if (this.filter) {
      this.filterChoices.set(prefix, open);
    } else {
      this.choices.delete(prefix); // re-added last: the newest choice is forgotten last
      this.choices.set(prefix, open);
      this.#save();
    }
    const section = this.sections.get(prefix);
    if (section && !open) section.limit = PAGE;
    this.#render();
  }

  #save() {
    const entries = [...this.choices].slice(-MAX_REMEMBERED);
    try {
      localStorage.setItem(STORE_KEY, JSON.stringify(Object.fromEntries(entries)));
    } catch {
      // storage full or blocked: the choice holds until the page is reloaded
    }
  }
}
