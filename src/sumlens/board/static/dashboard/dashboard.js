// dashboard.js: the training dashboard of one run (the `run` view, showing the first
// selected run; none selected, the most recently updated run holding data, said so: see
// widgets/shownruns.js): a card per kind of data the run holds, as MindInsight's has.
//
// Scalars, histograms, tensors, images and texts get a small live preview of their first tag
// (two scalar tags, the losses and the collector's first: see previewTags; the newest
// image, with a switch to the other image tags; the newest tensor's default slice) and a
// link to their full view; a distributed run shows its ranks side by side in each.
// Graphs, dataset graphs, lineage and loss landscapes get a card saying what the run
// holds, linking to their views (Graph, Lineage, Landscape); a kind sumlens has no view
// for says so. The cards, their titles and the views they open are those registered in
// views.js: the previewed ones first, then the others in the order registered. Previews
// load only while the view is shown, and reload when the poller reports that the run
// changed. Under the head: the run's tags (each a link to the run list filtered by it) and
// note, edited in the run list's dialog (runs/annotations.js).

import {
  fetchHistograms,
  fetchSamples,
  fetchScalars,
  fetchTensor,
  getJSON,
  imageUrl,
  newController,
  probeShape,
} from '../core/api.js';
import { collator, el, formatTime, plural } from '../core/dom.js';
import { PREVIEW_CURVES, ridgeFigure, scalarPreviewFigure } from '../plots/figures.js';
import { clearSketch, drawSketch } from '../plots/sketch.js';
import { gate } from '../core/session.js';
import { AnnotationEditor, NO_ANNOTATION } from '../runs/annotations.js';
import { CARDS } from '../views.js';
import { PALETTE } from '../widgets/colours.js';
import { renderedText } from '../widgets/markdown.js';
import { ShownNote, holdsData, shownRuns } from '../widgets/shownruns.js';
import { defaultSlice, shapeText, tensorTable } from '../widgets/tensortable.js';

// the lineage card's plugins, as its text names them
const LINEAGE = {
  train_lineage: 'Training',
  eval_lineage: 'Evaluation',
  custom_lineage_data: 'Custom',
  hparams: 'Hyper-parameter', // TensorBoard's hparams plugin
};
const PREVIEWS = ['scalar', 'histogram', 'tensor', 'image', 'text']; // cards with a preview
const KIND_OF = new Map(CARDS.flatMap((card) => card.plugins.map((plugin) => [plugin, card.kind])));
const previewRank = (kind) => (PREVIEWS.includes(kind) ? PREVIEWS.indexOf(kind) : PREVIEWS.length);
const ORDER = CARDS.map((card) => card.kind).sort((a, b) => previewRank(a) - previewRank(b));
const SCALAR_TAGS = 2; // tags in the scalar preview
const MAX_PANELS = 8; // ranks side by side in one card
const PREVIEW_POINTS = 300;
const TABLE_CELLS = { maxRows: 6, maxCols: 6 };
const TABLE_DIGITS = 2; // decimals in the tensor preview (at most)
const NO_VIEW = 'sumlens has no view of this kind of data.';
const TEXT_PREVIEW = 10_000; // characters of a text the preview asks for (its first part)

const sorted = (tags) => [...(tags ?? [])].sort(collator.compare);
const LOSS = /(^|[/_.-])loss($|[/_.-])/i; // "loss", "loss/auto", "train/loss", "val_loss"
const COLLECTED = /\/auto$/; // what SummaryCollector writes: "loss/auto", "learning_rate/auto"

/**
 * The scalar tags a run's preview shows first: its losses (the collector's before the
 * others), then the rest of the collector's tags, then the others; each group by name. A
 * run's own tags ("accuracy", "epoch") never push the collector's loss out of the card.
 */
function previewTags(tags) {
  const rank = (tag) =>
    LOSS.test(tag) ? (COLLECTED.test(tag) ? 0 : 1) : COLLECTED.test(tag) ? 2 : 3;
  return [...(tags ?? [])].sort((a, b) => rank(a) - rank(b) || collator.compare(a, b));
}

/** The kinds of card a run gets, from its /runs `tags` (lineage plugins share one card). */
function kindsOf(run) {
  const present = new Set();
  for (const [plugin, tags] of Object.entries(run.tags)) {
    if (!tags.length) continue;
    present.add(KIND_OF.get(plugin) ?? plugin);
  }
  const known = ORDER.filter((kind) => present.has(kind));
  const unknown = [...present].filter((kind) => !ORDER.includes(kind)).sort();
  return [...known, ...unknown];
}

/** One card of the dashboard: a title, a link to the full view, a body and a note. */
class DashCard {
  constructor(kind, title, view) {
    this.kind = kind;
    this.view = view; // the full view it links to (null: none yet)
    this.plots = [];
    this.count = el('span', { class: 'count muted' });
    this.extra = el('span', { class: 'card-extra' });
    this.link = view ? el('a', { class: 'link open-view', text: `Open ${title} →` }) : null;
    this.body = el('div', { class: 'dash-body' });
    this.note = el('p', { class: 'card-note muted' });
    this.element = el(
      'article',
      { class: 'pcard dash-card', dataset: { plugin: kind, state: 'idle' } },
      el(
        'header',
        {},
        el('h3', { text: title }),
        this.count,
        el('span', { class: 'grow' }),
        this.extra,
        this.link,
      ),
      this.body,
      this.note,
    );
  }

  setState(state) {
    this.element.dataset.state = state;
  }

  /** Replace the body with `panels` (freeing the charts it had). */
  fill(panels) {
    this.clear();
    this.body.replaceChildren(...panels);
  }

  /** A chart div that clear() will free. */
  plotDiv(className) {
    const div = el('div', { class: `plot ${className}` });
    this.plots.push(div);
    return div;
  }

  clear() {
    for (const div of this.plots) clearSketch(div);
    this.plots = [];
  }
}

function panel(label, ...children) {
  return el(
    'div',
    { class: 'dash-panel' },
    label === null ? null : el('div', { class: 'panel-label', text: label }),
    ...children,
  );
}

/** The ranks to show side by side and a note of those left out. */
function capRanks(series) {
  const shown = series.slice(0, MAX_PANELS);
  const note = series.length > shown.length ? `First ${MAX_PANELS} of ${series.length} ranks.` : '';
  return { shown, note, labelled: series.length > 1 };
}

export class DashboardView {
  constructor(root, store) {
    this.store = store;
    this.meta = new Map();
    this.loaded = false;
    this.shown = shownRuns([], this.meta, holdsData, 1); // the run shown (#pickShown)
    this.note = new ShownNote(store, 'data');
    this.cards = new Map(); // kind -> DashCard
    this.shownKey = null; // what the cards show: run id and its data, as JSON
    this.controller = null;
    this.imageTag = new Map(); // run id -> the image tag picked in its card
    this.title = el('span', { class: 'dash-run', title: '' });
    this.status = el('span', { class: 'badge' });
    this.facts = el('span', { class: 'muted dash-facts' });
    this.picker = el('select', {
      class: 'select run-picker',
      'aria-label': 'Dashboard of',
      onchange: () => {
        const id = this.picker.value;
        this.store.set({ runs: [id, ...this.store.state.runs.filter((r) => r !== id)] });
      },
    });
    this.grid = el('div', { class: 'dash-grid' });
    this.message = el('p', { class: 'empty-note', hidden: true });
    // the run's tags and note, edited in the run list's dialog (runs/annotations.js)
    this.annotation = el('div', { class: 'dash-annotation', hidden: true });
    this.editor = new AnnotationEditor(root, (id, annotation) => {
      const run = this.meta.get(id);
      if (run) run.annotation = annotation; // shown now; the reload brings it to every view
      this.#update(false);
      document.dispatchEvent(new CustomEvent('sumlens:runs-changed'));
    });
    root.append(
      el(
        'div',
        { class: 'toolbar dash-head' },
        el('h2', { class: 'dash-heading', text: 'Training dashboard' }),
        this.title,
        this.status,
        this.facts,
        el('span', { class: 'grow' }),
        this.picker,
      ),
      this.note.element,
      this.annotation,
      el('div', { class: 'view-cards' }, this.message, this.grid),
    );
    store.subscribe((state, changed) => {
      if (changed.has('view') || changed.has('runs')) this.#update(false);
    });
  }

  /** Take a new /runs response; `force` reloads the previews even if the run did not change. */
  setRuns(data, force = false) {
    this.meta = new Map(data.runs.map((run) => [run.id, run]));
    this.loaded = true;
    this.#update(force);
  }

  get #active() {
    return this.store.state.view === 'run';
  }

  /**
   * The run shown: the first selected; none selected, the most recently updated run that
   * holds data, kept while it does (two live runs do not take turns).
   */
  #pickShown() {
    const before = this.shown.implicit ? this.shown.runs : [];
    const selected = this.store.state.runs.slice(0, 1);
    this.shown = shownRuns(selected, this.meta, holdsData, 1, before);
    this.note.sync();
    this.note.update(this.shown);
    return this.shown.runs[0];
  }

  #update(force) {
    const { runs } = this.store.state;
    const id = this.#pickShown();
    const run = id === undefined ? undefined : this.meta.get(id);
    this.#renderHead(id, run, runs);
    if (!this.#active) return;
    const key = JSON.stringify(run ? [run.id, run.updated, run.status, run.tags, run.ranks] : id);
    if (key === this.shownKey && !force) return;
    this.shownKey = key;
    this.#render(id, run);
  }

  #renderHead(id, run, runs) {
    this.title.textContent = id ?? '';
    this.title.title = id ?? '';
    this.status.hidden = !run;
    if (run) {
      this.status.textContent = run.status;
      this.status.className = `badge ${run.status}`;
      const ranks = run.ranks.length > 1 ? `ranks ${run.ranks.join(', ')} · ` : '';
      this.facts.textContent = `${ranks}updated ${formatTime(run.updated)}`;
    } else this.facts.textContent = '';
    this.#renderAnnotation(run);
    this.picker.hidden = runs.length < 2;
    if (runs.length > 1) {
      this.picker.replaceChildren(...runs.map((r) => el('option', { value: r, text: r })));
      this.picker.value = id;
    }
  }

  /** The run's tags (each opening the run list filtered by it), note and edit button. */
  #renderAnnotation(run) {
    this.annotation.hidden = !run;
    if (!run) return;
    const { tags, note } = run.annotation ?? NO_ANNOTATION;
    const edit = gate(
      el('button', {
        class: 'button dash-edit-annotation',
        type: 'button',
        text: tags.length || note ? 'Edit tags and note' : 'Add tags and a note',
        title: `Edit the tags and note of ${run.id}`,
        onclick: () => this.editor.open(run),
      }),
      'write',
      { hide: true },
    );
    this.annotation.replaceChildren(
      ...tags.map((tag) =>
        el('a', {
          class: 'run-tag dash-tag',
          href: this.store.href({ view: 'runs', runtag: tag }),
          title: `The runs tagged ${tag}`,
          text: tag,
        }),
      ),
      ...(note ? [el('span', { class: 'dash-note muted', text: note, title: note })] : []),
      edit,
    ); // (replaceChildren writes a null as the text "null")
  }

  #render(id, run) {
    const controller = newController(this);
    let text = '';
    if (!this.loaded) text = 'Loading…';
    else if (id === undefined) text = 'No run holds data yet.';
    else if (!run) text = `There is no run ${id} (any more).`;
    const kinds = run ? kindsOf(run) : [];
    if (run && !kinds.length) text = 'This run holds no data yet.';
    this.message.textContent = text;
    this.message.hidden = !text;

    for (const [kind, card] of this.cards) {
      if (kinds.includes(kind)) continue;
      card.clear();
      card.element.remove();
      this.cards.delete(kind);
    }
    for (const kind of kinds) {
      let card = this.cards.get(kind);
      if (!card) {
        const known = CARDS.find((entry) => entry.kind === kind);
        card = new DashCard(kind, known?.title ?? kind, known?.view ?? null);
        this.cards.set(kind, card);
      }
      if (card.view) {
        card.link.setAttribute('href', this.store.href({ view: card.view, runs: [run.id] }));
      }
      this.grid.append(card.element);
      this.#load(card, run, controller.signal);
    }
  }

  async #load(card, run, signal) {
    card.setState('loading'); // what it shows stays until the new preview replaces it
    try {
      const done = await this.#preview(card, run, signal);
      if (signal.aborted) return;
      card.setState(done ? 'ready' : 'empty');
    } catch (err) {
      if (err.name === 'AbortError' || signal.aborted) return;
      card.fill([]);
      card.note.textContent = `Could not load the preview: ${err.message}`;
      card.setState('error');
    }
  }

  /** Fill `card` with its preview; false when there is nothing to show yet. */
  #preview(card, run, signal) {
    const tags =
      card.kind === 'scalar' ? previewTags(run.tags.scalar) : sorted(run.tags[card.kind]);
    card.count.textContent = PREVIEWS.includes(card.kind) ? plural(tags.length, 'tag') : '';
    if (card.kind === 'scalar') return this.#scalars(card, run, tags, signal);
    if (card.kind === 'histogram') return this.#histogram(card, run, tags[0], signal);
    if (card.kind === 'tensor') return this.#tensor(card, run, tags[0], signal);
    if (card.kind === 'image') return this.#image(card, run, tags, signal);
    if (card.kind === 'text') return this.#text(card, run, tags[0], signal);
    return Promise.resolve(this.#presence(card, run));
  }

  async #scalars(card, run, tags, signal) {
    const shown = tags.slice(0, SCALAR_TAGS);
    const response = await fetchScalars(
      { runs: [run.id], tags: shown, axis: 'step', smoothing: 0, points: PREVIEW_POINTS },
      signal,
    );
    if (signal.aborted) return false;
    const byRank = new Map();
    for (const s of response.series) {
      if (!byRank.has(s.rank)) byRank.set(s.rank, []);
      byRank.get(s.rank).push(s);
    }
    const { shown: ranks, note, labelled } = capRanks([...byRank.keys()]);
    const draws = [];
    const panels = ranks.map((rank) => {
      const div = card.plotDiv('dash-plot');
      const figure = scalarPreviewFigure(byRank.get(rank), shown);
      draws.push(() => drawSketch(div, figure));
      return panel(labelled ? `rank ${rank}` : null, div);
    });
    card.fill(panels);
    for (const draw of draws) draw(); // in the page now: each sketch takes its div's size
    const more =
      tags.length > shown.length ? `${shown.length} of ${plural(tags.length, 'tag')} shown.` : '';
    card.note.textContent = [more, note].filter(Boolean).join(' ');
    return panels.length > 0;
  }

  async #histogram(card, run, tag, signal) {
    const { series } = await fetchHistograms(run.id, tag, signal);
    if (signal.aborted) return false;
    const { shown, note, labelled } = capRanks(series.filter((s) => s.histograms.length));
    const draws = [];
    const panels = shown.map((s, i) => {
      const div = card.plotDiv('dash-plot');
      const one = {
        key: String(s.rank),
        run: run.id,
        rank: s.rank,
        tag,
        label: run.id,
        colour: PALETTE[i % PALETTE.length],
        histograms: s.histograms,
      };
      const options = { axis: 'step', preview: true, maxCurves: PREVIEW_CURVES };
      const figure = ridgeFigure([one], options);
      draws.push(() => drawSketch(div, figure));
      return panel(labelled ? `rank ${s.rank}` : null, div);
    });
    card.fill([...panels, el('div', { class: 'dash-caption', text: tag })]);
    for (const draw of draws) draw(); // in the page now: each sketch takes its div's size
    card.note.textContent = note;
    return panels.length > 0;
  }

  async #tensor(card, run, tag, signal) {
    const { series } = await fetchSamples(run.id, 'tensor', tag, signal);
    if (signal.aborted) return false;
    const { shown, note, labelled } = capRanks(series.filter((s) => s.step.length));
    const panels = await Promise.all(
      shown.map(async (s) => {
        const step = s.step[s.step.length - 1];
        const ask = { run: run.id, tag, step, rank: s.rank };
        const shape = await probeShape(ask, signal);
        const body = await fetchTensor({ ...ask, slice: defaultSlice(shape) }, signal);
        const digits = Math.min(this.store.state.digits, TABLE_DIGITS);
        const { table } = tensorTable(body, digits, TABLE_CELLS);
        return panel(
          labelled ? `rank ${s.rank}` : null,
          el('div', { class: 'tensor-scroll small' }, table),
          el('div', {
            class: 'dash-caption',
            text: `shape ${shapeText(body.shape)} · ${body.dtype} · step ${body.step}` +
              (body.slice ? ` · slice ${body.slice}` : ''),
          }),
        );
      }),
    );
    if (signal.aborted) return false;
    card.fill([...panels, el('div', { class: 'dash-caption', text: tag })]);
    card.note.textContent = note;
    return panels.length > 0;
  }

  async #image(card, run, tags, signal) {
    let tag = this.imageTag.get(run.id);
    if (!tags.includes(tag)) tag = tags[0];
    this.#imageSwitch(card, run, tags, tag);
    const { series } = await fetchSamples(run.id, 'image', tag, signal);
    if (signal.aborted) return false;
    const { shown, note, labelled } = capRanks(series.filter((s) => s.step.length));
    const panels = shown.map((s) => {
      const last = s.step.length - 1;
      const img = el('img', {
        class: 'dash-image',
        alt: `${tag} at step ${s.step[last]}`,
        src: imageUrl(run.id, tag, s.step[last], s.rank),
      });
      return panel(
        labelled ? `rank ${s.rank}` : null,
        el('div', { class: 'dash-image-frame' }, img),
        el('div', {
          class: 'dash-caption',
          text: `step ${s.step[last]} · ${formatTime(s.wall[last])}`,
        }),
      );
    });
    card.fill([...panels, el('div', { class: 'dash-caption', text: tag })]);
    card.note.textContent = note;
    return panels.length > 0;
  }

  /**
   * The newest text of `tag` per rank, rendered (widgets/markdown.js): the first part of a
   * long one, said in the note (the Text view shows the rest).
   */
  async #text(card, run, tag, signal) {
    const { series } = await fetchSamples(run.id, 'text', tag, signal);
    if (signal.aborted) return false;
    const { shown, note, labelled } = capRanks(series.filter((s) => s.step.length));
    let cut = false;
    const panels = await Promise.all(
      shown.map(async (s) => {
        const step = s.step[s.step.length - 1];
        const ask = [['run', run.id], ['tag', tag], ['step', step], ['limit', TEXT_PREVIEW]];
        if (s.rank !== null) ask.push(['rank', s.rank]);
        const body = await getJSON('text', ask, signal);
        cut ||= body.next !== null;
        return panel(
          labelled ? `rank ${s.rank}` : null,
          el('div', { class: 'dash-text' }, renderedText(body)),
          el('div', { class: 'dash-caption', text: `step ${step} · ${formatTime(s.wall.at(-1))}` }),
        );
      }),
    );
    if (signal.aborted) return false;
    card.fill([...panels, el('div', { class: 'dash-caption', text: tag })]);
    const start = cut ? 'The start of a long text: the Text view shows the rest.' : '';
    card.note.textContent = [start, note].filter(Boolean).join(' ');
    return panels.length > 0;
  }

  /** A select of the run's image tags (MindInsight's "Switch tag"); hidden with one tag. */
  #imageSwitch(card, run, tags, tag) {
    if (tags.length < 2) {
      card.extra.replaceChildren();
      return;
    }
    const select = el(
      'select',
      {
        class: 'select',
        'aria-label': 'Image tag',
        onchange: () => {
          this.imageTag.set(run.id, select.value);
          this.#load(card, run, this.controller.signal);
        },
      },
      ...tags.map((t) => el('option', { value: t, text: t })),
    );
    select.value = tag;
    card.extra.replaceChildren(select);
  }

  /** The card of a kind without a preview: what the run holds of it. */
  #presence(card, run) {
    const items = [];
    let what = '';
    if (card.kind === 'lineage') {
      for (const [plugin, label] of Object.entries(LINEAGE)) {
        if (run.tags[plugin]?.length) items.push(`${label} lineage`);
      }
      what = 'The run recorded its lineage:';
    } else if (card.kind === 'graph') {
      items.push(...sorted(run.tags.graph));
      what = `The run recorded ${plural(items.length, 'computational graph')}, in:`;
    } else if (card.kind === 'dataset_graph') {
      what = 'The run recorded the graph of its data pipeline.';
    } else if (card.kind === 'landscape') {
      items.push(...sorted(run.tags.landscape));
      what = `The run recorded ${plural(items.length, 'loss landscape')}:`;
    } else {
      items.push(...sorted(run.tags[card.kind]));
      what = `The run recorded ${card.kind} data:`;
    }
    card.fill([
      el('p', { class: 'presence-text', text: what }),
      items.length
        ? el('ul', { class: 'presence-list' }, ...items.map((t) => el('li', { text: t })))
        : null,
      card.view ? null : el('p', { class: 'presence-later muted', text: NO_VIEW }),
    ].filter(Boolean));
    return true;
  }
}
