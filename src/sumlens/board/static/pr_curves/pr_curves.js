// pr_curves.js: the PR Curves view, a card per pr_curve tag with the runs shown overlaid:
// each run's (and rank's) precision against recall at the step its slider picks (the
// newest by default; picks kept in the URL as `at`), the threshold and the counts of true
// and false positives and negatives under the cursor. /pr_curve answers every kept step
// of a run at once, so moving a slider over kept steps redraws without asking the server;
// the slider offers every recorded step (the kept ones marked), and a curve outside the
// kept sample is read from its file on request (/pr_curve/at) and remembered.

import { getJSON, newController } from '../core/api.js';
import { el, formatCount, plural, plotlyText } from '../core/dom.js';
import { cardKey } from '../core/state.js';
import { PLOT_CONFIG, loadPlotly } from '../plots/plotly.js';
import { OverlayCard } from '../pluginview/overlaycard.js';
import { PluginView } from '../pluginview/pluginview.js';
import { StepPicker } from '../pluginview/steppicker.js';

const HOVER =
  'threshold %{customdata[0]:.3f}<br>precision %{y:.4f}<br>recall %{x:.4f}<br>' +
  'TP %{customdata[1]} · FP %{customdata[2]}<br>TN %{customdata[3]} · FN %{customdata[4]}';

/** The plotly trace of one series' curve at one step (names only through `name`). */
export function curveTrace(series, curve) {
  const customdata = curve.thresholds.map((t, i) => [
    t, curve.tp[i], curve.fp[i], curve.tn[i], curve.fn[i],
  ]);
  return {
    type: 'scatter',
    mode: 'lines+markers',
    x: curve.recall,
    y: curve.precision,
    customdata,
    name: plotlyText(series.label),
    line: { color: series.colour, width: 2, shape: 'linear' },
    marker: { size: 4, color: series.colour },
    hovertemplate: `${HOVER}<extra>%{fullData.name}</extra>`,
    meta: { run: series.run, rank: series.rank, tag: series.tag, kind: 'pr', step: curve.step },
  };
}

class PrCurveCard extends OverlayCard {
  constructor(view, tag) {
    const pickers = el('div', { class: 'pr_curve-pickers' });
    super(view, tag, { kind: 'pr_curve', extra: [pickers] });
    this.pickers = pickers;
    this.stepLoader = {}; // holds the controller of the reads of steps outside the sample
  }

  fetch(run, signal) {
    return getJSON('pr_curve', [['run', run], ['tag', this.tag]], signal);
  }

  seriesOf(run, s, { colour, label }) {
    const picker = new StepPicker(this.view.store, cardKey('pr_curve', run, s.rank, this.tag),
      () => this.draw());
    picker.setSteps(s.curves.map((c) => c.step), s.curves.map((c) => c.wall), s.recorded,
      s.stride);
    picker.element.prepend(el('span', { class: 'pr_curve-run', title: label, text: label }));
    const atStep = new Map(s.curves.map((c) => [c.step, c])); // kept, and read on request
    return { run, rank: s.rank, tag: this.tag, label, colour, picker, atStep, ...s };
  }

  hide() {
    super.hide();
    this.stepLoader.controller?.abort();
  }

  /** Read the picked curves outside the kept sample; returns what could not be read. */
  async #readPicked(signal) {
    const failed = [];
    const missing = this.series.filter((s) => s.picker.step !== undefined
      && !s.atStep.has(s.picker.step));
    await Promise.all(missing.map(async (s) => {
      const step = s.picker.step;
      const params = [['run', s.run], ['tag', this.tag], ['step', step]];
      if (s.rank !== null) params.push(['rank', s.rank]);
      try {
        s.atStep.set(step, await getJSON('pr_curve/at', params, signal));
      } catch (err) {
        if (err.name !== 'AbortError') failed.push(`${s.label} at step ${step}: ${err.message}`);
      }
    }));
    return failed;
  }

  loaded() {
    this.pickers.replaceChildren(...this.series.map((s) => s.picker.element));
  }

  sync(state, changed) {
    if (!changed.has('at') || !this.visible || !this.series) return;
    if (this.series.map((s) => s.picker.sync(state)).some(Boolean)) this.draw();
  }

  async draw() {
    const signal = newController(this.stepLoader).signal;
    const failed = await this.#readPicked(signal);
    if (signal.aborted) return;
    const data = this.series
      .filter((s) => s.atStep.has(s.picker.step))
      .map((s) => curveTrace(s, s.atStep.get(s.picker.step)));
    const layout = {
      margin: { l: 52, r: 12, t: 8, b: 40 },
      xaxis: { title: { text: 'recall' }, range: [-0.02, 1.02], zeroline: false },
      yaxis: { title: { text: 'precision' }, range: [-0.02, 1.02], zeroline: false },
      showlegend: false,
      hovermode: 'closest',
    };
    const Plotly = await loadPlotly();
    if (!this.visible || signal.aborted) return;
    await Plotly.react(this.plot, data, layout, PLOT_CONFIG);
    this.draws += 1;
    this.element.dataset.draws = String(this.draws);
    this.element.dataset.state = data.length ? 'ready' : 'empty';
    const unreadable = this.unreadable();
    this.count.textContent = data.length ? `${formatCount(data.length)} series` : '';
    this.note.textContent = [
      data.length ? '' : 'No curve kept yet.',
      unreadable
        ? `${plural(unreadable, 'kept step')} could not be read back (damaged, not a ` +
          'curve, or the file changed since it was listed) and are not drawn.'
        : '',
      failed.length ? `Could not read ${failed.join('; ')}.` : '',
    ].filter(Boolean).join(' ');
  }
}

export class PrCurvesView extends PluginView {
  constructor(root, store) {
    super(root, store, {
      plugin: 'pr_curve',
      view: 'pr_curves',
      noun: 'PR curves',
      grouped: false,
    });
    this.start();
  }

  createCard(tag) {
    return new PrCurveCard(this, tag);
  }
}
