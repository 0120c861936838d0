// graph_worker.js: a module Web Worker that lays DOT graphs out with Graphviz's dot engine,
// compiled to WebAssembly (the npm package @hpcc-js/wasm-graphviz, which `make` installs into
// static/vendor: see package.json at the repository root), and reads back where everything
// went. A layout of a large scope takes seconds; here it never blocks the page.
//
// Messages in: {id, dot}. Messages out: {id, layout} or {id, error} (one line). The library
// path is relative to this module, so the page works under any URL prefix. The answer is
// Graphviz's "json0" output in page coordinates (y down): boxes by id, cluster rectangles,
// and each edge's B-spline with its arrow tip.

const LIBRARY = '../vendor/node_modules/@hpcc-js/wasm-graphviz/dist/index.js';

let graphviz = null;

/** The Graphviz module, loaded once (rejects with a clear message when it is missing). */
function loadGraphviz() {
  if (!graphviz) {
    graphviz = import(LIBRARY)
      .then((module) => module.Graphviz.load())
      .catch((err) => {
        graphviz = null;
        throw new Error(`the graph layout library could not be loaded (${err.message})`);
      });
  }
  return graphviz;
}

function numbers(text) {
  return text.split(',').map(Number);
}

/** Graphviz's edge `pos` ("e,x,y x0,y0 x1,y1 ..."): the spline's points and its arrow tip. */
function edgeGeometry(pos) {
  const points = [];
  let tip = null;
  for (const part of pos.split(' ')) {
    if (part.startsWith('e,')) tip = numbers(part.slice(2));
    else if (!part.startsWith('s,')) points.push(numbers(part));
  }
  return { points, tip };
}

function readLayout(text) {
  const answer = JSON.parse(text);
  const [, y1, x2, y2] = numbers(answer.bb);
  const layout = {
    width: x2,
    height: Math.max(y1, y2),
    boxes: new Map(), // id -> {x, y, w, h} (centre and size, px)
    clusters: new Map(), // id -> {x, y, w, h} (top-left and size)
    edges: new Map(), // id -> {points, tip}
  };
  for (const object of answer.objects ?? []) {
    if (object.bb) {
      const [ax, ay, bx, by] = numbers(object.bb);
      layout.clusters.set(object.name.replace(/^cluster_/, ''), {
        x: Math.min(ax, bx),
        y: Math.min(ay, by),
        w: Math.abs(bx - ax),
        h: Math.abs(by - ay),
      });
    } else if (object.pos) {
      const [x, y] = numbers(object.pos);
      const w = Number(object.width) * 72;
      const h = Number(object.height) * 72;
      layout.boxes.set(object.name, { x, y, w, h });
    }
  }
  for (const edge of answer.edges ?? []) {
    if (edge.pos && edge.id) layout.edges.set(edge.id, edgeGeometry(edge.pos));
  }
  return layout;
}

self.addEventListener('message', async (event) => {
  const { id, dot } = event.data;
  try {
    const engine = await loadGraphviz();
    const layout = readLayout(engine.layout(dot, 'json0', 'dot', { yInvert: true }));
    self.postMessage({ id, layout });
  } catch (err) {
    self.postMessage({ id, error: err.message });
  }
});
