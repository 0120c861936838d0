// graph.js: the graph view (being built; see the issue).

import { el } from './dom.js';

export class GraphView {
  constructor(root, store) {
    this.store = store;
    root.append(el('p', { class: 'empty-note', text: 'Not built yet.' }));
  }

  /** Take a new /runs response. */
  setRuns() {}
}
