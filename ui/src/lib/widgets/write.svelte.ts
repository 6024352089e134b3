/**
 * The life of one write from a widget: optional confirmation, the put, and the
 * gateway's answer (kept visible until the next write). A Tango command runs the
 * same way ({@link CommandAction}): it is a write to the control system.
 */
import type { Gateway, PutResult } from '../transport/gateway.svelte';
import type { ChannelState } from '../transport/channel.svelte';
import { isLocalWritable } from '../transport/local/kinds';
import type { NdArray } from '../transport/codec';

export type WritePhase = 'idle' | 'confirm' | 'pending' | 'ok' | 'error';

/** What a write goes to: a channel (its metadata says whether it is read-only). */
type Target = Pick<ChannelState, 'uri' | 'meta'>;

export class WriteAction {
  phase = $state<WritePhase>('idle');
  /** the value waiting for confirmation or being written */
  proposed = $state<unknown>(null);
  message = $state('');
  protected gateway: Gateway;
  #target: Target;
  #confirm: boolean;

  constructor(gateway: Gateway, channel: Target, confirm: boolean) {
    this.gateway = gateway;
    this.#target = channel;
    this.#confirm = confirm;
  }

  /** Writes are possible: granted by the gateway, connection live, channel not read-only. */
  get enabled(): boolean {
    if (isLocalWritable(this.#target.uri)) return true; // a value of this tab: touches no hardware
    return this.gateway.write && this.gateway.isLive && !this.gateway.rewound && this.#target.meta?.w !== false;
  }

  /** Why writes are off, for the tooltip. */
  get reason(): string {
    if (isLocalWritable(this.#target.uri)) return '';
    if (!this.gateway.write) return 'view only: this session may watch values but not set them (sign in with write access to set them)';
    if (!this.gateway.isLive) return 'offline: not connected to the gateway (values are set again once it is back)';
    if (this.gateway.rewound) return 'showing the past: back to live to set values';
    if (this.#target.meta?.w === false) return 'read-only: the control system does not let anyone set this channel';
    return '';
  }

  /** Why writes are off, in a word or two shown beside the widget (empty when they are on). */
  get short(): string {
    if (isLocalWritable(this.#target.uri)) return '';
    if (!this.gateway.write) return 'view only';
    if (!this.gateway.isLive) return 'offline';
    if (this.gateway.rewound) return 'past';
    if (this.#target.meta?.w === false) return 'read-only';
    return '';
  }

  /** The confirmation's question, before its `?`: verb and object. */
  get question(): [string, string] {
    return ['write', String(this.proposed)];
  }

  /** Ask to write `v`: asks for confirmation first when configured. */
  request(v: unknown): void {
    if (!this.enabled) return;
    this.proposed = v;
    if (this.#confirm) this.phase = 'confirm';
    else void this.confirm();
  }

  cancel(): void {
    this.phase = 'idle';
    this.message = '';
  }

  /** Send the proposed value and show the answer. */
  async confirm(): Promise<PutResult> {
    this.phase = 'pending';
    this.message = '';
    const r = await this.send(this.proposed);
    this.phase = r.ok ? 'ok' : 'error';
    this.message = r.ok ? this.done(r) : `${r.err ?? 'error'}${r.msg ? `: ${r.msg}` : ''}`;
    return r;
  }

  protected send(v: unknown): Promise<PutResult> {
    return this.gateway.put(this.#target.uri, v);
  }

  /** The message of a success. */
  protected done(_r: PutResult): string {
    return 'written';
  }
}

/** Running a Tango command (`tango://…/device/Command`) with an optional argument. */
export class CommandAction extends WriteAction {
  #uri: string;

  constructor(gateway: Gateway, command: string, confirm: boolean) {
    super(gateway, { uri: command, meta: null }, confirm);
    this.#uri = command;
  }

  /** The command's name, as the screen spells it. */
  get name(): string {
    return this.#uri.slice(this.#uri.lastIndexOf('/') + 1);
  }

  override get question(): [string, string] {
    const arg = this.proposed === undefined ? '' : `(${String(this.proposed)})`;
    return ['run', `${this.name}${arg}`];
  }

  protected override send(arg: unknown): Promise<PutResult> {
    return this.gateway.command(this.#uri, arg);
  }

  /** The command's output when it has one, else "done". */
  protected override done(r: PutResult): string {
    if (r.v === undefined) return 'done';
    const items = listOf(r.v);
    return `→ ${items ? `[${items.join(', ')}]` : String(r.v)}`;
  }
}

/** The elements of a list or decoded typed array (`{data, shape}`), else null. */
function listOf(v: unknown): unknown[] | null {
  if (Array.isArray(v)) return v;
  if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<unknown>);
  if (v && typeof v === 'object' && 'data' in v && 'shape' in v) return Array.from((v as NdArray).data);
  return null;
}
