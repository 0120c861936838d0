// tensors.js: the Tensors view. Per tensor tag, a card per selected run (a panel per rank);
// each panel shows one kept step of the tensor: a slice of it as a shaded table, the
// statistics of the tensor and of the slice, and a value histogram of the slice.
//
// The slice is typed in MindInsight's syntax ("[0,:,:]": an index, ':' or start:stop[:step]
// per dimension) and checked by the server; its one-line error shows under the editor. By
// default a panel shows MindInsight's slice: leading dimensions at 0, the last two whole.
// To know the shape before the first slice, a panel asks for the empty slice "[0:0]"
// (shape, dtype and statistics, no values); a 0-D tensor refuses it and is asked for whole.

import { ApiError, fetchTensor, newController, probeShape } from '../core/api.js';
import { el } from '../core/dom.js';
import { BINS, MAX_DIGITS, cardKey } from '../core/state.js';
import { drawFigure, purgeFigure, valueHistogramFigure } from '../plots/figures.js';
import { PluginView } from '../pluginview/pluginview.js';
import { SeriesCard } from '../pluginview/seriescard.js';
import { StepPicker } from '../pluginview/steppicker.js';
import { defaultSlice, shapeText, statisticsList, tensorTable } from '../widgets/tensortable.js';

class TensorPanel {
  constructor(view, card, run, tag, rank) {
    this.view = view;
    this.card = card;
    this.run = run;
    this.tag = tag;
    this.rank = rank;
    this.key = cardKey('tensor', run, rank, tag);
    this.shape = undefined; // known once asked
    this.body = null; // the last answer shown
    this.controller = null;
    this.stale = true;
    this.picker = new StepPicker(view.store, this.key, () => this.load());
    this.label = el('div', { class: 'panel-label', text: rank === null ? '' : `rank ${rank}` });
    this.sliceInput = el('input', {
      type: 'text',
      class: 'slice-input',
      spellcheck: false,
      autocomplete: 'off',
      'aria-label': 'Slice',
      title: "One entry per dimension: an index, ':' or start:stop[:step], e.g. [0,:,:]",
      onkeydown: (event) => {
        if (event.key === 'Enter') this.#apply();
      },
    });
    this.applyButton = el('button', {
      type: 'button',
      class: 'button apply-slice',
      text: 'Apply',
      onclick: () => this.#apply(),
    });
    this.shapeLine = el('span', { class: 'shape-line muted' });
    this.error = el('p', { class: 'slice-error', role: 'alert', hidden: true });
    this.tableBox = el('div', { class: 'tensor-scroll' });
    this.tableNote = el('p', { class: 'card-note muted' });
    this.stats = el('div', { class: 'tensor-stats' });
    this.plot = el('div', { class: 'plot value-plot' });
    this.element = el(
      'div',
      {
        class: 'tensor-panel',
        dataset: { rank: rank === null ? '' : String(rank), state: 'idle' },
      },
      this.label,
      el(
        'div',
        { class: 'slice-editor' },
        el('span', { class: 'muted', text: 'Slice' }),
        this.sliceInput,
        this.applyButton,
        this.shapeLine,
      ),
      this.error,
      this.tableBox,
      this.tableNote,
      el('div', { class: 'tensor-lower' }, this.stats, this.plot),
      this.picker.element,
    );
  }

  get typed() {
    return this.view.state.slices[this.key];
  }

  setSamples(series, labelled) {
    this.label.hidden = !labelled;
    this.picker.setSteps(series.step, series.wall, series.recorded, series.stride);
    this.stale = true;
    if (this.card.visible) this.load();
  }

  show() {
    if (this.stale || !this.body) this.load();
    else this.#drawHistogram(this.body);
  }

  hide() {
    if (this.element.dataset.state === 'loading') this.stale = true; // cut short: load again
    this.controller?.abort();
    purgeFigure(this.plot);
  }

  destroy() {
    this.hide();
  }

  sync(state, changed) {
    const moved = changed.has('at') && this.picker.sync(state);
    const sliced = changed.has('slices') && (this.body?.slice ?? null) !== this.#sliceFor(state);
    if (moved || sliced || changed.has('bins')) this.load();
    else if (changed.has('digits') && this.body) this.#renderTable(this.body);
  }

  /** The slice to ask for: the one typed, else the default of the known shape. */
  #sliceFor(state) {
    const typed = state.slices[this.key];
    if (typed !== undefined) return typed;
    return this.shape === undefined ? undefined : defaultSlice(this.shape);
  }

  async load() {
    this.stale = false;
    if (!this.card.visible) {
      this.stale = true;
      return;
    }
    const controller = newController(this);
    const { signal } = controller;
    const step = this.picker.step;
    if (step === undefined) return;
    this.element.dataset.state = 'loading';
    const typed = this.typed;
    if (document.activeElement !== this.sliceInput && typed !== undefined) {
      this.sliceInput.value = typed;
    }
    try {
      if (typed === undefined && this.shape === undefined) {
        this.shape = await this.#probe(step, signal);
      }
      let body;
      try {
        body = await this.#fetch(step, this.#sliceFor(this.view.state), signal);
      } catch (err) {
        if (!(err instanceof ApiError) || err.status !== 422 || typed !== undefined) throw err;
        this.shape = await this.#probe(step, signal); // the shape changed under a default slice
        body = await this.#fetch(step, this.#sliceFor(this.view.state), signal);
      }
      if (signal.aborted) return;
      await this.#render(body, signal);
    } catch (err) {
      if (err.name === 'AbortError' || signal.aborted) return;
      this.#showError(err);
      const refused = err instanceof ApiError && err.status === 422;
      if (refused && !this.body) this.#showShape(step, signal);
    }
  }

  /** Say the shape, to help fix a slice that never worked. */
  async #showShape(step, signal) {
    try {
      const shape = await this.#probe(step, signal);
      if (!signal.aborted) this.shapeLine.textContent = `shape ${shapeText(shape)}`;
    } catch {
      // the error shown says enough
    }
  }

  #probe(step, signal) {
    return probeShape({ run: this.run, tag: this.tag, step, rank: this.rank }, signal);
  }

  #fetch(step, slice, signal) {
    const { bins } = this.view.state;
    const { run, tag, rank } = this;
    return fetchTensor({ run, tag, step, rank, slice, bins }, signal);
  }

  #showError(err) {
    const text = err instanceof ApiError ? err.message.replace(/^HTTP \d+: /, '') : err.message;
    this.error.textContent = text;
    this.error.hidden = false;
    this.sliceInput.classList.add('invalid');
    this.element.dataset.state = 'error';
  }

  async #render(body, signal) {
    this.body = body;
    this.error.hidden = true;
    this.error.textContent = '';
    this.sliceInput.classList.remove('invalid');
    this.shape = body.shape;
    if (document.activeElement !== this.sliceInput) {
      this.sliceInput.value = this.typed ?? defaultSlice(body.shape) ?? '';
    }
    this.sliceInput.disabled = body.shape.length === 0;
    this.applyButton.disabled = body.shape.length === 0;
    this.sliceInput.placeholder = body.shape.length ? '' : 'a 0-D tensor';
    this.shapeLine.textContent = `shape ${shapeText(body.shape)} · ${body.dtype}`;
    this.#renderTable(body);
    this.stats.replaceChildren(
      el('div', {}, el('h4', { text: 'Tensor' }), statisticsList(body.statistics)),
      el(
        'div',
        {},
        el('h4', { text: `Slice ${shapeText(body.slice_shape)}` }),
        statisticsList(body.slice_statistics, 'stats slice-stats'),
      ),
    );
    this.element.dataset.step = String(body.step);
    this.element.dataset.slice = body.slice ?? '';
    await this.#drawHistogram(body);
    if (!signal.aborted) this.element.dataset.state = 'ready';
  }

  #renderTable(body) {
    const { table, note } = tensorTable(body, this.view.state.digits);
    this.tableBox.replaceChildren(...(table ? [table] : []));
    this.tableNote.textContent = note;
  }

  async #drawHistogram(body) {
    const histogram = body.histogram;
    const show = Boolean(histogram && histogram.counts.length);
    this.plot.hidden = !show;
    if (!show) {
      purgeFigure(this.plot);
      this.plot.dataset.bins = '0';
      return;
    }
    await drawFigure(this.plot, valueHistogramFigure(histogram));
    this.plot.dataset.bins = String(histogram.counts.length);
  }

  #apply() {
    const text = this.sliceInput.value.trim();
    const slices = { ...this.view.state.slices };
    const fallback = this.shape === undefined ? undefined : defaultSlice(this.shape);
    if (!text || text === fallback) delete slices[this.key];
    else slices[this.key] = text;
    const before = JSON.stringify(this.view.state.slices);
    this.view.store.set({ slices });
    if (JSON.stringify(slices) === before) this.load(); // the same slice again: ask anyway
  }
}

export class TensorsView extends PluginView {
  constructor(root, store) {
    super(root, store, { plugin: 'tensor', view: 'tensors', noun: 'tensors', grouped: true });
    this.start();
  }

  createCard(tag, run) {
    const card = new SeriesCard(this, tag, run, (rank) => {
      return new TensorPanel(this, card, run, tag, rank);
    });
    return card;
  }

  controls() {
    this.binsSelect = el(
      'select',
      {
        class: 'select',
        'aria-label': 'Histogram bins',
        onchange: () => this.store.set({ bins: Number(this.binsSelect.value) }),
      },
      ...BINS.map((n) => el('option', { value: String(n), text: String(n) })),
    );
    this.digitsSelect = el(
      'select',
      {
        class: 'select',
        'aria-label': 'Decimal places',
        onchange: () => this.store.set({ digits: Number(this.digitsSelect.value) }),
      },
      ...Array.from({ length: MAX_DIGITS + 1 }, (_, n) =>
        el('option', { value: String(n), text: String(n) }),
      ),
    );
    return [
      el('label', { class: 'control' }, 'Decimals', this.digitsSelect),
      el('label', { class: 'control' }, 'Histogram bins', this.binsSelect),
    ];
  }

  syncControls(state) {
    this.binsSelect.value = String(state.bins);
    this.digitsSelect.value = String(state.digits);
  }
}
