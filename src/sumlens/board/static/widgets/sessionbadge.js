// sessionbadge.js: the top bar's badge of who is signed in and their role ("alice ·
// editor"), "read-only" beside it when the server is, and in token mode a sign-out button.
// Alone on a local computer (no auth, every write allowed: today's single user) there is
// nobody to name, and the badge stays hidden.

import { el } from '../core/dom.js';
import { signOut, subscribe } from '../core/session.js';

/** Fill `root` (a span of the top bar) with the badge, kept current as the session changes. */
export function sessionBadge(root) {
  const who = el('span', { class: 'badge session-user' });
  const readOnly = el('span', {
    class: 'badge warn session-read-only',
    text: 'read-only',
    title: 'This server is read-only: nothing can be changed from this page.',
  });
  const problem = el('span', { class: 'session-problem', role: 'alert', hidden: true });
  const out = el('button', {
    class: 'button session-sign-out',
    type: 'button',
    text: 'Sign out',
    onclick: () =>
      signOut().catch((err) => {
        problem.textContent = `Not signed out: ${err.message}`;
        problem.hidden = false;
      }),
  });
  root.append(who, readOnly, out, problem);
  subscribe((session) => {
    const mode = session.mode();
    const role = session.role();
    // no user named: on a local address (the role of everyone there) or anonymous
    const name = session.user() ?? (mode === 'none' && role === 'admin' ? 'local' : 'anonymous');
    who.textContent = role ? `${name} · ${role}` : 'not signed in';
    who.title = role ? `Signed in as ${name}, with the role ${role}` : (session.why() ?? '');
    who.dataset.role = role ?? '';
    readOnly.hidden = !session.readOnly();
    out.hidden = mode !== 'token';
    const alone = mode === 'none' && session.canWrite() && !session.readOnly();
    root.hidden = !session.loaded || mode === null || alone;
  });
}
