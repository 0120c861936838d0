// graph.js: the Graph view: a run's computational graphs (the network as MindSpore or
// sumlens wrote it, and the dataset pipeline) drawn as layered boxes in their name scopes.
//
// The graph comes whole from /api/v1/graph; only what is visible is laid out (Graphviz in a
// Web Worker, see graph_layout.js: the status line says while it runs, and a newer drawing
// supersedes it): a closed scope is one box, a scope of many direct nodes shows them grouped
// by type, and at first whole levels of scopes open while the drawing stays small
// (graph_model.js). Double-click opens or closes a scope; click selects (the side panel,
// graph_panel.js, shows it); search finds nodes by name; drag pans, the wheel zooms, Fit
// shows everything. The URL keeps the picked graph, the open scopes and the selection
// (store.state.graph: tag, plugin, rank, step, open, sel), so a reload shows the same view;
// they name the run they were picked in (`run`), and another run shown starts afresh.
// The run shown is the first selected; with none selected, the most recently updated run
// holding a graph (widgets/shownruns.js), said in a line above the drawing.
// A TensorBoard GraphDef arrives converted to the same form (sumlens/io/tb_graph.py); when
// its run holds RunMetadata (`run_metadata` tags), the panel adds what the first of them
// says of the selected node (compute time, memory), from /api/v1/graph/stats.

import { getJSON, newController } from '../core/api.js';
import { el, formatCount, plural } from '../core/dom.js';
import { ShownNote, holding, shownRuns } from '../widgets/shownruns.js';
import { GraphCanvas } from './graph_draw.js';
import { cancelLayout, layOut } from './graph_layout.js';
import { GraphModel } from './graph_model.js';
import { GraphPanel } from './graph_panel.js';

const PLUGINS = ['graph', 'dataset_graph'];
const HOLDS_GRAPH = holding(PLUGINS);
const PLUGIN_LABELS = { graph: 'Network', dataset_graph: 'Dataset' };
const MAX_OPEN = 2000;
const MAX_RESULTS = 50;

/** The graph settings of the URL, checked: anything invalid is left out. */
export function readOptions(raw) {
  const options = {};
  if (typeof raw.run === 'string') options.run = raw.run;
  if (typeof raw.tag === 'string') options.tag = raw.tag;
  if (PLUGINS.includes(raw.plugin)) options.plugin = raw.plugin;
  if (Number.isSafeInteger(raw.rank)) options.rank = raw.rank;
  if (Number.isSafeInteger(raw.step)) options.step = raw.step;
  if (Array.isArray(raw.open)) {
    options.open = raw.open.filter((name) => typeof name === 'string').slice(0, MAX_OPEN);
  }
  if (typeof raw.sel === 'string') options.sel = raw.sel;
  return options;
}

function option(value, text, selected) {
  return el('option', { value, text, selected });
}

export class GraphView {
  constructor(root, store) {
    this.root = root;
    this.store = store;
    this.meta = new Map();
    this.shown = shownRuns([], this.meta, HOLDS_GRAPH, 1); // the run shown (#pickShown)
    this.controller = null;
    this.model = null;
    this.data = null;
    this.loadedKey = null; // what the shown graph was loaded for
    this.runSignature = null;
    this.listing = 0; // /runs responses taken (the run picker is filled anew after each)
    this.pickerKey = null; // what the run picker lists: listing and run shown
    this.drawnKey = null; // the open scopes drawn, as JSON
    this.visible = null;
    this.draws = 0;
    this.requests = 0; // drawings asked for: only the newest one is drawn
    this.focusSelection = false; // centre on the selection after the next drawing
    this.anchor = null; // [DOT id, screen point] kept in place by the next drawing
    this.#build();
    store.subscribe((state, changed) => {
      if (changed.has('view') || changed.has('runs') || changed.has('graph')) this.#sync();
    });
  }

  #build() {
    this.runPick = el('select', { class: 'graph-run', 'aria-label': 'Run',
      onchange: () => this.#pickRun(this.runPick.value) });
    this.graphPick = el('select', { class: 'graph-pick', 'aria-label': 'Graph',
      onchange: () => {
        const [plugin, tag] = JSON.parse(this.graphPick.value);
        this.store.set({ graph: { run: this.runId, plugin, tag } });
      } });
    this.rankPick = el('select', { class: 'graph-rank', 'aria-label': 'Rank', hidden: true,
      onchange: () => this.#setOptions({ rank: Number(this.rankPick.value) }) });
    this.stepPick = el('select', { class: 'graph-step', 'aria-label': 'Step', hidden: true,
      onchange: () => this.#setOptions({ step: Number(this.stepPick.value) }) });
    this.searchBox = el('input', {
      type: 'search',
      class: 'search-input graph-search',
      placeholder: 'Find a node by name',
      'aria-label': 'Find a node by name',
      oninput: () => this.#showResults(),
      onkeydown: (event) => {
        if (event.key === 'Enter') this.results.querySelector('button')?.click();
        if (event.key === 'Escape') this.#hideResults();
      },
    });
    this.results = el('ul', { class: 'graph-results', hidden: true });
    const tool = (text, label, onclick) =>
      el('button', { type: 'button', class: 'button', text, title: label, 'aria-label': label,
        onclick });
    this.status = el('p', { class: 'graph-status muted', role: 'status' });
    this.problem = el('p', { class: 'graph-problem', role: 'alert', hidden: true });
    this.canvas = new GraphCanvas({
      onSelect: (id) => this.#select(id),
      onToggle: (id) => this.#toggle(id),
      onBackground: () => this.#setOptions({ sel: undefined }),
    });
    this.panel = new GraphPanel((kind, index) => this.#pick(kind, index));
    this.note = new ShownNote(this.store, 'graphs');
    this.root.append(
      el(
        'div',
        { class: 'toolbar graph-toolbar' },
        this.runPick,
        this.graphPick,
        this.rankPick,
        this.stepPick,
        el('div', { class: 'graph-find' }, this.searchBox, this.results),
        tool('Fit', 'Fit the drawing to the window', () => this.canvas.fit()),
        tool('+', 'Zoom in', () => this.canvas.zoom(1.25)),
        tool('−', 'Zoom out', () => this.canvas.zoom(0.8)),
        tool('Reset', 'Close the scopes opened (back to the first drawing)', () =>
          this.#setOptions({ open: undefined })),
      ),
      this.note.element,
      this.problem,
      this.status,
      el('div', { class: 'graph-body' },
        el('div', { class: 'graph-stage' }, this.canvas.element), this.panel.element),
    );
    this.root.dataset.state = 'idle';
    this.root.dataset.draws = '0';
  }

  /** Take a new /runs response; the shown graph reloads when its run's graphs changed. */
  setRuns(data, forced) {
    this.meta = new Map(data.runs.map((run) => [run.id, run]));
    this.listing += 1;
    const run = this.meta.get(this.#pickShown());
    const signature = JSON.stringify(
      run && [run.updated, run.tags.graph, run.tags.dataset_graph, run.ranks],
    );
    if (forced || signature !== this.runSignature) {
      this.runSignature = signature;
      this.loadedKey = null;
    }
    this.#sync();
  }

  /** The URL's graph settings, when they were picked in the run shown (else none). */
  get options() {
    const options = readOptions(this.store.state.graph);
    return options.run === undefined || options.run === this.runId ? options : {};
  }

  /** The id of the run shown (undefined: none holds a graph). */
  get runId() {
    return this.shown.runs[0];
  }

  /**
   * Decide the run shown: the first selected; none selected, the most recently updated
   * run holding a graph, kept while it holds one (two live runs do not take turns).
   */
  #pickShown() {
    const before = this.shown.implicit ? this.shown.runs : [];
    const selected = this.store.state.runs.slice(0, 1);
    this.shown = shownRuns(selected, this.meta, HOLDS_GRAPH, 1, before);
    return this.runId;
  }

  #setOptions(patch) {
    const next = { ...this.options, ...patch, run: this.runId };
    for (const key of Object.keys(next)) if (next[key] === undefined) delete next[key];
    this.store.set({ graph: next });
  }

  #graphRuns() {
    return [...this.meta.values()].filter(HOLDS_GRAPH);
  }

  /**
   * List the runs that hold a graph, the one shown picked. Called on every sync, so the
   * picker follows the URL's run however it changed (a dashboard's link, the Runs page).
   */
  #fillRuns() {
    const chosen = this.runId;
    const key = `${this.listing}\u0000${chosen}`;
    if (key === this.pickerKey) return;
    this.pickerKey = key;
    const runs = this.#graphRuns();
    const entries = runs.map((run) => option(run.id, run.id, run.id === chosen));
    if (!runs.some((run) => run.id === chosen)) {
      entries.unshift(option('', chosen ? `${chosen} (no graph)` : 'No run with a graph', true));
    }
    this.runPick.replaceChildren(...entries);
  }

  /** Show run `id`'s graph: the view shows one run, and the URL names that one alone. */
  #pickRun(id) {
    if (id) this.store.set({ runs: [id] });
  }

  /** The graphs of the shown run: [plugin, tag] pairs. */
  #graphs(run) {
    return PLUGINS.flatMap((plugin) => (run?.tags[plugin] ?? []).map((tag) => [plugin, tag]));
  }

  #say(text, problem = false) {
    this.status.textContent = problem ? '' : text;
    this.problem.textContent = problem ? text : '';
    this.problem.hidden = !problem;
    this.status.classList.remove('busy');
  }

  #sync() {
    const state = this.store.state;
    if (state.view !== 'graph') return;
    const runId = this.#pickShown();
    this.note.sync();
    this.note.update(this.shown);
    this.#fillRuns();
    const run = this.meta.get(runId);
    const graphs = this.#graphs(run);
    const options = this.options;
    if (!runId || !run || !graphs.length) {
      this.controller?.abort();
      this.#clear();
      if (!runId) this.#say(this.listing ? 'No run holds a graph yet.' : 'Loading…');
      else if (!run) this.#say(`Run ${runId} is not (or not yet) listed.`);
      else this.#say(`Run ${runId} holds no graph.`);
      return;
    }
    const picked = graphs.find(([p, t]) => p === (options.plugin ?? 'graph') && t === options.tag);
    const [plugin, tag] = picked ?? graphs[0];
    this.graphPick.replaceChildren(
      ...graphs.map(([p, t]) =>
        option(JSON.stringify([p, t]), `${PLUGIN_LABELS[p]}: ${t}`, p === plugin && t === tag),
      ),
    );
    const key = JSON.stringify([runId, plugin, tag, options.rank ?? null, options.step ?? null]);
    if (key !== this.loadedKey) {
      this.loadedKey = key;
      this.#load(key, { run: runId, plugin, tag, rank: options.rank, step: options.step });
      return;
    }
    if (this.model) this.#draw();
  }

  #clear() {
    cancelLayout();
    this.requests += 1;
    this.model = null;
    this.data = null;
    this.loadedKey = null;
    this.drawnKey = null;
    this.canvas.world.replaceChildren();
    this.panel.clear();
    this.root.dataset.state = 'idle';
  }

  async #load(key, { run, plugin, tag, rank, step }) {
    const controller = newController(this);
    const params = [['run', run], ['plugin', plugin], ['tag', tag]];
    if (rank !== undefined) params.push(['rank', rank]);
    if (step !== undefined) params.push(['step', step]);
    this.root.dataset.state = 'loading';
    if (!this.model) this.#say('Loading the graph…');
    let data;
    try {
      data = await getJSON('graph', params, controller.signal);
    } catch (err) {
      if (controller.signal.aborted) return;
      this.#clear();
      this.loadedKey = key;
      this.root.dataset.state = 'error';
      this.#say(`Cannot show this graph: ${err.message}`, true);
      return;
    }
    if (controller.signal.aborted) return;
    if (data.layout_library) {
      this.#clear();
      this.loadedKey = key;
      this.root.dataset.state = 'error';
      this.#say(data.layout_library, true);
      return;
    }
    const same = this.data && this.data.run === data.run && this.data.plugin === data.plugin &&
      this.data.tag === data.tag && this.data.rank === data.rank && this.data.step === data.step &&
      this.data.wall === data.wall;
    this.data = data;
    this.#fillSteps(data);
    if (same) {
      this.root.dataset.state = 'drawn';
      return;
    }
    this.model = new GraphModel(data.graph);
    this.panel.setStats(null);
    this.drawnKey = null;
    this.fitNext = true;
    this.#draw();
    if (plugin === 'graph') this.#loadStats(run, controller.signal);
  }

  /** The first RunMetadata of `run`, if any, for the panel; redraws the selection then. */
  async #loadStats(run, signal) {
    const tags = this.meta.get(run)?.tags.run_metadata ?? [];
    if (!tags.length) return;
    let stats;
    try {
      stats = await getJSON('graph/stats', [['run', run], ['tag', tags[0]]], signal);
    } catch {
      return; // the graph is shown without them
    }
    if (signal.aborted || this.data?.run !== run) return;
    this.panel.setStats(stats);
    if (this.root.dataset.state === 'drawn') {
      this.#showSelection(this.model.scopeIndices(this.#openNames()));
    }
  }

  #fillSteps(data) {
    this.rankPick.hidden = data.ranks.length < 2;
    this.rankPick.replaceChildren(
      ...data.ranks.map((r) => option(String(r), `rank ${r}`, r === data.rank)),
    );
    this.stepPick.hidden = data.steps.length < 2;
    this.stepPick.replaceChildren(
      ...data.steps.map((s) => option(String(s), `step ${s}`, s === data.step)),
    );
  }

  /** The open scope names: the URL's, or the first drawing's. */
  #openNames() {
    return this.options.open ?? this.model.autoOpen();
  }

  async #draw() {
    const model = this.model;
    const open = model.scopeIndices(this.#openNames());
    const drawnKey = JSON.stringify([...open].sort((a, b) => a - b));
    this.requests += 1;
    const request = this.requests;
    if (drawnKey === this.drawnKey) {
      cancelLayout(); // a layout still running (a scope opened, then closed again) is stale
    } else {
      const visible = model.visible(open);
      this.root.dataset.state = 'loading';
      this.#sayLayingOut(visible);
      let layout;
      try {
        layout = await layOut(visible.dot);
      } catch (err) {
        if (request !== this.requests) return;
        this.root.dataset.state = 'error';
        this.#say(`Cannot lay the graph out: ${err.message}`, true);
        return;
      }
      if (!layout || request !== this.requests) return; // a newer drawing superseded this one
      const anchor = this.anchor;
      this.anchor = null;
      this.drawnKey = drawnKey;
      this.visible = visible;
      this.canvas.draw(model, layout, visible);
      if (this.fitNext) this.canvas.fit();
      else if (anchor && this.canvas.centre(anchor[0])) {
        this.canvas.place(this.canvas.centre(anchor[0]), anchor[1]);
      }
      this.fitNext = false;
      this.draws += 1;
      this.root.dataset.draws = String(this.draws);
    }
    this.#sayDrawn(this.visible);
    this.#showSelection(open);
    this.root.dataset.state = 'drawn';
  }

  /** Say that a layout runs (it may take seconds): how many boxes. */
  #sayLayingOut(visible) {
    const boxes = [...visible.items.values()].filter((item) => item.kind !== 'cluster').length;
    this.#say(`Laying out ${formatCount(boxes)} ${boxes === 1 ? 'box' : 'boxes'}…`);
    this.status.classList.add('busy');
  }

  #sayDrawn(visible) {
    const model = this.model;
    const boxes = [...visible.items.values()].filter((item) => item.kind !== 'cluster').length;
    const parts = [
      model.name || this.data.tag,
      plural(model.nodes.length, 'node'),
      plural(model.scopes.length - 1 - model.groups.size, 'scope'),
      ...(model.groups.size ? [plural(model.groups.size, 'group') + ' by type'] : []),
      `${formatCount(boxes)} shown`,
      `step ${this.data.step}`,
    ];
    this.#say([parts.join(' · '), ...model.problems].join(' — '));
  }

  /** Mark what stands for the selection on the drawing, and show it in the panel. */
  #showSelection(open) {
    const model = this.model;
    const name = this.options.sel;
    const node = name === undefined ? undefined : model.nodeByName.get(name);
    const scope = name === undefined ? undefined : model.scopeByName.get(name);
    let id = null;
    const box = model.boxes(open);
    if (node !== undefined) {
      id = model.visibleId(node, box);
      this.panel.showNode(model, node);
    } else if (scope !== undefined && scope > 0) {
      const isOpen = open.has(scope);
      id = box[scope] >= 0 ? `s${box[scope]}` : `cluster_s${scope}`;
      this.panel.showScope(model, scope, isOpen, () => this.#toggleScope(scope, id));
    } else {
      this.panel.clear();
    }
    this.canvas.highlight(id);
    if (this.focusSelection && id && this.canvas.centre(id)) {
      this.canvas.place(this.canvas.centre(id));
    }
    this.focusSelection = false;
  }

  #select(id) {
    const item = this.visible?.items.get(id);
    if (!item) return;
    const name = item.kind === 'node'
      ? this.model.nodes[item.index].name
      : this.model.scopes[item.index].name;
    this.#setOptions({ sel: name });
  }

  #toggle(id) {
    const item = this.visible?.items.get(id);
    if (item && item.kind !== 'node') this.#toggleScope(item.index, id);
  }

  #toggleScope(scope, id) {
    const name = this.model.scopes[scope].name;
    const names = this.#openNames();
    const open = names.includes(name);
    const centre = this.canvas.centre(id);
    const after = open ? `s${scope}` : `cluster_s${scope}`;
    if (centre) this.anchor = [after, this.canvas.screenOf(centre)];
    this.#setOptions({
      open: open ? names.filter((other) => other !== name) : [...names, name],
      sel: name,
    });
  }

  /** Select node (or scope) `index`, opening the scopes around it, and centre on it. */
  #pick(kind, index) {
    const model = this.model;
    const names = new Set(this.#openNames());
    let scope = kind === 'node' ? model.nodes[index].scope : model.scopes[index].parent;
    for (; scope > 0; scope = model.scopes[scope].parent) names.add(model.scopes[scope].name);
    const sel = kind === 'node' ? model.nodes[index].name : model.scopes[index].name;
    this.focusSelection = true;
    this.#hideResults();
    this.#setOptions({ open: [...names], sel });
  }

  #showResults() {
    const text = this.searchBox.value;
    if (!this.model || !text.trim()) {
      this.#hideResults();
      return;
    }
    const found = this.model.search(text, MAX_RESULTS);
    this.results.replaceChildren(
      ...found.map((index) =>
        el('li', {}, el('button', { type: 'button', class: 'graph-result',
          text: this.model.nodes[index].name, title: this.model.nodes[index].type,
          onclick: () => this.#pick('node', index) })),
      ),
    );
    if (!found.length) this.results.append(el('li', { class: 'muted', text: 'No node matches' }));
    this.results.hidden = false;
  }

  #hideResults() {
    this.results.hidden = true;
  }
}
