// histmath.js: the numbers behind the histogram pictures, computed in the page from the
// buckets the API sends.
//
// Buckets differ from step to step (and from one file format to the other), so a chart
// re-bins every step onto one common set of bins over the range of all of them, assuming
// values spread evenly inside a bucket (as TensorBoard does). Percentiles for the
// distribution view are read off the same cumulative counts, at TensorBoard's basis points
// (the normal distribution's 0, ±1.5σ, ±1σ, ±0.5σ and the median, rounded: 0, 7, 16, 31,
// 50, 69, 84, 93 and 100 %).

export const BASIS_POINTS = [0, 668, 1587, 3085, 5000, 6915, 8413, 9332, 10000];

/** The finite [min, max] of one histogram: its statistics, else its occupied buckets. */
export function extent(h) {
  let lo = Number.isFinite(h.min) ? h.min : Infinity;
  let hi = Number.isFinite(h.max) ? h.max : -Infinity;
  if (lo > hi) {
    for (let i = 0; i < h.counts.length; i += 1) {
      if (!(h.counts[i] > 0)) continue;
      lo = Math.min(lo, h.left[i]);
      hi = Math.max(hi, h.left[i] + h.width[i]);
    }
  }
  return lo <= hi ? [lo, hi] : null;
}

/** The [lo, hi] covering every histogram given (never empty: a point gets a unit width). */
export function commonRange(histograms) {
  let lo = Infinity;
  let hi = -Infinity;
  for (const h of histograms) {
    const e = extent(h);
    if (!e) continue;
    lo = Math.min(lo, e[0]);
    hi = Math.max(hi, e[1]);
  }
  if (lo > hi) return [0, 1];
  if (lo === hi) {
    const pad = lo === 0 ? 0.5 : Math.abs(lo) * 0.05;
    return [lo - pad, hi + pad];
  }
  return [lo, hi];
}

/**
 * The counts of `h` on `n` equal bins over [lo, hi]. A bucket is first clipped to the
 * histogram's [min, max] (TensorBoard's buckets reach past the data), then its count is
 * shared among the bins it overlaps in proportion to the overlap.
 */
export function rebin(h, lo, hi, n) {
  const out = new Float64Array(n);
  const span = hi - lo;
  const e = extent(h) ?? [lo, hi];
  const binOf = (x) => Math.min(n - 1, Math.max(0, Math.floor(((x - lo) / span) * n)));
  for (let i = 0; i < h.counts.length; i += 1) {
    const count = h.counts[i];
    if (!(count > 0)) continue;
    const a = Math.max(h.left[i], e[0]);
    const b = Math.min(h.left[i] + h.width[i], e[1]);
    if (!(b > a)) {
      out[binOf(Math.min(Math.max(h.left[i], e[0]), e[1]))] += count;
      continue;
    }
    const first = binOf(a);
    const last = binOf(b);
    if (first === last) {
      out[first] += count;
      continue;
    }
    for (let k = first; k <= last; k += 1) {
      const left = lo + (span * k) / n;
      const right = lo + (span * (k + 1)) / n;
      const overlap = Math.min(b, right) - Math.max(a, left);
      if (overlap > 0) out[k] += (count * overlap) / (b - a);
    }
  }
  return out;
}

/** The centres of `n` equal bins over [lo, hi]. */
export function binCentres(lo, hi, n) {
  return Array.from({ length: n }, (_, k) => lo + ((hi - lo) * (k + 0.5)) / n);
}

/**
 * The values at BASIS_POINTS of one histogram (null when it counts nothing), reading the
 * cumulative counts with values spread evenly in each bucket (clipped to [min, max], as
 * rebin does); 0 % and 100 % are its minimum and maximum.
 */
export function percentiles(h) {
  const e = extent(h);
  let total = 0;
  for (const count of h.counts) if (count > 0) total += count;
  if (!e || !(total > 0)) return null;
  const [lo, hi] = e;
  return BASIS_POINTS.map((bp) => {
    if (bp === 0) return lo;
    if (bp === 10000) return hi;
    const target = (total * bp) / 10000;
    let below = 0;
    for (let i = 0; i < h.counts.length; i += 1) {
      const count = h.counts[i];
      if (!(count > 0)) continue;
      if (below + count >= target) {
        const a = Math.min(Math.max(h.left[i], lo), hi); // the bucket clipped to [min, max]
        const b = Math.min(Math.max(h.left[i] + h.width[i], lo), hi);
        return a + ((b - a) * (target - below)) / count;
      }
      below += count;
    }
    return hi;
  });
}

/** At most `max` indices of 0..n-1, evenly spread, the first and the last always among them. */
export function pickEvenly(n, max) {
  if (n <= max) return Array.from({ length: n }, (_, i) => i);
  const picked = new Set();
  for (let k = 0; k < max; k += 1) picked.add(Math.round((k * (n - 1)) / (max - 1)));
  return [...picked].sort((a, b) => a - b);
}
