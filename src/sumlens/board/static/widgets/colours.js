// colours.js: the colours of a view's series (a run, or a rank of a distributed run), the
// same palette in every view.

export const PALETTE = [
  '#1a73e8', '#e8710a', '#12b5cb', '#e52592', '#7cb342',
  '#9334e6', '#f9ab00', '#425066', '#d93025', '#00897b',
];

/** The colours of a view's series: each new series takes the palette's next colour. */
export class Colours {
  #byKey = new Map();

  /** A series' colour and label; `ranked`: a run's ranks are told apart, "run (rank 1)". */
  style(run, rank, ranked) {
    const key = ranked ? `${run}\u0000${rank}` : run;
    if (!this.#byKey.has(key)) this.#byKey.set(key, PALETTE[this.#byKey.size % PALETTE.length]);
    return { colour: this.#byKey.get(key), label: ranked ? `${run} (rank ${rank})` : run };
  }

  /** Hand the colours out again in the order of `runs` (`meta`: run id -> its /runs entry). */
  assign(runs, meta) {
    this.#byKey.clear();
    for (const id of runs) {
      const ranks = meta.get(id)?.ranks ?? [];
      if (ranks.length > 1) for (const rank of ranks) this.style(id, rank, true);
      else this.style(id, null, false);
    }
  }
}
