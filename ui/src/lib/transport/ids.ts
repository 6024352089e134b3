/** Request ids: unique in this page (every request and its answer carry one). */
let next = 1;

/** A fresh request id. */
export function nextId(): number {
  return next++;
}
