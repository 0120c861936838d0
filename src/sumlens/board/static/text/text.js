// text.js: the Text view. Per text tag, a card per selected run side by side (and in a
// card, a panel per rank); each panel shows the text kept at one step, picked with a slider.
//
// Texts come from TensorBoard's text plugin (torch's add_text, Hugging Face's `args` and
// `model_config`): markdown, rendered on the server (GET api/v1/text) and put in the page
// through the allowlist of widgets/markdown.js. A text of several strings is a table of
// cells, as TensorBoard shows it; the server's note says what of a big one is left out.
// A long text comes in parts (about 100,000 characters, or 500 rows, each): the first is
// shown, then "Show more" adds the next and "Show all" the rest, a part at a time (the
// page stays usable, and a click stops it), so a 10 MB text never freezes the page.

import { getJSON, newController } from '../core/api.js';
import { el, formatBytes, formatCount } from '../core/dom.js';
import { cardKey } from '../core/state.js';
import { PluginView } from '../pluginview/pluginview.js';
import { SeriesCard } from '../pluginview/seriescard.js';
import { StepPicker } from '../pluginview/steppicker.js';
import { appendText, renderedText } from '../widgets/markdown.js';

class TextPanel {
  constructor(view, run, tag, rank) {
    this.run = run;
    this.tag = tag;
    this.rank = rank;
    this.shown = null; // the step whose text is shown, or loading
    this.firstKey = null; // the step and first part shown, as JSON
    this.rendered = null; // the element showing the text (renderedText of its first part)
    this.part = null; // the last /text answer shown (its `next`: where the rest starts)
    this.notes = new Set(); // the server's notes on the parts shown
    this.partLoads = {}; // holds the controller of the loads of the parts after the first
    this.loadingAll = false; // "Show all" is adding parts
    this.stopped = false; // "Show all" was clicked again while it loaded
    this.picker = new StepPicker(view.store, cardKey('text', run, rank, tag), () => this.#show());
    this.label = el('div', { class: 'panel-label', text: rank === null ? '' : `rank ${rank}` });
    this.body = el('div', { class: 'text-body' });
    this.note = el('p', { class: 'card-note' });
    this.shownSize = el('span', { class: 'muted' });
    this.moreButton = el('button', {
      type: 'button',
      class: 'button text-more-part',
      text: 'Show more',
      onclick: () => this.#loadParts(false),
    });
    this.allButton = el('button', {
      type: 'button',
      class: 'button text-all-parts',
      onclick: () => {
        if (this.loadingAll) this.stopped = true;
        else this.#loadParts(true);
      },
    });
    this.more = el(
      'div',
      { class: 'text-more', hidden: true },
      this.shownSize,
      this.moreButton,
      this.allButton,
    );
    this.element = el(
      'div',
      {
        class: 'text-panel',
        dataset: { rank: rank === null ? '' : String(rank), state: 'idle', parts: '0' },
      },
      this.label,
      this.picker.element,
      this.body,
      this.more,
      this.note,
    );
  }

  /**
   * New kept steps from /samples (the run changed: the step shown is read again, and the
   * parts shown after its first stay while the first is the same).
   */
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
    this.#stopParts();
  }

  /** The /text request of the part of the step shown starting at `offset`. */
  #params(step, offset) {
    const params = [['run', this.run], ['tag', this.tag], ['step', step], ['offset', offset]];
    if (this.rank !== null) params.push(['rank', this.rank]);
    return params;
  }

  async #show() {
    const step = this.picker.step;
    if (step === undefined || step === this.shown) return;
    if (String(step) !== this.element.dataset.step) this.#stopParts(); // another text
    this.shown = step;
    const controller = newController(this);
    this.element.dataset.state = 'loading';
    this.element.dataset.step = String(step);
    try {
      const body = await getJSON('text', this.#params(step, 0), controller.signal);
      if (controller.signal.aborted) return;
      const key = JSON.stringify([step, body.size_bytes, body.html, body.rows]);
      if (key !== this.firstKey) {
        this.#stopParts();
        this.firstKey = key;
        this.rendered = renderedText(body);
        this.body.replaceChildren(this.rendered);
        this.notes = new Set();
        this.#took(body, 1);
      }
      this.element.dataset.state = 'ready';
    } catch (err) {
      if (err.name === 'AbortError') return;
      this.shown = null;
      this.firstKey = null;
      this.part = null;
      this.body.replaceChildren();
      this.more.hidden = true;
      this.note.textContent = `The text of step ${step} could not be loaded: ${err.message}`;
      this.element.dataset.state = 'error';
    }
  }

  /** Add the next part of the text shown, or (`all`) every part left, one after another. */
  async #loadParts(all) {
    const step = this.shown;
    const controller = newController(this.partLoads);
    this.loadingAll = all;
    this.stopped = false;
    this.moreButton.disabled = true;
    this.#sayParts();
    try {
      do {
        const params = this.#params(step, this.part.next);
        const body = await getJSON('text', params, controller.signal);
        if (controller.signal.aborted) return;
        appendText(this.rendered, body);
        this.#took(body, Number(this.element.dataset.parts) + 1);
      } while (all && this.part.next !== null && !this.stopped);
    } catch (err) {
      if (err.name === 'AbortError') return;
      this.note.textContent = `The rest of the text could not be loaded: ${err.message}`;
    }
    this.loadingAll = false;
    this.moreButton.disabled = false;
    this.#sayParts();
  }

  /** Stop adding parts (another text is shown, or none). */
  #stopParts() {
    this.partLoads.controller?.abort();
    this.loadingAll = false;
    this.moreButton.disabled = false;
  }

  /** `body`, the `parts`-th part of the text, is in the page: say what is and what is left. */
  #took(body, parts) {
    this.part = body;
    if (body.note) this.notes.add(body.note);
    this.note.textContent = [...this.notes].join(' ');
    this.element.dataset.parts = String(parts);
    this.#sayParts();
  }

  /** The line under a long text: how much is shown, and the buttons for the rest. */
  #sayParts() {
    const part = this.part;
    this.more.hidden = !part || (part.offset === 0 && part.next === null); // one part: whole
    if (this.more.hidden) return;
    const left = part.remaining_bytes;
    this.shownSize.textContent = part.rows === null
      ? `Shown: ${formatBytes(part.size_bytes - left)} of ${formatBytes(part.size_bytes)}.`
      : `Shown: ${formatCount(part.next ?? part.length)} of ${formatCount(part.length)} rows.`;
    const done = part.next === null;
    this.moreButton.hidden = done;
    this.allButton.hidden = done;
    this.allButton.textContent = this.loadingAll
      ? `Stop (${formatBytes(left)} left)`
      : `Show all (${formatBytes(left)})`;
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
