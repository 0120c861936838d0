// snapshotlink.js: the Scalars toolbar's "Snapshot" link, which downloads one self-contained
// HTML file (GET /api/v1/snapshot, the builder of `sumlens snapshot`) of the runs shown and
// the tags the filter lets through, their images included, smoothed, enveloped and grouped
// as the view is.

import { apiUrl } from '../core/api.js';
import { el } from '../core/dom.js';

/**
 * The link; `current()` gives `{ runs, filter, smoothing, envelope, group }` when it is
 * clicked: the run ids shown, the tag filter (a case-insensitive regex, as the page matches
 * it; empty: every tag), the smoothing weight, whether envelopes are drawn and the grouping
 * (groups.js's groupOptions, or null).
 */
export function snapshotLink(current) {
  return el('a', {
    class: 'button',
    text: 'Snapshot',
    title: 'Download one HTML file of the runs and tags shown: charts and images, opens offline',
    download: '',
    href: apiUrl('snapshot').href,
    onclick: (event) => {
      const { runs, filter, smoothing, envelope, group } = current();
      const params = runs.map((run) => ['run', run]);
      if (filter) params.push(['tag_regex', `(?i)${filter}`]);
      if (smoothing > 0) params.push(['smoothing', smoothing]);
      if (envelope) params.push(['envelope', 'true']);
      if (group) {
        params.push(['group_by', group.by], ['stat', group.stat], ['band', group.band],
          ['members', group.members]);
        if (group.by === 'regex') params.push(['group_regex', group.re]);
        if (group.by === 'field') params.push(['field', group.field]);
      }
      event.currentTarget.href = apiUrl('snapshot', params).href;
    },
  });
}
