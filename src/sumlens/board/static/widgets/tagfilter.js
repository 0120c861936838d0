// tagfilter.js: the tag filter of a view's toolbar: the `tags` regular expression of the
// URL, one for every view (Scalars and the plugin views), and the count of tags shown.

import { compileRegex, el, plural } from '../core/dom.js';

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
