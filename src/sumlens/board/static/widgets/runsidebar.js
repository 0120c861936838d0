// runsidebar.js: the sidebar of the runs a view shows, beside its cards (Scalars, the
// plugin views, Landscape).
//
// The runs shown are the selected ones; while none is selected, the most recently updated
// runs that hold the view's data (shownRuns), as TensorBoard shows every run, and the
// sidebar says so, with a link to the Runs page to choose others. Each view draws its own
// list items (colours, counts); the sidebar owns the frame: heading, "Edit selection"
// link, that note, the button taking a run out of the view, and each run's colour picker
// (its swatches, which save the chosen colour as the run's annotation in the workspace:
// PUT /api/v1/annotation, then the page reloads the run list to recolour every view).

import { ApiError, apiUrl } from '../core/api.js';
import { collator, el, formatCount } from '../core/dom.js';
import { chosenColour } from './colours.js';

const DEFAULT_RUNS = 10; // runs shown while none is selected (the most recent ones)

/**
 * The runs a view shows: `selected` (state.runs) when any is, else the DEFAULT_RUNS most
 * recently updated runs of `meta` (run id -> /runs entry) holding `plugin` data, by name.
 * One pass over the listing and no request: 10,000 runs listed still show 10 (`among`
 * says how many could have been). `implicit`: nothing was selected.
 */
export function shownRuns(selected, meta, plugin) {
  if (selected.length) return { runs: selected, implicit: false, among: selected.length };
  const newest = []; // at most DEFAULT_RUNS entries, most recent first
  let among = 0;
  for (const run of meta.values()) {
    if (!run.tags[plugin]?.length) continue;
    among += 1;
    if (newest.length === DEFAULT_RUNS && !newer(run, newest[newest.length - 1])) continue;
    let at = newest.length;
    while (at > 0 && newer(run, newest[at - 1])) at -= 1;
    newest.splice(at, 0, run);
    if (newest.length > DEFAULT_RUNS) newest.pop();
  }
  const runs = newest.map((run) => run.id).sort(collator.compare);
  return { runs, implicit: true, among };
}

/** Whether run `a` was updated after `b` (the same time: the first by name). */
function newer(a, b) {
  return a.updated !== b.updated ? a.updated > b.updated : collator.compare(a.id, b.id) < 0;
}

/** "the only run with scalars", "all 3 runs with scalars", "the 10 most recently ..." */
function shownText({ runs, among }, noun) {
  if (runs.length < among) {
    return `the ${runs.length} most recently updated of ${formatCount(among)} runs with ${noun}`;
  }
  if (among === 1) return `the only run with ${noun}`;
  return `all ${formatCount(among)} runs with ${noun}`;
}

export class RunsSidebar {
  /**
   * The sidebar of a view of `plugin` data (null: the view shows the selected runs only);
   * `noun` names that data in its note ("scalars"); `listClass`: the list's classes.
   */
  constructor(store, { plugin = null, noun = '', listClass = 'run-legend' } = {}) {
    this.store = store;
    this.plugin = plugin;
    this.noun = noun;
    this.list = el('ul', { class: listClass });
    this.editLink = el('a', { class: 'link', text: 'Edit selection' });
    this.noteText = el('span');
    this.noteLink = el('a', { class: 'link', text: 'Choose runs' });
    this.note = el('p', { class: 'shown-note', hidden: true }, this.noteText, ' ', this.noteLink);
    this.problem = el('p', { class: 'sidebar-problem', role: 'alert', hidden: true });
  }

  /** The runs to show now, given `meta` (run id -> /runs entry): see shownRuns. */
  shown(meta) {
    const { runs } = this.store.state;
    if (this.plugin === null) return { runs, implicit: false, among: runs.length };
    return shownRuns(runs, meta, this.plugin);
  }

  /** Point the links to the Runs page at the URL state now (call it on every change). */
  sync() {
    const href = this.store.href({ view: 'runs' });
    this.editLink.setAttribute('href', href);
    this.noteLink.setAttribute('href', href);
  }

  /** Say what `shown` (a shown() answer) is: the note shows while nothing is selected. */
  update(shown) {
    this.note.hidden = !shown.implicit || !shown.runs.length;
    if (!this.note.hidden) {
      this.noteText.textContent = `No runs selected: showing ${shownText(shown, this.noun)}.`;
    }
  }

  /**
   * The button taking run `id` out of the view: the other runs `shown` become the
   * selection (so one of the runs shown while none was selected can go too). None for
   * the only run shown while nothing is selected: there is nothing to select instead.
   */
  remove(id, shown) {
    if (shown.implicit && shown.runs.length === 1) return null;
    return el('button', {
      class: 'icon-button',
      type: 'button',
      title: 'Remove from the view',
      'aria-label': `Remove ${id}`,
      text: '×',
      onclick: () => this.store.set({ runs: shown.runs.filter((r) => r !== id) }),
    });
  }

  /**
   * Run `id`'s swatches (`styles`: the {colour, label} of each of its series) as the
   * picker of its colour; `entry`: its /runs entry. A run whose colour was chosen also gets
   * a button back to the automatic colour.
   */
  swatches(id, styles, entry) {
    const input = el('input', {
      type: 'color',
      class: 'colour-input',
      value: styles[0].colour,
      'aria-label': `Colour of ${id}`,
      onchange: () => this.#saveColour(id, entry, input.value),
    });
    const swatches = styles.map(({ colour, label }) =>
      el('span', { class: 'swatch', title: label, style: `background:${colour}` }),
    );
    const reset = chosenColour(entry)
      ? el('button', {
          class: 'icon-button colour-reset',
          type: 'button',
          title: 'Back to the automatic colour',
          'aria-label': `Automatic colour for ${id}`,
          text: '↺',
          onclick: () => this.#saveColour(id, entry, null),
        })
      : null;
    return el(
      'span',
      { class: 'colour-pick' },
      el('label', { class: 'swatches', title: `Choose the colour of ${id}` }, ...swatches, input),
      reset,
    );
  }

  /** Store `colour` (#rrggbb, null: automatic) in run `id`'s annotation, keeping the rest. */
  async #saveColour(id, entry, colour) {
    const annotation = entry?.annotation ?? {};
    const body = { tags: annotation.tags ?? [], note: annotation.note ?? '', colour };
    try {
      const response = await fetch(apiUrl('annotation', [['run', id]]), {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!response.ok) {
        const detail = await response.json().then((b) => b.detail, () => response.statusText);
        throw new ApiError(response.status, JSON.stringify(detail));
      }
      this.problem.hidden = true;
      document.dispatchEvent(new CustomEvent('sumlens:runs-changed'));
    } catch (err) {
      this.problem.textContent = `Could not save the colour of ${id}: ${err.message}`;
      this.problem.hidden = false;
    }
  }

  /** The sidebar (heading with the edit link, the note, the list) beside `cards`. */
  element(cards) {
    return el(
      'div',
      { class: 'scalars-body' },
      el(
        'aside',
        { class: 'sidebar' },
        el('div', { class: 'sidebar-head' }, el('h2', { text: 'Runs' }), this.editLink),
        this.note,
        this.problem,
        this.list,
      ),
      cards,
    );
  }
}
