/** Gateway ⇄ browser frames (docs/protocol.md). Every frame is a map with an `op`. */

/** A value payload from the bus (ValueMsg). `v` is a scalar, string, or typed array. */
export interface ValueMsg {
  /** a scalar (integers beyond ±2^53 as bigint, exact), string, or typed array */
  v: unknown;
  /** source timestamp, ns since the Unix epoch (a number: ~256 ns resolution is plenty) */
  t: number;
  /** 0 none, 1 minor, 2 major, 3 invalid */
  sev: number;
  st?: string;
  seq?: number;
  ep?: number;
  /** source connected */
  c: boolean;
  /** a reduced array (sub.pts): the index in the full array of each point of `v` */
  x?: unknown;
  /** a reduced array: the full array's length; a binned image: the full image's shape */
  n?: number | number[];
  /** a binned image (sub.pts): the factor, each pixel the maximum of a bin × bin block */
  bin?: number;
  /** shift form (sub.shift): elements dropped from the front of the base value's array; no `v` */
  sh?: number;
  /** shift form: the typed array appended */
  tail?: unknown;
  /** shift form: seq (same ep) of the value it is built on */
  base?: number;
}

/** A metadata payload from the bus (MetaMsg). */
export interface MetaMsg {
  dt: string;
  shape: number[];
  w: boolean;
  unit?: string;
  prec?: number;
  disp?: [number, number];
  warn?: [number, number];
  alarm?: [number, number];
  ctrl?: [number, number];
  labels?: string[];
  desc?: string;
  /** the source's own type name */
  native?: string;
  /** table columns (dt 'table'): key in v, heading, element type */
  cols?: { name: string; label: string; dt: string }[];
  /** present for images: v is [h, w] or [h, w, 3] */
  img?: { color: 'mono' | 'bayer' | 'rgb' };
}

export interface HelloFrame {
  op: 'hello';
  ver: number;
  gw: string;
  /** the principal; '' for a socket that must still send its token (`auth`) */
  user: string;
  write: boolean;
  /** when the connection's token ends (Unix s); absent without a token */
  exp?: number;
  limits?: Record<string, number>;
}
/** What the socket may do now: the answer to `auth`, or unasked (id null) when its token expired or the role file changed. */
export interface AuthFrame {
  op: 'auth';
  id: number | null;
  user: string;
  write: boolean;
  cmd: boolean;
  screens: string[];
  exp: number | null;
  expired?: true;
  msg?: string;
}
export interface SnapFrame {
  op: 'snap';
  id: number | null;
  sid: number;
  ch: string[];
  val: (ValueMsg | null)[];
  meta: (MetaMsg | null)[];
  /** indices of channels with no live source at snapshot time (liveness) */
  stale?: number[];
  /** indices whose (large) values are null here and follow in `upd` frames right after */
  more?: number[];
}
export interface UpdFrame {
  op: 'upd';
  sid: number;
  i: number[];
  val: ValueMsg[];
}
export interface MetaFrame {
  op: 'meta';
  sid: number;
  i: number[];
  meta: MetaMsg[];
}
export interface StatsFrame {
  op: 'stats';
  sid: number;
  missed: number;
  conflated: number;
}
export interface PutReplyFrame {
  op: 'put';
  id: number;
  ok: boolean;
  err?: string;
  msg?: string;
}
/** The answer to a Tango command: a put reply plus the command's output `v` (if any). */
export interface CmdReplyFrame {
  op: 'cmd';
  id: number;
  ok: boolean;
  v?: unknown;
  err?: string;
  msg?: string;
}
export interface ErrFrame {
  op: 'err';
  id: number | null;
  code: string;
  msg: string;
}
export interface BusFrame {
  op: 'bus';
  up: boolean;
}
/** Liveness: these channels of group `sid` lost (`up` false) or regained (`up` true) their source. */
export interface SrcFrame {
  op: 'src';
  sid: number;
  i: number[];
  up: boolean;
}
export interface PongFrame {
  op: 'pong';
  id: number;
}
/** A watched screen was saved, reverted or deleted (answer to `watch`). */
export interface ScreenFrame {
  op: 'screen';
  name: string;
  rev: number;
  by: string;
  at: string;
  deleted: boolean;
}
/** The answer to `unsub`. */
export interface UnsubFrame {
  op: 'unsub';
  id: number;
  sid: number;
}
/** The answer to `watch`. */
export interface WatchFrame {
  op: 'watch';
  id: number;
}

/** One alarm's state, as the alarm service publishes it (docs/bus.md, alarm.schema.json). */
export interface AlarmState {
  ch: string;
  area: string;
  n: number;
  ev: string;
  sev: number;
  st: string;
  c: boolean;
  lat: number;
  ackd: boolean;
  since: number;
  t: number;
  at: number;
  v?: number | string | boolean;
  desc?: string;
  ack?: { by: string; t: number };
  shelf?: { by: string; t: number; until: number; why: string };
  who?: string;
  why?: string;
  gone?: boolean;
}

/** The alarms this socket follows: the counts, and the whole list (`all`) or what changed (`up`). */
export interface AlarmsFrame {
  op: 'alarms';
  id?: number;
  unack: number;
  act: number;
  shelved: number;
  svc: boolean;
  all?: AlarmState[];
  up?: AlarmState[];
}

/** The answer to `hist`: per channel typed arrays (ms, value, severity) or null, an error or null. */
export interface HistFrame {
  op: 'hist';
  id: number;
  t0: number;
  t1: number;
  px: number;
  ch: string[];
  t: ({ data: Float64Array; shape: number[] } | null)[];
  v: ({ data: Float64Array; shape: number[] } | null)[];
  sev: ({ data: Uint8Array; shape: number[] } | null)[];
  err: ({ code: string; msg: string } | null)[];
  src: (string | null)[];
}

/** The answer to `at` (and the first answer to `play`): per channel its value and metadata then. */
export interface AtFrame {
  op: 'at';
  id: number;
  t: number;
  ch: string[];
  /** the value message it had then; `kt`: when an array's copy shown was kept (ms) */
  val: ((ValueMsg & { kt?: number }) | null)[];
  meta: (MetaMsg | null)[];
  src: (string | null)[];
  /** `not_kept` with `since` (ms of its oldest kept value, or null) */
  err: ({ code: string; msg: string; since?: number | null } | null)[];
  /** channels whose metadata is the oldest kept, later than `t` */
  mlate?: number[];
}

/** One frame of a playback: the channels (indexes into the `at` answer's `ch`) that changed by `t`. */
export interface PbFrame {
  op: 'pb';
  id: number;
  t: number;
  i: number[];
  val: (ValueMsg | null)[];
  mi?: number[];
  meta?: (MetaMsg | null)[];
  end?: 'now' | 'halt' | 'error';
  msg?: string;
}

export interface HaltFrame {
  op: 'halt';
  id: number;
  play: number;
}

export interface StepFrame {
  op: 'step';
  id: number;
  ch: string;
  t: number | null;
}

export type ServerFrame =
  | AtFrame
  | PbFrame
  | HaltFrame
  | StepFrame
  | HistFrame
  | HelloFrame
  | AuthFrame
  | SnapFrame
  | UpdFrame
  | MetaFrame
  | StatsFrame
  | PutReplyFrame
  | CmdReplyFrame
  | ErrFrame
  | BusFrame
  | SrcFrame
  | PongFrame
  | ScreenFrame
  | UnsubFrame
  | WatchFrame
  | AlarmsFrame;

export type ClientFrame =
  | { op: 'sub'; id: number; ch: string[]; pts?: Record<string, number>; shift?: boolean }
  | { op: 'unsub'; id: number; sid: number }
  | { op: 'put'; id: number; ch: string; v: unknown }
  | { op: 'cmd'; id: number; ch: string; v?: unknown }
  | { op: 'ping'; id: number }
  | { op: 'hist'; id: number; ch: string[]; t0: number; t1: number; px: number }
  | { op: 'watch'; id: number; screens: string[] }
  | { op: 'auth'; id: number; token: string }
  | { op: 'alarms'; id: number; full?: boolean; off?: boolean }
  | { op: 'at'; id: number; ch: string[]; t: number; pts?: Record<string, number> }
  | { op: 'play'; id: number; ch: string[]; t: number; speed: number; pts?: Record<string, number> }
  | { op: 'halt'; id: number; play: number }
  | { op: 'step'; id: number; ch: string; t: number; dir: -1 | 1 };
