// shownruns.js: which runs a view shows, and the line saying so. One rule for every view:
// the selected runs when any is; while none is, the most recently updated runs holding the
// view's kind of data, as TensorBoard shows every run (never a run the team hid or
// archived: runs/lifecycle.js). Views of several runs (Scalars, the
// plugin views) show up to DEFAULT_RUNS of them; views of one run at a time (Graph,
// Landscape, the run dashboard) show the most recent one and keep showing it while it
// holds the data, so two live runs never take turns on the page.
//
// The line (ShownNote) says what is shown while nothing is selected, with a link to the
// Runs page to choose; it is empty otherwise.

import { collator, el, formatCount } from '../core/dom.js';

export const DEFAULT_RUNS = 10; // runs shown while none is selected (the most recent ones)

/** A test of a /runs entry: does it hold data of any of `plugins` (a name or a list)? */
export function holding(plugins) {
  const names = [plugins].flat();
  return (run) => names.some((plugin) => run.tags[plugin]?.length);
}

/** A test of a /runs entry: does it hold any data at all? */
export function holdsData(run) {
  return Object.values(run.tags).some((tags) => tags.length);
}

/**
 * The runs a view shows: `selected` (state.runs) when any is, else the `count` most
 * recently updated runs of `meta` (run id -> /runs entry) that `holds` accepts, by name.
 * One pass over the listing and no request: 10,000 runs listed still show 10 (`among`
 * says how many could have been). `implicit`: nothing was selected. `before`: the runs
 * shown last time; with `count` 1, that run stays while nothing is selected and it still
 * holds the data (`newest` then says whether it is still the most recent).
 */
export function shownRuns(selected, meta, holds, count = DEFAULT_RUNS, before = []) {
  if (selected.length) {
    return { runs: selected, implicit: false, among: selected.length, newest: true };
  }
  const newest = []; // at most `count` entries, most recent first
  let among = 0;
  for (const run of meta.values()) {
    if (run.state || !holds(run)) continue;
    among += 1;
    if (newest.length === count && !newer(run, newest[newest.length - 1])) continue;
    let at = newest.length;
    while (at > 0 && newer(run, newest[at - 1])) at -= 1;
    newest.splice(at, 0, run);
    if (newest.length > count) newest.pop();
  }
  const runs = newest.map((run) => run.id).sort(collator.compare);
  const kept = count === 1 && before.length === 1 ? meta.get(before[0]) : undefined;
  if (kept && !kept.state && holds(kept) && kept.id !== runs[0]) {
    return { runs: [kept.id], implicit: true, among, newest: false };
  }
  return { runs, implicit: true, among, newest: true };
}

/** Whether run `a` was updated after `b` (the same time: the first by name). */
function newer(a, b) {
  return a.updated !== b.updated ? a.updated > b.updated : collator.compare(a.id, b.id) < 0;
}

/**
 * What `shown` (a shownRuns answer, nothing selected) is, `noun` naming the data:
 * "the only run with scalars", "all 3 runs with scalars", "the 10 most recently updated
 * of 12 runs with scalars", "the most recently updated of 3 runs with graphs".
 */
export function shownText({ runs, among, newest }, noun) {
  if (!newest) {
    return `${runs[0]}, the most recently updated run with ${noun} when this view first showed it`;
  }
  if (runs.length < among) {
    const which = runs.length === 1 ? 'the' : `the ${formatCount(runs.length)}`;
    return `${which} most recently updated of ${formatCount(among)} runs with ${noun}`;
  }
  if (among === 1) return `the only run with ${noun}`;
  return `all ${formatCount(among)} runs with ${noun}`;
}

/** The line saying what a view shows while nothing is selected, linking to the Runs page. */
export class ShownNote {
  /** `noun` names the view's data in the line ("scalars", "loss landscapes"). */
  constructor(store, noun) {
    this.store = store;
    this.noun = noun;
    this.text = el('span');
    this.link = el('a', { class: 'link', text: 'Choose runs' });
    this.element = el('p', { class: 'shown-note', hidden: true }, this.text, ' ', this.link);
  }

  /** Point the link at the Runs page with the URL state now (call it on every change). */
  sync() {
    this.link.setAttribute('href', this.store.href({ view: 'runs' }));
  }

  /** Say what `shown` (a shownRuns answer) is: shown while nothing is selected. */
  update(shown) {
    this.element.hidden = !shown.implicit || !shown.runs.length;
    if (!this.element.hidden) {
      this.text.textContent = `No runs selected: showing ${shownText(shown, this.noun)}.`;
    }
  }
}
