// annotations.js: a run's tags, note and colour as the server keeps them in the workspace
// (board/api/annotations.py): setting one, importing a shared file, exporting them all (read
// a page at a time), and the dialog that edits a run's tags and note.
//
// The server checks every field and answers a bad one with a one-line detail naming it;
// the dialog shows that detail as typed and keeps what the user wrote, so nothing is lost.

import { ApiError, getJSON, sendJSON } from '../core/api.js';
import { el } from '../core/dom.js';

export const NO_ANNOTATION = Object.freeze({ tags: [], note: '', colour: null });
const MAX_NOTE_CHARS = 10000; // MAX_NOTE_CHARS in board/data/annotations.py

/** PUT /api/v1/annotation: store `annotation` ({tags, note, colour}) as `run`'s; the stored one. */
export function putAnnotation(run, annotation) {
  return sendJSON('PUT', 'annotation', [['run', run]], annotation);
}

/** POST /api/v1/annotations: merge an exported file's JSON in; the counts of what changed. */
export function importAnnotations(body) {
  return sendJSON('POST', 'annotations', [], body);
}

/**
 * Every run's annotation as the one file "Import tags" reads: GET /api/v1/annotations answers
 * a page at a time, so the pages are read in turn and their runs joined.
 */
export async function exportAnnotations() {
  let page = await getJSON('annotations', []);
  const annotations = Object.create(null); // a run id such as "__proto__" stays a key
  const whole = { base_dir: page.base_dir, annotations, group_colours: page.group_colours };
  for (;;) {
    for (const [run, annotation] of Object.entries(page.annotations)) {
      annotations[run] = annotation;
    }
    if (page.next === null) return whole;
    page = await getJSON('annotations', [['after', page.next]]);
  }
}

/** Save every run's annotation as annotations.json (exportAnnotations' file). */
export async function downloadAnnotations() {
  const whole = await exportAnnotations();
  const blob = new Blob([JSON.stringify(whole, null, 2)], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const link = el('a', { href: url, download: 'annotations.json', hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000); // once the download has its bytes
}

/** The tags typed in one line, comma-separated ("a, b," gives ["a", "b"]). */
export function parseTags(text) {
  return text
    .split(',')
    .map((tag) => tag.trim())
    .filter(Boolean);
}

/** The modal dialog that edits a run's tags and note (its colour is kept as it is). */
export class AnnotationEditor {
  constructor(root, onSaved) {
    this.onSaved = onSaved; // (run id, stored annotation)
    this.title = el('h2', { class: 'annotation-title' });
    this.tags = el('input', {
      class: 'annotation-tags',
      type: 'text',
      placeholder: 'baseline, lr=0.1, seed=2',
      autocomplete: 'off',
    });
    this.note = el('textarea', { class: 'annotation-note', rows: '5', maxlength: MAX_NOTE_CHARS });
    this.error = el('p', { class: 'annotation-error', role: 'alert', hidden: true });
    this.save = el('button', { class: 'button primary', type: 'submit', text: 'Save' });
    const cancel = el('button', {
      class: 'button',
      type: 'button',
      text: 'Cancel',
      onclick: () => this.dialog.close(),
    });
    const form = el(
      'form',
      { method: 'dialog', onsubmit: (event) => this.#submit(event) },
      this.title,
      el('label', { class: 'annotation-field' }, 'Tags, separated by commas', this.tags),
      el('label', { class: 'annotation-field' }, 'Note', this.note),
      this.error,
      el('div', { class: 'annotation-actions' }, cancel, this.save),
    );
    this.dialog = el('dialog', { class: 'annotation-editor', 'aria-label': 'Tags and note' }, form);
    root.append(this.dialog);
  }

  /** Edit the annotation of `run` (a run list entry). */
  open(run) {
    const annotation = run.annotation ?? NO_ANNOTATION;
    this.run = run.id;
    this.colour = annotation.colour;
    this.title.textContent = `Tags and note of ${run.id}`;
    this.tags.value = annotation.tags.join(', ');
    this.note.value = annotation.note;
    this.error.hidden = true;
    this.save.disabled = false;
    this.dialog.showModal();
    this.tags.focus();
  }

  async #submit(event) {
    event.preventDefault();
    const annotation = {
      tags: parseTags(this.tags.value),
      note: this.note.value,
      colour: this.colour,
    };
    this.save.disabled = true;
    try {
      const stored = await putAnnotation(this.run, annotation);
      this.dialog.close();
      this.onSaved(this.run, stored);
    } catch (err) {
      this.error.textContent = `Not saved: ${err instanceof ApiError ? err.message : err}`;
      this.error.hidden = false;
    } finally {
      this.save.disabled = false;
    }
  }
}
