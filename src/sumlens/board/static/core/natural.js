// natural.js: the order of run names, numbers by their value.
//
// Run names carry numbers: `lr0.01_seed2`, `lr1e-4`, `step10`. A name is cut into text and
// numbers (a digit run with its decimal part and exponent: `0.01`, `1e-4`, `10`); names
// compare part by part, numbers by value (so lr0.0001 < lr0.001 < lr0.01 < lr0.1, and
// seed2 < seed10), text by the pages' collation, a number before text at the same place.
// Names equal that way (`lr0.10` and `lr0.1`, `a01` and `a1`) are ordered by their
// characters, so the order is total: the same names always sort the same way.
// Intl.Collator's numeric option reads digit runs only: it takes `0.01` for "0", ".", "1"
// and puts lr0.01 beside lr0.1.

const NUMBER = /\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/g;
const text = new Intl.Collator('en');

/** The parts `name` compares by: text strings and numbers, in order. */
export function naturalKey(name) {
  const parts = [];
  let at = 0;
  for (const found of name.matchAll(NUMBER)) {
    if (found.index > at) parts.push(name.slice(at, found.index));
    parts.push(Number(found[0]));
    at = found.index + found[0].length;
  }
  if (at < name.length) parts.push(name.slice(at));
  return parts;
}

function compareParts(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) {
    const x = a[i];
    const y = b[i];
    const xNumber = typeof x === 'number';
    if (xNumber !== (typeof y === 'number')) return xNumber ? -1 : 1;
    const order = xNumber ? (x < y ? -1 : x > y ? 1 : 0) : text.compare(x, y);
    if (order) return order;
  }
  return a.length - b.length;
}

/** A comparer of names in natural order (total) for one sort: each name is cut once. */
export function naturalComparer() {
  const keys = new Map();
  const keyOf = (name) => {
    let key = keys.get(name);
    if (!key) {
      key = naturalKey(name);
      keys.set(name, key);
    }
    return key;
  };
  return (a, b) => compareParts(keyOf(a), keyOf(b)) || (a < b ? -1 : a > b ? 1 : 0);
}

/** `items` sorted in place by the natural order of `nameOf(item)`. */
export function naturalSort(items, nameOf = (item) => item) {
  const compare = naturalComparer();
  return items.sort((x, y) => compare(nameOf(x), nameOf(y)));
}
