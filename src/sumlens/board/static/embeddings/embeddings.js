// embeddings.js: the Embeddings view, a card per embedding (add_embedding's projector
// files) of each run shown: its points on their first principal components (found by the
// server, /embedding, sampled to 100,000) as a 2-D or 3-D scatter, coloured by a metadata
// column, labelled on hover, and a search that rings the points whose label holds the text
// typed. The 2-D scatter is a canvas of our own (scatter2d.js: plotly.js is not loaded
// for it); the 3-D one is plotly's, loaded when 3-D is picked. Labels come from files:
// the canvas shows them as text, plotly gets them escaped (plotlyText), never as markup.
// An embedding with thumbnails (add_embedding's label_img: a sprite image, from
// /embedding/sprite) draws each point as its thumbnail in 2-D, framed in its colour, while
// "Thumbnails" is ticked; plotly's 3-D scatter has no image markers, so 3-D draws points.

import { getBlob, getJSON, newController } from '../core/api.js';
import { el, formatCount, plotlyText, plural } from '../core/dom.js';
import { PLOT_CONFIG, loadPlotly } from '../plots/plotly.js';
import { PluginView } from '../pluginview/pluginview.js';
import { MATCH, PALETTE, PLAIN, pointColours } from './colouring.js';
import { Scatter2D } from './scatter2d.js';

/** The coordinates of an answer (base64 float32, x y z per point) as three arrays. */
export function decodeCoords(base64, count) {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i += 1) bytes[i] = text.charCodeAt(i);
  const all = new Float32Array(bytes.buffer);
  const axes = [new Float32Array(count), new Float32Array(count), new Float32Array(count)];
  for (let i = 0; i < count; i += 1) {
    axes[0][i] = all[3 * i];
    axes[1][i] = all[3 * i + 1];
    axes[2][i] = all[3 * i + 2];
  }
  return axes;
}

/** A base64 string of little-endian uint32 as an array. */
export function decodeRows(base64) {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i += 1) bytes[i] = text.charCodeAt(i);
  return new Uint32Array(bytes.buffer);
}

/** A column's cell of point `i` as text. */
function cellText(column, i) {
  if (column.kind === 'category') return column.categories[column.codes[i]];
  const value = column.values[i];
  return value === null ? 'NaN' : String(value);
}

/** plotly's marker colours of `column` (null: one colour), for the 3-D scatter. */
function markerColours(column) {
  if (!column) return { color: PLAIN };
  if (column.kind === 'category') {
    return { color: column.codes.map((code) => PALETTE[code % PALETTE.length]) };
  }
  if (column.kind === 'number') {
    return { color: column.values, colorscale: 'Viridis', showscale: true,
      colorbar: { thickness: 10, title: { text: plotlyText(column.name) } } };
  }
  return { color: PLAIN };
}

class EmbeddingCard {
  constructor(view, tag, run) {
    this.view = view;
    this.tag = tag;
    this.run = run;
    this.runs = [run];
    this.answer = null;
    this.visible = false;
    this.stale = true;
    this.draws = 0;
    this.dims = 2;
    this.colourBy = -1; // index of the metadata column colouring the points; -1: none
    this.controller = null;
    this.dimButtons = [2, 3].map((dims) =>
      el('button', {
        type: 'button', class: 'segment', text: `${dims}-D`, dataset: { dims: String(dims) },
        'aria-pressed': String(dims === this.dims),
        onclick: () => this.#setDims(dims),
      }),
    );
    this.colourPick = el('select', {
      class: 'embedding-colour', 'aria-label': 'Colour by',
      onchange: () => { this.colourBy = Number(this.colourPick.value); this.draw(); },
    });
    this.search = el('input', {
      type: 'search', class: 'embedding-search', placeholder: 'Search labels',
      'aria-label': 'Search labels', oninput: () => this.draw(),
    });
    this.thumbPick = el('input', {
      type: 'checkbox', checked: true, class: 'embedding-thumbnails',
      onchange: () => this.draw(),
    });
    this.thumbLabel = el('label', { class: 'muted', hidden: true }, this.thumbPick, ' Thumbnails');
    this.count = el('span', { class: 'count muted' });
    this.flat = new Scatter2D();
    this.scene = el('div', { class: 'plot embedding-plot embedding-scene', hidden: true });
    this.note = el('p', { class: 'card-note muted' });
    this.element = el(
      'article',
      { class: 'pcard embedding-card', dataset: { run, tag, state: 'idle', draws: '0' } },
      el('header', {}, view.swatches(run), el('span', { class: 'card-run', title: run, text: run }),
        this.count),
      el('div', { class: 'embedding-controls' },
        el('div', { class: 'segmented', role: 'group', 'aria-label': 'Dimensions' },
          ...this.dimButtons),
        el('label', { class: 'muted' }, 'Colour ', this.colourPick), this.thumbLabel, this.search),
      this.flat.element,
      this.scene,
      this.note,
    );
  }

  show() {
    this.visible = true;
    if (this.stale || !this.answer) this.load();
    else this.draw();
  }

  hide() {
    this.visible = false;
    this.controller?.abort();
    window.Plotly?.purge(this.scene); // frees its WebGL context
    if (this.element.dataset.state === 'loading') this.stale = true;
    this.element.dataset.state = 'idle';
  }

  refresh() {
    this.stale = true;
    if (this.visible) this.load();
  }

  sync() {}

  destroy() {
    this.hide();
    this.element.remove();
  }

  #setDims(dims) {
    this.dims = dims;
    for (const b of this.dimButtons) b.setAttribute('aria-pressed', String(b.dataset.dims === String(dims)));
    window.Plotly?.purge(this.scene);
    this.draw();
  }

  async load() {
    this.stale = false;
    const controller = newController(this);
    this.element.dataset.state = 'loading';
    this.spriteNote = '';
    try {
      const params = [['run', this.run], ['tag', this.tag]];
      const answer = await getJSON('embedding', params, controller.signal);
      if (controller.signal.aborted) return;
      answer.axes = decodeCoords(answer.coords, answer.shown);
      const first = answer.columns[0];
      answer.labels = first
        ? Array.from({ length: answer.shown }, (_, i) => cellText(first, i))
        : Array.from({ length: answer.shown }, (_, i) => `point ${i}`);
      this.answer = answer;
      const colourable = answer.columns.map((c, i) => [c, i]).filter(([c]) => c.kind !== 'text');
      if (!colourable.some(([, i]) => i === this.colourBy)) this.colourBy = colourable[0]?.[1] ?? -1;
      this.colourPick.replaceChildren(
        el('option', { value: '-1', text: 'none' }),
        ...colourable.map(([c, i]) => el('option', { value: String(i), text: c.name })),
      );
      this.colourPick.value = String(this.colourBy);
      if (answer.sprite) {
        answer.thumbnails = await this.#thumbnails(answer.sprite, controller.signal);
      }
      if (controller.signal.aborted) return;
      this.thumbLabel.hidden = !answer.thumbnails;
      await this.draw();
    } catch (err) {
      if (err.name === 'AbortError') return;
      this.note.textContent = `Could not load ${this.tag}: ${err.message}`;
      this.element.dataset.state = 'error';
    }
  }

  /**
   * The sprite image of this embedding and where each point's thumbnail lies in it; null
   * (said in the note) when the image cannot be shown.
   */
  async #thumbnails(sprite, signal) {
    try {
      const params = [['run', this.run], ['tag', this.tag]];
      const blob = await getBlob('embedding/sprite', params, signal);
      const image = await createImageBitmap(blob);
      const perRow = Math.floor(image.width / sprite.width);
      const rows = Math.floor(image.height / sprite.height);
      if (!perRow || !rows) throw new Error('the sprite image is smaller than one thumbnail');
      return { image, width: sprite.width, height: sprite.height, perRow, count: perRow * rows,
        rows: decodeRows(sprite.rows) };
    } catch (err) {
      if (err.name === 'AbortError') throw err;
      this.spriteNote = `Thumbnails: ${err.message}.`;
      return null;
    }
  }

  async draw() {
    const answer = this.answer;
    if (!answer) return;
    const text = this.search.value.trim().toLowerCase();
    const hits = [];
    if (text) answer.labels.forEach((label, i) => label.toLowerCase().includes(text) && hits.push(i));
    const three = this.dims === 3;
    this.flat.element.hidden = three;
    this.scene.hidden = !three;
    if (three) {
      await this.#drawScene(hits);
      if (!this.visible) return;
    } else {
      const [x, y] = answer.axes;
      const colours = pointColours(answer.columns[this.colourBy], answer.shown);
      const thumbnails = this.thumbPick.checked ? answer.thumbnails : null;
      this.flat.setData({ x, y, ...colours, labels: answer.labels, matches: hits, thumbnails });
    }
    this.draws += 1;
    Object.assign(this.element.dataset, {
      draws: String(this.draws), state: 'ready', points: String(answer.shown),
      matches: String(hits.length), dims: String(this.dims),
    });
    this.#describe(hits.length, text);
  }

  /** The 3-D scatter (plotly's scatter3d) of the points, `hits` ringed. */
  async #drawScene(hits) {
    const answer = this.answer;
    const [x, y, z] = answer.axes;
    answer.hover ??= answer.labels.map(plotlyText);
    const points = {
      type: 'scatter3d', mode: 'markers', x, y, z,
      text: answer.hover,
      hovertemplate: '%{text}<extra></extra>',
      marker: { size: 2, opacity: 0.8, ...markerColours(answer.columns[this.colourBy]) },
      meta: { run: this.run, tag: this.tag, kind: 'points' },
    };
    const matches = {
      type: 'scatter3d', mode: 'markers',
      x: hits.map((i) => x[i]), y: hits.map((i) => y[i]), z: hits.map((i) => z[i]),
      text: hits.map((i) => answer.hover[i]),
      hovertemplate: '%{text}<extra>match</extra>',
      marker: { size: 5, color: 'rgba(0,0,0,0)', line: { color: MATCH, width: 2 } },
      meta: { run: this.run, tag: this.tag, kind: 'matches' },
    };
    const layout = {
      margin: { l: 36, r: 8, t: 8, b: 30 }, showlegend: false, hovermode: 'closest',
      scene: { xaxis: { title: { text: 'PC1' } }, yaxis: { title: { text: 'PC2' } },
        zaxis: { title: { text: 'PC3' } } },
    };
    const Plotly = await loadPlotly();
    if (this.visible) await Plotly.react(this.scene, [points, matches], layout, PLOT_CONFIG);
  }

  #describe(hits, text) {
    const a = this.answer;
    const share = a.variance.slice(0, this.dims).reduce((s, v) => s + v, 0);
    this.count.textContent = `${formatCount(a.shown)} of ${plural(a.rows, 'point')} · ` +
      `${a.dimension}-D · ${Math.round(share * 100)}% of the variance shown`;
    const notes = [];
    if (text) notes.push(`${plural(hits, 'label')} holding "${text}".`);
    if (a.shown < a.rows) notes.push(`${formatCount(a.shown)} points sampled of ${formatCount(a.rows)}.`);
    if (a.skipped_rows) notes.push(`${plural(a.skipped_rows, 'row')} skipped: ${a.skipped_reason}.`);
    if (a.metadata_note) notes.push(`Metadata: ${a.metadata_note}.`);
    if (a.sprite_note) notes.push(`Thumbnails: ${a.sprite_note}.`);
    if (this.spriteNote) notes.push(this.spriteNote);
    if (a.thumbnails && this.dims === 3) notes.push('Thumbnails are drawn in 2-D.');
    this.note.textContent = notes.join(' ');
  }
}

export class EmbeddingsView extends PluginView {
  constructor(root, store) {
    super(root, store, { plugin: 'embedding', view: 'embeddings', noun: 'embeddings', grouped: true });
    this.start();
  }

  createCard(tag, run) {
    return new EmbeddingCard(this, tag, run);
  }
}
