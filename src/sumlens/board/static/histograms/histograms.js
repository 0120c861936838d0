// histograms.js: the Histograms view, a card per histogram tag with the runs shown (and
// their ranks), in one of three modes:
//   offset        each kept step's distribution as a ridge standing on its step (or time),
//                 earliest at the top, later ones in front: TensorBoard's offset view and
//                 MindInsight's parameter distribution; a chart per run (and rank), stacked
//                 on one value axis, each with its steps;
//   overlay       every step's distribution as a line over the others, darker for later steps;
//   distribution  TensorBoard's distributions: percentile bands over the steps.
// The buckets come from /histograms (every kept step); re-binning and percentiles are done
// here (histmath.js), so changing the mode or the axis redraws without asking the server.
//
// Under the chart, "One step" (folded away until opened, or until the URL picks a step)
// has a step slider per series offering every recorded step, the kept ones marked, and a
// chart of each series' histogram at its picked step: a step outside the kept sample is
// read from its file on request (/histograms/at) and remembered.

import { fetchHistograms, getJSON, newController } from '../core/api.js';
import { el, formatCount, plural } from '../core/dom.js';
import { AXES, HISTOGRAM_MODES, cardKey } from '../core/state.js';
import {
  MAX_CURVES,
  drawFigure,
  histogramFigure,
  overlayFigure,
  purgeFigure,
} from '../plots/figures.js';
import { OverlayCard } from '../pluginview/overlaycard.js';
import { PluginView } from '../pluginview/pluginview.js';
import { StepPicker } from '../pluginview/steppicker.js';

const MODE_LABELS = { offset: 'Offset', overlay: 'Overlay', distribution: 'Distribution' };
const AXIS_LABELS = { step: 'Step', relative: 'Relative', wall: 'Wall time' };

class HistogramCard extends OverlayCard {
  constructor(view, tag) {
    const pickers = el('div', { class: 'histogram-pickers' });
    const stepPlot = el('div', { class: 'plot histogram-step-plot' });
    const stepNote = el('p', { class: 'card-note muted' });
    const atStep = el(
      'details',
      { class: 'histogram-at-step', dataset: { state: 'idle' } },
      el('summary', { text: 'One step', title: 'Any recorded step, kept or not' }),
      pickers,
      stepPlot,
      stepNote,
    );
    super(view, tag, { kind: 'histogram', extra: [atStep] });
    this.pickers = pickers;
    this.stepPlot = stepPlot;
    this.stepNote = stepNote;
    this.atStep = atStep;
    this.stepLoader = {}; // holds the controller of the step chart's reads (newController)
    atStep.addEventListener('toggle', () => {
      if (atStep.open) this.drawStep();
      else purgeFigure(stepPlot);
    });
  }

  fetch(run, signal) {
    return fetchHistograms(run, this.tag, signal);
  }

  seriesOf(run, s, { colour, label }) {
    const key = cardKey('histogram', run, s.rank, this.tag);
    const picker = new StepPicker(this.view.store, key, () => this.drawStep());
    picker.setSteps(s.histograms.map((h) => h.step), s.histograms.map((h) => h.wall),
      s.recorded, s.stride);
    picker.element.prepend(el('span', { class: 'histogram-run', title: label, text: label }));
    return {
      key: `${run}\u0000${s.rank}`,
      run,
      rank: s.rank,
      tag: this.tag,
      label,
      colour,
      histograms: s.histograms,
      unreadable: s.unreadable ?? 0,
      picker,
      atStep: new Map(s.histograms.map((h) => [h.step, h])), // kept, and read on request
    };
  }

  loaded() {
    this.pickers.replaceChildren(...this.series.map((s) => s.picker.element));
    const picked = this.view.state.at;
    if (this.series.some((s) => s.picker.key in picked)) this.atStep.open = true;
  }

  sync(state, changed) {
    if (!this.visible || !this.series) return;
    if (changed.has('hmode') || changed.has('axis')) this.drawMain();
    if (changed.has('at') && this.series.map((s) => s.picker.sync(state)).some(Boolean)) {
      this.atStep.open = true; // a link picking a step shows it (drawn on toggle, or here)
      this.drawStep();
    }
  }

  hide() {
    super.hide();
    this.stepLoader.controller?.abort();
    purgeFigure(this.stepPlot);
  }

  /** Each series' histogram at its picked step, those outside the sample read first. */
  async drawStep() {
    if (!this.atStep.open || !this.visible || !this.series) return;
    const signal = newController(this.stepLoader).signal;
    this.atStep.dataset.state = 'loading';
    const missing = this.series.filter((s) => s.picker.step !== undefined
      && !s.atStep.has(s.picker.step));
    const failed = [];
    await Promise.all(missing.map(async (s) => {
      const step = s.picker.step;
      const params = [['run', s.run], ['tag', this.tag], ['step', step]];
      if (s.rank !== null) params.push(['rank', s.rank]);
      try {
        s.atStep.set(step, await getJSON('histograms/at', params, signal));
      } catch (err) {
        if (err.name !== 'AbortError') failed.push(`${s.label} at step ${step}: ${err.message}`);
      }
    }));
    if (signal.aborted || !this.visible) return;
    const shown = this.series.flatMap((s) => {
      const h = s.atStep.get(s.picker.step);
      return h ? [{ ...s, histograms: [h] }] : [];
    });
    await drawFigure(this.stepPlot, overlayFigure(shown));
    if (signal.aborted) return;
    this.stepNote.textContent = failed.length ? `Could not read ${failed.join('; ')}.` : '';
    this.atStep.dataset.state = failed.length ? 'error' : 'ready';
  }

  async draw() {
    await this.drawMain();
    await this.drawStep();
  }

  async drawMain() {
    const { hmode, axis } = this.view.state;
    const series = this.series.filter((s) => s.histograms.length);
    const figure = histogramFigure(hmode, series, { axis });
    // stacked charts (offset mode, several series) are as tall as they need
    this.plot.style.height = figure.layout.height ? `${figure.layout.height}px` : '';
    await drawFigure(this.plot, figure);
    if (!this.visible) return;
    this.draws += 1;
    this.element.dataset.draws = String(this.draws);
    this.element.dataset.mode = hmode;
    this.#describe(series, hmode);
    this.element.dataset.state = series.length ? 'ready' : 'empty';
  }

  #describe(series, mode) {
    const steps = series.map((s) => s.histograms.length);
    const most = Math.max(0, ...steps);
    this.count.textContent = series.length
      ? `${formatCount(series.length)} series · ${plural(most, 'step')}`
      : '';
    const unreadable = this.unreadable();
    const lost = unreadable
      ? `${plural(unreadable, 'kept step')} could not be read back (damaged, or the file ` +
        'changed since it was listed) and are not drawn.'
      : '';
    if (!series.length) {
      this.note.textContent = lost || 'No histogram kept yet.';
      return;
    }
    const thinned = mode !== 'distribution' && most > MAX_CURVES;
    const spread = thinned
      ? `${formatCount(MAX_CURVES)} of ${formatCount(most)} kept steps drawn, evenly ` +
        'spaced (the distribution mode draws every one).'
      : '';
    this.note.textContent = [spread, lost].filter(Boolean).join(' ');
  }
}

export class HistogramsView extends PluginView {
  constructor(root, store) {
    super(root, store, {
      plugin: 'histogram',
      view: 'histograms',
      noun: 'histograms',
      grouped: false,
    });
    this.start();
  }

  createCard(tag) {
    return new HistogramCard(this, tag);
  }

  controls() {
    this.modeButtons = HISTOGRAM_MODES.map((mode) =>
      el('button', {
        type: 'button',
        class: 'segment',
        dataset: { mode },
        text: MODE_LABELS[mode],
        onclick: () => this.store.set({ hmode: mode }),
      }),
    );
    this.axisButtons = AXES.map((axis) =>
      el('button', {
        type: 'button',
        class: 'segment',
        dataset: { histAxis: axis }, // not data-axis: that names the Scalars view's buttons
        text: AXIS_LABELS[axis],
        onclick: () => this.store.set({ axis, zoom: {} }), // scalar zooms do not carry across axes
      }),
    );
    return [
      el('div', { class: 'segmented', role: 'group', 'aria-label': 'Mode' }, ...this.modeButtons),
      el('div', { class: 'segmented', role: 'group', 'aria-label': 'Axis' }, ...this.axisButtons),
    ];
  }

  syncControls(state) {
    for (const button of this.modeButtons) {
      button.setAttribute('aria-pressed', String(button.dataset.mode === state.hmode));
    }
    for (const button of this.axisButtons) {
      button.setAttribute('aria-pressed', String(button.dataset.histAxis === state.axis));
      button.disabled = state.hmode === 'overlay';
      button.title = state.hmode === 'overlay' ? 'The overlay mode has no step axis' : '';
    }
  }
}
