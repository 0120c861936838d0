// lazyview.js: a view whose modules load the first time it is shown.
//
// The Graph, Lineage and Landscape views bring a dozen modules (and Graphviz, plotly) that
// the run list never needs; loading them with the page would delay its first paint. A
// LazyView stands in for such a view from the start: it keeps the newest /runs response,
// imports the real view when the URL first names it, and hands it that response.

export class LazyView {
  #view = null;
  #loading = null;
  #data = null;

  /**
   * `name`: the view (state.view) it stands for; `load()`: a promise of its class (a
   * dynamic import), constructed as `new View(root, store)`.
   */
  constructor(name, root, store, load) {
    this.name = name;
    this.root = root;
    this.store = store;
    this.load = load;
    store.subscribe((state) => {
      if (state.view === name) this.#open();
    });
    if (store.state.view === name) this.#open();
  }

  /** Take a new /runs response (kept for the view until it exists). */
  setRuns(data, forced = false) {
    this.#data = data;
    this.#view?.setRuns(data, forced);
  }

  #open() {
    if (this.#loading) return; // loading, or loaded
    this.#loading = this.load().then(
      (View) => {
        this.#view = new View(this.root, this.store);
        if (this.#data) this.#view.setRuns(this.#data, true);
      },
      (err) => {
        this.#loading = null; // a later visit tries again
        const note = document.createElement('p');
        note.className = 'empty-note';
        note.textContent = `The ${this.name} view could not be loaded: ${err.message}`;
        this.root.replaceChildren(note);
      },
    );
  }
}
