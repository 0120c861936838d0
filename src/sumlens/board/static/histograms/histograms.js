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

import { fetchHistograms } from '../core/api.js';
import { el, formatCount, plural } from '../core/dom.js';
import { AXES, HISTOGRAM_MODES } from '../core/state.js';
import { MAX_CURVES, drawFigure, histogramFigure } from '../plots/figures.js';
import { OverlayCard } from '../pluginview/overlaycard.js';
import { PluginView } from '../pluginview/pluginview.js';

const MODE_LABELS = { offset: 'Offset', overlay: 'Overlay', distribution: 'Distribution' };
const AXIS_LABELS = { step: 'Step', relative: 'Relative', wall: 'Wall time' };

class HistogramCard extends OverlayCard {
  constructor(view, tag) {
    super(view, tag, { kind: 'histogram' });
  }

  fetch(run, signal) {
    return fetchHistograms(run, this.tag, signal);
  }

  seriesOf(run, s, { colour, label }) {
    return {
      key: `${run}\u0000${s.rank}`,
      run,
      rank: s.rank,
      tag: this.tag,
      label,
      colour,
      histograms: s.histograms,
      unreadable: s.unreadable ?? 0,
    };
  }

  sync(state, changed) {
    if (this.visible && this.series && (changed.has('hmode') || changed.has('axis'))) this.draw();
  }

  async draw() {
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
