// card.js: one tag's card in the Scalars view.
//
// The card itself is a few cheap elements and always exists; its plotly chart exists only
// while the card is on screen (the view's IntersectionObserver calls show/hide), so a
// page of hundreds of tags stays light. Each (re)load aborts the one before it, so a slow
// answer never overwrites a newer one.

import { downloadUrl, fetchScalars, newController } from '../core/api.js';
import { el, formatCount, plural } from '../core/dom.js';
import { GroupColours, seriesColours } from '../widgets/colours.js';
import { memberLooks } from '../widgets/grouptraces.js';
import { ScalarChart } from './chart.js';
import { fetchGroups, groupDownloadUrl } from './groups.js';

const MIN_POINTS = 300;
const MAX_POINTS = 4000;

/** The x tag of a tag axis ("tag:epoch" -> "epoch"); null for step and time axes. */
function xTagOf(axis) {
  return axis.startsWith('tag:') ? axis.slice(4) : null;
}

export class TagCard {
  /**
   * A card for `tag`. `view` provides `context(tag)` (runs, axis, smoothing, log, envelope,
   * zoom, style) and `zoomed(tag, zoom)`, called when the user zooms this chart.
   */
  constructor(tag, view) {
    this.tag = tag;
    this.view = view;
    this.visible = false;
    this.chart = null;
    this.controller = null;
    this.draws = 0;
    this.zoomKey = undefined; // the zoom of the last load, as JSON
    // groups are coloured away from their runs' colours (the view's: the legend's)
    this.groupColours = new GroupColours((run) => seriesColours(view.meta, view.style, run));
    this.title = el('h3', { class: 'tag', title: tag, text: tag });
    this.resetButton = el('button', {
      class: 'icon-button',
      type: 'button',
      title: 'Show the full range (or double-click the chart)',
      text: '⟲',
      hidden: true,
      onclick: () => this.#resetZoom(),
    });
    const link = (format) =>
      el('a', { class: 'link', title: `Download ${tag} (${format})`, text: format, download: '' });
    this.csv = link('CSV');
    this.json = link('JSON');
    this.plot = el('div', { class: 'plot' });
    this.flag = el('span', { class: 'chart-flag', hidden: true }); // said on the chart
    this.note = el('p', { class: 'card-note muted' });
    this.element = el(
      'article',
      { class: 'card', dataset: { tag, state: 'idle', draws: '0' } },
      el('header', {}, this.title, this.resetButton, this.csv, this.json),
      el('div', { class: 'plot-box' }, this.plot, this.flag),
      this.note,
    );
  }

  /** The card came into view: draw it. */
  show() {
    this.visible = true;
    this.load();
  }

  /** The card left the view: free its chart. */
  hide() {
    this.visible = false;
    this.controller?.abort();
    this.chart?.purge();
    this.chart = null;
    this.#setState('idle');
  }

  /**
   * Update the download links for the `runs` now selected, along `axis` (a tag: with x);
   * while the runs are grouped, they download the groups' centre and band at every step.
   */
  setRuns(runs, axis) {
    const { group, smoothing } = this.view.context(this.tag);
    const url = (format) =>
      group
        ? groupDownloadUrl(runs, [this.tag], format, axis, group, smoothing)
        : downloadUrl(runs, [this.tag], format, axis);
    this.csv.href = url('csv');
    this.json.href = url('json');
  }

  /** Fetch and draw the tag's series as the view's state says (only while on screen). */
  async load() {
    if (!this.visible) return;
    const controller = newController(this);
    const context = this.view.context(this.tag);
    this.zoomKey = JSON.stringify(context.zoom);
    this.resetButton.hidden = !context.zoom;
    this.#setState('loading');
    try {
      const asked = {
        runs: context.runs,
        axis: context.axis,
        smoothing: context.smoothing,
        points: this.#points(),
        range: context.zoom?.x,
      };
      const [response, grouped] = await Promise.all([
        fetchScalars(
          { ...asked, tags: [this.tag], envelope: context.envelope },
          controller.signal,
        ),
        context.group &&
          fetchGroups({ ...asked, tag: this.tag, options: context.group }, controller.signal),
      ]);
      if (controller.signal.aborted) return; // hidden, or a newer load began
      this.chart ??= new ScalarChart(this.plot, (zoom) => this.view.zoomed(this.tag, zoom));
      await this.chart.draw(response, { ...context, groups: this.#groups(grouped, context) });
      if (controller.signal.aborted) return;
      this.draws += 1;
      this.element.dataset.draws = String(this.draws);
      this.element.dataset.groups = String(grouped ? grouped.groups.length : 0);
      this.#describe(response, context.zoom, grouped);
      this.#flagOrder(response);
      this.#setState(response.series.length ? 'ready' : 'empty');
    } catch (err) {
      if (err.name === 'AbortError') return;
      this.note.textContent = `Could not load ${this.tag}: ${err.message}`;
      this.#setState('error');
    }
  }

  /** The tag's zoom is now `zoom` (undefined: none): load its range unless it has it. */
  zoomTo(zoom) {
    if (JSON.stringify(zoom) !== this.zoomKey) this.load();
  }

  /** Remove the card for good. */
  destroy() {
    this.hide();
    this.element.remove();
  }

  #resetZoom() {
    if (this.chart) this.chart.resetZoom();
    else this.view.zoomed(this.tag, { x: null, y: null });
  }

  #points() {
    const width = this.plot.clientWidth || 600;
    return Math.round(Math.min(MAX_POINTS, Math.max(MIN_POINTS, width * 2)));
  }

  /** What the chart needs of a groups answer (null: the runs are not grouped). */
  #groups(grouped, context) {
    if (!grouped) return null;
    this.groupColours.assign(grouped);
    this.view.groupControls.showGroups(grouped.groups, this.groupColours);
    const looks = memberLooks(grouped, context.group.members, this.groupColours);
    return { response: grouped, looks, colours: this.groupColours };
  }

  #describe(response, zoom, grouped) {
    const { series } = response;
    if (!series.length) {
      this.note.textContent = zoom
        ? 'No points in this range.'
        : 'No points yet for the selected runs.';
      return;
    }
    const shown = series.reduce((sum, s) => sum + s.shown, 0);
    const total = series.reduce((sum, s) => sum + s.total, 0);
    const missing = series.reduce((sum, s) => sum + (s.missing ?? 0), 0);
    const xTag = xTagOf(response.axis);
    this.note.textContent =
      `${plural(series.length, 'curve')} · ${formatCount(shown)} of ` +
      `${formatCount(total)} points shown` +
      (missing ? ` · ${formatCount(missing)} left out: no ${xTag} at their step` : '') +
      (grouped ? ` · ${plural(grouped.groups.length, 'group')} (${grouped.stat})` : '') +
      (zoom ? ' · zoomed: double-click to show all' : '');
  }

  /** Say on the chart when the x tag rises and falls (the curves keep step order, so they
   * double back); one that only rises or only falls is a fine axis (board/query/xaxis.py). */
  #flagOrder(response) {
    const xTag = xTagOf(response.axis);
    const back = response.series.filter((s) => s.monotonic === false);
    this.flag.hidden = !back.length;
    this.flag.textContent = back.length
      ? `${xTag} rises and falls with step (not monotonic)` +
        (back.length < response.series.length ? ` in ${plural(back.length, 'curve')}` : '') +
        ': drawn in step order'
      : '';
  }

  #setState(state) {
    this.element.dataset.state = state;
  }
}
