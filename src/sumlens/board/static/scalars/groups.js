// groups.js: groups of runs in the Scalars view: the group-by control, the request of each
// chart's groups; their colours (widgets/colours.js GroupColours) and traces (a centre
// line over a filled band in the group's colour: widgets/grouptraces.js) are shared with
// the snapshot page.
//
// The server groups and aggregates (GET /api/v1/scalars/groups, board/api/groups.py): by a
// regular expression over run ids, whose capture groups name the group, by run tag, or by a
// hyper-parameter or lineage field (`hparam/lr`: a group per value, "lr=0.1"; the fields
// the selected runs have come from /api/v1/scalars/groups/fields); a run that is in no
// group stays single and is drawn as before. Each member is smoothed
// before the mean (or median) and the band (std, min-max or a percentile range) are taken
// over the members that have a step. The members are drawn faintly in their group's colour
// or hidden. The settings live in the URL as the view's own parameter
// (`group={"by":"regex","re":"lr([0-9.]+)/","stat":"mean","band":"std","members":"hidden"}`,
// `group={"by":"field","field":"hparam/lr"}`,
// views.js `param`), so a reload or a shared link groups the same way. A group's colour
// follows from its name (colours.js) unless one was chosen with its swatch among the
// controls: that colour is kept in the workspace (PUT /api/v1/group-colour) and comes back
// as the group's `colour` in each groups answer. Those whose role cannot write see the
// swatches but cannot change them (core/session.js).

import { ApiError, apiUrl, getJSON, sendJSON } from '../core/api.js';
import { el } from '../core/dom.js';
import { gate } from '../core/session.js';
import { BAND_LABELS } from '../widgets/grouptraces.js';

export const GROUP_BY = ['regex', 'tag', 'field'];
export const STATS = ['mean', 'median'];
export const BANDS = ['std', 'minmax', 'p25-75', 'p10-90'];

/**
 * The grouping `state.scalars` asks for, checked ({by, re, field, stat, band, members}), or
 * null when the runs are not grouped (no `by`, a regex grouping without a pattern, or a
 * field grouping without a field).
 */
export function groupOptions(state) {
  const raw = state.scalars ?? {};
  if (!GROUP_BY.includes(raw.by)) return null;
  const re = typeof raw.re === 'string' ? raw.re : '';
  if (raw.by === 'regex' && !re) return null;
  const field = typeof raw.field === 'string' ? raw.field : '';
  if (raw.by === 'field' && !field) return null;
  return {
    by: raw.by,
    re,
    field,
    stat: STATS.includes(raw.stat) ? raw.stat : STATS[0],
    band: BANDS.includes(raw.band) ? raw.band : BANDS[0],
    members: raw.members === 'hidden' ? 'hidden' : 'faint',
  };
}

/** The query of a groups request: runs, tags, grouping, statistic, axis and smoothing. */
function groupParams(runs, tags, options, axis, smoothing) {
  const params = [...runs.map((run) => ['run', run]), ...tags.map((tag) => ['tag', tag])];
  params.push(['by', options.by], ['stat', options.stat], ['band', options.band]);
  if (options.by === 'regex') params.push(['group_regex', options.re]);
  if (options.by === 'field') params.push(['field', options.field]);
  params.push(['axis', axis], ['smoothing', smoothing]);
  return params;
}

/** GET /api/v1/scalars/groups for one chart: each group's centre, band and member counts. */
export function fetchGroups({ runs, tag, options, axis, smoothing, points, range }, signal) {
  const params = groupParams(runs, [tag], options, axis, smoothing);
  params.push(['points', points]);
  if (range) params.push(['start', range[0]], ['end', range[1]]);
  return getJSON('scalars/groups', params, signal);
}

/** The link downloading every step of the groups of `runs` x `tags` (csv or json). */
export function groupDownloadUrl(runs, tags, format, axis, options, smoothing) {
  const params = groupParams(runs, tags, options, axis, smoothing);
  params.push(['format', format]);
  return apiUrl('scalars/groups/download', params).href;
}

/**
 * The group-by controls of the toolbar: how to group, the statistic, the band, members, and
 * a swatch per group shown that picks its colour; `onColour()` runs once a colour is saved.
 */
export class GroupControls {
  constructor(store, onColour) {
    this.store = store;
    this.onColour = onColour;
    this.shownGroups = new Map(); // name -> {colour, chosen} of the groups the charts drew
    this.optionsKey = null; // the grouping the swatches are of, as JSON
    this.swatches = el('span', { class: 'group-colours', hidden: true });
    this.problem = el('span', { class: 'group-colour-problem', role: 'alert', hidden: true });
    const set = (patch) => this.#set(patch);
    this.by = el(
      'select',
      {
        class: 'select run-group-by',
        'aria-label': 'Group runs',
        title: 'Group the runs: mean (or median) and spread of each group',
        // no groups: the settings go too (the URL stays short)
        onchange: () => (this.by.value ? set({ by: this.by.value }) : store.set({ scalars: {} })),
      },
      el('option', { value: '', text: 'No groups' }),
      el('option', { value: 'regex', text: 'Group: regex' }),
      el('option', { value: 'tag', text: 'Group: run tag' }),
      el('option', { value: 'field', text: 'Group: field' }),
    );
    this.field = el('select', {
      class: 'select run-group-field',
      'aria-label': 'Group field',
      title: 'A hyper-parameter or lineage field: one group per value',
      onchange: () => set({ by: 'field', field: this.field.value }),
    });
    this.fieldsOf = null; // the runs whose fields the select lists (JSON), or a request's
    this.regex = el('input', {
      type: 'text',
      class: 'run-group-regex',
      placeholder: 'lr([0-9.]+)/seed',
      'aria-label': 'Group regex',
      title: 'A regular expression over run names; its capture groups name the group',
      spellcheck: false,
      onchange: () => set({ by: 'regex', re: this.regex.value }),
    });
    this.stat = el(
      'select',
      {
        class: 'select run-group-stat',
        'aria-label': 'Group line',
        onchange: () => set({ stat: this.stat.value }),
      },
      ...STATS.map((stat) => el('option', { value: stat, text: stat })),
    );
    this.band = el(
      'select',
      {
        class: 'select run-group-band',
        'aria-label': 'Group band',
        onchange: () => set({ band: this.band.value }),
      },
      ...BANDS.map((band) => el('option', { value: band, text: BAND_LABELS[band] })),
    );
    this.members = el('button', {
      type: 'button',
      class: 'toggle run-group-members',
      text: 'Hide members',
      title: 'Hide the runs of each group (else drawn faintly in its colour)',
      onclick: () => {
        const hidden = this.store.state.scalars?.members === 'hidden';
        set({ members: hidden ? undefined : 'hidden' });
      },
    });
    const controls = [
      this.by,
      this.regex,
      this.field,
      this.stat,
      this.band,
      this.members,
      this.swatches,
      this.problem,
    ];
    this.elements = [el('span', { class: 'run-group-controls' }, ...controls)];
  }

  /** Show what `state` says. */
  sync(state) {
    const raw = state.scalars ?? {};
    const by = GROUP_BY.includes(raw.by) ? raw.by : '';
    this.by.value = by;
    if (document.activeElement !== this.regex) this.regex.value = raw.re ?? '';
    this.regex.hidden = by !== 'regex';
    this.field.hidden = by !== 'field';
    if (by === 'field') this.#listFields(state.runs);
    const options = groupOptions(state);
    for (const control of [this.stat, this.band, this.members]) control.hidden = !options;
    this.stat.value = options?.stat ?? STATS[0];
    this.band.value = options?.band ?? BANDS[0];
    this.members.setAttribute('aria-pressed', String(options?.members === 'hidden'));
    const key = JSON.stringify(options && [options.by, options.re, options.field]);
    if (key !== this.optionsKey) {
      this.optionsKey = key; // other groups now: their swatches come with their charts
      this.shownGroups.clear();
      this.#renderSwatches();
    }
  }

  /** A chart drew `groups` (a groups answer's) in `colours` (its GroupColours). */
  showGroups(groups, colours) {
    let changed = false;
    for (const { name, colour } of groups) {
      const look = { colour: colours.colour(name), chosen: Boolean(colour) };
      const before = this.shownGroups.get(name);
      if (before?.colour !== look.colour || before?.chosen !== look.chosen) {
        this.shownGroups.set(name, look);
        changed = true;
      }
    }
    if (changed) this.#renderSwatches();
  }

  /** A swatch per group shown: a colour input, and a way back to the automatic colour. */
  #renderSwatches() {
    const names = [...this.shownGroups.keys()].sort();
    this.swatches.hidden = !names.length;
    this.swatches.replaceChildren(
      ...names.map((name) => {
        const { colour, chosen } = this.shownGroups.get(name);
        const input = gate(
          el('input', {
            type: 'color',
            class: 'colour-input group-colour-input',
            value: colour,
            'aria-label': `Colour of group ${name}`,
            onchange: () => this.#saveColour(name, input.value),
          }),
          'write',
        );
        const reset = chosen
          ? gate(
              el('button', {
                type: 'button',
                class: 'icon-button group-colour-reset',
                text: '↺',
                title: 'Back to the automatic colour',
                'aria-label': `Automatic colour for group ${name}`,
                onclick: () => this.#saveColour(name, null),
              }),
              'write',
              { hide: true },
            )
          : null;
        const label = el(
          'label',
          { class: 'swatches', title: `Choose the colour of group ${name}` },
          el('span', { class: 'swatch', style: `background:${colour}` }),
          el('span', { class: 'group-colour-name', text: name }),
          input,
        );
        return el(
          'span',
          { class: 'group-colour', dataset: { group: name } },
          gate(label, 'write'),
          reset,
        );
      }),
    );
  }

  /** Keep `colour` (#rrggbb; null: automatic) as group `name`'s in the workspace. */
  async #saveColour(name, colour) {
    try {
      await sendJSON('PUT', 'group-colour', [['group', name]], { colour });
      this.problem.hidden = true;
      this.onColour();
    } catch (err) {
      const why = err instanceof ApiError ? err.detail : err.message; // the server's line
      this.problem.textContent = `Could not save the colour of group ${name}: ${why}`;
      this.problem.hidden = false;
    }
  }

  /** Fill the field select with the fields of `runs` (fetched once per selection). */
  async #listFields(runs) {
    const key = JSON.stringify(runs);
    if (this.fieldsOf !== key) {
      this.fieldsOf = key;
      let fields = [];
      try {
        ({ fields } = await getJSON('scalars/groups/fields', runs.map((run) => ['run', run])));
      } catch (error) {
        this.field.title = `The fields could not be listed: ${error.message}`;
      }
      if (this.fieldsOf !== key) return; // the selection changed meanwhile
      this.field.replaceChildren(
        el('option', { value: '', text: fields.length ? 'Field…' : 'No field' }),
        ...fields.map(({ id, label, kind }) =>
          el('option', { value: id, text: id, title: `${label} (${kind})` }),
        ),
      );
      this.field.dataset.fields = String(fields.length);
    }
    // a field from a shared link that these runs lack is still offered, and said so
    const chosen = this.store.state.scalars?.field ?? '';
    if (chosen && ![...this.field.options].some((option) => option.value === chosen)) {
      this.field.append(el('option', { value: chosen, text: `${chosen} (no selected run)` }));
    }
    this.field.value = chosen;
  }

  /** Merge `patch` into the URL's group settings (undefined drops a key; defaults too). */
  #set(patch) {
    const next = { ...(this.store.state.scalars ?? {}), ...patch };
    if (next.stat === STATS[0]) delete next.stat;
    if (next.band === BANDS[0]) delete next.band;
    for (const key of Object.keys(next)) {
      if (next[key] === undefined || next[key] === '') delete next[key];
    }
    this.store.set({ scalars: next });
  }
}
