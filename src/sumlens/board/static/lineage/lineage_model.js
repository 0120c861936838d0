// lineage_model.js: the model lineage table's data and what is done to it: typed columns,
// filters, sorting, the view's URL settings and the CSV export.
//
// /api/v1/lineage answers column by column; a number column becomes a Float64Array (NaN
// where a run has no value) and a text column keeps its strings plus each row's rank among
// the column's distinct values, so sorting and filtering 10,000 runs compares numbers and
// touches no DOM; text sorts in natural order (core/natural.js: lr0.001 < lr0.01 < lr0.1).
// A column the server folded from several fields of one quantity (board/query/lineage_fold.py:
// `lr` from TensorBoard's hparams, custom lineage and MindSpore's train lineage) keeps its
// fields and which of them held each run's value, for the page to say; the fields' ids
// find the column too (a link made before the fold still shows it). The view's settings
// (state.lineage, one URL parameter) are checked here: anything malformed is dropped,
// never trusted. The scatter's default axes are the first metric against the
// hyper-parameter that varies most (scatterDefaults).

import { csvLines, numberField, textField } from '../core/csv.js';
import { naturalSort } from '../core/natural.js';

export const RUN_COLUMN = 'run'; // the pseudo-column of the run ids
const MAX_HIDDEN = 200; // hidden runs kept in the URL
const MAX_TEXT = 200; // characters of a text filter
const KIND_NAMES = {
  hyper: 'hyper-parameter',
  metric: 'metric',
  dataset: 'dataset',
  model: 'model',
  custom: 'custom',
  run: 'run',
};

/** A column's kind as the page names it ("hyper-parameter", "metric" ...). */
export function kindName(kind) {
  return KIND_NAMES[kind] ?? kind;
}

function textColumn(id, label, kind, values) {
  const distinct = naturalSort([...new Set(values.filter((v) => v !== null))]);
  const rankOf = new Map(distinct.map((value, i) => [value, i]));
  const rank = new Int32Array(values.length);
  values.forEach((value, i) => {
    rank[i] = value === null ? -1 : rankOf.get(value);
  });
  return { id, label, kind, type: 'text', values, distinct, rank };
}

function numberColumn(id, label, kind, raw) {
  const values = new Float64Array(raw.length);
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < raw.length; i += 1) {
    const v = typeof raw[i] === 'number' ? raw[i] : NaN;
    values[i] = v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { id, label, kind, type: 'number', values, min, max };
}

/** The fields a column was folded from ([{id, label, from}]) and each row's mask of
 * those holding its value, when the answer has them well formed (else none). */
function foldedFrom(column, n) {
  const { sources, held } = column;
  if (!Array.isArray(sources) || !Array.isArray(held) || held.length !== n) return {};
  const fields = sources
    .filter((s) => s && typeof s === 'object')
    .map((s) => ({ id: String(s.id), label: String(s.label), from: String(s.from) }));
  return fields.length > 1 ? { sources: fields, held: Int32Array.from(held, Number) } : {};
}

/** The table of a /lineage answer: `runs`, `columns` (the run column first) and `byId`
 * (each column by its id and by the ids of the fields folded into it). */
export function buildTable(body) {
  const n = body.runs.length;
  const columns = [textColumn(RUN_COLUMN, 'run', 'run', body.runs.map(String))];
  for (const column of body.columns) {
    if (!Array.isArray(column.values) || column.values.length !== n) continue;
    const { id, label, kind } = column;
    const built =
      column.type === 'number'
        ? numberColumn(String(id), String(label), kind, column.values)
        : textColumn(
            String(id),
            String(label),
            kind,
            column.values.map((v) => (v === null ? null : String(v))),
          );
    columns.push(Object.assign(built, foldedFrom(column, n)));
  }
  const byId = new Map(columns.map((column) => [column.id, column]));
  for (const column of columns) {
    for (const source of column.sources ?? []) {
      if (!byId.has(source.id)) byId.set(source.id, column);
    }
  }
  return {
    key: body.key,
    runs: body.runs.map(String),
    graph: body.graph ?? [],
    problems: new Map((body.problems ?? []).map(([run, text]) => [run, text])),
    columns,
    byId,
    rowOf: new Map(body.runs.map((run, i) => [String(run), i])),
  };
}

/** Where a folded column's value of `row` came from ('' for a column of one field):
 * "lr (TensorBoard hparams), learning rate (train lineage)". */
export function sourceText(column, row) {
  if (!column.sources) return '';
  const mask = column.held[row];
  return column.sources
    .filter((_, i) => mask & (1 << i))
    .map((source) => `${source.label} (${source.from})`)
    .join(', ');
}

/** The text a cell shows ('' for none). */
export function cellText(column, row) {
  if (column.type === 'number') {
    const v = column.values[row];
    if (Number.isNaN(v)) return '';
    return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6)));
  }
  return column.values[row] ?? '';
}

// ---------------------------------------------------------------- settings (the URL)

function finiteOrNull(value) {
  return value === null || Number.isFinite(value) ? value : undefined;
}

/** One column's filter from the URL, or undefined when malformed. */
function parseFilter(value) {
  if (typeof value === 'string') return value.slice(0, MAX_TEXT) || undefined;
  if (!Array.isArray(value)) return undefined;
  if (value.length === 2 && value.every((v) => finiteOrNull(v) !== undefined)) {
    if (value[0] === null && value[1] === null) return undefined;
    if (value[0] !== null && value[1] !== null && value[0] > value[1]) return undefined;
    return ['range', value[0], value[1]];
  }
  return undefined;
}

function strings(value, limit) {
  return Array.isArray(value)
    ? [...new Set(value.filter((v) => typeof v === 'string'))].slice(0, limit)
    : [];
}

/**
 * The view's settings from state.lineage: `tab` ('model' or 'data'), `cols` (column ids
 * in order; null: the default), `sort` ([id, 1 or -1] or null), `filters` (id -> a range
 * {lo, hi}, a set of values {in} or a substring {text}), `hide` (run ids), `x`, `y`, `c`
 * (the scatter's axes and the lines' colour column, ids or null), `logx` (true, false, or
 * null: log when the x column spans decades, see logScale).
 */
export function parseSettings(raw) {
  const s = raw && typeof raw === 'object' && !Array.isArray(raw) ? raw : {};
  const filters = {};
  if (s.f && typeof s.f === 'object' && !Array.isArray(s.f)) {
    for (const [id, value] of Object.entries(s.f)) {
      if (Array.isArray(value) && value[0] === 'in') {
        const picked = strings(value.slice(1), 100);
        if (picked.length) filters[id] = { in: picked };
        continue;
      }
      const parsed = parseFilter(value);
      if (typeof parsed === 'string') filters[id] = { text: parsed };
      else if (parsed) filters[id] = { lo: parsed[1], hi: parsed[2] };
    }
  }
  const sortOk =
    Array.isArray(s.sort) && typeof s.sort[0] === 'string' && [1, -1].includes(s.sort[1]);
  const pick = (value) => (typeof value === 'string' ? value : null);
  return {
    tab: s.tab === 'data' ? 'data' : 'model',
    cols: Array.isArray(s.cols) ? strings(s.cols, 500) : null,
    sort: sortOk ? [s.sort[0], s.sort[1]] : null,
    filters,
    hide: strings(s.hide, MAX_HIDDEN),
    x: pick(s.x),
    y: pick(s.y),
    c: pick(s.c),
    logx: s.logx === 1 ? true : s.logx === 0 ? false : null,
  };
}

/** The URL form of settings (the inverse of parseSettings; defaults left out). */
export function formatSettings(settings) {
  const out = {};
  if (settings.tab === 'data') out.tab = 'data';
  if (settings.cols) out.cols = settings.cols;
  if (settings.sort) out.sort = settings.sort;
  const f = {};
  for (const [id, filter] of Object.entries(settings.filters)) {
    if (filter.in) f[id] = ['in', ...filter.in];
    else if (filter.text !== undefined) f[id] = filter.text;
    else f[id] = [filter.lo, filter.hi];
  }
  if (Object.keys(f).length) out.f = f;
  if (settings.hide.length) out.hide = settings.hide.slice(0, MAX_HIDDEN);
  for (const key of ['x', 'y', 'c']) if (settings[key]) out[key] = settings[key];
  if (settings.logx !== null && settings.logx !== undefined) out.logx = settings.logx ? 1 : 0;
  return out;
}

// ---------------------------------------------------------------- the scatter's defaults

const LOG_DECADES = 2; // a positive x spanning this many decades is drawn on a log axis

/** How much `column` (a number column) varies: its distinct values, then its spread (in
 * decades when every value is positive, else relative to its largest magnitude). */
function variation(column) {
  const seen = new Set();
  for (const v of column.values) if (!Number.isNaN(v)) seen.add(v);
  const { min, max } = column;
  let spread = 0;
  if (min > 0) spread = Math.log10(max / min);
  else if (max > min) spread = (max - min) / Math.max(Math.abs(min), Math.abs(max));
  return [seen.size, spread];
}

/** Of `columns`, the one that varies most (most distinct values, then the widest spread;
 * the first on a tie), or null when none holds two values. */
function mostVaried(columns) {
  let found = null;
  let best = [1, 0];
  for (const column of columns) {
    const [distinct, spread] = variation(column);
    if (distinct > best[0] || (distinct === best[0] && spread > best[1])) {
      found = column;
      best = [distinct, spread];
    }
  }
  return found;
}

const SEED = /seed/i; // a random seed varies in every sweep, but is not what it sweeps

/**
 * The scatter's axes when none is picked, of `numbers` (number columns with a value): y
 * the first metric (a result other than the training loss first), x the hyper-parameter
 * that varies most (a seed only when nothing else varies), else the first
 * hyper-parameter or other column. Ids, or null.
 */
export function scatterDefaults(numbers) {
  const metrics = numbers.filter((c) => c.kind === 'metric');
  const y = metrics.find((c) => c.id !== 'loss') ?? metrics[0] ?? numbers[0] ?? null;
  const hyper = numbers.filter((c) => c.kind === 'hyper');
  const x =
    mostVaried(hyper.filter((c) => !SEED.test(c.label))) ??
    mostVaried(hyper) ??
    hyper[0] ??
    numbers.find((c) => c !== y) ??
    y;
  return { x: x?.id ?? null, y: y?.id ?? null };
}

/** Whether an x axis of `column` is best drawn on a log scale: positive values spanning
 * at least LOG_DECADES decades (a learning rate sweep). */
export function logScale(column) {
  return Boolean(column) && column.min > 0 && Math.log10(column.max / column.min) >= LOG_DECADES;
}

// ---------------------------------------------------------------- filter and sort

/** The columns shown, in order: the settings' (known ids only) or every column. */
export function shownColumns(table, settings) {
  if (!settings.cols) return table.columns;
  const picked = [...new Set(settings.cols.map((id) => table.byId.get(id)).filter(Boolean))];
  const run = table.byId.get(RUN_COLUMN);
  return picked.includes(run) ? picked : [run, ...picked];
}

/** A test of one row against one column's filter (true when it passes). */
export function rowTest(column, filter) {
  if (column.type === 'number') {
    const values = column.values;
    const lo = filter.lo ?? -Infinity;
    const hi = filter.hi ?? Infinity;
    if (filter.lo === undefined && filter.hi === undefined) return () => true;
    return (row) => values[row] >= lo && values[row] <= hi; // NaN (none) fails
  }
  const values = column.values;
  if (filter.in) {
    const wanted = new Set(filter.in);
    return (row) => values[row] !== null && wanted.has(values[row]);
  }
  const needle = (filter.text ?? '').toLowerCase();
  return (row) => values[row] !== null && values[row].toLowerCase().includes(needle);
}

/** The rows of `order` (an Int32Array) passing `filters` and not hidden. */
export function filterRows(table, order, filters, hidden) {
  const tests = Object.entries(filters)
    .map(([id, filter]) => table.byId.get(id) && rowTest(table.byId.get(id), filter))
    .filter(Boolean);
  const hiddenRows = new Set(
    [...hidden].map((run) => table.rowOf.get(run)).filter((row) => row !== undefined),
  );
  const out = new Int32Array(order.length);
  let n = 0;
  outer: for (let i = 0; i < order.length; i += 1) {
    const row = order[i];
    if (hiddenRows.has(row)) continue;
    for (const test of tests) if (!test(row)) continue outer;
    out[n] = row;
    n += 1;
  }
  return out.subarray(0, n);
}

/** Every row, sorted by `sort` ([column id, 1 or -1]; none: table order); none last. */
export function sortedOrder(table, sort) {
  const order = new Int32Array(table.runs.length);
  for (let i = 0; i < order.length; i += 1) order[i] = i;
  const column = sort && table.byId.get(sort[0]);
  if (!column) return order;
  const dir = sort[1];
  const keys = column.type === 'number' ? column.values : column.rank;
  const none = column.type === 'number' ? (v) => Number.isNaN(v) : (v) => v < 0;
  return order.sort((a, b) => {
    const ka = keys[a];
    const kb = keys[b];
    const na = none(ka);
    const nb = none(kb);
    if (na || nb) return na === nb ? a - b : na ? 1 : -1;
    return ka === kb ? a - b : dir * (ka - kb);
  });
}

// ---------------------------------------------------------------- export

/**
 * The CSV of `rows` (an Int32Array) and `columns` in the table's order: a header of column
 * ids (labels may repeat across kinds), numbers in full precision, text cells made safe
 * for spreadsheets (csv.js).
 */
export function csvText(columns, rows) {
  const lines = [columns.map((column) => textField(column.id))];
  for (const row of rows) {
    lines.push(
      columns.map((column) =>
        column.type === 'number'
          ? numberField(column.values[row])
          : textField(column.values[row] ?? ''),
      ),
    );
  }
  return csvLines(lines);
}
