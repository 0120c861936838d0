// lifecycle.js: hiding, archiving and deleting runs from the run list, for the selected
// runs. A run's state (hidden or archived, PUT api/v1/run-state) is kept by the server for
// the whole team: such runs leave the list, and the views' default picks, until the
// "show hidden and archived" switch (the URL's `hidden`) brings them back, badged.
// Restore gives a run back its plain state. Delete (an admin's) asks again inline, then
// moves each run's files to the trash (DELETE api/v1/run), where they are kept for the
// server's retention before being purged; the line saying so has an Undo (POST
// api/v1/trash/restore). The buttons show only to those who may use them
// (core/session.js); the run list's note says why to the others.

import { ApiError, getJSON, sendJSON } from '../core/api.js';
import { el, plural } from '../core/dom.js';
import { gate } from '../core/session.js';

const DAY = 86400; // seconds

/** PUT api/v1/run-state: `run`'s state, 'hidden', 'archived' or null (neither). */
export function setRunState(run, state) {
  return sendJSON('PUT', 'run-state', [['run', run]], { state });
}

/** DELETE api/v1/run: move `run`'s files to the trash; the trash entry made. */
export function deleteRun(run) {
  return sendJSON('DELETE', 'run', [['run', run]]);
}

/** POST api/v1/trash/restore: move the files of trash entry `id` back. */
export function restoreTrash(id) {
  return sendJSON('POST', 'trash/restore', [['id', id]]);
}

/** GET api/v1/trash: the trash entries, each with when it will be purged. */
export function fetchTrash() {
  return getJSON('trash', []);
}

/** How many days a trash `entry` is kept before its files are purged (null: not said). */
export function keptDays(entry) {
  if (Number.isFinite(entry.purge_at) && Number.isFinite(entry.at)) {
    return Math.round((entry.purge_at - entry.at) / DAY);
  }
  return null;
}

function reason(err) {
  return err instanceof ApiError ? err.detail : err.message;
}

/** The run list's buttons acting on the selected runs, and the line saying what they did. */
export class RunActions {
  constructor(store) {
    this.store = store;
    const button = (cls, text, title, onclick, need = 'write') =>
      gate(el('button', { class: `button ${cls}`, type: 'button', text, title, onclick }), need, {
        hide: true,
      });
    const hideTip = 'Hide the selected runs from the list, for everyone';
    this.hide = button('run-hide', 'Hide', hideTip, () => this.#setState('hidden'));
    const archiveTip = 'Archive the selected runs: kept, and listed only on demand';
    this.archive = button('run-archive', 'Archive', archiveTip, () => this.#setState('archived'));
    const restoreTip = 'List the selected runs again (neither hidden nor archived)';
    this.restore = button('run-restore', 'Restore', restoreTip, () => this.#setState(null));
    this.delete = button(
      'run-delete',
      'Delete…',
      'Move the selected runs’ files to the trash',
      () => this.#askDelete(),
      'admin',
    );
    this.confirmText = el('span', { class: 'run-delete-question' });
    this.confirm = el(
      'span',
      { class: 'run-delete-confirm', role: 'group', hidden: true },
      this.confirmText,
      el('button', {
        class: 'button danger run-delete-yes',
        type: 'button',
        text: 'Delete',
        onclick: () => this.#delete(),
      }),
      el('button', {
        class: 'button run-delete-no',
        type: 'button',
        text: 'Cancel',
        onclick: () => {
          this.confirm.hidden = true;
        },
      }),
    );
    this.buttons = el(
      'span',
      { class: 'run-actions' },
      this.hide,
      this.archive,
      this.restore,
      this.delete,
    );
    this.text = el('span', { class: 'run-action-text' });
    this.undo = el('button', { class: 'button run-undo', type: 'button', text: 'Undo' });
    this.message = el(
      'p',
      { class: 'run-action-message', role: 'status', hidden: true },
      this.text,
      this.undo,
    );
    this.elements = [this.buttons, this.confirm];
  }

  /** Show the buttons while runs are selected (`runs`: the selection). */
  sync(runs) {
    this.buttons.hidden = !runs.length;
    if (!runs.length) this.confirm.hidden = true;
  }

  async #setState(state) {
    const { runs } = this.store.state;
    const done = [];
    try {
      for (const run of runs) {
        await setRunState(run, state);
        done.push(run);
      }
      const what = { hidden: 'Hidden', archived: 'Archived' }[state] ?? 'Restored';
      this.#say(`${what}: ${runs.join(', ')}`);
    } catch (err) {
      this.#say(`${plural(done.length, 'run')} changed; then: ${reason(err)}`, true);
    }
    changed();
  }

  #askDelete() {
    const { runs } = this.store.state;
    this.confirmText.textContent =
      `Delete ${runs.length === 1 ? runs[0] : plural(runs.length, 'run')}? ` +
      'The files move to the trash.';
    this.confirm.hidden = false;
  }

  async #delete() {
    this.confirm.hidden = true;
    const { runs } = this.store.state;
    const entries = [];
    let failure = '';
    for (const run of runs) {
      try {
        entries.push(await deleteRun(run));
      } catch (err) {
        failure = `; ${run} was not deleted: ${reason(err)}`;
        break;
      }
    }
    const gone = new Set(entries.map((entry) => entry.run_id));
    this.store.set({ runs: this.store.state.runs.filter((run) => !gone.has(run)) });
    changed();
    if (!entries.length) {
      this.#say(failure.slice(2), true);
      return;
    }
    const days = keptDays(entries[0]);
    const kept = days === null ? '' : `, kept ${plural(days, 'day')}`;
    const names = entries.map((entry) => entry.run_id).join(', ');
    this.#say(`Moved ${names} to the trash${kept}${failure}`, Boolean(failure), () =>
      this.#undo(entries),
    );
  }

  async #undo(entries) {
    const back = [];
    try {
      for (const entry of entries) {
        await restoreTrash(entry.id);
        back.push(entry.run_id);
      }
      this.#say(`Back from the trash: ${back.join(', ')}`);
    } catch (err) {
      this.#say(`${plural(back.length, 'run')} restored; then: ${reason(err)}`, true);
    }
    changed();
  }

  /** Say `text` (an error when `isError`), with an Undo calling `undo` when given. */
  #say(text, isError = false, undo = null) {
    this.text.textContent = text;
    this.message.classList.toggle('error', isError);
    this.undo.hidden = !undo;
    this.undo.onclick = undo;
    this.message.hidden = false;
  }
}

/** The runs changed on the server: every view asks for the run list now. */
function changed() {
  document.dispatchEvent(new CustomEvent('sumlens:runs-changed'));
}
