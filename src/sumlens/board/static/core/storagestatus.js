// storagestatus.js: what reading the base directory costs, shown beside it in the top bar
// when it is on object storage (s3://, gs:// ...), where every request is billed. The
// server counts the requests of each reload (/api/v1/health `requests`); this shows the
// last reload's and, in the tooltip, the totals. A local base directory shows nothing.

import { getJSON } from './api.js';
import { formatBytes, formatCount, plural } from './dom.js';

function costText(used) {
  return (
    `${plural(used.listings, 'listing')} · ${formatCount(used.gets)} GET` +
    `${used.gets === 1 ? '' : 's'} · ${formatBytes(used.bytes)}`
  );
}

export class StorageStatus {
  /** `element`: the span that shows the cost (hidden while there is none to show). */
  constructor(element) {
    this.element = element;
    this.busy = false;
  }

  /** Ask the server again (after a poll of the run list); a failure leaves it as it was. */
  async update() {
    if (this.busy) return;
    this.busy = true;
    try {
      const health = await getJSON('health', []);
      this.show(health.requests);
    } catch {
      // the run list's poll reports an unreachable server
    } finally {
      this.busy = false;
    }
  }

  show(requests) {
    const last = requests?.last_reload;
    this.element.hidden = !last;
    if (!last) return;
    this.element.textContent = `↻ ${costText(last)}`;
    this.element.title =
      `Requests to the object store. Last reload: ${costText(last)}. ` +
      `Since the server started: ${costText(requests.total)}.`;
  }
}
