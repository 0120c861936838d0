// snapshot.js: the page of a snapshot file. page.py inlines it in one module script after
// the dashboard's static/widgets/colours.js (whose `Colours` and `GroupColours` it uses,
// so runs and groups have the colours the Scalars view gives them: one rule for both) and
// static/widgets/grouptraces.js (whose traces draw the groups of runs as the Scalars view
// draws them), after plotly.js (window.Plotly). Its data is the JSON of the #snapshot-data
// script (content.py's collect()).
//
// It draws: the runs (colour, tags, note) and the groups of runs; a chart per scalar tag,
// drawn when it first scrolls into view (a snapshot of many tags opens at once), smoothed
// as the page was when the snapshot was made (the raw values faint beneath; the min-max
// envelope too, when the page drew it), with the groups it had (a centre line over a band;
// members faint or hidden); a card per image tag with a step slider. Names reach plotly
// escaped, never as markup. Chart colours come from the theme's CSS variables, which follow
// the system's light or dark setting; the charts are restyled when it changes.

/* global Colours, GroupColours, Plotly, envelopeTraces, groupTraces, memberLooks,
   memberTrace, seriesColours */

const data = JSON.parse(document.getElementById('snapshot-data').textContent);
const meta = new Map(data.runs.map((run) => [run.id, run]));
const colours = new Colours();
colours.assign(
  data.runs.map((run) => run.id),
  meta,
);
const drawn = new Set(); // the chart elements plotly drew
const grouped = data.groups; // null when the runs were not grouped
// as the Scalars view gives them: over every group, away from their runs' colours
const groupColours = new GroupColours((run) => seriesColours(meta, style, run));
if (grouped) groupColours.assign(grouped);

/** `text` with plotly's markup characters escaped, so plotly shows it as it is. */
function escaped(text) {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key === 'text') node.textContent = value;
    else node.setAttribute(key, value);
  }
  node.append(...children);
  return node;
}

/** The colour and label of a series of `run` at `rank`. */
function style(run, rank) {
  const ranked = (meta.get(run)?.ranks.length ?? 0) > 1;
  return colours.style(run, rank, ranked);
}

function showRuns() {
  const items = data.runs.map((run) => {
    const { colour } = style(run.id, run.ranks[0]);
    const { tags, note } = run.annotation;
    return el(
      'li',
      { 'data-run': run.id },
      el('span', { class: 'swatch', style: `background:${colour}` }),
      el('span', { class: 'run-name', text: run.id }),
      ...tags.map((tag) => el('span', { class: 'chip', text: tag })),
      ...(note ? [el('span', { class: 'note', text: note })] : []),
    );
  });
  document.getElementById('runs').append(el('ul', { class: 'runs' }, ...items));
  if (!grouped) return;
  const members = new Map(); // a group's name -> its member runs, over every tag
  for (const group of grouped.groups) {
    const runs = members.get(group.name) ?? new Set();
    group.members.forEach(({ run }) => runs.add(run));
    members.set(group.name, runs);
  }
  const groups = [...members].map(([name, runs]) =>
    el(
      'li',
      { 'data-group': name },
      el('span', { class: 'swatch', style: `background:${groupColours.colour(name)}` }),
      el('span', { class: 'run-name', text: name }),
      el('span', { class: 'note', text: `group of ${runs.size} run${runs.size === 1 ? '' : 's'}` }),
    ));
  document.getElementById('runs').append(el('ul', { class: 'runs groups' }, ...groups));
}

/** The theme's chart colours (CSS variables: they follow the system's light or dark). */
function themeColours() {
  const css = window.getComputedStyle(document.documentElement);
  const read = (name) => css.getPropertyValue(name).trim();
  return {
    paper_bgcolor: read('--chart-bg'),
    plot_bgcolor: read('--chart-bg'),
    'font.color': read('--chart-text'),
    'hoverlabel.bgcolor': read('--chart-hover-bg'),
    'hoverlabel.bordercolor': read('--chart-hover-border'),
    'xaxis.gridcolor': read('--chart-grid'),
    'xaxis.linecolor': read('--chart-frame'),
    'yaxis.gridcolor': read('--chart-grid'),
    'yaxis.linecolor': read('--chart-frame'),
  };
}

/** The traces of one series: its values, or with smoothing its smoothed values over its
 * values drawn faint (as the Scalars view draws them), over its envelope if it has one;
 * each trace's meta says its run, rank and kind (raw, smoothed, min or max). */
function seriesTraces(series) {
  const { colour, label } = style(series.run, series.rank);
  const mode = series.step.length > 1 ? 'lines' : 'markers';
  const name = escaped(label);
  const seriesMeta = { run: series.run, rank: series.rank };
  const line = {
    type: 'scatter', mode, x: series.step, y: series.value, name,
    line: { color: colour, width: 1.5 }, marker: { color: colour },
    hovertemplate: `${name}<br>step %{x}: %{y}<extra></extra>`,
    meta: { ...seriesMeta, kind: 'raw' },
  };
  const id = `${series.run}|${series.rank}`;
  const { envelope } = series;
  const band = envelope ? envelopeTraces(series, envelope.step, colour, id, seriesMeta) : [];
  if (!series.smoothed) return [...band, line];
  return [
    ...band,
    { ...line, opacity: 0.25, line: { color: colour, width: 1 }, hoverinfo: 'skip',
      hovertemplate: undefined },
    { ...line, y: series.smoothed, customdata: series.value, line: { color: colour, width: 2 },
      hovertemplate: `${name}<br>step %{x}: %{y} (raw %{customdata})<extra></extra>`,
      meta: { ...seriesMeta, kind: 'smoothed' } },
  ];
}

/** The traces of a tag's chart: its groups over their members, and the runs in none. */
function chartTraces(tag) {
  if (!grouped) return tag.series.flatMap(seriesTraces);
  const groups = { ...grouped, groups: grouped.groups.filter((group) => group.tag === tag.tag) };
  const looks = memberLooks(groups, grouped.members, groupColours);
  const traces = [];
  for (const series of tag.series) {
    const look = looks.get(`${series.run}\u0000${series.rank}`);
    if (!look) traces.push(...seriesTraces(series));
    else if (!look.hidden) {
      const memberMeta = { run: series.run, rank: series.rank, tag: tag.tag };
      traces.push(memberTrace(series, series.step, look.colour, memberMeta, escaped));
    }
  }
  return [...traces, ...groupTraces(groups, (group) => group.step, groupColours, escaped)];
}

function drawChart(node, tag) {
  const traces = chartTraces(tag);
  const layout = {
    margin: { l: 50, r: 10, t: 10, b: 40 },
    font: { size: 11 },
    xaxis: { title: { text: 'step' }, zeroline: false },
    yaxis: { zeroline: false },
    showlegend: false,
    hovermode: 'closest',
  };
  Plotly.newPlot(node, traces, layout, { displaylogo: false, responsive: true });
  Plotly.relayout(node, themeColours());
  drawn.add(node);
}

function showScalars() {
  const section = document.getElementById('scalars');
  if (!data.scalars.length) return;
  const cards = el('div', { class: 'cards' });
  section.append(el('h2', { text: 'Scalars' }), cards);
  const byNode = new Map();
  const observer = new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        observer.unobserve(entry.target);
        drawChart(entry.target, byNode.get(entry.target));
      }
    },
    { rootMargin: '200px' },
  );
  for (const tag of data.scalars) {
    const chart = el('div', { class: 'chart', 'data-tag': tag.tag });
    byNode.set(chart, tag);
    cards.append(el('div', { class: 'card' }, el('h3', { text: tag.tag }), chart));
    observer.observe(chart);
  }
}

/** The index of the last of `steps` (ascending) at or before `step`, else 0. */
function atOrBefore(steps, step) {
  let found = 0;
  steps.forEach((s, i) => {
    if (s <= step) found = i;
  });
  return found;
}

function imageCard(tag) {
  const steps = [...new Set(tag.series.flatMap((s) => s.items.map((item) => item.step)))];
  steps.sort((a, b) => a - b);
  const slider = el('input', {
    type: 'range',
    min: '0',
    max: String(steps.length - 1),
    value: String(steps.length - 1),
    'aria-label': `Step of ${tag.tag}`,
  });
  const label = el('span', { class: 'muted' });
  const figures = tag.series.map((series) => {
    const img = el('img', { alt: `${tag.tag} of ${series.run}` });
    const caption = el('figcaption');
    const figure = el('figure', { 'data-run': series.run }, img, caption);
    return { series, img, caption, figure };
  });
  const show = () => {
    const step = steps[Number(slider.value)];
    label.textContent = `step ${step}`;
    for (const { series, img, caption, figure } of figures) {
      const item = series.items[atOrBefore(series.items.map((i) => i.step), step)];
      img.src = item.src;
      figure.dataset.step = String(item.step);
      const { colour, label: name } = style(series.run, series.rank);
      caption.style.borderTop = `3px solid ${colour}`;
      caption.textContent = item.step === step ? name : `${name} (step ${item.step})`;
    }
  };
  slider.addEventListener('input', show);
  show();
  return el(
    'div',
    { class: 'card', 'data-tag': tag.tag },
    el('h3', { text: tag.tag }),
    el('div', { class: 'stepper' }, slider, label),
    el('div', { class: 'pictures' }, ...figures.map((f) => f.figure)),
  );
}

function showImages() {
  if (!data.images.length) return;
  const section = document.getElementById('images');
  section.append(el('h2', { text: 'Images' }), el('div', { class: 'cards' }, ...data.images.map(imageCard)));
}

showRuns();
showScalars();
showImages();
window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
  const update = themeColours();
  for (const node of drawn) Plotly.relayout(node, update);
});
document.documentElement.dataset.ready = 'true';
