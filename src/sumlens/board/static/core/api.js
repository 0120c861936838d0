// api.js: how the pages talk HTTP to the board server: the run list and the scalars, and the
// kept samples, images, histograms and tensors of the plugin pages; the graph, lineage and
// landscape views call getJSON for their own routes, and the writes (annotations, colours,
// saved views, a run's state) go through sendJSON. No other module calls fetch
// (eslint.config.mjs fails one that does).
//
// Every URL is built relative to document.baseURI (the page's own directory), never from
// "/api": behind a reverse proxy with --url-path-prefix /p the page lives at /p/ and the
// API at /p/api/v1/, and both resolve the same way. An error is an ApiError carrying the
// server's one-line `detail`, which the pages show as text (a bad tensor slice is
// explained where it was typed).
//
// A 401 or 403 is also told to the listeners of onRefused (core/session.js): a 401 means
// the sign-in has lapsed, a 403 from a write that the session the page holds is out of date.

const API_BASE = new URL('api/v1/', document.baseURI);
const refusedListeners = new Set();

/**
 * Call `listener(status, write)` whenever the server answers 401 or 403 (`write`: the
 * request was not a GET).
 */
export function onRefused(listener) {
  refusedListeners.add(listener);
}

function tellRefused(status, write) {
  if (status !== 401 && status !== 403) return;
  for (const listener of refusedListeners) listener(status, write);
}

/** An HTTP error from the API, carrying the server's one-line `detail`. */
export class ApiError extends Error {
  constructor(status, detail) {
    super(`HTTP ${status}: ${detail}`);
    this.name = 'ApiError';
    this.status = status;
    this.detail = detail;
  }
}

/** The absolute URL of `path` under /api/v1 with `params`, a list of [name, value] pairs. */
export function apiUrl(path, params = []) {
  const url = new URL(path, API_BASE);
  // one query string at the end: each url.searchParams.append re-writes the whole query,
  // which is quadratic for a link naming thousands of tags
  const query = new URLSearchParams();
  for (const [name, value] of params) query.append(name, String(value));
  url.search = query.toString();
  return url;
}

/**
 * The AbortController of a new load by `owner`, which keeps its latest in `owner.controller`:
 * the load before it is aborted, so a slow answer never overwrites a newer one.
 */
export function newController(owner) {
  owner.controller?.abort();
  owner.controller = new AbortController();
  return owner.controller;
}

/** The ApiError of a `response` that is not ok, with the server's `detail` when it sent one. */
async function apiError(response) {
  let detail = response.statusText;
  try {
    const body = await response.json();
    detail = typeof body.detail === 'string' ? body.detail : JSON.stringify(body.detail);
  } catch {
    // not JSON: keep the status text
  }
  return new ApiError(response.status, detail);
}

/** GET `path` under /api/v1 with `params` ([name, value] pairs); an ApiError if not ok. */
async function fetchOk(path, params, signal) {
  // no-cache: revalidate every time, so polling never shows a stale run list, nor a live
  // run a stale answer.
  const response = await fetch(apiUrl(path, params), { signal, cache: 'no-cache' });
  if (!response.ok) {
    tellRefused(response.status, false);
    throw await apiError(response);
  }
  return response;
}

/**
 * Send `body` as JSON with `method` (PUT, POST, DELETE) to `path` under /api/v1 with
 * `params` (no body when `body` is undefined); the answer's JSON (null when it has none), or
 * an ApiError carrying the server's `detail` if not ok.
 */
export async function sendJSON(method, path, params, body) {
  const init = { method };
  if (body !== undefined) {
    init.headers = { 'Content-Type': 'application/json' };
    init.body = JSON.stringify(body);
  }
  const response = await fetch(apiUrl(path, params), init);
  if (!response.ok) {
    tellRefused(response.status, true);
    throw await apiError(response);
  }
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

/** GET `path` under /api/v1 with `params` ([name, value] pairs) as JSON; an ApiError if not ok. */
export async function getJSON(path, params, signal) {
  return (await fetchOk(path, params, signal)).json();
}

/** GET `path` under /api/v1 with `params` as a Blob (an image); an ApiError if not ok. */
export async function getBlob(path, params, signal) {
  return (await fetchOk(path, params, signal)).blob();
}

export function fetchRuns(signal) {
  return getJSON('runs', [], signal);
}

function selection(runs, tags) {
  return [...runs.map((run) => ['run', run]), ...tags.map((tag) => ['tag', tag])];
}

/**
 * GET /api/v1/scalars: the series of `runs` x `tags` along `axis` (step, relative, wall or
 * tag:<name>), smoothed on the server with weight `smoothing`, at most `points` per series,
 * within `range` ([start, end] in the axis' units) when given; with `envelope`, each
 * downsampling bucket's min and max too.
 */
export function fetchScalars({ runs, tags, axis, smoothing, points, range, envelope }, signal) {
  const params = [...selection(runs, tags), ['axis', axis], ['smoothing', smoothing]];
  params.push(['points', points]);
  if (range) params.push(['start', range[0]], ['end', range[1]]);
  if (envelope) params.push(['envelope', 1]);
  return getJSON('scalars', params, signal);
}

/**
 * The link that downloads every point of `runs` x `tags` as `format` (csv or json); along
 * a tag `axis` (tag:<name>) each row carries its x.
 */
export function downloadUrl(runs, tags, format, axis = 'step') {
  const params = [...selection(runs, tags), ['format', format]];
  if (axis !== 'step') params.push(['axis', axis]);
  return apiUrl('scalars/download', params).href;
}

/** [['rank', r]] for a rank, [] for files without one (TensorBoard's). */
function rankParam(rank) {
  return rank === null || rank === undefined ? [] : [['rank', rank]];
}

/**
 * GET /api/v1/samples: the kept steps (and wall times) of one series of `plugin` (image,
 * histogram, tensor ...), one entry per rank.
 */
export function fetchSamples(run, plugin, tag, signal) {
  return getJSON('samples', [['run', run], ['plugin', plugin], ['tag', tag]], signal);
}

/** The URL of one stored image (its bytes as written: usable as an <img> src). */
export function imageUrl(run, tag, step, rank) {
  return apiUrl('image', [['run', run], ['tag', tag], ['step', step], ...rankParam(rank)]).href;
}

/** GET /api/v1/histograms: every kept histogram of `tag` in `run`, one series per rank. */
export function fetchHistograms(run, tag, signal) {
  return getJSON('histograms', [['run', run], ['tag', tag]], signal);
}

/**
 * GET /api/v1/tensor: the tensor `tag` at `step` (newest when null), or its `slice`
 * (MindInsight's syntax, "[0,:,:]"; whole when null), with statistics and, when `bins` > 0,
 * a value histogram of the slice.
 */
export function fetchTensor(
  { run, tag, step = null, rank = null, slice = null, bins = 0 },
  signal,
) {
  const params = [['run', run], ['tag', tag], ...rankParam(rank)];
  if (step !== null && step !== undefined) params.push(['step', step]);
  if (slice !== null && slice !== undefined) params.push(['slice', slice]);
  if (bins) params.push(['bins', bins]);
  return getJSON('tensor', params, signal);
}

const SHAPE_PROBE = '[0:0]';

/**
 * The shape of the tensor `tag` at `step`, from an answer without values: the empty slice
 * "[0:0]" ([] for a 0-D tensor, which refuses any slice).
 */
export async function probeShape({ run, tag, step, rank }, signal) {
  try {
    const body = await fetchTensor({ run, tag, step, rank, slice: SHAPE_PROBE }, signal);
    return body.shape;
  } catch (err) {
    if (err instanceof ApiError && err.status === 422) return []; // a 0-D tensor
    throw err;
  }
}
