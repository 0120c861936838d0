// snapshotlink.js: the Scalars toolbar's "Snapshot" link, which downloads one self-contained
// HTML file (GET /api/v1/snapshot, the builder of `sumlens snapshot`) of the runs shown and
// the tags the filter lets through, their images included.

import { apiUrl } from '../core/api.js';
import { el } from '../core/dom.js';

/**
 * The link; `current()` gives `{ runs, filter }` when it is clicked: the run ids shown and
 * the tag filter (a case-insensitive regex, as the page matches it; empty: every tag).
 */
export function snapshotLink(current) {
  return el('a', {
    class: 'button',
    text: 'Snapshot',
    title: 'Download one HTML file of the runs and tags shown: charts and images, opens offline',
    download: '',
    href: apiUrl('snapshot').href,
    onclick: (event) => {
      const { runs, filter } = current();
      const params = runs.map((run) => ['run', run]);
      if (filter) params.push(['tag_regex', `(?i)${filter}`]);
      event.currentTarget.href = apiUrl('snapshot', params).href;
    },
  });
}
