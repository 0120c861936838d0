// graph_model.js: one graph from /api/v1/graph as the view needs it: the scope tree, what
// is visible for a set of open scopes, and that visible part as DOT for the layout.
//
// A closed scope is one box; an edge into or out of it is drawn once per pair of visible
// ends, with the number of edges it stands for. Only what is visible is laid out, so a
// graph of thousands of nodes opens as a few dozen boxes. Ids in the DOT source are ours:
// n<node index>, s<scope index>, e<edge number> (no name from the file goes there).
//
// A scope holding more than GROUP_THRESHOLD nodes directly (a flat graph of thousands of
// operators lays out slowly, and is unreadable as one frame) gets its nodes grouped by
// operator type: each type of two or more nodes becomes a group, a scope of its own named
// "<scope>/<type> ×<count>", that shows as one box and opens like any scope. Edges to
// grouped nodes are then counted per group, search and selection open the group to reveal a
// node. The grouping is the page's alone: the server's answer is not changed.

const CHAR_PX = 7; // width of one label character at the drawing's font size
const BOLD_CHAR_PX = 7.8; // ... in a scope's (bold) title
const PAD_PX = 22;
const MAX_LABEL = 34; // characters of a label shown before it is cut with an ellipsis
const NODE_HEIGHT = 28;
const SCOPE_HEIGHT = 42;
const AUTO_OPEN_BUDGET = 60; // boxes the first drawing may show when opening whole levels
const GROUP_THRESHOLD = 200; // direct nodes of a scope above which they are grouped

/** `text` cut to `max` characters with an ellipsis. */
export function shorten(text, max = MAX_LABEL) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export class GraphModel {
  constructor(graph) {
    this.name = graph.name;
    this.scopes = graph.scopes.map((scope) => ({ ...scope })); // [{name, parent, nodes, total}]
    this.nodes = [...graph.nodes]; // [{name, type, kind, scope, attrs, dtype, shape, inputs}]
    this.problems = graph.problems ?? [];
    this.groups = new Map(); // scope index of a group -> the operator type it gathers
    this.#group();
    this.childScopes = this.scopes.map(() => []);
    this.childNodes = this.scopes.map(() => []);
    this.scopes.forEach((scope, index) => {
      if (index) this.childScopes[scope.parent].push(index);
    });
    this.nodes.forEach((node, index) => this.childNodes[node.scope].push(index));
    this.outputs = this.nodes.map(() => []);
    this.nodes.forEach((node, index) => {
      for (const [source, kind] of node.inputs) this.outputs[source].push([index, kind]);
    });
    this.nodeByName = new Map();
    this.nodes.forEach((node, index) => {
      if (!this.nodeByName.has(node.name)) this.nodeByName.set(node.name, index);
    });
    this.scopeByName = new Map(this.scopes.map((scope, index) => [scope.name, index]));
  }

  /** Group the direct nodes of each scope holding more than GROUP_THRESHOLD (see above). */
  #group() {
    const direct = this.scopes.map(() => []);
    this.nodes.forEach((node, index) => direct[node.scope].push(index));
    const names = new Set(this.scopes.map((scope) => scope.name));
    direct.forEach((inside, parent) => {
      if (inside.length <= GROUP_THRESHOLD) return;
      const byType = new Map();
      for (const index of inside) {
        const type = this.nodes[index].type;
        if (!byType.has(type)) byType.set(type, []);
        byType.get(type).push(index);
      }
      for (const [type, members] of byType) {
        const label = `${type} ×${members.length}`;
        const name = this.scopes[parent].name ? `${this.scopes[parent].name}/${label}` : label;
        if (members.length < 2 || names.has(name)) continue;
        names.add(name);
        const group = this.scopes.length;
        this.scopes.push({ name, parent, nodes: members.length, total: members.length });
        this.scopes[parent].nodes -= members.length;
        this.groups.set(group, type);
        for (const index of members) this.nodes[index] = { ...this.nodes[index], scope: group };
      }
    });
  }

  /** The scope a node's name is under: its own, or its group's scope. */
  #homeScope(index) {
    const scope = this.nodes[index].scope;
    return this.groups.has(scope) ? this.scopes[scope].parent : scope;
  }

  /** A node's label: its name after its scope's path. */
  nodeLabel(index) {
    const node = this.nodes[index];
    const scope = this.scopes[this.#homeScope(index)].name;
    const inside = scope && node.name.startsWith(`${scope}/`);
    return inside ? node.name.slice(scope.length + 1) : node.name;
  }

  /** A scope's label: the last part of its path (a group's: its type and count). */
  scopeLabel(index) {
    const type = this.groups.get(index);
    if (type !== undefined) return `${type} ×${this.scopes[index].total}`;
    const name = this.scopes[index].name;
    return name.slice(name.lastIndexOf('/') + 1);
  }

  /** Boxes a scope shows when open (its nodes and sub-scopes). */
  items(scope) {
    return this.childNodes[scope].length + this.childScopes[scope].length;
  }

  /**
   * The scopes open at first: whole levels of scopes that hold sub-scopes (a layer stays one
   * box), while the drawing stays within AUTO_OPEN_BUDGET boxes; a lone scope (Default,
   * a wrapper cell) is always looked into.
   */
  autoOpen() {
    const open = [];
    let shown = this.items(0);
    let level = this.childScopes[0];
    while (level.length) {
      const chosen = level.filter((s) => level.length === 1 || this.childScopes[s].length);
      const cost = chosen.reduce((sum, s) => sum + this.items(s) - 1, 0);
      if (!chosen.length || shown + cost > AUTO_OPEN_BUDGET) break;
      open.push(...chosen);
      shown += cost;
      level = chosen.flatMap((s) => this.childScopes[s]);
    }
    return open.map((s) => this.scopes[s].name);
  }

  /** The scope indices of `names` (unknown names dropped). */
  scopeIndices(names) {
    return new Set(names.map((name) => this.scopeByName.get(name)).filter((s) => s !== undefined));
  }

  /** The scopes holding node `index`, outermost first (the root left out). */
  ancestors(index) {
    const found = [];
    for (let scope = this.nodes[index].scope; scope > 0; scope = this.scopes[scope].parent) {
      found.unshift(scope);
    }
    return found;
  }

  /** For each scope, the closed scope whose box stands for it (-1: it is visible). */
  boxes(open) {
    const box = new Int32Array(this.scopes.length).fill(-1);
    for (let s = 1; s < this.scopes.length; s += 1) {
      const above = box[this.scopes[s].parent];
      if (above >= 0) box[s] = above;
      else if (!open.has(s)) box[s] = s;
    }
    return box;
  }

  /** The DOT id of what stands for node `index` on the drawing. */
  visibleId(index, box) {
    const scope = box[this.nodes[index].scope];
    return scope >= 0 ? `s${scope}` : `n${index}`;
  }

  /**
   * The visible part for the set of `open` scope indices: {dot, items, edges}. `items` maps a
   * DOT id to what it draws: {kind: 'node'|'scope'|'cluster', index}; `edges` maps an edge id
   * to {from, to, count, control, variable}.
   */
  visible(open) {
    const box = this.boxes(open);
    const items = new Map();
    const lines = [
      'digraph G {',
      'graph [rankdir=TB, nodesep=0.3, ranksep=0.4, fontsize=13, labeljust=l];',
      'node [shape=box, fixedsize=true, label=""];',
    ];
    const walk = (scope, indent) => {
      for (const child of this.childScopes[scope]) {
        if (open.has(child)) {
          items.set(`cluster_s${child}`, { kind: 'cluster', index: child });
          lines.push(`${indent}subgraph cluster_s${child} { label="X"; margin=10;`);
          walk(child, `${indent}  `);
          lines.push(`${indent}}`);
        } else {
          items.set(`s${child}`, { kind: 'scope', index: child });
          const width = this.#width(`+ ${this.scopeLabel(child)}`, BOLD_CHAR_PX);
          lines.push(`${indent}s${child} [width=${width}, height=${SCOPE_HEIGHT / 72}];`);
        }
      }
      for (const node of this.childNodes[scope]) {
        items.set(`n${node}`, { kind: 'node', index: node });
        const width = this.#width(this.nodeLabel(node));
        lines.push(`${indent}n${node} [width=${width}, height=${NODE_HEIGHT / 72}];`);
      }
    };
    walk(0, '');
    const edges = new Map();
    const byEnds = new Map();
    this.nodes.forEach((node, target) => {
      const to = this.visibleId(target, box);
      for (const [source, kind] of node.inputs) {
        const from = this.visibleId(source, box);
        if (from === to) continue;
        const key = `${from}>${to}`;
        let edge = byEnds.get(key);
        if (!edge) {
          edge = { from, to, count: 0, control: true, variable: true };
          byEnds.set(key, edge);
          edges.set(`e${edges.size}`, edge);
        }
        edge.count += 1;
        edge.control &&= kind === 1;
        const sourceKind = this.nodes[source].kind;
        edge.variable &&= sourceKind === 'parameter' || sourceKind === 'const';
      }
    });
    for (const [id, edge] of edges) lines.push(`${edge.from} -> ${edge.to} [id=${id}];`);
    lines.push('}');
    return { dot: lines.join('\n'), items, edges };
  }

  #width(label, charPx = CHAR_PX) {
    return (Math.min(label.length, MAX_LABEL + 2) * charPx + PAD_PX) / 72;
  }

  /** Node indices whose name contains `text` (case-insensitive), best first, at most `limit`. */
  search(text, limit = 50) {
    const wanted = text.trim().toLowerCase();
    if (!wanted) return [];
    const found = [];
    this.nodes.forEach((node, index) => {
      const at = node.name.toLowerCase().lastIndexOf(wanted);
      if (at < 0) return;
      const inLabel = at >= node.name.lastIndexOf('/') + 1;
      found.push([inLabel ? 0 : 1, node.name.length, index]);
    });
    found.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);
    return found.slice(0, limit).map((entry) => entry[2]);
  }

  /** How many nodes of each type a scope holds (all levels), most first. */
  typeCounts(scope) {
    const counts = new Map();
    const stack = [scope];
    while (stack.length) {
      const at = stack.pop();
      for (const node of this.childNodes[at]) {
        const type = this.nodes[node].type;
        counts.set(type, (counts.get(type) ?? 0) + 1);
      }
      stack.push(...this.childScopes[at]);
    }
    return [...counts].sort((a, b) => b[1] - a[1]);
  }
}
