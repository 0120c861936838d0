// app.js: the entry point, the page's shell. From the views registered in views.js it builds
// the nav links and a section per view, links their stylesheets, and makes each view: those
// marked `eager` at once, the others when first shown (core/lazyview.js). It then wires the
// URL state, the header and the auto-refresh poller to them; and the team's parts of the
// header: who is signed in (widgets/sessionbadge.js), the saved views
// (widgets/savedviews.js), and the nav links of views the role may see (core/session.js);
// and keeps every nav link whole at any width (widgets/topbarfit.js).
//
// Everything is made while this module runs, so the page is whole when it has loaded (the
// stylesheets linked here hold the load event back until they apply). The eager views are
// therefore imported here, statically; they are the page's first paint (the run list, the
// Scalars view, the run dashboard), and a new view is a lazy one.

import { el } from './core/dom.js';
import { LazyView } from './core/lazyview.js';
import { Poller } from './core/poller.js';
import { loadSession, restoreReturnHash, subscribe } from './core/session.js';
import { Store } from './core/state.js';
import { StorageStatus } from './core/storagestatus.js';
import { themeToggle } from './core/theme.js';
import { DashboardView } from './dashboard/dashboard.js';
import { RunList } from './runs/runlist.js';
import { ScalarsView } from './scalars/scalars.js';
import { VIEWS } from './views.js';
import { SavedViews } from './widgets/savedviews.js';
import { sessionBadge } from './widgets/sessionbadge.js';
import { TopbarFit } from './widgets/topbarfit.js';

const EAGER = { RunList, ScalarsView, DashboardView }; // by the names views.js exports

restoreReturnHash(); // before the URL state is read: the address a sign-in interrupted
const store = new Store();
const nav = document.querySelector('nav');
const main = document.querySelector('main');
const sections = new Map(); // view name -> its section
const navLinks = [];
for (const view of VIEWS) {
  const link = el('a', { href: `#/${view.name}`, dataset: { view: view.name }, text: view.nav });
  if (view.hint) link.title = view.hint;
  navLinks.push(link);
  const label = view.title ?? view.nav;
  const section = el('section', {
    id: `${view.name}-view`,
    class: `view ${view.name}-view`,
    'aria-label': label,
    hidden: true,
  });
  sections.set(view.name, section);
}
nav.append(...navLinks);
main.append(...sections.values());

const baseDir = document.getElementById('base-dir');
const loading = document.getElementById('loading');
const problem = document.getElementById('problem'); // the server cannot be reached
const notice = document.getElementById('notice'); // the run list is incomplete
const storageStatus = new StorageStatus(document.getElementById('storage-requests'));
let remoteBase = false; // the base directory is a URL: show what its reloads cost

function showView(state) {
  for (const [name, section] of sections) {
    if (section.hidden !== (name !== state.view)) section.hidden = name !== state.view;
  }
  for (const link of navLinks) {
    link.setAttribute('href', store.href({ view: link.dataset.view }));
    if (link.dataset.view === state.view) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const view = VIEWS.find((entry) => entry.name === state.view);
  const run = state.view === 'run' && state.runs.length ? ` ${state.runs[0]}` : '';
  document.title = `${view.title ?? view.nav}${run} · sumlens`;
}

/** Link the stylesheet `path` (under static/); a failure to load it is reported. */
function linkStylesheet(path) {
  const link = el('link', { rel: 'stylesheet', href: `static/${path}` });
  link.addEventListener('error', () => {
    console.error(`The stylesheet static/${path} could not be loaded.`);
  });
  document.head.append(link);
}

/** The class a lazy view's module exports (a dynamic import, when first asked). */
function viewClass(view) {
  return async () => (await import(`./${view.module}`))[view.exported];
}

/** The view registered as `view`, made in its section. */
function makeView(view) {
  const section = sections.get(view.name);
  if (!view.eager) return new LazyView(view.name, section, store, viewClass(view));
  const View = EAGER[view.exported];
  if (!View) throw new Error(`The eager view ${view.name} is not imported by app.js.`);
  return new View(section, store);
}

for (const path of new Set(VIEWS.flatMap((view) => view.styles ?? []))) linkStylesheet(path);
const views = VIEWS.map(makeView);

const poller = new Poller({
  onData(data, forced) {
    remoteBase = /^[a-z][a-z0-9+.-]*:\/\//i.test(data.base_dir);
    baseDir.textContent = data.base_dir;
    baseDir.title = `Base directory: ${data.base_dir}`;
    loading.hidden = !data.loading;
    notice.hidden = !data.truncated;
    for (const view of views) view.setRuns(data, forced);
    document.documentElement.dataset.runsVersion = String(data.version);
  },
  onPoll() {
    if (remoteBase) storageStatus.update();
  },
  onError(err) {
    problem.textContent = err ? `Cannot reach the sumlens server (${err.message}); retrying.` : '';
    problem.hidden = !err;
  },
});

store.subscribe(showView); // every change: the nav links carry the whole state
showView(store.state);

document.getElementById('auto-refresh').addEventListener('change', (event) => {
  poller.setEnabled(event.target.checked);
});
document.getElementById('refresh').addEventListener('click', () => poller.refresh(true));
new SavedViews(document.getElementById('saved-views'));
sessionBadge(document.getElementById('session'));
// every nav link whole: the least used items give way into a menu, then the nav to a row
new TopbarFit(document.querySelector('.topbar'), nav, [
  document.getElementById('auto-refresh').closest('label'),
  document.querySelector('.base-info'),
  document.getElementById('session'),
]);
subscribe((session) => {
  for (const link of navLinks) {
    const least = VIEWS.find((view) => view.name === link.dataset.view).role;
    link.hidden = Boolean(least) && !session.hasRole(least);
  }
  // the auth mode once the session is known ('' before; 'unknown' when it could not be read)
  if (session.loaded) document.documentElement.dataset.session = session.mode() ?? 'unknown';
});
loadSession();
themeToggle(document.getElementById('theme-toggle'));
// a page changed a run's annotation (its colour ...): show it at once, not at the next poll
document.addEventListener('sumlens:runs-changed', () => poller.refresh(true));
poller.start();
