// images.js: the Images view. Per image tag, a card per selected run side by side (and in
// a card, a panel per rank); each panel shows the stored image at one kept step.
//
// The <img> loads the bytes the run stored (GET api/v1/image: MindSpore and sumlens store
// a batch already tiled into one PNG), so what is shown is exactly what was written.
// Brightness and contrast are CSS filters over every image of the view; a click on an
// image switches between fitting it to its frame (small images scaled up with crisp
// pixels) and its native size, 1:1 (scrollable when large).

import { imageUrl } from '../core/api.js';
import { el, formatCount } from '../core/dom.js';
import { cardKey } from '../core/state.js';
import { PluginView } from '../pluginview/pluginview.js';
import { SeriesCard } from '../pluginview/seriescard.js';
import { StepPicker } from '../pluginview/steppicker.js';

const FILTER_COMMIT_MS = 200; // a filter slider writes the URL at most this often
const MAX_FILTER = 300; // percent

class ImagePanel {
  constructor(view, run, tag, rank) {
    this.view = view;
    this.run = run;
    this.tag = tag;
    this.rank = rank;
    this.picker = new StepPicker(view.store, cardKey('image', run, rank, tag), () => this.#show());
    this.label = el('div', { class: 'panel-label', text: rank === null ? '' : `rank ${rank}` });
    this.img = el('img', {
      alt: '',
      decoding: 'async',
      onload: () => this.#loaded(),
      onerror: () => this.#failed(),
    });
    this.frame = el(
      'div',
      {
        class: 'image-frame',
        dataset: { zoom: 'fit' },
        title: 'Click: native size (1:1) / fit',
        onclick: () => this.#toggleZoom(),
      },
      this.img,
    );
    this.size = el('span', { class: 'image-size muted' });
    this.zoomButton = el('button', {
      type: 'button',
      class: 'toggle zoom-toggle',
      text: '1:1',
      title: 'Show the image at its native size',
      'aria-pressed': 'false',
      onclick: () => this.#toggleZoom(),
    });
    this.note = el('p', { class: 'card-note' });
    this.element = el(
      'div',
      { class: 'image-panel', dataset: { rank: rank === null ? '' : String(rank), state: 'idle' } },
      this.label,
      this.frame,
      el('div', { class: 'panel-line' }, this.size, el('span', { class: 'grow' }), this.zoomButton),
      this.picker.element,
      this.note,
    );
  }

  /** New kept steps from /samples. */
  setSamples(series, labelled) {
    this.label.hidden = !labelled;
    this.picker.setSteps(series.step, series.wall, series.recorded, series.stride);
    this.#show();
  }

  sync(state, changed) {
    if (changed.has('at') && this.picker.sync(state)) this.#show();
  }

  #show() {
    const step = this.picker.step;
    if (step === undefined) return;
    const url = imageUrl(this.run, this.tag, step, this.rank);
    this.img.alt = `${this.tag} at step ${step}`;
    if (this.img.getAttribute('src') === url) return; // loaded, or loading
    this.element.dataset.state = 'loading';
    this.element.dataset.step = String(step);
    this.img.setAttribute('src', url);
  }

  #loaded() {
    const { naturalWidth: w, naturalHeight: h } = this.img;
    this.size.textContent = `${formatCount(w)} × ${formatCount(h)} px`;
    this.note.textContent = '';
    this.element.dataset.state = 'ready';
  }

  #failed() {
    this.note.textContent = `The image of step ${this.picker.step} could not be loaded.`;
    this.element.dataset.state = 'error';
  }

  #toggleZoom() {
    const native = this.frame.dataset.zoom !== 'native';
    this.frame.dataset.zoom = native ? 'native' : 'fit';
    this.zoomButton.textContent = native ? 'Fit' : '1:1';
    this.zoomButton.title = native
      ? 'Fit the image to the card'
      : 'Show the image at its native size';
    this.zoomButton.setAttribute('aria-pressed', String(native));
  }
}

export class ImagesView extends PluginView {
  constructor(root, store) {
    super(root, store, { plugin: 'image', view: 'images', noun: 'images', grouped: true });
    this.start();
  }

  createCard(tag, run) {
    return new SeriesCard(this, tag, run, (rank) => new ImagePanel(this, run, tag, rank));
  }

  controls() {
    this.filters = {};
    const slider = (name, label) => {
      const input = el('input', {
        type: 'range',
        min: '0',
        max: String(MAX_FILTER),
        step: '1',
        class: 'filter-slider',
        'aria-label': label,
        oninput: () => this.#filterInput(name, Number(input.value), false),
        onchange: () => this.#filterInput(name, Number(input.value), true),
      });
      const value = el('span', { class: 'filter-value muted' });
      const reset = el('button', {
        type: 'button',
        class: 'button reset-filter',
        text: 'Reset',
        dataset: { filter: name },
        onclick: () => this.#filterInput(name, 100, true),
      });
      this.filters[name] = { input, value, reset };
      return el('label', { class: 'control' }, label, input, value, reset);
    };
    return [slider('bright', 'Brightness'), slider('contrast', 'Contrast')];
  }

  syncControls(state) {
    for (const [name, { input, value, reset }] of Object.entries(this.filters)) {
      if (document.activeElement !== input) input.value = String(state[name]);
      value.textContent = `${state[name]}%`;
      reset.disabled = state[name] === 100;
    }
    this.#applyFilter(state.bright, state.contrast);
  }

  #filterInput(name, percent, commit) {
    const { input, value } = this.filters[name];
    input.value = String(percent);
    value.textContent = `${percent}%`;
    const other = name === 'bright' ? 'contrast' : 'bright';
    const now = { [name]: percent, [other]: Number(this.filters[other].input.value) };
    this.#applyFilter(now.bright, now.contrast);
    clearTimeout(this.filterTimer);
    const commitNow = () => this.store.set({ [name]: percent });
    if (commit) commitNow();
    else this.filterTimer = setTimeout(commitNow, FILTER_COMMIT_MS);
  }

  #applyFilter(bright, contrast) {
    this.root.style.setProperty('--image-filter', `brightness(${bright}%) contrast(${contrast}%)`);
  }
}
