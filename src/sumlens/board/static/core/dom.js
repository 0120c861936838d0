// dom.js: small helpers for building the page safely and formatting what it shows.
//
// Run names, tags and error texts come from the files on disk, so they are untrusted: they
// enter the DOM only as text (`el` uses text nodes and setAttribute, never innerHTML), and
// `plotlyText` escapes strings handed to plotly, which reads its own HTML-like markup
// (<b>, <a href>, <br>) in trace names and labels.

/**
 * A new element. `props`: `class`, `text` (textContent), `dataset`, `on<event>` listeners,
 * DOM properties given non-string values (checked, hidden ...), other attributes as strings.
 * Children may be nodes or strings (strings become text nodes); null children are skipped.
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === null || value === undefined) continue;
    if (key === 'class') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (typeof value !== 'string') node[key] = value;
    else node.setAttribute(key, value);
  }
  node.append(...children.filter((child) => child !== null && child !== undefined));
  return node;
}

/** `text` with plotly's markup characters escaped, so plotly shows it literally. */
export function plotlyText(text) {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

const pad = (n) => String(n).padStart(2, '0');

/** Seconds since the epoch as local `YYYY-MM-DD HH:MM:SS` ('' for null). */
export function formatTime(seconds) {
  if (seconds === null || seconds === undefined) return '';
  const d = new Date(seconds * 1000);
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
  );
}

const numberFormat = new Intl.NumberFormat('en-US');

/** The order of names the pages show (runs, tags): digits compare as numbers, "r2" < "r10". */
export const collator = new Intl.Collator('en', { numeric: true });

/** An integer with thousands separators. */
export function formatCount(n) {
  return numberFormat.format(n);
}

/** Bytes in binary units: "512 B", "1.5 KiB", "3.0 MiB". */
export function formatBytes(bytes) {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit ? `${value.toFixed(1)} ${units[unit]}` : `${formatCount(bytes)} B`;
}

/** "1 tag", "3 tags". */
export function plural(n, word) {
  return `${formatCount(n)} ${word}${n === 1 ? '' : 's'}`;
}

/** A view's toolbar: the row of controls above it. */
export function toolbar(...children) {
  return el('div', { class: 'toolbar' }, ...children);
}

/** A case-insensitive RegExp of `text`, or the error message when it is not valid. */
export function compileRegex(text) {
  try {
    return { re: new RegExp(text, 'i') };
  } catch (err) {
    return { error: err.message };
  }
}

/**
 * The rows a virtualised list keeps as elements: the index of the first and how many, for
 * a list scrolled `top` px into rows of `rowHeight` px, `height` px of it in view, plus
 * `overscan` rows either side.
 */
export function rowWindow(top, height, rowHeight, overscan) {
  const first = Math.max(0, Math.floor(top / rowHeight) - overscan);
  return { first, size: Math.ceil(height / rowHeight) + 2 * overscan };
}

/** Grow `pool` with `make()` or shrink it (removing elements) to `size` row elements. */
export function fitPool(pool, size, make) {
  while (pool.length < size) pool.push(make());
  while (pool.length > size) pool.pop().remove();
}

/** `fn` coalesced into the next animation frame: calling the result often runs `fn` once. */
export function perFrame(fn) {
  let frame = 0;
  return () => {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      fn();
    });
  };
}
