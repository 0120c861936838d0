// audit.js: the Audit view (editors and admins): who changed what, newest first, from the
// server's audit log (GET api/v1/audit), one page at a time: "Older" asks for the page
// before the last entry shown. Each entry: when, who, their role, the action
// (annotation.set, run.delete ...), its target, its detail and the replica that served it.
// A viewer, who may not read the log, is told so and nothing is asked of the server.

import { getJSON } from '../core/api.js';
import { el, formatTime } from '../core/dom.js';
import { session, subscribe } from '../core/session.js';

const PAGE = 100; // entries per request

export class AuditView {
  constructor(root, store) {
    this.store = store;
    this.rows = el('tbody');
    this.note = el('p', { class: 'empty-note audit-note', hidden: true });
    this.problem = el('p', { class: 'audit-problem', role: 'alert', hidden: true });
    this.next = null; // the id to ask entries before, for the older page
    this.older = el('button', {
      class: 'button audit-older',
      type: 'button',
      text: 'Older',
      title: 'The entries before these',
      hidden: true,
      onclick: () => this.#load(this.next),
    });
    this.table = el(
      'table',
      { class: 'audit-table', 'aria-label': 'Audit log' },
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ...['When', 'Who', 'Role', 'Action', 'Target', 'Detail', 'Replica'].map((text) =>
            el('th', { text }),
          ),
        ),
      ),
      this.rows,
    );
    root.append(
      el(
        'div',
        { class: 'toolbar' },
        el('h2', { class: 'audit-heading', text: 'Audit log' }),
        el('span', { class: 'muted audit-hint', text: 'Every change, newest first' }),
        el('span', { class: 'grow' }),
        el('button', {
          class: 'button audit-refresh',
          type: 'button',
          text: 'Newest',
          title: 'Read the newest entries again',
          onclick: () => this.#load(null),
        }),
      ),
      this.problem,
      el('div', { class: 'audit-body' }, this.table, this.note, this.older),
    );
    store.subscribe((state, changed) => {
      if (changed.has('view') && state.view === 'audit') this.#load(null);
    });
    subscribe(() => this.#load(null));
  }

  /** The run list is not what this view shows; the log is read when the view opens. */
  setRuns() {}

  /** Read the page of entries before `before` (null: the newest), replacing or adding. */
  async #load(before) {
    if (this.store.state.view !== 'audit') return;
    if (!session.loaded) return; // read once the role is known
    if (!session.hasRole('editor')) {
      this.rows.replaceChildren();
      this.older.hidden = true;
      this.#note(
        `The audit log is for editors and admins; you are ${session.role() ?? 'not signed in'}.`,
      );
      return;
    }
    const params = [['limit', PAGE]];
    if (before !== null) params.push(['before', before]);
    try {
      const page = await getJSON('audit', params);
      const rows = page.entries.map((entry) => this.#row(entry));
      if (before === null) this.rows.replaceChildren(...rows);
      else this.rows.append(...rows);
      this.next = page.next;
      this.older.hidden = page.next === null;
      this.problem.hidden = true;
      const empty = !this.rows.children.length;
      this.#note(empty ? 'Nothing has been changed yet.' : '');
    } catch (err) {
      this.problem.textContent = `The audit log could not be read: ${err.message}`;
      this.problem.hidden = false;
    }
  }

  #note(text) {
    this.note.textContent = text;
    this.note.hidden = !text;
  }

  #row(entry) {
    return el(
      'tr',
      { class: 'audit-entry', dataset: { id: String(entry.id), action: entry.action } },
      el('td', { class: 'audit-at', text: formatTime(entry.at) }),
      el('td', { class: 'audit-user', text: entry.user ?? 'local' }),
      el('td', { class: 'audit-role', text: entry.role ?? '' }),
      el('td', { class: 'audit-action', text: entry.action }),
      el('td', { class: 'audit-target', text: entry.target, title: entry.target }),
      el('td', { class: 'audit-detail muted', text: entry.detail, title: entry.detail }),
      el('td', { class: 'audit-replica muted', text: entry.replica }),
    );
  }
}
