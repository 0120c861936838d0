// graph_panel.js: the graph view's side panel: what the selected node is (type, kind, data
// type, output shapes, attributes, and what a RunMetadata says of it: compute time, memory)
// and its neighbours, each input with its shape; or, for a scope, what it holds. Neighbours
// and the enclosing scope are buttons that select them. Everything from the file is shown
// as text.

import { el, formatBytes, formatCount, plural } from '../core/dom.js';

const MAX_NEIGHBOURS = 200;

function shapeText(shapes) {
  if (!shapes.length) return '—';
  return shapes.map((dims) => `[${dims.join(', ')}]`).join(', ');
}

function microsText(micros) {
  if (micros >= 1000) return `${(micros / 1000).toFixed(micros >= 10000 ? 0 : 1)} ms`;
  return `${Number(micros.toFixed(1))} µs`;
}

function row(label, value) {
  return el('div', { class: 'graph-field' }, el('dt', { text: label }), el('dd', {}, value));
}

export class GraphPanel {
  /** `onPick(kind, index)`: a neighbour or scope was clicked ('node' or 'scope'). */
  constructor(onPick) {
    this.onPick = onPick;
    this.element = el('aside', { class: 'graph-panel', 'aria-label': 'Selected node' });
    this.stats = null;
    this.clear();
  }

  /** What a RunMetadata says of the nodes (an /api/v1/graph/stats answer), or null. */
  setStats(stats) {
    this.stats = stats;
  }

  #statsSection(name) {
    if (!this.stats || !Object.hasOwn(this.stats.nodes, name)) return null;
    const entry = this.stats.nodes[name];
    return el('section', { class: 'graph-stats' },
      el('h4', { text: `Run metadata (${this.stats.tag})` }),
      el('dl', { class: 'graph-fields' },
        entry.devices.length ? row('Device', el('span', { text: entry.devices.join(', ') }))
          : null,
        entry.compute_us === null ? null
          : row('Compute time', el('span', { class: 'graph-compute',
            text: microsText(entry.compute_us) })),
        entry.memory_bytes === null ? null
          : row('Memory', el('span', { class: 'graph-memory',
            text: formatBytes(entry.memory_bytes) }))));
  }

  clear() {
    this.element.dataset.selected = '';
    this.element.replaceChildren(
      el('p', { class: 'muted graph-hint', text: 'Click a node or a scope to see it here. ' +
        'Double-click a scope to open or close it; drag to pan, wheel to zoom.' }),
    );
  }

  #link(kind, index, text) {
    return el('button', {
      type: 'button',
      class: 'graph-link',
      text,
      title: text,
      dataset: { kind },
      onclick: () => this.onPick(kind, index),
    });
  }

  #scopeLink(model, scope) {
    if (!scope) return el('span', { text: '(top)' });
    return this.#link('scope', scope, model.scopes[scope].name);
  }

  #neighbours(model, title, entries, withShape) {
    const list = el('ul', { class: 'graph-neighbours' });
    for (const [index, kind] of entries.slice(0, MAX_NEIGHBOURS)) {
      const node = model.nodes[index];
      list.append(
        el(
          'li',
          {},
          this.#link('node', index, node.name),
          el('span', { class: 'muted', text: ` ${node.type}` }),
          withShape
            ? el('span', { class: 'graph-shape', text: ` ${shapeText(node.shape)}` })
            : null,
          kind === 1 ? el('span', { class: 'muted', text: ' (control)' }) : null,
        ),
      );
    }
    if (entries.length > MAX_NEIGHBOURS) {
      list.append(el('li', { class: 'muted', text: `… ${formatCount(entries.length)} in all` }));
    }
    return el('section', {}, el('h4', { text: `${title} (${entries.length})` }), list);
  }

  /** Show node `index` of `model`. */
  showNode(model, index) {
    const node = model.nodes[index];
    this.element.dataset.selected = node.name;
    const attrs = Object.entries(node.attrs);
    const stats = this.#statsSection(node.name);
    this.element.replaceChildren(
      el('h3', { class: 'graph-title', text: model.nodeLabel(index), title: node.name }),
      el(
        'dl',
        { class: 'graph-fields' },
        row('Name', el('span', { class: 'graph-name', text: node.name })),
        row('Type', el('span', { class: 'graph-type', text: node.type })),
        row('Kind', el('span', { text: node.kind })),
        row('Scope', this.#scopeLink(model, node.scope)),
        node.dtype ? row('Data type', el('span', { text: node.dtype })) : null,
        row(
          'Output shape',
          el('span', { class: 'graph-output-shape', text: shapeText(node.shape) }),
        ),
      ),
      ...(stats ? [stats] : []),
      this.#neighbours(model, 'Inputs', node.inputs, true),
      this.#neighbours(model, 'Outputs', model.outputs[index], false),
    );
    if (attrs.length) {
      this.element.append(el('section', {},
        el('h4', { text: `Attributes (${attrs.length})` }),
        el('dl', { class: 'graph-fields graph-attrs' },
          ...attrs.map(([key, value]) => row(key, el('pre', { text: value }))))));
    }
  }

  /** Show scope `index` of `model`; `open` tells whether it is open, `onToggle` flips it. */
  showScope(model, index, open, onToggle) {
    const scope = model.scopes[index];
    this.element.dataset.selected = scope.name;
    const types = model.typeCounts(index).slice(0, 12);
    this.element.replaceChildren(
      el('h3', { class: 'graph-title', text: model.scopeLabel(index), title: scope.name }),
      el(
        'dl',
        { class: 'graph-fields' },
        row('Name', el('span', { class: 'graph-name', text: scope.name })),
        row('Type', el('span', { class: 'graph-type', text: model.groups.has(index)
          ? `group of ${model.groups.get(index)} nodes` : 'scope' })),
        row('In scope', this.#scopeLink(model, scope.parent)),
        row('Holds', el('span', { text: `${plural(scope.total, 'node')} ` +
          `(${formatCount(scope.nodes)} directly, ` +
          `${plural(model.childScopes[index].length, 'scope')})` })),
      ),
      el('button', { type: 'button', class: 'button', text: open ? 'Close scope' : 'Open scope',
        onclick: onToggle }),
      el('section', {}, el('h4', { text: 'Node types' }),
        el('ul', { class: 'graph-neighbours' },
          ...types.map(([type, count]) => el('li', { text: `${type}: ${formatCount(count)}` })))),
    );
  }
}
