// seriescard.js: the card of one run's tag in the Images and Tensors views (a grouped
// PluginView, pluginview.js): the run's name, then a panel per rank side by side.

import { fetchSamples, newController } from '../core/api.js';
import { el } from '../core/dom.js';

/**
 * The card of one run's `tag` in a grouped view: the run's name, then a panel per rank
 * (made by `makePanel(rank)`), side by side. It asks /samples for the kept steps of each
 * rank when it comes on screen and again whenever the run changes. A panel has `element`,
 * setSamples(series, labelled), sync(state, changed), and may have show(), hide(), destroy().
 */
export class SeriesCard {
  constructor(view, tag, run, makePanel) {
    this.view = view;
    this.tag = tag;
    this.run = run;
    this.runs = [run];
    this.makePanel = makePanel;
    this.visible = false;
    this.stale = true;
    this.controller = null;
    this.panels = new Map(); // rank (as text) -> panel
    this.strip = el('div', { class: 'rank-strip' });
    this.note = el('p', { class: 'card-note' });
    this.element = el(
      'article',
      { class: `pcard ${view.plugin}-card`, dataset: { run, tag, state: 'idle', ranks: '0' } },
      el(
        'header',
        {},
        view.swatches(run),
        el('span', { class: 'card-run', title: run, text: run }),
      ),
      this.strip,
      this.note,
    );
  }

  show() {
    this.visible = true;
    if (this.stale) this.load();
    else for (const panel of this.panels.values()) panel.show?.();
  }

  hide() {
    this.visible = false;
    for (const panel of this.panels.values()) panel.hide?.();
  }

  refresh() {
    this.stale = true;
    if (this.visible) this.load();
  }

  sync(state, changed) {
    for (const panel of this.panels.values()) panel.sync(state, changed);
  }

  destroy() {
    this.controller?.abort();
    for (const panel of this.panels.values()) panel.destroy?.();
    this.element.remove();
  }

  async load() {
    this.stale = false;
    const controller = newController(this);
    if (!this.panels.size) this.element.dataset.state = 'loading';
    try {
      const { signal } = controller;
      const { series } = await fetchSamples(this.run, this.view.plugin, this.tag, signal);
      if (controller.signal.aborted) return;
      const seen = new Set();
      for (const s of series) {
        const id = String(s.rank);
        seen.add(id);
        let panel = this.panels.get(id);
        if (!panel) {
          panel = this.makePanel(s.rank);
          this.panels.set(id, panel);
          this.strip.append(panel.element);
        }
        panel.setSamples(s, series.length > 1);
      }
      for (const [id, panel] of this.panels) {
        if (seen.has(id)) continue;
        panel.destroy?.();
        panel.element.remove();
        this.panels.delete(id);
      }
      this.element.dataset.ranks = String(series.length);
      this.note.textContent = series.length ? '' : 'Nothing kept yet.';
      this.element.dataset.state = series.length ? 'ready' : 'empty';
    } catch (err) {
      if (err.name === 'AbortError') return;
      this.note.textContent = `Could not load ${this.tag}: ${err.message}`;
      this.element.dataset.state = 'error';
    }
  }
}
