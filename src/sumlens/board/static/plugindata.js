// plugindata.js: the HTTP calls of the image, histogram and tensor pages (api.js holds those
// of the run list and the scalars; this module keeps its rules).
//
// Every URL comes from api.js' apiUrl, so it is relative to document.baseURI and works under
// --url-path-prefix; an error is an ApiError carrying the server's one-line `detail`, which
// the pages show as text (a bad tensor slice is explained where it was typed).

import { ApiError, apiUrl } from './api.js';

async function getJSON(path, params, signal) {
  // no-cache: revalidate every time, so a live run never shows a stale answer.
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
