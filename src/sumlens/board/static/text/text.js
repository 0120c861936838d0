// text.js: the Text view. Per text tag, a card per selected run side by side (and in a
// card, a panel per rank); each panel shows the text kept at one step, picked with a slider.
//
// Texts come from TensorBoard's text plugin (torch's add_text, Hugging Face's `args` and
// `model_config`): markdown, rendered on the server (GET api/v1/text) and put in the page
// through the allowlist of widgets/markdown.js. A text of several strings is a table of
// cells, as TensorBoard shows it; the server's note says what of a big one is left out.

import { getJSON, newController } from '../core/api.js';
import { el } from '../core/dom.js';
import { cardKey } from '../core/state.js';
import { PluginView } from '../pluginview/pluginview.js';
import { SeriesCard } from '../pluginview/seriescard.js';
import { StepPicker } from '../pluginview/steppicker.js';
import { renderedText } from '../widgets/markdown.js';

class TextPanel {
  constructor(view, run, tag, rank) {
    this.run = run;
    this.tag = tag;
    this.rank = rank;
    this.shown = null; // the step whose text is shown, or loading
    this.picker = new StepPicker(view.store, cardKey('text', run, rank, tag), () => this.#show());
    this.label = el('div', { class: 'panel-label', text: rank === null ? '' : `rank ${rank}` });
    this.body = el('div', { class: 'text-body' });
    this.note = el('p', { class: 'card-note' });
    this.element = el(
      'div',
      { class: 'text-panel', dataset: { rank: rank === null ? '' : String(rank), state: 'idle' } },
      this.label,
      this.picker.element,
      this.body,
      this.note,
    );
  }

  /** New kept steps from /samples (the run changed: the step shown is read again). */
  setSamples(series, labelled) {
    this.label.hidden = !labelled;
    this.picker.setSteps(series.step, series.wall, series.recorded, series.stride);
    this.shown = null;
    this.#show();
  }

  sync(state, changed) {
    if (changed.has('at') && this.picker.sync(state)) this.#show();
  }

  destroy() {
    this.controller?.abort();
  }

  async #show() {
    const step = this.picker.step;
    if (step === undefined || step === this.shown) return;
    this.shown = step;
    const controller = newController(this);
    this.element.dataset.state = 'loading';
    this.element.dataset.step = String(step);
    const params = [['run', this.run], ['tag', this.tag], ['step', step]];
    if (this.rank !== null) params.push(['rank', this.rank]);
    try {
      const body = await getJSON('text', params, controller.signal);
      if (controller.signal.aborted) return;
      this.body.replaceChildren(renderedText(body));
      this.note.textContent = body.note;
      this.element.dataset.state = 'ready';
    } catch (err) {
      if (err.name === 'AbortError') return;
      this.shown = null;
      this.body.replaceChildren();
      this.note.textContent = `The text of step ${step} could not be loaded: ${err.message}`;
      this.element.dataset.state = 'error';
    }
  }
}

export class TextView extends PluginView {
  constructor(root, store) {
    super(root, store, { plugin: 'text', view: 'text', noun: 'texts', grouped: true });
    this.start();
  }

  createCard(tag, run) {
    return new SeriesCard(this, tag, run, (rank) => new TextPanel(this, run, tag, rank));
  }
}
