// trash.js: the run list's Trash panel (an admin's): the deleted runs whose files the
// server still keeps (GET api/v1/trash), when each was deleted and by whom, when it will be
// purged, and a Restore moving its files back (POST api/v1/trash/restore). It is read each
// time it opens, and after a restore.

import { ApiError } from '../core/api.js';
import { el, formatTime } from '../core/dom.js';
import { gate } from '../core/session.js';
import { fetchTrash, restoreTrash } from './lifecycle.js';

export class TrashPanel {
  constructor() {
    this.toggle = gate(
      el('button', {
        class: 'toggle trash-toggle',
        type: 'button',
        text: 'Trash',
        title: 'The deleted runs, kept for a while before they are purged',
        'aria-pressed': 'false',
        onclick: () => this.#open(this.panel.hidden),
      }),
      'admin',
      { hide: true },
    );
    this.rows = el('tbody');
    this.empty = el('p', { class: 'muted trash-empty', text: 'The trash is empty.' });
    this.problem = el('p', { class: 'trash-problem', role: 'alert', hidden: true });
    this.panel = el(
      'section',
      { class: 'trash-panel', 'aria-label': 'Trash', hidden: true },
      el('h2', { text: 'Trash' }),
      this.problem,
      el(
        'table',
        { class: 'trash-table' },
        el(
          'thead',
          {},
          el(
            'tr',
            {},
            ...['Run', 'Deleted', 'By', 'Purged after', ''].map((text) => el('th', { text })),
          ),
        ),
        this.rows,
      ),
      this.empty,
    );
  }

  #open(open) {
    this.panel.hidden = !open;
    this.toggle.setAttribute('aria-pressed', String(open));
    if (open) this.#load();
  }

  async #load() {
    try {
      this.#show(await fetchTrash());
      this.problem.hidden = true;
    } catch (err) {
      this.#say(`The trash could not be read: ${err.message}`);
    }
  }

  #show(trash) {
    const entries = trash.entries ?? [];
    this.empty.hidden = entries.length > 0;
    this.rows.replaceChildren(
      ...entries.map((entry) =>
        el(
          'tr',
          { class: 'trash-entry', dataset: { id: entry.id, run: entry.run_id } },
          el('td', { class: 'trash-run', text: entry.run_id, title: entry.location }),
          el('td', { text: formatTime(entry.at) }),
          el('td', { text: entry.by ?? '—' }),
          el('td', { text: formatTime(entry.purge_at) }),
          el(
            'td',
            {},
            el('button', {
              class: 'button trash-restore',
              type: 'button',
              text: 'Restore',
              title: `Move the files of ${entry.run_id} back`,
              onclick: () => this.#restore(entry),
            }),
          ),
        ),
      ),
    );
    this.toggle.textContent = entries.length ? `Trash (${entries.length})` : 'Trash';
  }

  async #restore(entry) {
    try {
      await restoreTrash(entry.id);
      document.dispatchEvent(new CustomEvent('sumlens:runs-changed'));
      await this.#load();
    } catch (err) {
      const why = err instanceof ApiError ? err.detail : err.message;
      this.#say(`${entry.run_id} was not restored: ${why}`);
    }
  }

  #say(text) {
    this.problem.textContent = text;
    this.problem.hidden = false;
  }
}
