// tensortable.js: a slice of a tensor as a table, shaded as MindInsight shades it, and the
// text of its shape, statistics and default slice.
//
// A 2-D slice is a grid (row and column indices in the margins), a 1-D slice one row, a
// 0-D one a single number. Each cell is tinted by its value: orange below zero, teal above,
// stronger the further from zero (relative to the largest magnitude shown). Only the first
// MAX_ROWS x MAX_COLS cells become elements, so a 100,000-value slice stays light; the note
// says what was left out. Values come as numbers, or null for NaN and infinities (the API
// sends those as null).

import { el, formatCount } from '../core/dom.js';

export const MAX_ROWS = 100;
export const MAX_COLS = 50;
export const MAX_VALUES = 100_000; // the most values the server sends for one slice

/**
 * MindInsight's default slice of a tensor of `shape`: 0 for every leading dimension, the
 * last two whole ("[0,0,:,:]"); a tensor of two dimensions or fewer is shown whole. Where
 * the last two hold more than the server sends, the first rows (or columns) that fit:
 * "[0,0:200,:]". null for a 0-D tensor (nothing to slice).
 */
export function defaultSlice(shape) {
  if (!shape.length) return null;
  const entries = shape.map((_, i) => (i < shape.length - 2 ? '0' : ':'));
  const cols = shape[shape.length - 1];
  const rows = shape.length > 1 ? shape[shape.length - 2] : 1;
  if (rows * cols > MAX_VALUES) {
    if (cols > MAX_VALUES) {
      if (shape.length > 1) entries[shape.length - 2] = '0';
      entries[shape.length - 1] = `0:${MAX_VALUES}`;
    } else {
      entries[shape.length - 2] = `0:${Math.floor(MAX_VALUES / cols)}`;
    }
  }
  return `[${entries.join(',')}]`;
}

/** "[3,4,5]". */
export function shapeText(shape) {
  return `[${shape.join(',')}]`;
}

/** One value as a cell shows it: `digits` decimals (exponent for very large or small ones). */
export function formatValue(value, digits, dtype = 'float32') {
  if (value === null || value === undefined) return 'NaN/inf';
  if (typeof value === 'boolean') return String(value);
  if (typeof value !== 'number') return String(value);
  if (/^u?int/.test(dtype)) return String(value);
  const size = Math.abs(value);
  if (size !== 0 && (size >= 1e9 || size < 10 ** -digits)) return value.toExponential(digits);
  return value.toFixed(digits);
}

function shadeOf(value, scale) {
  if (typeof value === 'boolean') value = Number(value);
  if (typeof value !== 'number' || !scale) return null;
  const strength = Math.min(1, Math.abs(value) / scale) * 0.85;
  if (strength < 0.02) return null;
  return value < 0
    ? `rgba(232,113,10,${strength.toFixed(3)})`
    : `rgba(0,160,165,${strength.toFixed(3)})`;
}

function largest(rows) {
  let scale = 0;
  for (const row of rows) {
    for (const v of row) {
      const n = typeof v === 'boolean' ? Number(v) : v;
      if (typeof n === 'number' && Number.isFinite(n)) scale = Math.max(scale, Math.abs(n));
    }
  }
  return scale;
}

function cell(value, scale, digits, dtype) {
  const text = formatValue(value, digits, dtype);
  const background = shadeOf(value, scale);
  return el('td', {
    class: value === null ? 'value nonfinite' : 'value',
    title: value === null ? 'NaN or an infinity' : String(value),
    style: background ? `background:${background}` : null,
    text,
  });
}

/**
 * The table of a /tensor answer's `values` (of shape `slice_shape`) and a note of what it
 * leaves out; `digits` decimals. A slice of more than two dimensions is not drawn: the
 * note says to fix more of them.
 */
export function tensorTable(body, digits, { maxRows = MAX_ROWS, maxCols = MAX_COLS } = {}) {
  const shape = body.slice_shape;
  const { values, dtype } = body;
  if (!/^(u?int|float|bool|complex)/.test(dtype) && !Array.isArray(values?.[0])) {
    // strings and other kinds come flat
    const shown = values.slice(0, maxCols);
    return {
      table: el('div', { class: 'tensor-text' }, shown.join(', ')),
      note: shown.length < values.length ? `first ${shown.length} of ${values.length} values` : '',
    };
  }
  if (shape.length === 0) {
    return {
      table: el(
        'div',
        { class: 'tensor-scalar', title: String(values) },
        formatValue(values, digits, dtype),
      ),
      note: '',
    };
  }
  if (shape.length > 2) {
    return {
      table: null,
      note:
        `This slice has ${shape.length} dimensions ${shapeText(shape)}: a table shows two. ` +
        'Fix all but the last two, e.g. [0,:,:].',
    };
  }
  const rows = shape.length === 1 ? [values] : values;
  const rowCount = Math.min(rows.length, maxRows);
  const colCount = Math.min(shape[shape.length - 1], maxCols);
  const kept = rows.slice(0, rowCount).map((row) => row.slice(0, colCount));
  const scale = largest(kept);
  const head = el(
    'tr',
    {},
    el('th', { class: 'corner' }),
    ...Array.from({ length: colCount }, (_, j) => el('th', { scope: 'col', text: String(j) })),
  );
  const rowElements = kept.map((row, i) =>
    el(
      'tr',
      {},
      el('th', { scope: 'row', text: shape.length === 1 ? '' : String(i) }),
      ...row.map((v) => cell(v, scale, digits, dtype)),
    ),
  );
  const parts = [];
  if (rowCount < rows.length) parts.push(`first ${rowCount} of ${formatCount(rows.length)} rows`);
  if (colCount < shape[shape.length - 1]) {
    parts.push(`first ${colCount} of ${formatCount(shape[shape.length - 1])} columns`);
  }
  return {
    table: el(
      'table',
      { class: 'tensor-table' },
      el('thead', {}, head),
      el('tbody', {}, ...rowElements),
    ),
    note: parts.length ? `Showing the ${parts.join(' and ')}.` : '',
  };
}

function number(value) {
  if (value === null || value === undefined) return '—';
  return Number.isInteger(value) ? formatCount(value) : value.toPrecision(6).replace(/\.?0+$/, '');
}

/** Statistics ({count, min, max, mean, nan, pos_inf, neg_inf}) as [label, text] pairs. */
export function statisticsRows(stats) {
  const rows = [['count', formatCount(stats.count)]];
  if ('min' in stats) {
    rows.push(['min', number(stats.min)], ['max', number(stats.max)], ['mean', number(stats.mean)]);
    const odd = [];
    if (stats.nan) odd.push(`${formatCount(stats.nan)} NaN`);
    if (stats.pos_inf) odd.push(`${formatCount(stats.pos_inf)} +inf`);
    if (stats.neg_inf) odd.push(`${formatCount(stats.neg_inf)} −inf`);
    if (odd.length) rows.push(['not finite', odd.join(', ')]);
  }
  return rows;
}

/** A <dl> of statistics rows. */
export function statisticsList(stats, className = 'stats') {
  return el(
    'dl',
    { class: className },
    ...statisticsRows(stats).flatMap(([label, text]) => [
      el('dt', { text: label }),
      el('dd', { text, dataset: { stat: label } }),
    ]),
  );
}
