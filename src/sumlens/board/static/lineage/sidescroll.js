// sidescroll.js: a visible cue that a box scrolls sideways, for the lineage view's wide
// parts (the parallel coordinates, the table).
//
// Overlay scroll bars (macOS, headless browsers, touch screens) show nothing until one
// scrolls, so a table whose last columns lie past its right edge looks cut off. The cue is
// a fading edge with an arrow button on each side that has more to show; a click scrolls
// by most of a screen. The box is wrapped, the cues lie over the wrapper's edges.

import { el, perFrame } from '../core/dom.js';

const STEP = 0.8; // of the visible width, per click

export class SideScroll {
  /**
   * Cues for `scroller` (the element that scrolls sideways) over `content` (its widest
   * child: a change of either's size updates them); the wrapper gets `className`;
   * `inset`: px on the left that stay in view while it scrolls (pinned columns).
   */
  constructor(scroller, content, className, inset = 0) {
    this.scroller = scroller;
    const cue = (side, text, label) =>
      el('button', {
        type: 'button',
        class: `side-cue side-cue-${side}`,
        text,
        title: label,
        'aria-label': label,
        hidden: true,
        onclick: () => {
          const by = scroller.clientWidth * STEP * (side === 'right' ? 1 : -1);
          scroller.scrollBy({ left: by, behavior: 'smooth' });
        },
      });
    this.left = cue('left', '‹', 'Scroll left');
    this.right = cue('right', '›', 'Scroll right: more to see');
    this.left.style.left = `${inset}px`;
    const classes = `side-scroll ${className}`;
    this.element = el('div', { class: classes }, scroller, this.left, this.right);
    this.update = perFrame(() => this.#update());
    scroller.addEventListener('scroll', this.update, { passive: true });
    const watch = new ResizeObserver(this.update);
    watch.observe(scroller);
    watch.observe(content);
  }

  /** Keep `inset` px on the left in view (the pinned columns' width changed). */
  setInset(inset) {
    this.left.style.left = `${inset}px`;
  }

  /** Show the cues of the sides with more to see (call it after the content changed). */
  #update() {
    const { scrollLeft, scrollWidth, clientWidth } = this.scroller;
    const more = scrollWidth - clientWidth;
    this.left.hidden = !(more > 1 && scrollLeft > 1);
    this.right.hidden = !(more > 1 && scrollLeft < more - 1);
  }
}
