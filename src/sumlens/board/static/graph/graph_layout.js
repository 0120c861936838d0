// graph_layout.js: lays a DOT graph out off the page's main thread. Graphviz (WebAssembly)
// runs in a module Web Worker, graph_worker.js, so a scope of thousands of boxes that takes
// seconds to lay out never freezes scrolling, clicks or the view's "laying out" line.
//
// One layout runs at a time: asking for another one supersedes it (the worker is stopped,
// since Graphviz cannot be interrupted, and a fresh one starts), and the superseded request
// answers null, so a stale layout is never drawn. The last few layouts are kept by their DOT
// source: re-opening a scope is quick. Graphviz only ever sees identifiers we make (n12,
// s3, e40) and sizes: names from the files never enter the DOT source.

const CACHED_LAYOUTS = 6;

const layouts = new Map(); // DOT source -> layout (the last few)
let worker = null;
let pending = null; // the running request: {id, dot, promise, resolve, reject}
let requests = 0;

function finish(settle) {
  const request = pending;
  pending = null;
  if (request) settle(request);
}

/** Stop the worker (its next request starts a fresh one). */
function stopWorker() {
  worker?.terminate();
  worker = null;
}

function startWorker() {
  if (typeof Worker === 'undefined') {
    throw new Error('this browser cannot run Web Workers, which lay the graph out');
  }
  const started = new Worker(new URL('./graph_worker.js', import.meta.url), { type: 'module' });
  started.addEventListener('message', (event) => {
    const { id, layout, error } = event.data;
    if (started !== worker || pending?.id !== id) return; // superseded meanwhile
    finish((request) => {
      if (error) {
        request.reject(new Error(error));
        return;
      }
      layouts.set(request.dot, layout);
      if (layouts.size > CACHED_LAYOUTS) layouts.delete(layouts.keys().next().value);
      request.resolve(layout);
    });
  });
  started.addEventListener('error', (event) => {
    event.preventDefault();
    if (started !== worker) return;
    stopWorker();
    finish((request) => request.reject(new Error('the layout worker could not run ' +
      '(module Web Workers are not available, or graph_worker.js did not load)')));
  });
  return started;
}

/** Give up the running layout, if any: its request answers null. */
export function cancelLayout() {
  if (!pending) return;
  stopWorker();
  finish((request) => request.resolve(null));
}

/**
 * The layout of `dot`: {width, height, boxes, clusters, edges} (see graph_worker.js), from
 * the cache when the same source was laid out; null when a newer request superseded it.
 */
export function layOut(dot) {
  const cached = layouts.get(dot);
  if (cached) {
    cancelLayout();
    return Promise.resolve(cached);
  }
  if (pending?.dot === dot) return pending.promise;
  cancelLayout();
  let request;
  const promise = new Promise((resolve, reject) => {
    requests += 1;
    request = { id: requests, dot, resolve, reject };
  });
  request.promise = promise;
  try {
    worker ??= startWorker();
  } catch (err) {
    return Promise.reject(err);
  }
  pending = request;
  worker.postMessage({ id: request.id, dot });
  return promise;
}
