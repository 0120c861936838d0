// session.js: who the page is asking as, and what that person may do (GET api/v1/session:
// the auth mode, user, role, whether the server is read-only, and in one sentence why
// writing is not allowed). Read once at start, and again after the server refuses a
// request (a 401, or a 403 from a write): a role changed, the server restarted read-only,
// or the sign-in lapsed, and the page then says so rather than keep offering what fails.
//
// Every write control is gated here, not in its view: `gate(control, need)` marks it with
// what it needs ('write': an editor on a writable server; 'admin') and disables or hides
// it, its tooltip saying why; `whyNote(need)` is the one short line near such controls
// saying the same. Both carry data attributes, so each answer of the session re-gates
// every marked element of the document at once, however its view built it. The server
// checks every write again; this only keeps the page from offering what would be refused.
//
// In token mode a lapsed sign-in sends the page to the sign-in page, keeping the address
// hash (in sessionStorage too, for a sign-in page that drops it) to come back to.

import { getJSON, onRefused, sendJSON } from './api.js';

export const ROLES = ['viewer', 'editor', 'admin'];
const RETURN_KEY = 'sumlens:return-hash';
const RETRY_MS = [1000, 2000, 5000, 10000, 30000]; // after a failed read, then every 30 s
const PENDING = Object.freeze({
  mode: null,
  user: null,
  role: null,
  read_only: false,
  can_write: false,
  can_admin: false,
  why: null,
});

let current = PENDING;
let loaded = false;
let loading = null;
let failures = 0;
const listeners = new Set();

/** Whether `role` is at least `least` (viewer < editor < admin); null is below all. */
export function roleAtLeast(role, least) {
  return role !== null && ROLES.indexOf(role) >= ROLES.indexOf(least);
}

/** The session as the server last answered (all false while it has not yet). */
export const session = {
  get loaded() {
    return loaded;
  },
  mode: () => current.mode,
  user: () => current.user,
  role: () => current.role,
  readOnly: () => current.read_only,
  canWrite: () => current.can_write,
  canAdmin: () => current.can_admin,
  why: () => current.why,
  /** Whether the role is at least `least` (for reads with a least role: the audit log). */
  hasRole: (least) => roleAtLeast(current.role, least),
  /** Whether `need` ('write' or 'admin') is allowed now. */
  allows: (need) => (need === 'admin' ? current.can_admin : current.can_write),
  /** Why `need` is not allowed (null when it is, or while the session is not known). */
  whyNot(need) {
    if (!loaded || this.allows(need)) return null;
    if (need === 'admin' && current.can_write) {
      return `Only an admin can do this; you are ${article(current.role)} ${current.role}.`;
    }
    return current.why ?? 'Writing is not allowed.';
  },
};

function article(word) {
  return /^[aeiou]/i.test(word ?? '') ? 'an' : 'a';
}

/** Call `listener(session)` now and after each answer of the server. */
export function subscribe(listener) {
  listeners.add(listener);
  listener(session);
}

/** Read GET api/v1/session (again); resolves once the page knows it (or retries later). */
export function loadSession() {
  loading ??= read().finally(() => {
    loading = null;
  });
  return loading;
}

async function read() {
  try {
    current = await getJSON('session', []);
    loaded = true;
    failures = 0;
  } catch (err) {
    current = { ...PENDING, why: `Your access could not be checked (${err.message}).` };
    loaded = true;
    setTimeout(loadSession, RETRY_MS[Math.min(failures, RETRY_MS.length - 1)]);
    failures += 1;
  }
  if (current.mode === 'token' && current.role === null) {
    goToSignIn();
    return;
  }
  regate(document);
  for (const listener of listeners) listener(session);
}

/** sessionStorage, or null where the browser refuses it (a frame of another site, as a
 * notebook's frame of the dashboard is, when third-party storage is blocked). */
function returnStore() {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

/** The sign-in page, to come back to this address (its hash) once signed in. */
export function goToSignIn() {
  returnStore()?.setItem(RETURN_KEY, location.hash);
  location.assign(new URL(`signin${location.hash}`, document.baseURI));
}

/**
 * The address hash a sign-in interrupted, put back (call before the URL state is read):
 * the sign-in page may land on the bare page.
 */
export function restoreReturnHash() {
  const store = returnStore();
  const hash = store?.getItem(RETURN_KEY);
  store?.removeItem(RETURN_KEY);
  if (hash && !location.hash) history.replaceState(null, '', hash);
}

/** DELETE api/v1/session, then to the sign-in page. */
export async function signOut() {
  await sendJSON('DELETE', 'session', []);
  returnStore()?.removeItem(RETURN_KEY);
  location.assign(new URL('signin', document.baseURI));
}

/**
 * Mark `control` as needing `need` ('write' or 'admin') and gate it now: disabled (or
 * hidden, with `hide`) when not allowed, its tooltip then saying why. Returns it.
 */
export function gate(control, need, { hide = false } = {}) {
  control.dataset.gate = need;
  if (hide) control.dataset.gateHide = '';
  if (!('gateTitle' in control.dataset)) control.dataset.gateTitle = control.title;
  applyGate(control);
  return control;
}

function applyGate(control) {
  const need = control.dataset.gate;
  const allowed = session.allows(need);
  if ('disabled' in control) control.disabled = !allowed;
  if ('gateHide' in control.dataset) control.hidden = !allowed;
  control.title = allowed ? control.dataset.gateTitle : (session.whyNot(need) ?? '');
  control.setAttribute('aria-disabled', String(!allowed));
}

/** The short line saying why `need` is not allowed (hidden when it is). */
export function whyNote(need = 'write', className = 'why-note') {
  const note = document.createElement('p');
  note.className = className;
  note.dataset.why = need;
  applyWhy(note);
  return note;
}

function applyWhy(note) {
  const why = session.whyNot(note.dataset.why);
  note.textContent = why ?? '';
  note.hidden = !why;
}

/** Re-gate every marked control and note under `root` (after the session changed). */
function regate(root) {
  for (const control of root.querySelectorAll('[data-gate]')) applyGate(control);
  for (const note of root.querySelectorAll('[data-why]')) applyWhy(note);
}

onRefused((status, write) => {
  if (status === 401 || write) loadSession();
});
