// overlaycard.js: the card of one tag with every run shown on one chart, in an ungrouped
// PluginView (pluginview.js): Histograms, PR Curves.

import { newController } from '../core/api.js';
import { el } from '../core/dom.js';
import { onThemeChange } from '../core/theme.js';
import { purgeFigure } from '../plots/figures.js';

/**
 * The card of `tag` over the runs shown (setRuns, in the sidebar's order). When it comes
 * on screen after a change it asks each run for the tag (`fetch(run, signal)`, a promise of
 * an answer with one `series` entry per rank) and keeps one series per run and rank, with
 * the colour and label the view gives it (`seriesOf(run, entry, style)`), then draws them
 * (`draw()`, which sets the card's data-state). Off screen its chart is freed. A subclass
 * gives fetch, seriesOf, draw and sync(state, changed), and may give loaded() (called
 * with the new series in place, before they are drawn); `extra` are elements shown between
 * the chart and the note (a step slider per series, say). A change of theme redraws it (its
 * curves' shades are mixed with the chart's background).
 */
export class OverlayCard {
  constructor(view, tag, { kind, extra = [] }) {
    this.view = view;
    this.tag = tag;
    this.runs = [];
    this.series = null; // the last answers, ready to draw
    this.visible = false;
    this.stale = true;
    this.draws = 0;
    this.controller = null;
    this.count = el('span', { class: 'count muted' });
    this.plot = el('div', { class: `plot ${kind}-plot` });
    this.note = el('p', { class: 'card-note muted' });
    this.element = el(
      'article',
      { class: `pcard ${kind}-card`, dataset: { tag, state: 'idle', draws: '0' } },
      el('header', {}, el('h3', { class: 'tag', title: tag, text: tag }), this.count),
      this.plot,
      ...extra,
      this.note,
    );
    this.untheme = onThemeChange(() => {
      if (this.visible && this.series) this.draw();
    });
  }

  /** The runs shown that have this tag (in the sidebar's order). */
  setRuns(runs) {
    if (JSON.stringify(runs) === JSON.stringify(this.runs)) return;
    this.runs = runs;
    this.refresh();
  }

  show() {
    this.visible = true;
    if (this.stale || !this.series) this.load();
    else this.draw();
  }

  hide() {
    this.visible = false;
    this.controller?.abort();
    purgeFigure(this.plot);
    if (this.element.dataset.state === 'loading') this.stale = true;
    this.element.dataset.state = 'idle';
  }

  refresh() {
    this.stale = true;
    if (this.visible) this.load();
  }

  destroy() {
    this.untheme();
    this.hide();
    this.element.remove();
  }

  async load() {
    this.stale = false;
    const controller = newController(this);
    this.element.dataset.state = 'loading';
    try {
      const answers = await Promise.all(
        this.runs.map((run) => this.fetch(run, controller.signal)),
      );
      if (controller.signal.aborted) return;
      const series = [];
      answers.forEach((answer, i) => {
        const run = this.runs[i];
        const ranked = answer.series.length > 1;
        for (const entry of answer.series) {
          series.push(this.seriesOf(run, entry, this.view.style(run, entry.rank, ranked)));
        }
      });
      this.series = series;
      this.loaded();
      await this.draw();
    } catch (err) {
      if (err.name === 'AbortError') return;
      this.note.textContent = `Could not load ${this.tag}: ${err.message}`;
      this.element.dataset.state = 'error';
    }
  }

  /** Called with the new series in place, before they are drawn. */
  loaded() {}

  /** The number of kept steps that could not be read back, over every series. */
  unreadable() {
    return this.series.reduce((sum, s) => sum + s.unreadable, 0);
  }
}
