// views.js: every view of the page, registered once. Adding a view is its own folder (its
// modules and stylesheet) and one entry here. A plugin's view is named after its plugin, in
// the plural where it lists many values (pr_curve: #/pr_curves, pr_curves/pr_curves.js);
// tests/board/test_views_registry.py checks this list against the server's plugins.
//
// The shell (app.js) builds the nav links, the sections, the stylesheets and the loading of
// each view from this list; the URL state (core/state.js) takes the routes, the settings
// parameters and the plugin views' step and tag picks from it; the run dashboard
// (dashboard/dashboard.js) its cards and their links; the Runs table (runs/runlist.js) the
// names of its "Other data" column. It imports nothing (it names modules, it does not load
// them), so any module may read it.
//
// An entry:
//   name      the route (#/name) and the section (id `${name}-view`); state.view
//   nav       the nav link's text; `hint` its tooltip
//   title     the page title and the section's label (default: nav)
//   module    the module (a path under static/) exporting the view's class `exported`,
//             constructed as new View(section, store) and handed each /runs response with
//             setRuns(data, forced)
//   eager     loaded with the page, imported by app.js (Runs, Scalars, the run dashboard);
//             else loaded when the view is first shown (core/lazyview.js)
//   styles    its stylesheets (paths under static/), loaded with the page after style.css
//   role      the least role that may see the view (core/session.js): its nav link is
//             hidden from the others (the Audit view: editors and admins)
//   param     the URL parameter holding the view's own settings, a JSON object in
//             state[name] that the view checks itself
//   plugin    a plugin view (pluginview/): the plugin whose tags it shows (their ticks are the
//             URL's `off`); `steps`: its cards pick a step (the URL's `at`)
//   cards     the run dashboard's cards opening this view: `kind`, `title`, the /runs
//             plugins it stands for (`plugins`, default [kind]), and how the Runs table's
//             "Other data" column names them: `other`, as a count of their tags ("3 images")
//             when `counted`, else once ("graph")

export const VIEWS = [
  {
    name: 'runs',
    nav: 'Runs',
    module: 'runs/runlist.js',
    exported: 'RunList',
    eager: true,
    styles: ['runs/runs.css'],
  },
  {
    name: 'scalars',
    nav: 'Scalars',
    module: 'scalars/scalars.js',
    exported: 'ScalarsView',
    eager: true,
    styles: ['scalars/scalars.css'],
    param: 'group', // the grouping of the runs (scalars/groups.js)
    cards: [{ kind: 'scalar', title: 'Scalars' }],
  },
  {
    name: 'images',
    nav: 'Images',
    module: 'images/images.js',
    exported: 'ImagesView',
    styles: ['images/images.css'],
    plugin: 'image',
    steps: true,
    cards: [{ kind: 'image', title: 'Images', other: 'image', counted: true }],
  },
  {
    name: 'histograms',
    nav: 'Histograms',
    module: 'histograms/histograms.js',
    exported: 'HistogramsView',
    styles: ['histograms/histograms.css'],
    plugin: 'histogram',
    cards: [{ kind: 'histogram', title: 'Histograms', other: 'histogram', counted: true }],
  },
  {
    name: 'tensors',
    nav: 'Tensors',
    module: 'tensors/tensors.js',
    exported: 'TensorsView',
    styles: ['tensors/tensors.css'],
    plugin: 'tensor',
    steps: true,
    cards: [{ kind: 'tensor', title: 'Tensors', other: 'tensor', counted: true }],
  },
  {
    name: 'pr_curves',
    nav: 'PR Curves',
    title: 'Precision-recall curves',
    module: 'pr_curves/pr_curves.js',
    exported: 'PrCurvesView',
    styles: ['pr_curves/pr_curves.css'],
    plugin: 'pr_curve',
    steps: true,
    cards: [{ kind: 'pr_curve', title: 'PR curves', other: 'PR curve', counted: true }],
  },
  {
    name: 'embeddings',
    nav: 'Embeddings',
    module: 'embeddings/embeddings.js',
    exported: 'EmbeddingsView',
    styles: ['embeddings/embeddings.css'],
    plugin: 'embedding',
    cards: [{ kind: 'embedding', title: 'Embeddings', other: 'embedding', counted: true }],
  },
  {
    name: 'text',
    nav: 'Text',
    module: 'text/text.js',
    exported: 'TextView',
    styles: ['text/text.css'],
    plugin: 'text',
    steps: true,
    cards: [{ kind: 'text', title: 'Text', other: 'text', counted: true }],
  },
  {
    name: 'audio',
    nav: 'Audio',
    module: 'audio/audio.js',
    exported: 'AudioView',
    styles: ['audio/audio.css'],
    plugin: 'audio',
    steps: true,
    cards: [{ kind: 'audio', title: 'Audio', other: 'audio' }],
  },
  {
    name: 'graph',
    nav: 'Graph',
    module: 'graph/graph.js',
    exported: 'GraphView',
    styles: ['graph/graph.css'],
    param: 'g',
    cards: [{ kind: 'graph', title: 'Computational graph', other: 'graph' }],
  },
  {
    name: 'lineage',
    nav: 'Lineage',
    module: 'lineage/lineage.js',
    exported: 'LineageView',
    styles: ['lineage/lineage.css'],
    param: 'lin',
    cards: [
      { kind: 'dataset_graph', title: 'Dataset graph', other: 'lineage' },
      {
        kind: 'lineage',
        title: 'Lineage',
        plugins: ['train_lineage', 'eval_lineage', 'custom_lineage_data', 'hparams'],
        other: 'lineage',
      },
    ],
  },
  {
    name: 'landscape',
    nav: 'Landscape',
    title: 'Loss landscape',
    module: 'landscape/landscape.js',
    exported: 'LandscapeView',
    styles: ['landscape/landscape.css'],
    param: 'land',
    cards: [{ kind: 'landscape', title: 'Loss landscape', other: 'landscape', counted: true }],
  },
  {
    name: 'audit',
    nav: 'Audit',
    hint: 'Who changed what: the audit log',
    title: 'Audit log',
    module: 'audit/audit.js',
    exported: 'AuditView',
    styles: ['audit/audit.css'],
    role: 'editor',
  },
  {
    name: 'run',
    nav: 'Dashboard',
    hint: 'The training dashboard of the first selected run',
    title: 'Training dashboard',
    module: 'dashboard/dashboard.js',
    exported: 'DashboardView',
    eager: true,
    styles: ['dashboard/dashboard.css'],
  },
];

/** Every dashboard card with the view it opens: [{kind, title, plugins, view, ...}]. */
export const CARDS = VIEWS.flatMap((view) =>
  (view.cards ?? []).map((card) => ({ plugins: [card.kind], ...card, view: view.name })),
);
