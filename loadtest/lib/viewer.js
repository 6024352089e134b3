// One simulated viewer: a WebSocket to a gateway that opens screens (channel sets),
// measures screen-open time, counts delivered updates, gaps by (ep, seq) and
// end-to-end latency (source timestamp `t` → receipt, same clock on one machine).
import { WebSocket } from 'k6/websockets';
import { clearTimeout, setTimeout } from 'k6/timers';

import { closeCounter } from './closes.js';
import * as m from './metrics.js';
import { codec, sub, unsub, wsUrl } from './protocol.js';
import { UpdScanner } from './scan.js';

/** Milliseconds between additions of the locally summed update and frame counts. */
const FLUSH_MS = 250;
/** Milliseconds a viewer waits for its first screen before it counts an error. */
const OPEN_TIMEOUT_MS = 20000;

/** Per-group bookkeeping: last (ep, seq) per channel index, channels still unseen. */
class Group {
  constructor(frame, openedAt) {
    const n = frame.ch.length;
    this.n = n;
    this.seq = new Array(n).fill(-1);
    this.ep = new Array(n).fill(-1);
    this.live = new Uint8Array(n); // 1 once a live update followed the snapshot
    this.openedAt = openedAt;
    this.pending = 0;
    for (let k = 0; k < n; k++) {
      const v = frame.val[k];
      if (v && typeof v.seq === 'number') {
        this.seq[k] = v.seq;
        this.ep[k] = v.ep;
      } else {
        this.pending++;
      }
    }
  }
}

/**
 * Run one viewer until `holdMs` after its first screen opened, or the socket
 * closes. A viewer whose first screen has not opened `OPEN_TIMEOUT_MS` after it
 * started counts an error (kind `open-timeout`) and closes.
 *
 * Options: url (gateway base URL), format ('msgpack' | 'json'), screens (list of
 * channel-URI lists, opened one after the other as `churnMs` passes, or all at once
 * when churnMs is 0), holdMs, role (tag: 'healthy' …), startedAt (ms, scenario
 * start, for latency windows), windowMs, pts (> 0: arrays at most that many
 * points, sub.pts).
 */
export function viewer(o) {
  const c = codec(o.format);
  const scanner = o.format === 'json' ? null : new UpdScanner();
  // a role tag only where a scenario mixes roles: tags cost k6 CPU on every sample
  const tags = o.role ? { role: o.role } : undefined;
  const createdAt = Date.now();
  const ws = new WebSocket(wsUrl(o.url, o.format));
  ws.binaryType = 'arraybuffer';
  const groups = {}; // sid → Group
  const requests = {}; // request id → time the sub was sent
  let nextId = 1;
  let screenIndex = 0;
  let closing = false;
  let opened = false; // the first screen's snapshot arrived: the hold runs
  const timers = [];
  // counters are summed locally and added every FLUSH_MS: a Counter.add costs k6
  // ~8 µs, more than the rest of a frame's accounting
  let pendingUpdates = 0;
  let pendingFrames = 0;
  let flushedAt = createdAt;

  function flushCounts(now) {
    if (pendingFrames) {
      m.updates.add(pendingUpdates, tags);
      m.frames.add(pendingFrames, tags);
      pendingUpdates = 0;
      pendingFrames = 0;
    }
    flushedAt = now;
  }

  function openScreen(first) {
    const channels = o.screens[screenIndex % o.screens.length];
    screenIndex++;
    const id = nextId++;
    requests[id] = first ? createdAt : Date.now();
    ws.send(c.encode(sub(id, channels, o.pts || 0)));
  }

  function screenReady(group, now) {
    m.screenOpen.add(now - group.openedAt, tags);
    if (o.churnMs > 0 && !closing) {
      timers.push(setTimeout(() => churn(group), o.churnMs));
    }
  }

  function churn(group) {
    if (closing) return;
    for (const sid in groups) {
      if (groups[sid] === group) {
        delete groups[sid];
        ws.send(c.encode(unsub(nextId++, Number(sid))));
        m.unsubscribed.add(1, tags);
      }
    }
    openScreen(false);
  }

  function onSnap(f, now) {
    if (f.id === null || f.id === undefined || requests[f.id] === undefined) {
      // unsolicited (bus back, or caught up after falling behind): replaces the
      // group's state, is neither a screen opening nor a gap
      if (groups[f.sid]) groups[f.sid] = new Group(f, groups[f.sid].openedAt);
      m.resnaps.add(1, tags);
      return;
    }
    const group = new Group(f, requests[f.id]);
    delete requests[f.id];
    groups[f.sid] = group;
    m.screensOpened.add(1, tags);
    if (!opened) {
      opened = true;
      timers.push(setTimeout(stop, o.holdMs));
    }
    if (group.pending === 0) screenReady(group, now);
  }

  // u: {sid, i, t, seq, ep} (parallel arrays; t null where the value was null)
  function onUpd(u, now) {
    const group = groups[u.sid];
    if (!group) return; // late frames of an unsubscribed group
    const idx = u.i;
    let oldest = Infinity;
    let gapCount = 0;
    let snapshotGapCount = 0;
    let regressions = 0;
    for (let j = 0; j < idx.length; j++) {
      const t = u.t[j];
      if (t === null || t === undefined) continue;
      const k = idx[j];
      const seq = u.seq[j];
      const ep = u.ep[j];
      if (ep === group.ep[k]) {
        const d = seq - group.seq[k];
        if (d > 1) {
          if (group.live[k]) gapCount += d - 1;
          else snapshotGapCount += d - 1;
        } else if (d <= 0) regressions++;
      } else if (group.seq[k] === -1) {
        group.pending--;
        if (group.pending === 0) screenReady(group, now);
      }
      group.seq[k] = seq;
      group.ep[k] = ep;
      group.live[k] = 1;
      if (t < oldest) oldest = t;
    }
    pendingUpdates += idx.length;
    pendingFrames++;
    if (now - flushedAt >= FLUSH_MS) flushCounts(now);
    if (gapCount) m.gaps.add(gapCount, tags);
    if (snapshotGapCount) m.snapshotGaps.add(snapshotGapCount, tags);
    if (regressions) m.regressions.add(regressions, tags);
    if (oldest !== Infinity) {
      m.addLatency(now - oldest / 1e6, now - o.startedAt, o.windowMs, tags);
    }
  }

  // the same parallel arrays from a fully decoded frame (JSON mode, or fallback)
  function updArrays(f) {
    const n = f.i.length;
    const u = { sid: f.sid, i: f.i, t: new Array(n), seq: new Array(n), ep: new Array(n) };
    for (let j = 0; j < n; j++) {
      const v = f.val[j];
      u.t[j] = v ? v.t : null;
      u.seq[j] = v ? v.seq : null;
      u.ep[j] = v ? v.ep : null;
    }
    return u;
  }

  ws.onmessage = (event) => {
    const now = Date.now();
    let f;
    try {
      if (scanner) {
        const u = scanner.scan(event.data);
        if (u) {
          onUpd(u, now);
          return;
        }
      }
      f = c.decode(event.data);
    } catch (e) {
      m.errors.add(1, { kind: 'decode' });
      return;
    }
    switch (f.op) {
      case 'upd':
        onUpd(updArrays(f), now);
        break;
      case 'snap':
        onSnap(f, now);
        break;
      case 'hello':
        if (o.churnMs > 0) openScreen(true);
        else for (let s = 0; s < o.screens.length; s++) openScreen(s === 0);
        break;
      case 'stats':
        m.missed.add(f.missed || 0, tags);
        break;
      case 'err':
        m.errors.add(1, { kind: String(f.code) });
        break;
      default:
        break; // meta, pong, bus, put replies: not measured here
    }
  };

  ws.onerror = () => {
    if (!closing) m.errors.add(1, { kind: 'socket' });
  };

  ws.onclose = (event) => {
    for (const t of timers) clearTimeout(t);
    flushCounts(Date.now());
    if (!closing) {
      m.unexpectedCloses.add(1, { code: String(event.code) });
      closeCounter(event.code).add(1);
    }
    closing = true;
  };

  function stop() {
    closing = true;
    ws.close();
  }

  timers.push(
    setTimeout(() => {
      if (opened || closing) return;
      m.errors.add(1, { kind: 'open-timeout' });
      stop();
    }, OPEN_TIMEOUT_MS),
  );
}
