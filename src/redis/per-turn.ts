// Loads made during one turn of the event loop, sent to Redis together. A turn reads every socket
// that has data (many requests at once under load) before the check phase runs, so a batch
// scheduled with setImmediate holds the turn's requests from every connection; DataLoader's
// default schedule (after the current job) would hold only one socket's.
import DataLoader from 'dataloader'
import { withDeadline } from './deadline.js'

/**
 * A DataLoader that batches the loads of one event-loop turn and caches nothing: every load is
 * answered by a Redis call sent after it was made, so it never sees older data than it asked
 * for. `batch` gets the keys in the order they were loaded, repeats included. With `deadlineMs`,
 * a batch not answered that long after the turn that made it fails as a timeout (one timer per
 * turn, not per load).
 */
export function perTurnLoader<K, V> (batch: (keys: readonly K[]) => Promise<Array<V | Error>>, deadlineMs?: number): DataLoader<K, V> {
  const load = deadlineMs === undefined ? batch : async (keys: readonly K[]) => await withDeadline(batch(keys), deadlineMs)
  return new DataLoader(load, { cache: false, batchScheduleFn: (callback) => setImmediate(callback) })
}
