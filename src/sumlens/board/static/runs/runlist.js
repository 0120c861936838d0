// runlist.js: the home view, every run under the base directory in a searchable table.
// A run's name opens it in Scalars; the link beside it, its training dashboard.
// Each run shows the tags and note the user gave it (runs/annotations.js: kept in the
// workspace by the server), edited in a dialog; the list filters by one of those tags (the
// URL's `runtag`, so a reload or a shared link keeps it), and the whole set downloads as
// JSON and imports from such a file (a team's shared tags).
//
// Runs the team hid or archived (runs/lifecycle.js: the buttons acting on the selected
// runs, and the admin's Trash panel, runs/trash.js) leave the list unless its switch (the
// URL's `hidden`) shows them, badged with their state. What the user's role cannot do is
// hidden or disabled, and one line under the toolbar says why (core/session.js).
//
// At laptop width (1440 px) a run's whole name shows: its column takes the room the
// times gave up (the time of day today, the day this year, else the date; the full time on
// hover), and a name too long for it still shows its end (where runs of one directory
// differ), cut at the start; the whole name is its title. Sorting by name is natural
// (core/natural.js): lr0.0001 < lr0.001 < lr0.01 < lr0.1, seed2 < seed10.
//
// The table is virtualised: rows have a fixed height, a spacer gives the scroll height of
// all of them, and only the rows in sight (plus a few either side) exist as elements. They
// are reused as the list scrolls, so 10,000 runs paint and scroll as fast as ten.

import {
  compileRegex,
  el,
  fitPool,
  formatCount,
  formatTime,
  perFrame,
  plural,
  rowWindow,
} from '../core/dom.js';
import { ApiError, fetchRuns } from '../core/api.js';
import { gate, whyNote } from '../core/session.js';
import { naturalComparer } from '../core/natural.js';
import { CARDS } from '../views.js';
import {
  AnnotationEditor,
  downloadAnnotations,
  importAnnotations,
  NO_ANNOTATION,
} from './annotations.js';
import { RunActions } from './lifecycle.js';
import { TrashPanel } from './trash.js';

const ROW_HEIGHT = 36; // px; must match .run-row in runs.css
const OVERSCAN = 6; // rows rendered beyond each edge of the viewport
const SELECT_ALL_LIMIT = 100; // the header checkbox selects at most this many runs (URL size)

const TIME_KEYS = {
  created: (run) => run.created,
  updated: (run) => run.updated,
};
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

// How the other plugins' data is named in the "Other data" column (the cards of views.js):
// some by the count of their tags ("3 images"), the others once ("graph"); a plugin no view
// registers, by its own name.
const COUNTED = new Map(); // plugin -> the word counted
const NAMED = new Map(); // plugin -> its name
for (const card of CARDS) {
  for (const plugin of card.plugins) {
    if (card.other) (card.counted ? COUNTED : NAMED).set(plugin, card.other);
  }
}

function otherData(tags) {
  const parts = [];
  const present = new Set();
  for (const [plugin, names] of Object.entries(tags)) {
    if (plugin === 'scalar' || !names.length) continue;
    if (COUNTED.has(plugin)) parts.push(plural(names.length, COUNTED.get(plugin)));
    else present.add(NAMED.get(plugin) ?? plugin);
  }
  return [...parts, ...[...present].sort()].join(' · ');
}

function damageText(damage) {
  const parts = [];
  if (damage.corrupt_records) parts.push(plural(damage.corrupt_records, 'corrupt record'));
  if (damage.skipped_bytes) parts.push(`${formatCount(damage.skipped_bytes)} bytes skipped`);
  if (damage.unreadable_files) parts.push(plural(damage.unreadable_files, 'unreadable file'));
  if (damage.damaged_values) parts.push(plural(damage.damaged_values, 'damaged value'));
  if (damage.unreadable_directory) {
    parts.push(`its directory cannot be read now (${damage.unreadable_directory})`);
  }
  if (damage.unreadable_projector_config) parts.push(damage.unreadable_projector_config);
  return parts.join(', ');
}

// Values of kinds no view shows (TensorBoard's mesh, custom scalars ...): said by name, not
// as damage.
function skippedText(skipped) {
  return Object.entries(skipped)
    .map(([name, count]) => `${formatCount(count)} ${name}`)
    .join(', ');
}

/** The warning badges of a run: [label, tooltip, kind]. */
function warnings(run) {
  const out = [];
  if (run.error) out.push([run.error, run.error, 'error']);
  const damage = damageText(run.damage ?? {});
  if (damage) out.push(['damaged', `Damaged files: ${damage}`, 'warn']);
  const skipped = skippedText(run.skipped ?? {});
  if (skipped) {
    out.push(['not shown', `Values of kinds sumlens does not show: ${skipped}`, 'info']);
  }
  if (run.several_trainings) {
    out.push([
      'several trainings',
      'This directory holds files of more than one training; their curves may overlap. ' +
        'Write each training to a directory of its own.',
      'warn',
    ]);
  }
  if (run.stale_points_dropped) {
    out.push([
      plural(run.stale_points_dropped, 'replaced point'),
      'Steps were written again (a restart from a checkpoint): the older points were dropped.',
      'info',
    ]);
  }
  return out;
}

/** The badge of a run's state (hidden, archived): [] for a run listed as usual. */
function stateBadges(run) {
  if (!run.state) return [];
  return [el('span', {
    class: `badge run-state ${run.state}`,
    title: `This run is ${run.state}: it is listed only while hidden and archived runs are shown`,
    text: run.state,
  })];
}

/** Every run tag in `runs` with how many runs have it, in natural order. */
function tagCounts(runs) {
  const counts = new Map();
  for (const run of runs) {
    for (const tag of run.annotation?.tags ?? []) counts.set(tag, (counts.get(tag) ?? 0) + 1);
  }
  const byName = naturalComparer();
  return [...counts].sort(([a], [b]) => byName(a, b));
}

/** `runs` sorted by name (natural order) or by a time, runs of one time by name. */
function sortRuns(runs, sort, desc) {
  const byName = naturalComparer();
  const sign = desc ? -1 : 1;
  const key = TIME_KEYS[sort];
  if (!key) return runs.sort((a, b) => sign * byName(a.id, b.id));
  return runs.sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    if (ka === kb) return byName(a.id, b.id);
    if (ka === null || ka === undefined) return 1; // unknown times sort last either way
    if (kb === null || kb === undefined) return -1;
    return sign * (ka - kb);
  });
}

const pad = (n) => String(n).padStart(2, '0');

/** A time as the list shows it: the time of day today, the day this year, else the date. */
function shortTime(seconds, now) {
  if (seconds === null || seconds === undefined) return '';
  const d = new Date(seconds * 1000);
  const clock = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  if (d.toDateString() === now.toDateString()) return `${clock}:${pad(d.getSeconds())}`;
  if (d.getFullYear() === now.getFullYear()) {
    return `${MONTHS[d.getMonth()]} ${pad(d.getDate())} ${clock}`;
  }
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

export class RunList {
  constructor(root, store) {
    this.store = store;
    this.runs = [];
    this.shown = [];
    this.unlisted = 0; // runs hidden or archived, not listed now
    this.loaded = false;
    this.pool = [];
    this.generation = 0; // bumped whenever what a row shows may have changed
    this.#build(root);
    this.#fillTagFilter();
    store.subscribe((state, changed) => this.#onState(state, changed));
    new ResizeObserver(() => this.#render()).observe(this.viewport);
    this.#syncControls(store.state);
  }

  /** Take a new /runs response. */
  setRuns(data) {
    this.runs = data.runs;
    this.baseDir = data.base_dir;
    this.loading = data.loading;
    this.loaded = true;
    this.#fillTagFilter();
    this.#refilter();
  }

  /** The run list again now (after an annotation changed), not at the next poll. */
  async #reload() {
    try {
      this.setRuns(await fetchRuns());
    } catch {
      // the poller reports an unreachable server and brings the list when it answers
    }
  }

  /** The run tag the list is filtered by ('' shows all): the URL's `runtag`. */
  get tagFilter() {
    return this.store.state.runtag;
  }

  #fillTagFilter() {
    const counts = tagCounts(this.runs);
    if (this.tagFilter && !counts.some(([tag]) => tag === this.tagFilter)) {
      counts.unshift([this.tagFilter, 0]); // a filter on a tag no run has now stays visible
    }
    this.tagSelect.replaceChildren(
      el('option', { value: '', text: counts.length ? 'All tags' : 'No tags yet' }),
      ...counts.map(([tag, n]) => el('option', { value: tag, text: `${tag} (${n})` })),
    );
    this.tagSelect.value = this.tagFilter;
    this.tagSelect.disabled = !counts.length;
  }

  #setTagFilter(tag) {
    this.store.set({ runtag: tag }); // #onState shows it
  }

  async #import(file) {
    this.importInput.value = ''; // the same file may be picked again
    let body;
    try {
      body = JSON.parse(await file.text());
    } catch (err) {
      this.#say(`${file.name} is not JSON (${err.message}); nothing was imported`, true);
      return;
    }
    try {
      const done = await importAnnotations(body);
      const absent = done.not_served ? `; ${plural(done.not_served, 'run')} not here now` : '';
      this.#say(
        `Imported ${file.name}: ${done.added} added, ${done.updated} updated, ` +
          `${done.unchanged} unchanged${absent}`,
        false,
      );
      await this.#reload();
    } catch (err) {
      const why = err instanceof ApiError ? err.message : String(err);
      this.#say(`${file.name} was not imported: ${why}`, true);
    }
  }

  #say(text, isError) {
    this.message.textContent = text;
    this.message.classList.toggle('error', isError);
    this.message.hidden = false;
  }

  #build(root) {
    this.search = el('input', {
      type: 'search',
      class: 'search-input',
      placeholder: 'Search runs',
      'aria-label': 'Search runs',
      oninput: () => this.store.set({ q: this.search.value }),
    });
    this.regexToggle = el('button', {
      class: 'toggle regex-toggle',
      type: 'button',
      title: 'Search with a regular expression',
      text: '.*',
      onclick: () => this.store.set({ regex: !this.store.state.regex }),
    });
    this.tagSelect = el('select', {
      class: 'select tag-filter',
      'aria-label': 'Show the runs with this tag',
      title: 'Show only the runs with this tag',
      onchange: () => this.#setTagFilter(this.tagSelect.value),
    });
    this.count = el('span', { class: 'count muted' });
    this.importInput = el('input', {
      type: 'file',
      accept: '.json,application/json',
      hidden: true,
      onchange: () => this.importInput.files[0] && this.#import(this.importInput.files[0]),
    });
    const exportLink = el('button', {
      class: 'button',
      type: 'button',
      title: "Download every run's tags and note as JSON, to share",
      text: 'Export tags',
      onclick: () =>
        downloadAnnotations().catch((err) => this.#say(`Not exported: ${err.message}`, true)),
    });
    const importButton = gate(
      el('button', {
        class: 'button import-annotations',
        type: 'button',
        title: 'Add the tags and notes of a file exported by "Export tags"',
        text: 'Import tags',
        onclick: () => this.importInput.click(),
      }),
      'admin',
    );
    this.message = el('p', { class: 'annotation-message', role: 'status', hidden: true });
    this.showHidden = el('input', {
      type: 'checkbox',
      class: 'show-hidden',
      onchange: () => this.store.set({ showHidden: this.showHidden.checked }),
    });
    this.actions = new RunActions(this.store);
    this.trash = new TrashPanel();
    this.editor = new AnnotationEditor(root, (id, annotation) => {
      const run = this.runs.find((each) => each.id === id);
      if (run) run.annotation = annotation; // shown now; the reload brings it to every view
      this.#fillTagFilter();
      this.#refilter();
      this.#reload();
    });
    this.clear = el('button', {
      class: 'link-button run-clear',
      type: 'button',
      text: 'Clear',
      title: 'Clear the selection',
      'aria-label': 'Clear the selection',
      onclick: () => this.store.set({ runs: [] }),
    });
    this.compare = el('a', { class: 'button primary compare' });
    this.compare.addEventListener('click', (event) => {
      if (!this.store.state.runs.length) event.preventDefault();
    });
    this.selectAll = el('input', {
      type: 'checkbox',
      'aria-label': 'Select every run shown',
      onchange: () => this.#selectShown(this.selectAll.checked),
    });
    this.sortHeaders = {};
    const sortable = (key, label) => {
      this.sortHeaders[key] = el('button', {
        class: 'sort',
        type: 'button',
        text: label,
        onclick: () => {
          const { sort, desc } = this.store.state;
          this.store.set(sort === key ? { desc: !desc } : { sort: key, desc: key !== 'name' });
        },
      });
      return this.sortHeaders[key];
    };
    const head = el(
      'div',
      { class: 'run-grid thead', role: 'row' },
      el('span', {}, this.selectAll),
      el('span', {}, sortable('name', 'Run')),
      el('span', { text: 'Tags · note' }),
      el('span', { class: 'num', text: 'Scalars' }),
      el('span', { text: 'Other data' }),
      el('span', { class: 'num', text: 'Points' }),
      el('span', { text: 'Status' }),
      el('span', { text: 'Ranks' }),
      el('span', { text: 'Warnings' }),
      el('span', {}, sortable('created', 'Created')),
      el('span', {}, sortable('updated', 'Updated')),
    );
    this.spacer = el('div', { class: 'spacer' });
    this.viewport = el('div', { class: 'viewport', role: 'rowgroup' }, this.spacer);
    this.viewport.addEventListener('scroll', perFrame(() => this.#render()), { passive: true });
    this.viewport.addEventListener('change', (event) => {
      const row = event.target.closest('.run-row');
      if (row) this.#toggle(this.shown[Number(row.dataset.index)].id, event.target.checked);
    });
    this.viewport.addEventListener('click', (event) => {
      const row = event.target.closest('.run-row');
      if (!row) return;
      const chip = event.target.closest('.run-tag');
      if (chip) this.#setTagFilter(chip.dataset.tag);
      else if (event.target.closest('.edit-annotation')) {
        this.editor.open(this.shown[Number(row.dataset.index)]);
      }
    });
    this.empty = el('p', { class: 'empty-note', hidden: true });
    root.append(
      el(
        'div',
        { class: 'toolbar run-toolbar' },
        el(
          'div',
          { class: 'run-filters' },
          el('div', { class: 'search' }, this.search, this.regexToggle),
          this.tagSelect,
          el(
            'label',
            { class: 'switch', title: 'List the runs hidden or archived too' },
            this.showHidden,
            'Show hidden',
          ),
          el('span', { class: 'run-count' }, this.count, this.clear),
        ),
        el(
          'div',
          { class: 'run-commands' },
          ...this.actions.elements,
          this.trash.toggle,
          el('span', { class: 'run-tag-files' }, exportLink, importButton),
          this.importInput,
          this.compare,
        ),
      ),
      whyNote('write', 'why-note runs-why'),
      this.message,
      this.actions.message,
      this.trash.panel,
      el('div', { class: 'run-table', role: 'table', 'aria-label': 'Runs' }, head, this.viewport),
      this.empty,
    );
  }

  #onState(state, changed) {
    this.#syncControls(state);
    if (changed.has('runtag')) this.#fillTagFilter();
    // Any change may alter the rows' links (they carry the state), so rows are redrawn.
    if (['q', 'regex', 'sort', 'desc', 'runtag', 'showHidden'].some((key) => changed.has(key))) {
      this.viewport.scrollTop = 0; // a new search or order starts at the top
      this.#refilter();
    } else this.#changed();
  }

  #syncControls(state) {
    if (this.search.value !== state.q) this.search.value = state.q;
    this.regexToggle.setAttribute('aria-pressed', String(state.regex));
    for (const [key, button] of Object.entries(this.sortHeaders)) {
      const active = key === state.sort;
      button.classList.toggle('active', active);
      button.dataset.dir = active ? (state.desc ? 'desc' : 'asc') : '';
    }
    const n = state.runs.length;
    this.compare.textContent = n ? `Compare ${plural(n, 'run')} in Scalars` : 'Select runs';
    this.compare.setAttribute('href', this.store.href({ view: 'scalars' }));
    this.compare.classList.toggle('disabled', !n);
    this.compare.setAttribute('aria-disabled', String(!n));
    this.clear.hidden = !n;
    this.showHidden.checked = state.showHidden;
    this.actions.sync(state.runs);
  }

  #refilter() {
    const { q, regex, sort, desc } = this.store.state;
    let match = () => true;
    this.search.classList.remove('invalid');
    this.search.title = '';
    if (q && regex) {
      const { re, error } = compileRegex(q);
      if (re) match = (run) => re.test(run.id);
      else {
        this.search.classList.add('invalid');
        this.search.title = error;
      }
    } else if (q) {
      const needle = q.toLowerCase();
      match = (run) => run.id.toLowerCase().includes(needle);
    }
    const tag = this.tagFilter;
    const tagged = tag ? (run) => (run.annotation?.tags ?? []).includes(tag) : () => true;
    const listed = this.store.state.showHidden ? () => true : (run) => !run.state;
    this.shown = sortRuns(
      this.runs.filter((run) => listed(run) && match(run) && tagged(run)),
      sort,
      desc,
    );
    this.unlisted = this.store.state.showHidden ? 0 : this.runs.filter((run) => run.state).length;
    this.spacer.style.height = `${this.shown.length * ROW_HEIGHT}px`;
    this.#changed();
  }

  /** Something rows show changed: redraw them and the counts. */
  #changed() {
    this.generation += 1;
    const selected = new Set(this.store.state.runs);
    const picked = this.shown.filter((run) => selected.has(run.id)).length;
    this.selectAll.checked = picked > 0 && picked === this.shown.length;
    this.selectAll.indeterminate = picked > 0 && picked < this.shown.length;
    this.selectAll.disabled = this.shown.length > SELECT_ALL_LIMIT;
    this.selectAll.title = this.selectAll.disabled
      ? `Narrow the search to ${SELECT_ALL_LIMIT} runs or fewer to select them all`
      : 'Select every run shown';
    this.count.textContent =
      `${formatCount(this.shown.length)} of ${plural(this.runs.length, 'run')}` +
      (selected.size ? ` · ${formatCount(selected.size)} selected` : '') +
      (this.unlisted ? ` · ${formatCount(this.unlisted)} hidden or archived` : '');
    this.empty.hidden = this.shown.length > 0;
    if (!this.loaded) this.empty.textContent = 'Loading runs…';
    else if (this.unlisted === this.runs.length && this.runs.length) {
      this.empty.textContent =
        'Every run is hidden or archived: "Show hidden" lists them.';
    } else if (!this.runs.length) {
      this.empty.textContent = this.loading
        ? 'Looking for runs…'
        : `No runs yet under ${this.baseDir}. ` +
          'Runs appear here as soon as summary files are written.';
    } else if (this.tagFilter) {
      this.empty.textContent = `No run tagged ${this.tagFilter} matches the search.`;
    } else this.empty.textContent = 'No run matches the search.';
    this.#render();
  }

  #render() {
    const height = this.viewport.clientHeight;
    if (!height) return; // hidden view: rendered when shown
    const { first, size } = rowWindow(this.viewport.scrollTop, height, ROW_HEIGHT, OVERSCAN);
    fitPool(this.pool, size, () => this.#newRow());
    const selected = new Set(this.store.state.runs);
    this.pool.forEach((row, i) => {
      const index = first + i;
      const run = this.shown[index];
      row.hidden = !run;
      if (!run) return;
      const key = `${this.generation}:${index}`;
      if (row.dataset.key === key) return;
      row.dataset.key = key;
      row.dataset.index = String(index);
      row.dataset.runId = run.id;
      row.style.transform = `translateY(${index * ROW_HEIGHT}px)`;
      this.#fill(row, run, selected.has(run.id));
    });
  }

  #newRow() {
    const cells = {
      check: el('input', { type: 'checkbox' }),
      link: el('a', { class: 'run-link' }, el('bdi')), // bdi: the end shows when cut
      dashboard: el('a', { class: 'dash-link', text: 'Dashboard' }),
      annotation: el('span', { class: 'annotation' }),
      scalars: el('span', { class: 'num scalars' }),
      other: el('span', { class: 'other muted' }),
      points: el('span', { class: 'num' }),
      status: el('span', { class: 'status' }),
      ranks: el('span', { class: 'ranks' }),
      warnings: el('span', { class: 'warnings' }),
      created: el('span', { class: 'time muted' }),
      updated: el('span', { class: 'time muted' }),
    };
    const row = el(
      'div',
      { class: 'run-grid run-row', role: 'row' },
      el('span', {}, cells.check),
      el('span', { class: 'name' }, cells.link, cells.dashboard),
      ...Object.values(cells).slice(3),
    );
    row.cells = cells;
    this.spacer.append(row);
    return row;
  }

  #fill(row, run, isSelected) {
    const c = row.cells;
    row.classList.toggle('selected', isSelected);
    c.check.checked = isSelected;
    c.check.setAttribute('aria-label', `Select ${run.id}`);
    c.link.firstChild.textContent = run.id;
    c.link.title = run.id;
    c.link.setAttribute('href', this.store.href({ view: 'scalars', runs: [run.id] }));
    c.dashboard.setAttribute('href', this.store.href({ view: 'run', runs: [run.id] }));
    c.dashboard.title = `Training dashboard of ${run.id}`;
    c.dashboard.setAttribute('aria-label', `Training dashboard of ${run.id}`);
    this.#fillAnnotation(c.annotation, run);
    c.scalars.textContent = formatCount(run.tags.scalar?.length ?? 0);
    c.other.textContent = otherData(run.tags);
    c.other.title = c.other.textContent;
    c.points.textContent = formatCount(run.points);
    c.status.textContent = run.status;
    c.status.className = `status badge ${run.status}`;
    c.status.title = run.error ?? '';
    c.ranks.textContent = run.ranks.length ? run.ranks.join(', ') : '—';
    c.warnings.replaceChildren(
      ...stateBadges(run),
      ...warnings(run).map(([label, tip, kind]) =>
        el('span', { class: `badge ${kind}`, title: tip, text: label }),
      ),
    );
    const now = new Date();
    for (const [cell, seconds] of [
      [c.created, run.created],
      [c.updated, run.updated],
    ]) {
      cell.textContent = shortTime(seconds, now);
      cell.title = formatTime(seconds);
    }
  }

  #fillAnnotation(cell, run) {
    const { tags, note } = run.annotation ?? NO_ANNOTATION;
    const chips = tags.map((tag) =>
      el('button', {
        class: 'run-tag',
        type: 'button',
        dataset: { tag },
        title: `Show only the runs tagged ${tag}`,
        text: tag,
      }),
    );
    const noteText = note
      ? [el('span', { class: 'run-note muted', title: note, text: note })]
      : [];
    const edit = gate(
      el('button', {
        class: 'icon-button edit-annotation',
        type: 'button',
        title: `Edit the tags and note of ${run.id}`,
        'aria-label': `Edit the tags and note of ${run.id}`,
        text: '✎',
      }),
      'write',
      { hide: true },
    );
    cell.replaceChildren(edit, ...chips, ...noteText);
  }

  #toggle(id, on) {
    const runs = this.store.state.runs.filter((run) => run !== id);
    if (on) runs.push(id);
    this.store.set({ runs });
  }

  #selectShown(on) {
    const shown = new Set(this.shown.map((run) => run.id));
    const kept = this.store.state.runs.filter((id) => !shown.has(id));
    this.store.set({ runs: on ? [...kept, ...shown] : kept });
  }
}
