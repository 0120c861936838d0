// lineage.js: the lineage view (being built; see the issue).

import { el } from './dom.js';

export class LineageView {
  constructor(root, store) {
    this.store = store;
    root.append(el('p', { class: 'empty-note', text: 'Not built yet.' }));
  }

  /** Take a new /runs response. */
  setRuns() {}
}
