// api.js: the only module that talks HTTP to the board server.
//
// Every URL is built relative to document.baseURI (the page's own directory), never from
// "/api": behind a reverse proxy with --url-path-prefix /p the page lives at /p/ and the
// API at /p/api/v1/, and both resolve the same way.

const API_BASE = new URL('api/v1/', document.baseURI);

/** An HTTP error from the API, carrying the server's one-line `detail`. */
export class ApiError extends Error {
  constructor(status, detail) {
    super(`HTTP ${status}: ${detail}`);
    this.name = 'ApiError';
    this.status = status;
  }
}

/** The absolute URL of `path` under /api/v1 with `params`, a list of [name, value] pairs. */
export function apiUrl(path, params = []) {
  const url = new URL(path, API_BASE);
  for (const [name, value] of params) url.searchParams.append(name, String(value));
  return url;
}

async function getJSON(path, params, signal) {
  // no-cache: revalidate every time, so polling never shows a stale run list.
  const response = await fetch(apiUrl(path, params), { signal, cache: 'no-cache' });
  if (!response.ok) {
    let detail = response.statusText;
    try {
      const body = await response.json();
      detail = typeof body.detail === 'string' ? body.detail : JSON.stringify(body.detail);
    } catch {
      // not JSON: keep the status text
    }
    throw new ApiError(response.status, detail);
  }
  return response.json();
}

/** GET /api/v1/runs: every run with its tags, status and damage, plus the list's version. */
export function fetchRuns(signal) {
  return getJSON('runs', [], signal);
}

function selection(runs, tags) {
  return [...runs.map((run) => ['run', run]), ...tags.map((tag) => ['tag', tag])];
}

/**
 * GET /api/v1/scalars: the series of `runs` x `tags` along `axis`, smoothed on the server
 * with weight `smoothing`, at most `points` per series, within `range` ([start, end] in the
 * axis' units) when given.
 */
export function fetchScalars({ runs, tags, axis, smoothing, points, range }, signal) {
  const params = [...selection(runs, tags), ['axis', axis], ['smoothing', smoothing]];
  params.push(['points', points]);
  if (range) params.push(['start', range[0]], ['end', range[1]]);
  return getJSON('scalars', params, signal);
}

/** The link that downloads every point of `runs` x `tags` as `format` (csv or json). */
export function downloadUrl(runs, tags, format) {
  return apiUrl('scalars/download', [...selection(runs, tags), ['format', format]]).href;
}
