// topbarfit.js: keeps every nav link of the top bar whole, whatever the window's width and
// whoever is signed in (team mode adds the Views menu, the badge, Sign out, the Audit link).
//
// The bar is one row while it can be. When that row is short of room, the items a user
// reads or changes least give way, one by one in the order given (the Auto-refresh switch,
// the base directory, the badge with Sign out): each moves into the "⋯" menu at the end of
// the bar and back when there is room again. Where even the nav alone does not fit beside
// the brand (about 1024 px), the nav takes a row of its own under the bar and the items
// come back to the first row, folding again only if that row is still too short.
//
// Each item keeps a comment node where it lives in the bar, so it goes back to the same
// place. The bar is fitted again whenever its size or the size of anything in it changes
// (a resize, the badge appearing or naming someone, "Loading runs…", a font arriving),
// at most once a frame.

import { el } from '../core/dom.js';

export class TopbarFit {
  /**
   * Fit `bar` (the top bar, holding `nav`); `items`, elements of the bar, give way in this
   * order, into a menu appended to the bar.
   */
  constructor(bar, nav, items) {
    this.bar = bar;
    this.nav = nav;
    this.items = items.map((item) => {
      const home = document.createComment(` ${item.id || item.className}: its place in the bar `);
      item.before(home);
      return { item, home };
    });
    this.panel = el('div', { class: 'topbar-more-panel' });
    this.menu = el(
      'details',
      { class: 'topbar-more', hidden: true },
      el('summary', {
        class: 'icon-button',
        title: 'More: what has no room in the bar',
        'aria-label': 'More',
        text: '⋯',
      }),
      this.panel,
    );
    document.addEventListener('click', (event) => {
      if (this.menu.open && !this.menu.contains(event.target)) this.menu.open = false;
    });
    bar.append(this.menu);
    this.frame = 0;
    // an item in the menu changes size as the menu opens and closes: that moves nothing
    const resized = new ResizeObserver((entries) => {
      if (entries.some((entry) => !this.panel.contains(entry.target))) this.schedule();
    });
    for (const node of [bar, ...bar.children]) resized.observe(node);
    this.fit();
  }

  /** Fit the bar at the next frame (once, however many changes ask before it). */
  schedule() {
    if (!this.frame) {
      this.frame = requestAnimationFrame(() => {
        this.frame = 0;
        this.fit();
      });
    }
  }

  /** The first arrangement that fits: one row, folding fewer items first; then two rows. */
  fit() {
    this.#arrange();
    if (this.menu.hidden) this.menu.open = false;
  }

  #arrange() {
    const shown = this.items.filter(({ item }) => !item.hidden);
    for (const stacked of [false, true]) {
      for (let folded = 0; folded <= shown.length; folded += 1) {
        this.#place(stacked, shown.slice(0, folded));
        if (this.#fits()) return;
      }
    }
  }

  /** The nav on its own row when `stacked`; the `folded` items in the menu, the rest home. */
  #place(stacked, folded) {
    this.bar.classList.toggle('stacked', stacked);
    const inMenu = new Set(folded);
    for (const entry of this.items) {
      if (inMenu.has(entry)) {
        if (entry.item.parentNode !== this.panel) this.panel.append(entry.item);
      } else if (entry.home.nextSibling !== entry.item) entry.home.after(entry.item);
    }
    this.menu.hidden = !folded.length;
  }

  /** Whether the nav shows whole and every other item sits in the brand's row. */
  #fits() {
    if (this.nav.scrollWidth > this.nav.clientWidth) return false;
    if (this.bar.scrollWidth > this.bar.clientWidth) return false;
    const brand = this.bar.firstElementChild.getBoundingClientRect();
    const middle = (brand.top + brand.bottom) / 2; // every item of the row crosses it
    return [...this.bar.children].every((child) => {
      if (child === this.nav || child.hidden) return true;
      const box = child.getBoundingClientRect();
      return !box.height || (box.top <= middle && box.bottom >= middle);
    });
  }
}
