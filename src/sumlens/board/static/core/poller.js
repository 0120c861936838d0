// poller.js: auto-refresh. It asks the server for the run list every few seconds and hands
// it on only when the list's `version` changed, so an idle dashboard costs one small
// request per period and no re-rendering. Polls never overlap; a manual refresh during a
// poll runs right after it.

import { fetchRuns } from './api.js';

const DEFAULT_PERIOD_S = 3; // when the server does not say how often it reloads
const MIN_PERIOD_S = 0.5;
const MAX_PERIOD_S = 10;
const FIRST_RUNS_PERIOD_S = 0.1; // a cold start whose walk has not listed any run yet

export class Poller {
  enabled = true;
  version = null; // of the last response handed on
  period = DEFAULT_PERIOD_S;
  loading = false;
  empty = true; // no run listed yet
  timer = 0;
  running = null; // the poll in progress
  again = false; // poll again once it is done

  /**
   * `onData(data, forced)` gets each changed (or forced) /runs response; `onError(err)` each
   * failure and `onError(null)` the next success; `onPoll()`, if given, each successful poll.
   */
  constructor({ onData, onError, onPoll = () => {} }) {
    this.onData = onData;
    this.onError = onError;
    this.onPoll = onPoll;
    document.addEventListener('visibilitychange', () => {
      if (!document.hidden && this.enabled) this.refresh();
    });
  }

  /** Start polling (the first poll is now). */
  start() {
    this.refresh();
  }

  /** Turn periodic polling on or off. */
  setEnabled(enabled) {
    this.enabled = enabled;
    clearTimeout(this.timer);
    if (enabled) this.#schedule();
  }

  /** Poll now; `force` hands the response on even if its version is unchanged. */
  async refresh(force = false) {
    this.force ||= force;
    if (this.running) {
      this.again = true;
      return this.running;
    }
    clearTimeout(this.timer);
    this.running = this.#poll();
    await this.running;
    this.running = null;
    if (this.again) {
      this.again = false;
      return this.refresh();
    }
    this.#schedule();
  }

  async #poll() {
    const force = this.force;
    this.force = false;
    try {
      const data = await fetchRuns();
      const period = Number(data.reload_interval);
      if (Number.isFinite(period)) {
        this.period = Math.min(Math.max(period, MIN_PERIOD_S), MAX_PERIOD_S);
      }
      this.loading = Boolean(data.loading); // a first pass still going: ask again soon
      this.empty = !(data.runs && data.runs.length);
      this.onError(null);
      if (data.version !== this.version || force) {
        this.version = data.version;
        this.onData(data, force);
      }
      this.onPoll();
    } catch (err) {
      this.onError(err);
    }
  }

  #schedule() {
    clearTimeout(this.timer);
    if (!this.enabled) return;
    this.timer = setTimeout(() => {
      if (document.hidden) this.#schedule();
      else this.refresh();
    }, this.#delay() * 1000);
  }

  #delay() {
    if (!this.loading) return this.period;
    return this.empty ? FIRST_RUNS_PERIOD_S : MIN_PERIOD_S;
  }
}
