// steppicker.js: a slider over the steps of one series, with the step and its wall time.
//
// The slider offers every recorded step when the server lists them (/samples `recorded`),
// not only the kept sample: the server reads a step outside the sample from its file on
// request. Kept steps are marked (ticks under the slider, "kept" beside the step); when a
// long series' index was thinned out (`stride` > 1) the picker says every how many
// recorded steps it offers.
//
// The step picked is kept in the URL (`at`, under the card's key) so a reload or a shared
// link shows it again; a slider moved to its right end picks nothing, which means "the
// newest step": the card then follows a live run as it grows. While dragging, the card is
// told at once (onPick) and the URL is written when the slider is let go.

import { el, formatCount, formatTime } from '../core/dom.js';

let lists = 0; // numbers the <datalist> of each picker's kept-step ticks

export class StepPicker {
  /** A picker for the card `key` (state.cardKey); `onPick(index)` shows that kept step. */
  constructor(store, key, onPick) {
    this.store = store;
    this.key = key;
    this.onPick = onPick;
    this.steps = [];
    this.walls = [];
    this.kept = new Set(); // the steps of the kept sample (the others are read on request)
    this.index = -1;
    this.ticks = el('datalist', { id: `kept-steps-${++lists}` });
    this.slider = el('input', {
      type: 'range',
      class: 'step-slider',
      min: '0',
      max: '0',
      step: '1',
      'aria-label': 'Step',
      list: this.ticks.id,
      oninput: () => this.#pick(Number(this.slider.value)),
      onchange: () => this.#commit(),
    });
    this.label = el('span', { class: 'step-label' });
    this.time = el('span', { class: 'step-time muted' });
    this.where = el('span', { class: 'step-kept muted' });
    this.thinned = el('p', { class: 'step-thinned muted', hidden: true });
    this.element = el(
      'div',
      { class: 'step-picker' },
      el('div', { class: 'step-line' }, this.label, this.where, this.time),
      this.slider,
      this.ticks,
      this.thinned,
    );
  }

  /** The step shown (undefined before any). */
  get step() {
    return this.steps[this.index];
  }

  /** The wall time of the step shown. */
  get wall() {
    return this.walls[this.index];
  }

  /**
   * New kept steps (ascending) and their wall times, and every recorded step when the
   * server lists them (`recorded`, every `stride`-th of them); returns whether the step
   * shown changed.
   */
  setSteps(kept, keptWalls, recorded = null, stride = 1) {
    const before = this.step;
    this.kept = new Set(kept);
    const wallOf = new Map(kept.map((step, i) => [step, keptWalls[i]]));
    const steps = recorded ? [...new Set([...recorded, ...kept])].sort((a, b) => a - b) : kept;
    this.steps = steps;
    this.walls = steps.map((step) => wallOf.get(step));
    const ticks = steps.flatMap((step, i) => (this.kept.has(step) ? [String(i)] : []));
    this.ticks.replaceChildren(...ticks.map((i) => el('option', { value: i })));
    this.thinned.hidden = stride <= 1;
    this.thinned.textContent =
      stride > 1 ? `A long series: one recorded step in ${formatCount(stride)} is offered.` : '';
    this.slider.max = String(Math.max(0, steps.length - 1));
    this.slider.disabled = steps.length < 2;
    this.slider.title = steps.length < 2 ? 'Only one step is kept' : '';
    this.index = this.#wanted(this.store.state);
    this.#render();
    return this.step !== before;
  }

  /** The URL changed: move to the step it picks (returns whether the step shown changed). */
  sync(state) {
    if (!this.steps.length) return false;
    const index = this.#wanted(state);
    if (index === this.index) return false;
    this.index = index;
    this.#render();
    return true;
  }

  #wanted(state) {
    const picked = state.at[this.key];
    return picked === undefined ? this.steps.length - 1 : nearestIndex(this.steps, picked);
  }

  #render() {
    this.slider.value = String(this.index);
    const step = this.step;
    const kept = step !== undefined && this.kept.has(step);
    this.label.textContent = step === undefined ? 'No step' : `Step ${step}`;
    this.where.textContent = step === undefined ? '' : kept ? 'kept' : 'read from its file';
    this.where.title = kept
      ? 'In the sample the server keeps of this series'
      : 'Outside the kept sample: read from the event file on request';
    this.time.textContent = formatTime(this.wall);
    this.element.dataset.step = step === undefined ? '' : String(step);
    this.element.dataset.kept = String(kept);
  }

  #pick(index) {
    if (index === this.index) return;
    this.index = index;
    this.#render();
    this.onPick(index);
  }

  #commit() {
    const at = { ...this.store.state.at };
    if (this.index === this.steps.length - 1) delete at[this.key];
    else at[this.key] = this.step;
    this.store.set({ at });
  }
}

/**
 * The index in `steps` (ascending) of `step`, or of the kept step nearest to it (a step
 * picked earlier may have been dropped as the run grew and its sample thinned out).
 */
function nearestIndex(steps, step) {
  let best = steps.length - 1;
  let distance = Infinity;
  steps.forEach((s, i) => {
    const d = Math.abs(s - step);
    if (d < distance) {
      best = i;
      distance = d;
    }
  });
  return best;
}
