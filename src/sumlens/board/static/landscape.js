// landscape.js: the landscape view (being built; see the issue).

import { el } from './dom.js';

export class LandscapeView {
  constructor(root, store) {
    this.store = store;
    root.append(el('p', { class: 'empty-note', text: 'Not built yet.' }));
  }

  /** Take a new /runs response. */
  setRuns() {}
}
