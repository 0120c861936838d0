// prcurves.js: the PR Curves view, a card per pr_curve tag with the runs shown overlaid:
// each run's (and rank's) precision against recall at the step its slider picks (the
// newest by default; picks kept in the URL as `at`), the threshold and the counts of true
// and false positives and negatives under the cursor. /pr_curves answers every kept step
// of a run at once, so moving a slider redraws without asking the server.

import { getJSON, newController } from '../core/api.js';
import { el, formatCount, plural, plotlyText } from '../core/dom.js';
import { cardKey } from '../core/state.js';
import { PLOT_CONFIG, loadPlotly } from '../plots/plotly.js';
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

class PrCurveCard {
  constructor(view, tag) {
    this.view = view;
    this.tag = tag;
    this.runs = [];
    this.series = [];
    this.visible = false;
    this.stale = true;
    this.draws = 0;
    this.controller = null;
    this.count = el('span', { class: 'count muted' });
    this.plot = el('div', { class: 'plot prcurve-plot' });
    this.pickers = el('div', { class: 'prcurve-pickers' });
    this.note = el('p', { class: 'card-note muted' });
    this.element = el(
      'article',
      { class: 'pcard prcurve-card', dataset: { tag, state: 'idle', draws: '0' } },
      el('header', {}, el('h3', { class: 'tag', title: tag, text: tag }), this.count),
      this.plot,
      this.pickers,
      this.note,
    );
  }

  setRuns(runs) {
    if (JSON.stringify(runs) === JSON.stringify(this.runs)) return;
    this.runs = runs;
    this.refresh();
  }

  show() {
    this.visible = true;
    if (this.stale) this.load();
    else this.draw();
  }

  hide() {
    this.visible = false;
    this.controller?.abort();
    window.Plotly?.purge(this.plot);
    if (this.element.dataset.state === 'loading') this.stale = true;
    this.element.dataset.state = 'idle';
  }

  refresh() {
    this.stale = true;
    if (this.visible) this.load();
  }

  sync(state, changed) {
    if (!changed.has('at') || !this.visible) return;
    if (this.series.map((s) => s.picker.sync(state)).some(Boolean)) this.draw();
  }

  destroy() {
    this.hide();
    this.element.remove();
  }

  async load() {
    this.stale = false;
    const controller = newController(this);
    this.element.dataset.state = 'loading';
    try {
      const answers = await Promise.all(
        this.runs.map((run) => getJSON('pr_curves', [['run', run], ['tag', this.tag]], controller.signal)),
      );
      if (controller.signal.aborted) return;
      const series = [];
      answers.forEach((answer, i) => {
        const run = this.runs[i];
        const ranked = answer.series.length > 1;
        for (const s of answer.series) {
          const { colour, label } = this.view.style(run, s.rank, ranked);
          const key = cardKey('pr_curve', run, s.rank, this.tag);
          const picker = new StepPicker(this.view.store, key, () => this.draw());
          picker.setSteps(s.curves.map((c) => c.step), s.curves.map((c) => c.wall));
          picker.element.prepend(el('span', { class: 'prcurve-run', title: label, text: label }));
          series.push({ run, rank: s.rank, tag: this.tag, label, colour, picker, ...s });
        }
      });
      this.series = series;
      this.pickers.replaceChildren(...series.map((s) => s.picker.element));
      await this.draw();
    } catch (err) {
      if (err.name === 'AbortError') return;
      this.note.textContent = `Could not load ${this.tag}: ${err.message}`;
      this.element.dataset.state = 'error';
    }
  }

  async draw() {
    const data = this.series
      .filter((s) => s.curves.length)
      .map((s) => curveTrace(s, s.curves[s.picker.index]));
    const layout = {
      margin: { l: 52, r: 12, t: 8, b: 40 },
      xaxis: { title: { text: 'recall' }, range: [-0.02, 1.02], zeroline: false },
      yaxis: { title: { text: 'precision' }, range: [-0.02, 1.02], zeroline: false },
      showlegend: false,
      hovermode: 'closest',
    };
    const Plotly = await loadPlotly();
    if (!this.visible) return;
    await Plotly.react(this.plot, data, layout, PLOT_CONFIG);
    this.draws += 1;
    this.element.dataset.draws = String(this.draws);
    this.element.dataset.state = data.length ? 'ready' : 'empty';
    const unreadable = this.series.reduce((sum, s) => sum + s.unreadable, 0);
    this.count.textContent = data.length ? `${formatCount(data.length)} series` : '';
    this.note.textContent = [
      data.length ? '' : 'No curve kept yet.',
      unreadable
        ? `${plural(unreadable, 'kept step')} could not be read back (damaged, not a ` +
          'curve, or the file changed since it was listed) and are not drawn.'
        : '',
    ].filter(Boolean).join(' ');
  }
}

export class PrCurvesView extends PluginView {
  constructor(root, store) {
    super(root, store, { plugin: 'pr_curve', view: 'prcurves', noun: 'PR curves', grouped: false });
    this.start();
  }

  createCard(tag) {
    return new PrCurveCard(this, tag);
  }
}
