// savedviews.js: the top bar's "Views" menu: the views the user saved (each a name for an
// address hash, kept by the server per user: GET/PUT/DELETE api/v1/views), opened by
// setting the hash, deleted with their × button, and "Save" keeping the address shown now
// under a name typed in the menu's own small form. The list is read each time the menu
// opens, so views saved from another tab or replica show. Saving and deleting need the
// editor role: for a viewer they are hidden, and the menu says why (core/session.js).

import { ApiError, getJSON, sendJSON } from '../core/api.js';
import { collator, el } from '../core/dom.js';
import { gate, whyNote } from '../core/session.js';

const MAX_NAME = 200; // the server's bound on a view's name (state/views.py)

export class SavedViews {
  /** The menu, appended to `root` (the top bar). */
  constructor(root) {
    this.list = el('ul', { class: 'saved-views-list' });
    this.empty = el('p', { class: 'saved-views-empty muted', text: 'No saved views yet.' });
    this.problem = el('p', { class: 'saved-views-problem', role: 'alert', hidden: true });
    this.name = el('input', {
      type: 'text',
      class: 'saved-view-name',
      placeholder: 'Name of this view',
      'aria-label': 'Name of the view to save',
      maxlength: String(MAX_NAME),
      required: true,
      autocomplete: 'off',
    });
    const save = el('button', { class: 'button primary', type: 'submit', text: 'Save view' });
    this.form = gate(
      el(
        'form',
        { class: 'saved-view-form', onsubmit: (event) => this.#save(event) },
        this.name,
        save,
      ),
      'write',
      { hide: true },
    );
    this.menu = el(
      'details',
      { class: 'saved-views' },
      el('summary', {
        class: 'button',
        title: 'Save this view, or open a saved one',
        text: 'Views',
      }),
      el(
        'div',
        { class: 'saved-views-panel' },
        this.form,
        whyNote('write', 'why-note saved-views-why'),
        this.problem,
        this.list,
        this.empty,
      ),
    );
    this.menu.addEventListener('toggle', () => {
      if (this.menu.open) {
        this.#load();
        this.name.focus();
      }
    });
    document.addEventListener('click', (event) => {
      if (this.menu.open && !this.menu.contains(event.target)) this.menu.open = false;
    });
    root.append(this.menu);
  }

  async #load() {
    try {
      const { views } = await getJSON('views', []);
      this.#show(views);
    } catch (err) {
      this.#say(`The saved views could not be read: ${err.message}`);
    }
  }

  #show(views) {
    const names = Object.keys(views).sort(collator.compare);
    this.empty.hidden = names.length > 0;
    this.list.replaceChildren(
      ...names.map((name) =>
        el(
          'li',
          { class: 'saved-view', dataset: { name } },
          el('a', {
            class: 'saved-view-link',
            href: views[name],
            title: views[name],
            text: name,
            onclick: () => {
              this.menu.open = false;
            },
          }),
          gate(
            el('button', {
              class: 'icon-button saved-view-delete',
              type: 'button',
              title: `Delete the saved view ${name}`,
              'aria-label': `Delete the saved view ${name}`,
              text: '×',
              onclick: () => this.#delete(name),
            }),
            'write',
            { hide: true },
          ),
        ),
      ),
    );
  }

  async #save(event) {
    event.preventDefault();
    const name = this.name.value.trim();
    if (!name) return;
    try {
      await sendJSON('PUT', 'views', [['name', name]], { hash: location.hash || '#/runs' });
      this.name.value = '';
      this.problem.hidden = true;
      await this.#load();
    } catch (err) {
      this.#say(`Not saved: ${err instanceof ApiError ? err.detail : err.message}`);
    }
  }

  async #delete(name) {
    try {
      await sendJSON('DELETE', 'views', [['name', name]]);
      this.problem.hidden = true;
      await this.#load();
    } catch (err) {
      this.#say(`${name} was not deleted: ${err instanceof ApiError ? err.detail : err.message}`);
    }
  }

  #say(text) {
    this.problem.textContent = text;
    this.problem.hidden = false;
  }
}
