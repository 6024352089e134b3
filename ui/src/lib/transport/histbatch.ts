/**
 * Which waiting history requests go to the gateway together: trends opened
 * together ask for the same range (their `now` a few ms apart), and one `hist`
 * of many channels is read as one batch by the gateway (one pull consumer over
 * their blocks), where one request per trend would wait its turn behind
 * `hello.limits.hist_in_flight`.
 */

/** One request as a widget asked it. */
export interface Asked {
  uris: string[];
  t0: number;
  t1: number;
  px: number;
}

/** One `hist` frame's worth: the requests it answers and what it asks. */
export interface Batch<A extends Asked> {
  members: A[];
  uris: string[];
  t0: number;
  t1: number;
  px: number;
}

/** Ranges whose ends differ by less than this share a request (ms, or this share of the span if more). */
const SAME_RANGE_MS = 2_000;
const SAME_RANGE_SHARE = 0.02;

/** Two ranges the same but for when each was asked. */
export function sameRange(a: Asked, b: Asked): boolean {
  if (!(a.t1 > a.t0) || !(b.t1 > b.t0)) return false; // a bad range goes alone, refused alone
  const tolerance = Math.max(SAME_RANGE_MS, SAME_RANGE_SHARE * Math.min(a.t1 - a.t0, b.t1 - b.t0));
  return Math.abs(a.t0 - b.t0) <= tolerance && Math.abs(a.t1 - b.t1) <= tolerance;
}

/**
 * Take the next batches from `waiting` (oldest first; taken requests are removed):
 * the oldest request and every later one of the same range, spread over the
 * `slots` free (so that they are read in parallel), at most `maxChannels`
 * channels a frame (a request alone may have more: the gateway refuses it).
 * Requests of other ranges stay waiting, in order.
 */
export function takeBatches<A extends Asked>(waiting: A[], slots: number, maxChannels: number): Batch<A>[] {
  const out: Batch<A>[] = [];
  while (waiting.length && out.length < slots) {
    const head = waiting[0];
    const group = waiting.filter((a) => a === head || sameRange(head, a));
    for (const part of split(group, slots - out.length, maxChannels).slice(0, slots - out.length)) {
      for (const a of part) waiting.splice(waiting.indexOf(a), 1);
      out.push(batch(part));
    }
  }
  return out;
}

/** `group`, in order, in runs of similar channel counts: `parts` of them, more where `maxChannels` needs. */
function split<A extends Asked>(group: A[], parts: number, maxChannels: number): A[][] {
  const share = Math.ceil(group.reduce((n, a) => n + a.uris.length, 0) / parts);
  const out: A[][] = [];
  let run: A[] = [];
  let count = 0;
  for (const a of group) {
    const full = count >= share && out.length < parts - 1;
    if (run.length && (full || count + a.uris.length > maxChannels)) {
      out.push(run);
      run = [];
      count = 0;
    }
    run.push(a);
    count += a.uris.length;
  }
  if (run.length) out.push(run);
  return out;
}

function batch<A extends Asked>(members: A[]): Batch<A> {
  return {
    members,
    uris: [...new Set(members.flatMap((a) => a.uris))],
    t0: Math.min(...members.map((a) => a.t0)),
    t1: Math.max(...members.map((a) => a.t1)),
    px: Math.max(...members.map((a) => a.px)),
  };
}
