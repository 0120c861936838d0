// runsidebar.js: the sidebar of the runs a view shows, beside its cards (Scalars, the
// plugin views, Landscape).
//
// The runs shown are the selected ones; while none is selected, the most recently updated
// runs that hold the view's data (widgets/shownruns.js), and the sidebar says so, with a
// link to the Runs page to choose others. Each view draws its own list items (colours,
// counts); the sidebar owns the frame: heading, "Edit selection" link, that note, the
// button taking a run out of the view, and each run's colour picker (its swatches, which
// save the chosen colour as the run's annotation in the workspace: PUT
// /api/v1/annotation, then the page reloads the run list to recolour every view). Those
// whose role cannot write see the colours but cannot change them, and the sidebar's note
// says why (core/session.js).

import { sendJSON } from '../core/api.js';
import { el } from '../core/dom.js';
import { gate, whyNote } from '../core/session.js';
import { chosenColour } from './colours.js';
import { DEFAULT_RUNS, ShownNote, holding, shownRuns } from './shownruns.js';

export class RunsSidebar {
  /**
   * The sidebar of a view of `plugin` data (a name or a list of names); `noun` names that
   * data in its note ("scalars"); `count`: the runs shown while none is selected (1 for a
   * view of one run at a time); `listClass`: the list's classes.
   */
  constructor(store, { plugin, noun, count = DEFAULT_RUNS, listClass = 'run-legend' }) {
    this.store = store;
    this.holds = holding(plugin);
    this.count = count;
    this.last = { runs: [], implicit: false }; // the runs shown() answered last
    this.list = el('ul', { class: listClass });
    this.editLink = el('a', { class: 'link', text: 'Edit selection' });
    this.note = new ShownNote(store, noun);
    this.problem = el('p', { class: 'sidebar-problem', role: 'alert', hidden: true });
  }

  /** The runs to show now, given `meta` (run id -> /runs entry): see shownRuns. */
  shown(meta) {
    const before = this.last.implicit ? this.last.runs : [];
    this.last = shownRuns(this.store.state.runs, meta, this.holds, this.count, before);
    return this.last;
  }

  /** Point the links to the Runs page at the URL state now (call it on every change). */
  sync() {
    this.editLink.setAttribute('href', this.store.href({ view: 'runs' }));
    this.note.sync();
  }

  /** Say what `shown` (a shown() answer) is: the note shows while nothing is selected. */
  update(shown) {
    this.note.update(shown);
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
    const input = gate(
      el('input', {
        type: 'color',
        class: 'colour-input',
        value: styles[0].colour,
        'aria-label': `Colour of ${id}`,
        onchange: () => this.#saveColour(id, entry, input.value),
      }),
      'write',
    );
    const swatches = styles.map(({ colour, label }) =>
      el('span', { class: 'swatch', title: label, style: `background:${colour}` }),
    );
    const reset = chosenColour(entry)
      ? gate(
          el('button', {
            class: 'icon-button colour-reset',
            type: 'button',
            title: 'Back to the automatic colour',
            'aria-label': `Automatic colour for ${id}`,
            text: '↺',
            onclick: () => this.#saveColour(id, entry, null),
          }),
          'write',
          { hide: true },
        )
      : null;
    const label = el(
      'label',
      { class: 'swatches', title: `Choose the colour of ${id}` },
      ...swatches,
      input,
    );
    return el('span', { class: 'colour-pick' }, gate(label, 'write'), reset);
  }

  /** Store `colour` (#rrggbb, null: automatic) in run `id`'s annotation, keeping the rest. */
  async #saveColour(id, entry, colour) {
    const annotation = entry?.annotation ?? {};
    const body = { tags: annotation.tags ?? [], note: annotation.note ?? '', colour };
    try {
      await sendJSON('PUT', 'annotation', [['run', id]], body);
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
        this.note.element,
        whyNote('write', 'why-note sidebar-why'),
        this.problem,
        this.list,
      ),
      cards,
    );
  }
}
