// lineage.js: the Lineage view. "Model lineage" compares runs by what they recorded of
// themselves (hyper-parameters, metrics, data, model, custom fields, TensorBoard's
// hparams: /api/v1/lineage) in a sortable, filterable table (lineage_table.js), a
// parallel-coordinates chart whose brushes are the table's range filters
// (lineage_parcoords.js) and a scatter of any two number columns
// (lineage_scatter.js); runs can be hidden, the rows shown exported as
// CSV, and the selected runs opened in Scalars. "Data lineage" draws the selected runs'
// dataset pipelines and compares them step by step (lineage_data.js).
//
// Columns, their order, the sort, the filters, hidden runs and the chart axes live in
// state.lineage (one URL parameter, checked by lineage_model.js), so a reload or a shared
// link shows the same view. The table is loaded only while the view is shown, and again
// when a run with lineage changed; `?known=` makes an unchanged table a tiny answer.

import { getJSON, newController } from '../core/api.js';
import { downloadCsv } from '../core/csv.js';
import { el, formatCount, plural } from '../core/dom.js';
import { pipelineComparison, pipelineDrawing } from './lineage_data.js';
import {
  RUN_COLUMN,
  buildTable,
  csvText,
  filterRows,
  formatSettings,
  kindName,
  parseSettings,
  scatterDefaults,
  shownColumns,
  sortedOrder,
} from './lineage_model.js';
import { ParallelCoords, axisable } from './lineage_parcoords.js';
import { LineageScatter } from './lineage_scatter.js';
import { LineageGrid } from './lineage_table.js';

const LINEAGE_PLUGINS = [
  'train_lineage',
  'eval_lineage',
  'custom_lineage_data',
  'dataset_graph',
  'hparams', // TensorBoard's hyper-parameters (a sub-run of add_hparams: its parent's row)
];
const MAX_AXES = 16;
const SELECT_LIMIT = 100; // runs the header checkbox selects at most (URL size)
const PIPELINES = 8; // pipelines drawn at most
const SCATTER_DELAY = 150; // ms after the last filter change before the scatter redraws

export class LineageView {
  constructor(root, store) {
    this.root = root;
    this.store = store;
    this.settings = parseSettings(store.state.lineage);
    this.table = null;
    this.signature = null;
    this.stale = true;
    this.shown = new Int32Array(0);
    this.popoverListeners = null; // the columns popover's document listeners, while it is open
    this.#build(root);
    store.subscribe((state, changed) => this.#onState(state, changed));
    this.#syncTabs();
    this.#syncOpenButton();
    if (this.#visible()) this.#load();
  }

  /** Take a new /runs response: reload when a run with lineage changed (or `forced`). */
  setRuns(data, forced) {
    const signature = JSON.stringify(
      data.runs
        .filter((run) => LINEAGE_PLUGINS.some((plugin) => run.tags[plugin]?.length))
        .map((run) => [run.id, run.updated]),
    );
    if (!forced && signature === this.signature) return;
    this.signature = signature;
    this.stale = true;
    if (this.#visible()) this.#load();
  }

  #visible() {
    return this.store.state.view === 'lineage';
  }

  // ------------------------------------------------------------------ building

  #build(root) {
    this.tabs = ['model', 'data'].map((tab) =>
      el('button', {
        type: 'button',
        class: 'segment',
        text: tab === 'model' ? 'Model lineage' : 'Data lineage',
        dataset: { tab },
        onclick: () => this.#update({ tab }),
      }),
    );
    this.count = el('span', { class: 'count muted lin-count' });
    this.columnsButton = el('button', {
      type: 'button',
      class: 'button lin-columns-button',
      text: 'Columns',
      'aria-expanded': 'false',
      'aria-controls': 'lin-columns-panel',
      onclick: () => this.#showColumnsPanel(this.columnsPanel.hidden),
    });
    this.clearFilters = el('button', {
      type: 'button',
      class: 'button lin-clear',
      text: 'Clear filters',
      onclick: () => this.#update({ filters: {} }),
    });
    this.showHidden = el('button', {
      type: 'button',
      class: 'button lin-unhide',
      onclick: () => this.#update({ hide: [] }),
    });
    this.exportButton = el('button', {
      type: 'button',
      class: 'button lin-export',
      text: 'Export CSV',
      onclick: () => this.#exportCsv(),
    });
    this.openButton = el('button', {
      type: 'button',
      class: 'button primary lin-open',
      onclick: () => {
        if (this.store.state.runs.length) this.store.set({ view: 'scalars' });
      },
    });
    this.columnsPanel = el('div', {
      class: 'lin-columns-panel',
      id: 'lin-columns-panel',
      role: 'dialog',
      'aria-label': 'Columns',
      hidden: true,
    });
    this.columnsAnchor = el(
      'span',
      { class: 'lin-columns-anchor' },
      this.columnsButton,
      this.columnsPanel,
    );
    this.colourSelect = el('select', {
      class: 'lin-select',
      'aria-label': 'Colour lines by',
      onchange: () => this.#update({ c: this.colourSelect.value || null }),
    });
    this.grid = new LineageGrid({
      sort: (id) => this.#sortBy(id),
      filter: (id, filter) => this.#setFilter(id, filter),
      hide: (run) => this.#update({ hide: [...this.settings.hide, run] }),
      select: (run, on) => this.#select([run], on),
      selectShown: (on) => this.#select(this.#shownRuns(SELECT_LIMIT), on),
    });
    this.parcoords = new ParallelCoords((id, filter, done) => this.#brushed(id, filter, done));
    this.scatter = new LineageScatter({
      axes: (picked) => this.#update(picked),
      select: (run) => this.#select([run], !this.store.state.runs.includes(run)),
    });
    this.message = el('p', { class: 'empty-note', hidden: true });
    this.modelPane = el(
      'div',
      { class: 'lin-model' },
      el(
        'div',
        { class: 'lin-charts' },
        el(
          'div',
          { class: 'lin-chart lin-pc-box' },
          el(
            'div',
            { class: 'lin-chart-head' },
            el('span', { class: 'lin-chart-title', text: 'Parallel coordinates' }),
            el('span', { class: 'muted', text: 'drag along an axis to filter' }),
            el('span', { class: 'grow' }),
            el('label', { class: 'control' }, 'colour', this.colourSelect),
          ),
          this.parcoords.element,
        ),
        el('div', { class: 'lin-chart lin-scatter-box' }, this.scatter.element),
      ),
      this.grid.element,
    );
    this.dataPane = el('div', { class: 'lin-data', hidden: true });
    root.append(
      el(
        'div',
        { class: 'toolbar lin-toolbar' },
        el('span', { class: 'segmented' }, ...this.tabs),
        this.count,
        el('span', { class: 'grow' }),
        this.clearFilters,
        this.showHidden,
        this.columnsAnchor,
        this.exportButton,
        this.openButton,
      ),
      this.message,
      this.modelPane,
      this.dataPane,
    );
  }

  // ------------------------------------------------------------------ loading

  async #load() {
    this.stale = false;
    const controller = newController(this);
    const params = this.table ? [['known', this.table.key]] : [];
    let body;
    try {
      body = await getJSON('lineage', params, controller.signal);
    } catch (err) {
      if (err.name === 'AbortError') return;
      this.#say(`Cannot load the lineage: ${err.message}`);
      return;
    }
    if (body.unchanged && this.table) return;
    this.table = buildTable(body);
    this.#applyAll();
  }

  #say(text) {
    this.message.textContent = text;
    this.message.hidden = !text;
  }

  // ------------------------------------------------------------------ state

  /** Merge `patch` into the settings and write them to the URL. */
  #update(patch) {
    const next = { ...this.settings, ...patch };
    this.store.set({ lineage: formatSettings(next) });
  }

  #onState(state, changed) {
    if (changed.has('view') && !this.#visible()) this.#showColumnsPanel(false);
    if (changed.has('view') && this.#visible() && (this.stale || !this.table)) this.#load();
    if (changed.has('runs')) this.#selectionChanged();
    if (!changed.has('lineage')) return;
    const before = this.settings;
    this.settings = parseSettings(state.lineage);
    const differs = (key) => JSON.stringify(before[key]) !== JSON.stringify(this.settings[key]);
    if (differs('tab')) this.#syncTabs();
    if (!this.table) return;
    if (differs('cols') || differs('c')) this.#applyAll();
    else if (differs('sort')) this.#applySort();
    else if (differs('filters') || differs('hide')) {
      this.#applyFilters(this.settings.filters, { axes: differs('hide') });
    }
    else if (differs('x') || differs('y') || differs('logx')) this.#applyScatter();
  }

  #syncTabs() {
    const { tab } = this.settings;
    for (const button of this.tabs) {
      button.setAttribute('aria-pressed', String(button.dataset.tab === tab));
    }
    this.modelPane.hidden = tab !== 'model';
    this.dataPane.hidden = tab !== 'data';
    for (const control of [this.columnsButton, this.exportButton, this.clearFilters]) {
      control.hidden = tab !== 'model';
    }
    if (tab !== 'model') this.#showColumnsPanel(false); // its button is gone with the tab
    if (tab === 'data' && this.table) this.#drawPipelines();
  }

  #applyAll() {
    const table = this.table;
    if (!table.runs.length) {
      this.#say(
        'No run has recorded lineage yet. MindSpore writes it with the TrainLineage and ' +
          'EvalLineage callbacks or SummaryCollector; sumlens with sumlens.lineage; ' +
          "TensorBoard's writers with add_hparams or Lightning's log_hyperparams.",
      );
      this.modelPane.hidden = true;
      this.dataPane.hidden = true;
      return;
    }
    this.#say('');
    this.#syncTabs();
    this.columns = shownColumns(table, this.settings);
    this.grid.setSelected(new Set(this.store.state.runs));
    const numbers = table.columns.filter((c) => c.type === 'number' && Number.isFinite(c.min));
    this.#setScatterColumns(numbers);
    this.colourSelect.replaceChildren(
      el('option', { value: '', text: 'none' }),
      ...numbers.map((c) => el('option', { value: c.id, text: c.label })),
    );
    const metric = numbers.find((c) => c.kind === 'metric' && c.id !== 'loss');
    this.colourColumn = table.byId.get(this.settings.c) ?? metric ?? null;
    this.colourSelect.value = this.colourColumn?.id ?? '';
    this.#renderColumnsPanel();
    this.#applySort();
    if (this.settings.tab === 'data') this.#drawPipelines();
  }

  #applySort() {
    this.order = sortedOrder(this.table, this.settings.sort);
    this.#applyFilters(this.settings.filters, { axes: true });
  }

  /**
   * Filter the rows again with `filters`; `axes`: the hidden runs, columns or order changed
   * (the chart's lines are laid out anew); `inputs`: show the filters in the header.
   */
  #applyFilters(filters, { axes = false, inputs = true } = {}) {
    const hidden = new Set(this.settings.hide);
    if (axes) {
      this.visibleRows = filterRows(this.table, this.order, {}, hidden);
      const axisColumns = this.columns.filter((c) => c.id !== RUN_COLUMN && axisable(c));
      this.parcoords.setData(
        this.table,
        axisColumns.slice(0, MAX_AXES),
        this.visibleRows,
        this.colourColumn,
      );
    }
    if (inputs) this.grid.setColumns(this.table, this.columns, { ...this.settings, filters });
    this.shown = filterRows(this.table, this.order, filters, hidden);
    this.grid.setRows(this.shown);
    this.parcoords.setFilters(filters, this.shown);
    this.#counts(filters);
    this.#scheduleScatter();
  }

  #counts(filters) {
    const total = this.table.runs.length;
    const hidden = this.settings.hide.filter((run) => this.table.rowOf.has(run)).length;
    this.count.textContent = `${formatCount(this.shown.length)} of ${plural(total, 'run')}`;
    this.clearFilters.disabled = !Object.keys(filters).length;
    this.showHidden.hidden = !hidden;
    this.showHidden.textContent = `Show ${plural(hidden, 'hidden run')}`;
  }

  #scheduleScatter() {
    clearTimeout(this.scatterTimer);
    this.scatterTimer = setTimeout(() => this.#applyScatter(), SCATTER_DELAY);
  }

  #applyScatter() {
    if (!this.table || this.modelPane.hidden) return;
    this.#setScatterColumns(
      this.table.columns.filter((c) => c.type === 'number' && Number.isFinite(c.min)),
    );
    this.scatter.draw(this.table, this.shown, new Set(this.store.state.runs));
  }

  /** The scatter's axes: those picked (by id, or a field folded into a column), else the
   * defaults (the first metric against the hyper-parameter that varies most). */
  #setScatterColumns(numbers) {
    const usable = new Set(numbers);
    const picked = (id) => {
      const column = id ? this.table.byId.get(id) : null;
      return usable.has(column) ? column.id : null;
    };
    const defaults = scatterDefaults(numbers);
    const x = picked(this.settings.x) ?? defaults.x;
    const y = picked(this.settings.y) ?? defaults.y;
    this.scatter.setColumns(numbers, x, y, this.settings.logx);
  }

  #selectionChanged() {
    this.#syncOpenButton();
    if (!this.table) return;
    this.grid.setSelected(new Set(this.store.state.runs));
    if (this.settings.tab === 'data') this.#drawPipelines();
    this.#scheduleScatter(); // selected points are coloured
  }

  #syncOpenButton() {
    const n = this.store.state.runs.length;
    this.openButton.textContent = n ? `Open ${plural(n, 'run')} in Scalars` : 'Select runs';
    this.openButton.disabled = !n;
  }

  // ------------------------------------------------------------------ actions

  #sortBy(id) {
    const sort = this.settings.sort;
    const next = sort && sort[0] === id ? (sort[1] > 0 ? [id, -1] : null) : [id, 1];
    this.#update({ sort: next });
  }

  #setFilter(id, filter) {
    const filters = { ...this.settings.filters };
    if (filter) filters[id] = filter;
    else delete filters[id];
    this.#update({ filters });
  }

  /** A brush moved (live: filter now, URL later) or ended (`done`: into the URL). */
  #brushed(id, filter, done) {
    const filters = { ...this.settings.filters };
    if (filter) filters[id] = filter;
    else delete filters[id];
    if (done) this.#update({ filters });
    else this.#applyFilters(filters, { inputs: false });
  }

  #select(runs, on) {
    const picked = new Set(runs);
    const kept = this.store.state.runs.filter((run) => !picked.has(run));
    this.store.set({ runs: on ? [...kept, ...runs] : kept });
  }

  #shownRuns(limit) {
    const out = [];
    for (const row of this.shown.subarray(0, limit)) out.push(this.table.runs[row]);
    return out;
  }

  #exportCsv() {
    downloadCsv('lineage.csv', csvText(this.columns, this.shown));
  }

  // ------------------------------------------------------------------ columns

  /** Open (`open`) or close the column chooser. */
  /**
   * Open or close the columns popover. While it is open, Escape or a press anywhere outside
   * it (or its button) closes it: the page listens for those only then.
   */
  #showColumnsPanel(open) {
    this.columnsPanel.hidden = !open;
    this.columnsButton.setAttribute('aria-expanded', String(open));
    this.popoverListeners?.abort();
    this.popoverListeners = null;
    if (!open) return;
    this.popoverListeners = new AbortController();
    const { signal } = this.popoverListeners;
    document.addEventListener(
      'keydown',
      (event) => {
        if (event.key !== 'Escape') return;
        this.#showColumnsPanel(false);
        this.columnsButton.focus();
      },
      { signal },
    );
    document.addEventListener(
      'pointerdown',
      (event) => {
        if (!this.columnsAnchor.contains(event.target)) this.#showColumnsPanel(false);
      },
      { signal },
    );
  }

  #renderColumnsPanel() {
    const shownIds = this.columns.map((c) => c.id).filter((id) => id !== RUN_COLUMN);
    const others = this.table.columns.filter(
      (c) => c.id !== RUN_COLUMN && !shownIds.includes(c.id),
    );
    const setCols = (ids) => this.#update({ cols: ids });
    const line = (column, shown, index) =>
      el(
        'li',
        { class: 'lin-col-item', dataset: { col: column.id } },
        el(
          'label',
          {},
          el('input', {
            type: 'checkbox',
            checked: shown,
            onchange: (event) =>
              setCols(
                event.target.checked
                  ? [...shownIds, column.id]
                  : shownIds.filter((id) => id !== column.id),
              ),
          }),
          el('span', { text: column.label }),
          el('span', { class: `lin-kind kind-${column.kind}`, text: kindName(column.kind) }),
        ),
        shown
          ? el('button', {
              type: 'button',
              class: 'icon-button lin-col-up',
              text: '↑',
              title: `Move ${column.label} left`,
              disabled: index === 0,
              onclick: () => setCols(moved(shownIds, index, -1)),
            })
          : null,
        shown
          ? el('button', {
              type: 'button',
              class: 'icon-button lin-col-down',
              text: '↓',
              title: `Move ${column.label} right`,
              disabled: index === shownIds.length - 1,
              onclick: () => setCols(moved(shownIds, index, 1)),
            })
          : null,
      );
    this.columnsPanel.replaceChildren(
      el(
        'div',
        { class: 'lin-columns-actions' },
        el('button', {
          type: 'button',
          class: 'button',
          text: 'Show all',
          onclick: () => this.#update({ cols: null }),
        }),
      ),
      el(
        'ul',
        { class: 'lin-col-list' },
        ...shownIds.map((id, i) => line(this.table.byId.get(id), true, i)),
        ...others.map((column) => line(column, false, -1)),
      ),
    );
  }

  // ------------------------------------------------------------------ data lineage

  async #drawPipelines() {
    const table = this.table;
    const withGraph = (run) => table.graph[table.rowOf.get(run)];
    let runs = this.store.state.runs.filter((run) => table.rowOf.has(run) && withGraph(run));
    const note = runs.length
      ? ''
      : 'Showing the first runs of the table: select runs to compare their pipelines.';
    if (!runs.length) runs = this.#shownRuns(this.shown.length).filter(withGraph);
    runs = runs.slice(0, PIPELINES);
    const key = JSON.stringify([table.key, runs]);
    if (key === this.pipelineKey) return;
    this.pipelineKey = key;
    if (!runs.length) {
      this.dataPane.replaceChildren(
        el('p', { class: 'empty-note', text: 'No run shown has a dataset graph.' }),
      );
      return;
    }
    const controller = newController(this.pipelines ?? (this.pipelines = {}));
    let body;
    try {
      body = await getJSON('dataset-graph', runs.map((run) => ['run', run]), controller.signal);
    } catch (err) {
      if (err.name === 'AbortError') return;
      this.pipelineKey = null;
      this.dataPane.replaceChildren(el('p', { class: 'empty-note', text: err.message }));
      return;
    }
    const intro = note ? [el('p', { class: 'muted lin-data-note', text: note })] : [];
    this.dataPane.replaceChildren(
      ...intro,
      el('h3', { class: 'lin-data-title', text: 'Pipelines' }),
      el(
        'div',
        { class: 'pipe-figures' },
        ...body.graphs.map(({ run, graph }) => pipelineDrawing(run, graph)),
      ),
      el('h3', { class: 'lin-data-title', text: 'Comparison' }),
      el('div', { class: 'pipe-compare-box' }, pipelineComparison(body.graphs)),
    );
  }
}

function moved(ids, index, by) {
  const out = [...ids];
  const [id] = out.splice(index, 1);
  out.splice(index + by, 0, id);
  return out;
}
