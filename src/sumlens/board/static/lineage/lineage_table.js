// lineage_table.js: the model lineage table, one row per run, virtualised.
//
// Rows have a fixed height inside a body as tall as all of them; only the rows in sight
// (plus a few either side) exist as elements and are reused as the table scrolls, so
// 10,000 runs paint and re-filter as fast as ten. The header stays on top (sticky) and
// scrolls sideways with the rows. The columns share the table's width (each at least its
// minimum); when they cannot fit, the table scrolls sideways (sidescroll.js shows that it
// does) with the check box and the run's name kept in view. Each column header sorts on
// click and holds the column's filter: min and max for numbers, "contains" for text.
// Every value is text (textContent), whatever a run or a field is named. The run column is
// at least as wide as the longest run name (up to RUN_MAX_WIDTH, past which a name shows
// its end, where runs of one directory differ), so names stay readable when the table
// scrolls sideways. A column folded from several fields (lineage_model.js) says on hover
// which fields it holds, and in each cell which of them held the value.

import { el, fitPool, perFrame, rowWindow } from '../core/dom.js';
import { RUN_COLUMN, cellText, kindName, sourceText } from './lineage_model.js';
import { SideScroll } from './sidescroll.js';

const ROW_HEIGHT = 30; // px; must match .lin-row in lineage.css
const OVERSCAN = 8;
const RUN_WIDTH = 180; // px of the run column at least (it takes twice a column's share)
const RUN_MAX_WIDTH = 420; // ... at most, however long the names
const RUN_EXTRA = 16 + 4 + 22 + 64; // its padding, gap, hide button and a "damaged" badge
const NUMBER_WIDTH = 84; // ... of a number column: its value, and min and max boxes
const TEXT_WIDTH = 104; // ... of a text column
const CHECK_WIDTH = 34;

function sortMark(sort, id) {
  if (!sort || sort[0] !== id) return '';
  return sort[1] > 0 ? ' ▲' : ' ▼';
}

export class LineageGrid {
  /**
   * `on`: sort(id), filter(id, filter or null), hide(run), select(run, on), selectShown(on).
   */
  constructor(on) {
    this.on = on;
    this.rows = new Int32Array(0);
    this.columns = [];
    this.pool = [];
    this.generation = 0;
    this.selected = new Set();
    this.head = el('div', { class: 'lin-head', role: 'row' });
    this.body = el('div', { class: 'lin-body', role: 'rowgroup' });
    this.scroller = el(
      'div',
      { class: 'lin-table', role: 'table', 'aria-label': 'Model lineage' },
      this.head,
      this.body,
    );
    this.scroller.style.setProperty('--lin-check-width', `${CHECK_WIDTH}px`);
    // while it scrolls sideways, the columns are at their least: the pinned ones take this
    this.side = new SideScroll(this.scroller, this.head, 'lin-table-box', CHECK_WIDTH + RUN_WIDTH);
    this.element = this.side.element;
    this.runWidth = RUN_WIDTH;
    this.measured = null; // the table whose run names runWidth fits
    this.scroller.addEventListener('scroll', perFrame(() => this.#render()), { passive: true });
    this.body.addEventListener('change', (event) => {
      const row = event.target.closest('.lin-row');
      if (row && event.target.type === 'checkbox') {
        this.on.select(row.dataset.run, event.target.checked);
      }
    });
    this.body.addEventListener('click', (event) => {
      const button = event.target.closest('.lin-hide');
      if (button) this.on.hide(button.closest('.lin-row').dataset.run);
    });
    new ResizeObserver(() => this.#render()).observe(this.scroller);
  }

  /** Show `columns` of `table` (rebuilding the header); `settings` gives sort and filters. */
  setColumns(table, columns, settings) {
    this.table = table;
    this.columns = columns;
    if (this.measured !== table) {
      this.measured = table;
      this.runWidth = this.#runWidth(table.runs);
      this.side.setInset(CHECK_WIDTH + this.runWidth);
    }
    const track = (column) => {
      if (column.id === RUN_COLUMN) return [this.runWidth, 2];
      return [column.type === 'number' ? NUMBER_WIDTH : TEXT_WIDTH, 1];
    };
    const tracks = columns.map(track);
    const template = [
      `${CHECK_WIDTH}px`,
      ...tracks.map(([least, share]) => `minmax(${least}px, ${share}fr)`),
    ].join(' ');
    this.template = template;
    const least = tracks.reduce((sum, [w]) => sum + w, CHECK_WIDTH);
    this.head.style.gridTemplateColumns = template;
    this.head.style.minWidth = `${least}px`; // wider than the table: it scrolls sideways
    this.body.style.minWidth = `${least}px`;
    this.selectAll = el('input', {
      type: 'checkbox',
      'aria-label': 'Select every run shown',
      onchange: () => this.on.selectShown(this.selectAll.checked),
    });
    this.head.replaceChildren(
      el('span', { class: 'lin-cell lin-check lin-pin' }, this.selectAll),
      ...columns.map((column) => this.#headerCell(column, settings)),
    );
    for (const row of this.pool) row.remove();
    this.pool = [];
    this.setRows(this.rows);
  }

  /** The least width of the run column: its longest name, within RUN_WIDTH..RUN_MAX_WIDTH. */
  #runWidth(runs) {
    const name = el('span', { class: 'lin-run' });
    const probe = el('div', { class: 'lin-row', style: 'visibility: hidden' }, name);
    this.body.append(probe);
    const style = getComputedStyle(name);
    const context = document.createElement('canvas').getContext('2d');
    context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
    probe.remove();
    let widest = 0;
    for (const run of runs) widest = Math.max(widest, context.measureText(run).width);
    return Math.round(Math.min(RUN_MAX_WIDTH, Math.max(RUN_WIDTH, widest + RUN_EXTRA)));
  }

  #headerCell(column, settings) {
    const filter = settings.filters[column.id];
    const folded = column.sources
      ? `; one column for ${column.sources.map((s) => `${s.label} (${s.from})`).join(', ')}`
      : '';
    const sort = el(
      'button',
      {
        type: 'button',
        class: `lin-sort kind-${column.kind}`,
        title:
          `${column.label} (${kindName(column.kind)}, ${column.type}${folded}): ` +
          'click to sort',
        dataset: { col: column.id },
        onclick: () => this.on.sort(column.id),
      },
      // two lines at most (the whole name in the title)
      el('span', {
        class: 'lin-sort-text',
        text: `${column.label}${sortMark(settings.sort, column.id)}`,
      }),
    );
    const inputs = [];
    if (column.type === 'number') {
      for (const [end, hint] of [['lo', 'min'], ['hi', 'max']]) {
        const value = filter?.[end];
        const input = el('input', {
          type: 'number',
          step: 'any',
          class: `lin-filter lin-${end}`,
          placeholder: hint,
          'aria-label': `${column.label} ${hint}`,
          value: value === null || value === undefined ? '' : String(value),
          dataset: { col: column.id, end },
        });
        input.addEventListener('change', () => this.#numberFilter(column));
        inputs.push(input);
      }
    } else {
      const text = filter?.in ? filter.in.join(' | ') : (filter?.text ?? '');
      const input = el('input', {
        type: 'search',
        class: 'lin-filter lin-text',
        placeholder: 'contains',
        'aria-label': `${column.label} contains`,
        value: text,
        dataset: { col: column.id },
      });
      input.addEventListener('change', () => {
        this.on.filter(column.id, input.value ? { text: input.value } : null);
      });
      inputs.push(input);
    }
    const active = filter !== undefined;
    const pin = column.id === RUN_COLUMN ? ' lin-pin' : '';
    return el(
      'span',
      {
        class: `lin-cell lin-th${active ? ' filtered' : ''}${pin}`,
        role: 'columnheader',
        dataset: { col: column.id },
      },
      sort,
      el('span', { class: 'lin-filters' }, ...inputs),
    );
  }

  #numberFilter(column) {
    const read = (end) => {
      const input = this.head.querySelector(`.lin-${end}[data-col="${CSS.escape(column.id)}"]`);
      const value = Number.parseFloat(input.value);
      return Number.isFinite(value) ? value : null;
    };
    const lo = read('lo');
    const hi = read('hi');
    this.on.filter(column.id, lo === null && hi === null ? null : { lo, hi });
  }

  /** Show `rows` (row indices of the table, in order). */
  setRows(rows) {
    this.rows = rows;
    this.body.style.height = `${rows.length * ROW_HEIGHT}px`;
    this.#changed();
  }

  /** The selected run ids changed. */
  setSelected(selected) {
    this.selected = selected;
    this.#changed();
  }

  #changed() {
    this.generation += 1;
    if (this.selectAll && this.table) {
      let picked = 0;
      for (const row of this.rows) if (this.selected.has(this.table.runs[row])) picked += 1;
      this.selectAll.checked = picked > 0 && picked === this.rows.length;
      this.selectAll.indeterminate = picked > 0 && picked < this.rows.length;
    }
    this.#render();
  }

  #render() {
    const height = this.scroller.clientHeight;
    if (!height || !this.table) return; // hidden: rendered when shown
    const top = Math.max(0, this.scroller.scrollTop - this.head.offsetHeight);
    const { first, size } = rowWindow(top, height, ROW_HEIGHT, OVERSCAN);
    fitPool(this.pool, size, () => this.#newRow());
    this.pool.forEach((element, i) => {
      const index = first + i;
      const row = index < this.rows.length ? this.rows[index] : -1;
      element.hidden = row < 0;
      if (row < 0) return;
      const key = `${this.generation}:${index}`;
      if (element.dataset.key === key) return;
      element.dataset.key = key;
      element.dataset.index = String(index);
      element.style.transform = `translateY(${index * ROW_HEIGHT}px)`;
      this.#fill(element, row);
    });
  }

  #newRow() {
    const check = el('input', { type: 'checkbox' });
    const cells = this.columns.map((column) =>
      el('span', {
        class: `lin-cell${column.type === 'number' ? ' num' : ''}${
          column.id === RUN_COLUMN ? ' lin-pin' : ''
        }`,
        dataset: { col: column.id },
      }),
    );
    const row = el(
      'div',
      { class: 'lin-row', role: 'row' },
      el('span', { class: 'lin-cell lin-check lin-pin' }, check),
      ...cells,
    );
    row.style.gridTemplateColumns = this.template;
    row.check = check;
    row.cells = cells;
    this.body.append(row);
    return row;
  }

  #fill(element, row) {
    const run = this.table.runs[row];
    const isSelected = this.selected.has(run);
    element.dataset.run = run;
    element.classList.toggle('selected', isSelected);
    element.check.checked = isSelected;
    element.check.setAttribute('aria-label', `Select ${run}`);
    this.columns.forEach((column, i) => {
      const cell = element.cells[i];
      if (column.id === RUN_COLUMN) {
        const problem = this.table.problems.get(run);
        const title = problem ? `${run}: ${problem}` : run;
        // bdi: a name cut for its length shows its end (lineage.css)
        const parts = [el('span', { class: 'lin-run', title }, el('bdi', { text: run }))];
        if (problem) {
          parts.push(el('span', { class: 'badge warn', text: 'damaged', title: problem }));
        }
        cell.replaceChildren(
          ...parts,
          el('button', {
            type: 'button',
            class: 'lin-hide icon-button',
            text: '×',
            title: `Hide ${run}`,
            'aria-label': `Hide ${run}`,
          }),
        );
        return;
      }
      const text = cellText(column, row);
      const from = text && sourceText(column, row);
      cell.textContent = text;
      cell.title = from ? `${text} from ${from}` : text;
    });
  }
}
