// Loads made during one turn of the event loop, sent to Redis together. A turn reads every socket
// that has data (many requests at once under load) before the check phase runs, so a batch
// scheduled with setImmediate holds the turn's requests from every connection; DataLoader's
// default schedule (after the current job) would hold only one socket's.
import DataLoader from 'dataloader'

/**
 * A DataLoader that batches the loads of one event-loop turn and caches nothing: every load is
 * answered by a Redis call sent after it was made, so it never sees older data than it asked
 * for. `batch` gets the keys in the order they were loaded, repeats included.
 */
export function perTurnLoader<K, V> (batch: (keys: readonly K[]) => Promise<Array<V | Error>>): DataLoader<K, V> {
  return new DataLoader(batch, { cache: false, batchScheduleFn: (callback) => setImmediate(callback) })
}
