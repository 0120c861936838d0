// graph_draw.js: draws a laid-out graph as SVG, and pans (drag), zooms (wheel, buttons) and
// fits it. Every name is put in as a text node (textContent), never as markup.
//
// The drawing is one <g> under a transform (translate + scale); each box is a <g> with
// data-id (the DOT id), data-kind (node, scope, cluster) and data-name, so tests and the
// view find them by name. Clicks call back with the id; a double-click on a scope box (or a
// cluster's title) opens or closes it. A group of nodes of one type (graph_model.js) is
// drawn as a scope, marked graph-group.

import { shorten } from './graph_model.js';

const SVG = 'http://www.w3.org/2000/svg';
const MIN_SCALE = 0.02;
const MAX_SCALE = 4;
const FIT_MARGIN = 24;

function svg(tag, attributes = {}, text = null) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== null) node.textContent = text;
  return node;
}

function splinePath(points, tip) {
  const [first, ...rest] = points;
  let path = `M${first[0]},${first[1]}`;
  for (let i = 0; i + 2 < rest.length; i += 3) {
    path += ` C${rest[i][0]},${rest[i][1]} ${rest[i + 1][0]},${rest[i + 1][1]} ` +
      `${rest[i + 2][0]},${rest[i + 2][1]}`;
  }
  if (tip) path += ` L${tip[0]},${tip[1]}`;
  return path;
}

export class GraphCanvas {
  /** `handlers`: onSelect(id), onToggle(id) (open or close a scope), onBackground(). */
  constructor(handlers) {
    this.handlers = handlers;
    this.scale = 1;
    this.tx = 0;
    this.ty = 0;
    this.layout = null;
    this.world = svg('g', { class: 'graph-world' });
    const defs = svg('defs');
    const marker = svg('marker', {
      id: 'graph-arrow',
      viewBox: '0 0 10 10',
      refX: 9,
      refY: 5,
      markerWidth: 7,
      markerHeight: 7,
      orient: 'auto-start-reverse',
    });
    marker.append(svg('path', { d: 'M0,0 L10,5 L0,10 z', class: 'graph-arrow' }));
    defs.append(marker);
    this.element = svg('svg', { class: 'graph-svg', role: 'img', 'aria-label': 'Graph' });
    this.element.append(defs, this.world);
    this.#listen();
  }

  /** Replace the drawing: `layout` from graph_layout.js, `visible` from GraphModel.visible. */
  draw(model, layout, visible) {
    this.layout = layout;
    const clusters = svg('g', { class: 'graph-clusters' });
    const edges = svg('g', { class: 'graph-edges' });
    const boxes = svg('g', { class: 'graph-boxes' });
    for (const [id, item] of visible.items) {
      if (item.kind === 'cluster') {
        const area = layout.clusters.get(id.replace(/^cluster_/, ''));
        if (area) clusters.append(this.#cluster(model, id, item.index, area));
      } else {
        const box = layout.boxes.get(id);
        if (box) boxes.append(this.#box(model, id, item, box));
      }
    }
    for (const [id, edge] of visible.edges) {
      const shape = layout.edges.get(id);
      if (!shape || !shape.points.length) continue;
      const kind = edge.control ? ' control' : edge.variable ? ' variable' : '';
      const path = svg('path', {
        class: `graph-edge${kind}`,
        d: splinePath(shape.points, shape.tip),
        'marker-end': 'url(#graph-arrow)',
        'stroke-width': Math.min(1 + Math.log2(edge.count), 5),
      });
      if (edge.count > 1) path.append(svg('title', {}, `${edge.count} edges`));
      edges.append(path);
    }
    this.world.replaceChildren(clusters, edges, boxes);
  }

  #cluster(model, id, index, area) {
    const name = model.scopes[index].name;
    const kind = model.groups.has(index) ? ' graph-group' : '';
    const group = svg('g', { class: `graph-cluster${kind}`, 'data-id': id,
      'data-kind': 'cluster' });
    group.dataset.name = name;
    group.append(
      svg('rect', { x: area.x, y: area.y, width: area.w, height: area.h, rx: 6 }),
      svg('text', { x: area.x + 8, y: area.y + 16, class: 'graph-cluster-title' },
        `− ${shorten(model.scopeLabel(index), Math.max(4, Math.floor(area.w / 8) - 3))}`),
      svg('title', {}, `${name}: double-click the title to close`),
    );
    return group;
  }

  #box(model, id, item, box) {
    const left = box.x - box.w / 2;
    const top = box.y - box.h / 2;
    const group = svg('g', { 'data-id': id, 'data-kind': item.kind });
    const rect = svg('rect', { x: left, y: top, width: box.w, height: box.h, rx: 5 });
    if (item.kind === 'scope') {
      const scope = model.scopes[item.index];
      group.dataset.name = scope.name;
      const kind = model.groups.has(item.index) ? ' graph-group' : '';
      group.setAttribute('class', `graph-box graph-scope${kind}`);
      group.append(
        rect,
        svg('text', { x: box.x, y: top + 17 }, `+ ${shorten(model.scopeLabel(item.index))}`),
        svg('text', { x: box.x, y: top + 33, class: 'graph-count' },
          `${scope.total} node${scope.total === 1 ? '' : 's'}`),
        svg('title', {}, `${scope.name}: double-click to open`),
      );
    } else {
      const node = model.nodes[item.index];
      group.dataset.name = node.name;
      group.setAttribute('class', `graph-box graph-node kind-${node.kind}`);
      group.append(
        rect,
        svg('text', { x: box.x, y: box.y + 4 }, shorten(model.nodeLabel(item.index))),
        svg('title', {}, `${node.name} (${node.type})`),
      );
    }
    return group;
  }

  /** Mark the box of `id` selected (none: null). */
  highlight(id) {
    for (const old of this.world.querySelectorAll('.selected')) old.classList.remove('selected');
    if (id) this.world.querySelector(`[data-id="${CSS.escape(id)}"]`)?.classList.add('selected');
  }

  /** Where box (or cluster) `id` is drawn, in layout coordinates (its centre), or null. */
  centre(id) {
    const box = this.layout?.boxes.get(id);
    if (box) return [box.x, box.y];
    const area = this.layout?.clusters.get(id.replace(/^cluster_/, ''));
    return area ? [area.x + area.w / 2, area.y + 16] : null;
  }

  /** Scale the whole drawing into the visible area. */
  fit() {
    if (!this.layout) return;
    const { width, height } = this.element.getBoundingClientRect();
    const scale = Math.min(
      (width - 2 * FIT_MARGIN) / Math.max(this.layout.width, 1),
      (height - 2 * FIT_MARGIN) / Math.max(this.layout.height, 1),
      1.5,
    );
    this.scale = Math.max(MIN_SCALE, scale);
    this.tx = (width - this.layout.width * this.scale) / 2;
    this.ty = Math.max(FIT_MARGIN, (height - this.layout.height * this.scale) / 2);
    this.#apply();
  }

  /** Pan so that layout point `at` shows at screen point `screen` (default: the centre). */
  place(at, screen = null) {
    const { width, height } = this.element.getBoundingClientRect();
    const [sx, sy] = screen ?? [width / 2, height / 2];
    this.tx = sx - at[0] * this.scale;
    this.ty = sy - at[1] * this.scale;
    this.#apply();
  }

  /** Where layout point `at` is on the screen now (relative to the drawing's corner). */
  screenOf(at) {
    return [at[0] * this.scale + this.tx, at[1] * this.scale + this.ty];
  }

  /** Zoom by `factor` around screen point `screen` (default: the centre). */
  zoom(factor, screen = null) {
    const { width, height } = this.element.getBoundingClientRect();
    const [sx, sy] = screen ?? [width / 2, height / 2];
    const scale = Math.min(MAX_SCALE, Math.max(MIN_SCALE, this.scale * factor));
    this.tx = sx - ((sx - this.tx) * scale) / this.scale;
    this.ty = sy - ((sy - this.ty) * scale) / this.scale;
    this.scale = scale;
    this.#apply();
  }

  #apply() {
    this.world.setAttribute('transform', `translate(${this.tx},${this.ty}) scale(${this.scale})`);
    this.element.dataset.scale = this.scale.toFixed(4);
  }

  #target(event) {
    return event.target.closest?.('[data-id]');
  }

  #listen() {
    let drag = null;
    this.element.addEventListener('pointerdown', (event) => {
      if (event.button !== 0) return;
      drag = { x: event.clientX, y: event.clientY, tx: this.tx, ty: this.ty, moved: false };
    });
    this.element.addEventListener('pointermove', (event) => {
      if (!drag) return;
      const dx = event.clientX - drag.x;
      const dy = event.clientY - drag.y;
      if (!drag.moved && Math.hypot(dx, dy) < 4) return;
      if (!drag.moved) this.element.setPointerCapture(event.pointerId);
      drag.moved = true;
      this.tx = drag.tx + dx;
      this.ty = drag.ty + dy;
      this.#apply();
    });
    const end = (event) => {
      const moved = drag?.moved;
      drag = null;
      if (moved || event.type !== 'pointerup') return;
      const target = this.#target(event);
      if (target) this.handlers.onSelect(target.dataset.id);
      else this.handlers.onBackground();
    };
    this.element.addEventListener('pointerup', end);
    this.element.addEventListener('pointercancel', end);
    this.element.addEventListener('dblclick', (event) => {
      const target = this.#target(event);
      if (target && target.dataset.kind !== 'node') this.handlers.onToggle(target.dataset.id);
    });
    this.element.addEventListener(
      'wheel',
      (event) => {
        event.preventDefault();
        const rect = this.element.getBoundingClientRect();
        const screen = [event.clientX - rect.left, event.clientY - rect.top];
        this.zoom(Math.exp(-event.deltaY * 0.0015), screen);
      },
      { passive: false },
    );
  }
}
