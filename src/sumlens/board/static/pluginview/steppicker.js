// steppicker.js: a slider over the kept steps of one series, with the step and its wall time.
//
// The step picked is kept in the URL (`at`, under the card's key) so a reload or a shared
// link shows it again; a slider moved to its right end picks nothing, which means "the
// newest step": the card then follows a live run as it grows. While dragging, the card is
// told at once (onPick) and the URL is written when the slider is let go.

import { el, formatTime } from '../core/dom.js';

export class StepPicker {
  /** A picker for the card `key` (state.cardKey); `onPick(index)` shows that kept step. */
  constructor(store, key, onPick) {
    this.store = store;
    this.key = key;
    this.onPick = onPick;
    this.steps = [];
    this.walls = [];
    this.index = -1;
    this.slider = el('input', {
      type: 'range',
      class: 'step-slider',
      min: '0',
      max: '0',
      step: '1',
      'aria-label': 'Step',
      oninput: () => this.#pick(Number(this.slider.value)),
      onchange: () => this.#commit(),
    });
    this.label = el('span', { class: 'step-label' });
    this.time = el('span', { class: 'step-time muted' });
    this.element = el(
      'div',
      { class: 'step-picker' },
      el('div', { class: 'step-line' }, this.label, this.time),
      this.slider,
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

  /** New kept steps (ascending) and their wall times; returns whether the step shown changed. */
  setSteps(steps, walls) {
    const before = this.step;
    this.steps = steps;
    this.walls = walls;
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
    this.label.textContent = step === undefined ? 'No step' : `Step ${step}`;
    this.time.textContent = formatTime(this.wall);
    this.element.dataset.step = step === undefined ? '' : String(step);
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
