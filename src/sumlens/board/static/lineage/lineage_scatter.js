// lineage_scatter.js: one metric against one hyper-parameter, a point per run shown in the
// lineage table (the same filters), drawn with plotly. The axes are any two number
// columns picked in the chart's own selects (by default the first metric against the
// hyper-parameter that varies most, on a log axis when it spans decades:
// lineage_model.js scatterDefaults, logScale); a click on a point selects its run.
// Thousands of points use plotly's WebGL scatter, fewer its SVG one. Run names reach
// plotly through plotlyText only.

import { el, plotlyText } from '../core/dom.js';
import { PLOT_CONFIG, axisTitle, chartLayout, gridColour, loadPlotly } from '../plots/plotly.js';
import { kindName, logScale } from './lineage_model.js';

const GL_ABOVE = 2000; // points beyond which the WebGL trace draws
const FONT = 'system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';

function columnSelect(label, onchange) {
  return el('select', { class: 'lin-select', 'aria-label': label, onchange });
}

export class LineageScatter {
  /** `on`: axes({x, y} or {logx}: what the user picked), select(run). */
  constructor(on) {
    this.on = on;
    const axes = () => this.on.axes({ x: this.xSelect.value, y: this.ySelect.value });
    this.xSelect = columnSelect('Scatter x axis', axes);
    this.ySelect = columnSelect('Scatter y axis', axes);
    this.logBox = el('input', {
      type: 'checkbox',
      'aria-label': 'Log x axis',
      onchange: () => this.on.axes({ logx: this.logBox.checked }),
    });
    this.plot = el('div', { class: 'lin-scatter-plot' });
    this.note = el('p', { class: 'empty-note', text: 'No number columns to plot.', hidden: true });
    this.element = el(
      'div',
      { class: 'lin-scatter' },
      el(
        'div',
        { class: 'lin-scatter-controls' },
        el('label', { class: 'control' }, 'y', this.ySelect),
        el('label', { class: 'control' }, 'x', this.xSelect),
        el('label', { class: 'control' }, this.logBox, 'log x'),
      ),
      this.note,
      this.plot,
    );
    this.plot.dataset.draws = '0';
  }

  /**
   * Offer `numbers` (number columns) as axes; `x`, `y`: the columns shown (ids, or null for
   * none); `logx`: the log box (null: log when the x column spans decades).
   */
  setColumns(numbers, x, y, logx) {
    const fill = (select, chosen) => {
      const options = numbers.map((column) =>
        el('option', { value: column.id, text: `${column.label} (${kindName(column.kind)})` }),
      );
      select.replaceChildren(...options);
      select.value = chosen ?? '';
    };
    fill(this.xSelect, x);
    fill(this.ySelect, y);
    this.numbers = new Map(numbers.map((column) => [column.id, column]));
    this.logBox.checked = logx ?? logScale(this.numbers.get(x));
  }

  /** Plot `rows` (Int32Array) of `table` on the picked axes; `selected`: run ids. */
  async draw(table, rows, selected) {
    const xc = this.numbers?.get(this.xSelect.value);
    const yc = this.numbers?.get(this.ySelect.value);
    this.note.hidden = Boolean(xc && yc);
    this.plot.hidden = !this.note.hidden;
    if (!xc || !yc) return;
    const Plotly = await loadPlotly();
    const x = [];
    const y = [];
    const text = [];
    const runs = [];
    const colours = [];
    for (const row of rows) {
      const vx = xc.values[row];
      const vy = yc.values[row];
      if (Number.isNaN(vx) || Number.isNaN(vy)) continue;
      const run = table.runs[row];
      x.push(vx);
      y.push(vy);
      text.push(plotlyText(run));
      runs.push(run);
      colours.push(selected.has(run) ? '#e8710a' : '#1a73e8');
    }
    const trace = {
      type: x.length > GL_ABOVE ? 'scattergl' : 'scatter',
      mode: 'markers',
      x,
      y,
      text,
      customdata: runs,
      hovertemplate: '%{text}<br>x: %{x}<br>y: %{y}<extra></extra>',
      marker: { size: x.length > GL_ABOVE ? 4 : 8, color: colours, opacity: 0.8 },
    };
    const axis = (column, log) => ({
      title: axisTitle(plotlyText(column.label), 11),
      type: log ? 'log' : 'linear',
      gridcolor: gridColour(),
      zeroline: false,
      automargin: true,
    });
    const layout = {
      autosize: true,
      margin: { l: 50, r: 10, t: 8, b: 40 },
      ...chartLayout({ family: FONT, size: 11 }),
      hovermode: 'closest',
      xaxis: axis(xc, this.logBox.checked),
      yaxis: axis(yc, false),
    };
    const config = { ...PLOT_CONFIG, modeBarButtonsToRemove: ['sendChartToCloud'] };
    await Plotly.react(this.plot, [trace], layout, config);
    if (!this.plot.dataset.bound) {
      this.plot.dataset.bound = '1';
      this.plot.on('plotly_click', (event) => {
        const run = event.points?.[0]?.customdata;
        if (typeof run === 'string') this.on.select(run);
      });
    }
    this.plot.dataset.points = String(x.length);
    this.plot.dataset.draws = String(Number(this.plot.dataset.draws) + 1);
  }
}
