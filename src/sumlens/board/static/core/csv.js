// csv.js: every CSV file the pages write (the lineage view's "Export CSV") is made here.
//
// A spreadsheet evaluates a cell that starts with =, +, -, @, a tab or a carriage return as
// a formula, so a run, a tag or a lineage value such as =HYPERLINK(...) would run when the
// file is opened. Text cells therefore get a leading ' (OWASP's advice) by safeCell, the
// same rule as the server's sumlens.board.csv_cells.safe_cell; numbers are written as
// numbers and never touched, so a metric of -0.5 stays -0.5.

import { el } from './dom.js';

const FORMULA_START = /^[=+\-@\t\r]/;

/** `text` as a text cell no spreadsheet evaluates: a leading ' where it would be a formula. */
export function safeCell(text) {
  return FORMULA_START.test(text) ? `'${text}` : text;
}

/** A text cell, neutralised and quoted where CSV needs quotes. */
export function textField(text) {
  const safe = safeCell(String(text));
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** A number cell: the number in full precision, or empty for none (null, NaN). */
export function numberField(value) {
  return value === null || value === undefined || Number.isNaN(value) ? '' : String(value);
}

/** The CSV text of `rows` (arrays of cells already made by textField / numberField). */
export function csvLines(rows) {
  return `${rows.map((cells) => cells.join(',')).join('\n')}\n`;
}

/** Offer `text` to the user as the file `name` (a download from a Blob, nothing sent). */
export function downloadCsv(name, text) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  const link = el('a', { href: url, download: name, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
