// app.js: the entry point. It wires the URL state, the views (Runs, Scalars, a run's
// training Dashboard, Images, Histograms, Tensors, Graph, Lineage, Landscape), the header
// and the auto-refresh poller together; each of those lives in its own module.

import { DashboardView } from './dashboard.js';
import { LazyView } from './lazyview.js';
import { Poller } from './poller.js';
import { RunList } from './runlist.js';
import { ScalarsView } from './scalars.js';
import { Store, VIEWS } from './state.js';

const TITLES = {
  runs: 'Runs',
  scalars: 'Scalars',
  run: 'Training dashboard',
  images: 'Images',
  histograms: 'Histograms',
  tensors: 'Tensors',
  graph: 'Graph',
  lineage: 'Lineage',
  landscape: 'Loss landscape',
};

const store = new Store();
const sections = Object.fromEntries(
  VIEWS.map((view) => [view, document.getElementById(`${view}-view`)]),
);
const runList = new RunList(sections.runs, store);
const scalars = new ScalarsView(sections.scalars, store);
// every view but the run list, Scalars and the training dashboard loads its modules when
// first shown (see lazyview.js)
const lazy = (name, module, exported) =>
  new LazyView(name, sections[name], store, async () => (await import(module))[exported]);
const pluginViews = [
  new DashboardView(sections.run, store),
  lazy('images', './images.js', 'ImagesView'),
  lazy('histograms', './histograms.js', 'HistogramsView'),
  lazy('tensors', './tensors.js', 'TensorsView'),
  lazy('graph', './graph.js', 'GraphView'),
  lazy('lineage', './lineage.js', 'LineageView'),
  lazy('landscape', './landscape.js', 'LandscapeView'),
];
const navLinks = [...document.querySelectorAll('nav a[data-view]')];
const baseDir = document.getElementById('base-dir');
const loading = document.getElementById('loading');
const problem = document.getElementById('problem'); // the server cannot be reached
const notice = document.getElementById('notice'); // the run list is incomplete

function showView(state) {
  for (const [view, section] of Object.entries(sections)) {
    if (section.hidden !== (view !== state.view)) section.hidden = view !== state.view;
  }
  for (const link of navLinks) {
    link.setAttribute('href', store.href({ view: link.dataset.view }));
    if (link.dataset.view === state.view) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const run = state.view === 'run' && state.runs.length ? ` ${state.runs[0]}` : '';
  document.title = `${TITLES[state.view]}${run} · sumlens`;
}

const poller = new Poller({
  onData(data, forced) {
    baseDir.textContent = data.base_dir;
    baseDir.title = `Base directory: ${data.base_dir}`;
    loading.hidden = !data.loading;
    notice.hidden = !data.truncated;
    runList.setRuns(data);
    scalars.setRuns(data, forced);
    for (const view of pluginViews) view.setRuns(data, forced);
    document.documentElement.dataset.runsVersion = String(data.version);
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
poller.start();
