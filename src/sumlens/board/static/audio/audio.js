// audio.js: the Audio view. Per audio tag, a card per selected run side by side (and in a
// card, a panel per rank); each panel plays the clip kept at one step, picked with a slider,
// and says its sample rate, channels, length and label.
//
// The <audio> plays the bytes the run stored (GET api/v1/audio); what each clip is comes
// from GET api/v1/audio/clips, read again whenever the run changes. The slider offers every
// recorded step (the kept ones marked): what a clip outside the kept sample is comes from
// GET api/v1/audio/clips/at when it is picked.

import { apiUrl, getJSON, newController } from '../core/api.js';
import { el, formatCount, plural } from '../core/dom.js';
import { cardKey } from '../core/state.js';
import { PluginView } from '../pluginview/pluginview.js';
import { SeriesCard } from '../pluginview/seriescard.js';
import { StepPicker } from '../pluginview/steppicker.js';

/** A clip's facts as one line: "16,000 Hz · 2 channels · 1.50 s". */
function clipFacts(clip) {
  const seconds = clip.seconds === null ? 'length unknown' : `${clip.seconds.toFixed(2)} s`;
  const rate = clip.sample_rate > 0 ? `${formatCount(clip.sample_rate)} Hz` : 'rate unknown';
  return [rate, plural(clip.channels, 'channel'), seconds].join(' · ');
}

class AudioPanel {
  constructor(view, run, tag, rank) {
    this.run = run;
    this.tag = tag;
    this.rank = rank;
    this.clips = new Map(); // step -> what /audio/clips (or /audio/clips/at) says of its clip
    this.failed = new Map(); // step outside the sample -> why its clip could not be read
    this.unreadable = 0;
    this.reading = {}; // holds the controller of the read of a step outside the sample
    this.picker = new StepPicker(view.store, cardKey('audio', run, rank, tag), () => this.#show());
    this.label = el('div', { class: 'panel-label', text: rank === null ? '' : `rank ${rank}` });
    this.player = el('audio', {
      controls: true,
      preload: 'metadata',
      onloadedmetadata: () => this.#loaded(),
      onerror: () => this.#failed(),
    });
    this.facts = el('div', { class: 'audio-facts muted' });
    this.caption = el('div', { class: 'audio-label' });
    this.note = el('p', { class: 'card-note' });
    this.element = el(
      'div',
      { class: 'audio-panel', dataset: { rank: rank === null ? '' : String(rank), state: 'idle' } },
      this.label,
      this.picker.element,
      this.player,
      this.facts,
      this.caption,
      this.note,
    );
  }

  /** New kept steps from /samples: the clips' facts are read again, then the clip shown. */
  async setSamples(series, labelled) {
    this.label.hidden = !labelled;
    this.picker.setSteps(series.step, series.wall, series.recorded, series.stride);
    const controller = newController(this);
    try {
      const params = [['run', this.run], ['tag', this.tag]];
      const listed = await getJSON('audio/clips', params, controller.signal);
      if (controller.signal.aborted) return;
      const mine = listed.series.find((s) => s.rank === this.rank);
      this.clips = new Map((mine?.clips ?? []).map((clip) => [clip.step, clip]));
      this.unreadable = mine?.unreadable ?? 0;
      this.failed.clear();
      this.player.removeAttribute('src'); // the run changed: a step may hold a new clip
      this.#show();
    } catch (err) {
      if (err.name === 'AbortError') return;
      this.note.textContent = `The clips could not be listed: ${err.message}`;
      this.element.dataset.state = 'error';
    }
  }

  sync(state, changed) {
    if (changed.has('at') && this.picker.sync(state)) this.#show();
  }

  hide() {
    this.player.pause();
  }

  destroy() {
    this.controller?.abort();
    this.reading.controller?.abort();
    this.player.pause();
  }

  #show() {
    const step = this.picker.step;
    if (step === undefined) return;
    if (!this.clips.has(step) && !this.picker.kept.has(step) && !this.failed.has(step)) {
      this.#read(step);
      return;
    }
    const clip = this.clips.get(step);
    this.facts.textContent = clip ? clipFacts(clip) : '';
    this.caption.textContent = clip?.label ?? '';
    this.caption.hidden = !clip?.label;
    const skipped = this.unreadable ? ` ${plural(this.unreadable, 'clip')} could not be read.` : '';
    const why = this.failed.has(step) ? `: ${this.failed.get(step)}` : '.';
    this.note.textContent = (clip ? '' : `The clip of step ${step} could not be read${why}`) +
      skipped;
    this.element.dataset.step = String(step);
    if (!clip) {
      this.player.removeAttribute('src');
      this.element.dataset.state = 'error';
      return;
    }
    const params = [['run', this.run], ['tag', this.tag], ['step', step]];
    if (this.rank !== null) params.push(['rank', this.rank]);
    const url = apiUrl('audio', params).href;
    if (this.player.getAttribute('src') === url) return; // loaded, or loading
    this.element.dataset.state = 'loading';
    this.player.setAttribute('src', url);
  }

  /** What the clip of `step`, outside the kept sample, is; then it is shown. */
  async #read(step) {
    const signal = newController(this.reading).signal;
    this.element.dataset.state = 'loading';
    const params = [['run', this.run], ['tag', this.tag], ['step', step]];
    if (this.rank !== null) params.push(['rank', this.rank]);
    try {
      this.clips.set(step, await getJSON('audio/clips/at', params, signal));
    } catch (err) {
      if (err.name === 'AbortError') return;
      this.failed.set(step, err.message);
    }
    if (this.picker.step === step) this.#show();
  }

  #loaded() {
    this.element.dataset.state = 'ready';
    this.element.dataset.duration = String(this.player.duration);
  }

  #failed() {
    if (!this.player.getAttribute('src')) return; // the source was taken away on purpose
    this.note.textContent = `The clip of step ${this.picker.step} could not be played here.`;
    this.element.dataset.state = 'error';
  }
}

export class AudioView extends PluginView {
  constructor(root, store) {
    super(root, store, { plugin: 'audio', view: 'audio', noun: 'audio clips', grouped: true });
    this.start();
  }

  createCard(tag, run) {
    return new SeriesCard(this, tag, run, (rank) => new AudioPanel(this, run, tag, rank));
  }
}
