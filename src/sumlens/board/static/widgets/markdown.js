// markdown.js: a text of a run (GET api/v1/text, rendered from markdown on the server by
// board/query/markdown.py, a part at a time) put in the page, by the Text view and the run
// dashboard.
//
// The server already renders without raw HTML, unsafe links or images; the page trusts
// none of it all the same (defence in depth): the HTML is parsed with DOMParser, in a
// document that runs no script and loads nothing, and only allowlisted elements are copied
// into the page, built afresh, with the attributes the allowlist names. An element not on
// it is dropped but keeps its text; a link keeps its address only when it is http(s),
// mailto or relative, and opens in a new tab without a handle on this page.

import { el } from '../core/dom.js';

const ELEMENTS = new Set([
  'P', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'EM', 'STRONG', 'DEL', 'CODE', 'PRE', 'BLOCKQUOTE',
  'UL', 'OL', 'LI', 'TABLE', 'THEAD', 'TBODY', 'TR', 'TH', 'TD', 'A', 'HR', 'BR',
]);
const DROPPED = new Set(['SCRIPT', 'STYLE', 'TEMPLATE', 'NOSCRIPT', 'IFRAME', 'OBJECT', 'SVG']);
const SAFE_SCHEMES = new Set(['http', 'https', 'mailto']);
const SCHEME = /^([a-z][a-z0-9+.-]*):/;
// what browsers drop from an address before its scheme: control characters and spaces
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const IGNORED = /[\u0000-\u0020\u007f]+/g;
const ALIGN = /^text-align:\s*(left|center|right);?$/;

/** Whether `href` may be a link's address: http(s), mailto, or relative (no scheme). */
export function safeHref(href) {
  const scheme = SCHEME.exec(href.replace(IGNORED, '').toLowerCase());
  return scheme === null || SAFE_SCHEMES.has(scheme[1]);
}

/** `html` as a fragment of allowlisted elements and text only (see the top of this file). */
export function safeFragment(html) {
  const parsed = new DOMParser().parseFromString(String(html), 'text/html');
  const fragment = document.createDocumentFragment();
  copyChildren(parsed.body, fragment);
  return fragment;
}

function copyChildren(from, to) {
  for (const node of from.childNodes) {
    if (node.nodeType === Node.TEXT_NODE) to.append(node.data);
    else if (node.nodeType !== Node.ELEMENT_NODE || DROPPED.has(node.tagName)) continue;
    else if (!ELEMENTS.has(node.tagName)) copyChildren(node, to);
    else {
      const copy = copyElement(node);
      copyChildren(node, copy);
      to.append(copy);
    }
  }
}

function copyElement(node) {
  const copy = document.createElement(node.tagName.toLowerCase());
  if (node.tagName === 'A') {
    const href = node.getAttribute('href');
    if (href !== null && safeHref(href)) {
      copy.setAttribute('href', href);
      copy.setAttribute('rel', 'noopener noreferrer');
      copy.setAttribute('target', '_blank');
    }
  } else if (node.tagName === 'OL' && /^\d{1,9}$/.test(node.getAttribute('start') ?? '')) {
    copy.setAttribute('start', node.getAttribute('start'));
  } else if (node.tagName === 'TH' || node.tagName === 'TD') {
    const align = ALIGN.exec(node.getAttribute('style') ?? '');
    if (align) copy.style.textAlign = align[1];
  }
  return copy;
}

/**
 * The element showing a /text answer: its markdown document, or its table of cells (each
 * cell a document), as TensorBoard lays them out.
 */
export function renderedText(body) {
  if (body.rows === null) return el('div', { class: 'markdown' }, safeFragment(body.html));
  return el('table', { class: 'text-table' }, el('tbody', {}, ...tableRows(body)));
}

/**
 * Add the next part of a long text (a /text answer asked from the last one's `next`) to
 * `shown`, the element renderedText made of its first part: more of the document, or
 * more rows of the table.
 */
export function appendText(shown, body) {
  if (body.rows === null) shown.append(safeFragment(body.html));
  else shown.querySelector('tbody').append(...tableRows(body));
}

function tableRows(body) {
  return body.rows.map((row) =>
    el('tr', {}, ...row.map((cell) => el('td', { class: 'markdown' }, safeFragment(cell)))),
  );
}
