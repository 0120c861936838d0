// lineage_data.js: the data lineage: each run's dataset pipeline drawn as a chain of
// operations (data flows down: the source on top, the last operation at the bottom;
// several inputs side by side), and a table comparing the pipelines of the runs, one
// column per run, a row per step and parameter, rows that differ highlighted.
//
// Steps of different runs are matched by operation and occurrence ("the 1st Batch"), so
// a pipeline with one more Shuffle shows that step as missing in the others rather than
// shifting every later row. Graphs come from /api/v1/dataset-graph as
// mindinsight_lineage.dataset_graph_json shapes them: op_type, parameters, operations,
// sampler and children in one object. Everything is text.

import { el } from '../core/dom.js';

const STRUCTURE = new Set(['op_type', 'children']);

function valueText(value) {
  if (value === null || value === undefined) return 'None';
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

function nodeParams(node) {
  return Object.entries(node)
    .filter(([key]) => !STRUCTURE.has(key))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function children(node) {
  const found = Array.isArray(node.children) ? node.children : [];
  return found.filter((child) => child && typeof child === 'object');
}

/** The steps of a graph in data-flow order (inputs first), each {key, op, params}. */
export function pipelineSteps(graph) {
  const steps = [];
  const seen = new Map();
  const visit = (node) => {
    for (const child of children(node)) visit(child);
    const op = valueText(node.op_type ?? '?');
    const count = (seen.get(op) ?? 0) + 1;
    seen.set(op, count);
    const params = new Map(nodeParams(node).map(([key, value]) => [key, valueText(value)]));
    steps.push({ key: `${op}#${count}`, op, count, params });
  };
  visit(graph);
  return steps;
}

function drawNode(node) {
  const inputs = children(node);
  return el(
    'div',
    { class: 'pipe-node' },
    inputs.length ? el('div', { class: 'pipe-inputs' }, ...inputs.map(drawNode)) : null,
    inputs.length ? el('div', { class: 'pipe-arrow', 'aria-hidden': 'true', text: '↓' }) : null,
    el(
      'div',
      { class: 'pipe-op', dataset: { op: valueText(node.op_type ?? '?') } },
      el('div', { class: 'pipe-op-name', text: valueText(node.op_type ?? '?') }),
      el(
        'dl',
        { class: 'pipe-params' },
        ...nodeParams(node).flatMap(([key, value]) => [
          el('dt', { text: key }),
          el('dd', { text: valueText(value), title: valueText(value) }),
        ]),
      ),
    ),
  );
}

/** The drawing of one run's pipeline. */
export function pipelineDrawing(run, graph) {
  return el(
    'figure',
    { class: 'pipe-figure', dataset: { run } },
    el('figcaption', { class: 'pipe-run', text: run, title: run }),
    graph ? drawNode(graph) : el('p', { class: 'muted', text: 'No dataset graph recorded.' }),
  );
}

/** The table comparing the pipelines of `entries` ([{run, graph}]). */
export function pipelineComparison(entries) {
  const stepsOf = entries.map(({ graph }) => (graph ? pipelineSteps(graph) : []));
  const order = [];
  const labels = new Map();
  for (const steps of stepsOf) {
    for (const step of steps) {
      if (labels.has(step.key)) continue;
      labels.set(step.key, step.count > 1 ? `${step.op} (${step.count})` : step.op);
      order.push(step.key);
    }
  }
  const byKey = stepsOf.map((steps) => new Map(steps.map((step) => [step.key, step])));
  const rows = [];
  order.forEach((key, index) => {
    const params = new Set();
    for (const steps of byKey) {
      for (const name of steps.get(key)?.params.keys() ?? []) params.add(name);
    }
    const present = byKey.map((steps) => (steps.has(key) ? '✓' : '—'));
    rows.push(compareRow(`${index + 1}. ${labels.get(key)}`, 'step', present, key));
    for (const name of [...params].sort()) {
      const values = byKey.map((steps) => {
        const step = steps.get(key);
        return step ? (step.params.get(name) ?? '—') : '—';
      });
      rows.push(compareRow('', name, values, key));
    }
  });
  return el(
    'table',
    { class: 'pipe-compare' },
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { text: 'step' }),
        el('th', { text: 'parameter' }),
        ...entries.map(({ run }) => el('th', { text: run, title: run, dataset: { run } })),
      ),
    ),
    el('tbody', {}, ...rows),
  );
}

function compareRow(step, param, values, key) {
  const differs = new Set(values).size > 1;
  return el(
    'tr',
    { class: differs ? 'differs' : '', dataset: { step: key, param } },
    el('th', { scope: 'row', text: step }),
    el('td', { class: 'pipe-param', text: param }),
    ...values.map((value) => el('td', { text: value, title: value })),
  );
}
