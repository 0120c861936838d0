// landscapepanel.js: one run's column of the landscape view: its list of landscapes (from
// /landscapes), the landscape the view's choice picks in it (from /landscape), drawn as a
// 3-D surface and/or a 2-D contour, and a caption saying what is shown.
//
// Each surface holds a WebGL context (a page gets ~16), so a panel frees its charts
// (Plotly.purge) whenever it stops showing them: the view hidden, the surface toggled off,
// the run taken out of the selection. The data stays, so coming back redraws at once.
// The panel's element carries data attributes (run, state, tag, kind, interval, draws) for
// tests and styles; names and errors enter the page as text only.

import { getJSON, newController } from '../core/api.js';
import { el, formatCount } from '../core/dom.js';
import { PLOT_CONFIG, loadPlotly } from '../plots/plotly.js';
import {
  contourFigure,
  entryLabel,
  formatLoss,
  intervalLabel,
  surfaceFigure,
} from './landscapeplots.js';

const CLOSE = 1e-3; // cameras closer than this (each coordinate) are the same

function rankParam(rank) {
  return rank === null || rank === undefined ? [] : [['rank', rank]];
}

/** True when this browser can give plotly a WebGL context (the surface needs one). */
function webglAvailable() {
  const canvas = document.createElement('canvas');
  const context = canvas.getContext('webgl') ?? canvas.getContext('experimental-webgl');
  context?.getExtension('WEBGL_lose_context')?.loseContext();
  return Boolean(context);
}

let webgl = null;

function hasWebgl() {
  webgl ??= webglAvailable();
  return webgl;
}

/** The entry of `listing` that `choice` ({kind, interval}) picks: the lowest rank's newest. */
export function pickEntry(listing, choice) {
  const matches = listing.filter(
    (entry) =>
      entry.kind === choice.kind && (choice.kind !== 'train' || entry.interval === choice.interval),
  );
  if (!matches.length) return null;
  const rankOf = (entry) => entry.rank ?? -1;
  const lowest = Math.min(...matches.map(rankOf));
  return matches.filter((entry) => rankOf(entry) === lowest).at(-1);
}

export class LandscapePanel {
  /**
   * The column of run `run`; `onCamera(eye)` is told when the user turns a surface (eye:
   * [x, y, z]), so the view can keep it and turn the other run's surface the same way.
   */
  constructor(run, onCamera) {
    this.run = run;
    this.onCamera = onCamera;
    this.signature = null; // what of the run the listing was loaded for
    this.listing = null; // the /landscapes entries, or null before the first answer
    this.landscape = null; // the /landscape answer drawn
    this.entryKey = null; // which listing entry `landscape` is
    this.drawnAs = null; // the [show, eye] the charts show now (null: none drawn)
    this.controller = null;
    this.draws = 0;
    this.listening = false;
    this.heading = el('h3', { class: 'land-run', title: run, text: run });
    this.what = el('span', { class: 'land-what muted' });
    this.caption = el('p', { class: 'land-caption muted' });
    this.note = el('p', { class: 'card-note land-note' });
    this.surface = el('div', { class: 'plot land-surface' });
    this.contour = el('div', { class: 'plot land-contour' });
    this.charts = el('div', { class: 'land-charts' }, this.surface, this.contour);
    this.element = el(
      'article',
      { class: 'pcard land-panel', dataset: { run, state: 'idle', draws: '0' } },
      el('header', {}, this.heading, this.what),
      this.note,
      this.charts,
      this.caption,
    );
  }

  /** Load the run's listing (again) when `signature` differs from the one it was loaded for. */
  async list(signature, force) {
    if (!force && signature === this.signature && this.listing) return false;
    this.signature = signature;
    const controller = newController(this);
    this.element.dataset.state = 'loading';
    try {
      const answer = await getJSON('landscapes', [['run', this.run]], controller.signal);
      if (controller.signal.aborted) return false;
      this.listing = answer.landscapes;
      if (force) this.entryKey = null; // reread the shown one too
      return true;
    } catch (err) {
      if (err.name === 'AbortError') return false;
      this.listing = [];
      this.#fail(`Could not list the landscapes of ${this.run}: ${err.message}`);
      return true;
    }
  }

  /**
   * Show the landscape `choice` ({kind, interval}) picks, as `show` says (surface,
   * contour or both), the surface seen from `eye`.
   */
  async show(choice, show, eye) {
    if (!this.listing) return;
    const entry = pickEntry(this.listing, choice);
    this.element.dataset.show = show;
    if (!entry) {
      this.#clear();
      this.#empty(choice);
      return;
    }
    this.what.textContent = entry.tag;
    this.what.title = entry.tag;
    const key = JSON.stringify([entry.tag, entry.rank, entry.step, entry.wall]);
    if (key === this.entryKey && this.landscape) {
      if (this.drawnAs !== JSON.stringify([show, eye])) await this.#draw(show, eye);
      return;
    }
    if (entry.error) {
      this.#clear();
      this.#fail(`${entry.tag} cannot be drawn: ${entry.error}`);
      return;
    }
    const controller = newController(this);
    this.element.dataset.state = 'loading';
    try {
      const params = [['run', this.run], ['tag', entry.tag], ['step', entry.step]];
      const answer = await getJSON(
        'landscape',
        [...params, ...rankParam(entry.rank)],
        controller.signal,
      );
      if (controller.signal.aborted) return;
      this.landscape = answer;
      this.entryKey = key;
      await this.#draw(show, eye);
    } catch (err) {
      if (err.name === 'AbortError') return;
      this.#clear();
      this.#fail(err.message);
    }
  }

  /** Turn the surface to `eye` unless it already looks from there. */
  turn(eye) {
    const camera = this.surface.layout?.scene?.camera?.eye;
    if (!camera || !window.Plotly) return;
    const here = [camera.x, camera.y, camera.z];
    if (here.every((value, i) => Math.abs(value - eye[i]) < CLOSE)) return;
    window.Plotly.relayout(this.surface, {
      'scene.camera.eye': { x: eye[0], y: eye[1], z: eye[2] },
    });
  }

  /** Stop loading and free the charts (the data stays for the next show). */
  hide() {
    this.controller?.abort();
    this.#purge();
    if (this.element.dataset.state === 'loading') this.element.dataset.state = 'idle';
  }

  destroy() {
    this.hide();
    this.element.remove();
  }

  async #draw(show, eye) {
    const { landscape } = this;
    const Plotly = await loadPlotly();
    const surface = show !== 'contour';
    const contour = show !== 'surface';
    const drawSurface = surface && hasWebgl();
    this.note.textContent =
      surface && !drawSurface
        ? 'The 3-D surface needs WebGL, which this browser does not offer: the contour ' +
          'shows the same grid.'
        : '';
    if (drawSurface) {
      const figure = surfaceFigure(landscape, eye);
      await Plotly.react(this.surface, figure.data, figure.layout, PLOT_CONFIG);
      this.#listen();
    } else {
      this.#purgeSurface();
    }
    if (contour || !drawSurface) {
      const figure = contourFigure(landscape);
      await Plotly.react(this.contour, figure.data, figure.layout, PLOT_CONFIG);
    } else {
      Plotly.purge(this.contour);
    }
    this.surface.hidden = !drawSurface;
    this.contour.hidden = !(contour || !drawSurface);
    this.draws += 1;
    this.drawnAs = JSON.stringify([show, eye]);
    const data = this.element.dataset;
    Object.assign(data, {
      draws: String(this.draws),
      tag: landscape.tag,
      kind: landscape.kind,
      interval: landscape.interval ?? '',
      state: 'ready',
    });
    this.#describe();
  }

  /** Report the user's turns of the surface (plotly says so once a drag ends). */
  #listen() {
    if (this.listening) return;
    this.listening = true;
    this.surface.on('plotly_relayout', (event) => {
      const eye = event['scene.camera']?.eye;
      if (eye && [eye.x, eye.y, eye.z].every(Number.isFinite)) {
        this.onCamera([eye.x, eye.y, eye.z]);
      }
    });
  }

  #describe() {
    const { landscape: land } = this;
    const { decomposition, unit, step_per_epoch: perEpoch } = land.metadata;
    const parts = [];
    if (land.kind === 'train' && land.path) {
      parts.push(`train landscape of ${intervalLabel(unit, land.path.intervals)}`);
    } else {
      parts.push('result landscape (around the final weights)');
    }
    parts.push(`${formatCount(land.shape[1])} × ${formatCount(land.shape[0])} grid`);
    if (decomposition) parts.push(`${decomposition} directions`);
    if (perEpoch) parts.push(`${formatCount(perEpoch)} steps per epoch`);
    if (land.path) {
      const ends = [land.path.intervals[0], land.path.intervals.at(-1)];
      parts.push(`path ${ends.map((entry) => entryLabel(unit, entry)).join(' → ')}`);
    }
    const point = land.convergence_point;
    if (point) parts.push(`converged at loss ${formatLoss(point[2])}`);
    if (land.rank !== null && new Set(this.listing.map((e) => e.rank)).size > 1) {
      parts.push(`rank ${land.rank}`);
    }
    this.caption.textContent = parts.join(' · ');
  }

  #empty(choice) {
    const data = this.element.dataset;
    data.state = 'empty';
    delete data.tag;
    if (!this.listing.length) {
      this.note.textContent = 'This run recorded no loss landscape.';
    } else if (choice.kind === 'train') {
      const other = this.listing.some((entry) => entry.kind === 'train');
      this.note.textContent = other
        ? 'This run has no train landscape of this interval.'
        : 'This run has no train landscape (only a result one).';
    } else {
      this.note.textContent = 'This run has no result landscape.';
    }
  }

  #fail(message) {
    this.note.textContent = message;
    this.element.dataset.state = 'error';
  }

  #clear() {
    this.#purge();
    this.landscape = null;
    this.entryKey = null;
    this.what.textContent = '';
    this.caption.textContent = '';
    this.surface.hidden = true;
    this.contour.hidden = true;
  }

  #purgeSurface() {
    window.Plotly?.purge(this.surface);
    this.listening = false;
  }

  #purge() {
    this.drawnAs = null;
    this.#purgeSurface();
    window.Plotly?.purge(this.contour);
  }
}
