/**
 * The life of one write from a widget: optional confirmation, the put, and the
 * gateway's answer (kept visible until the next write).
 */
import type { Gateway, PutResult } from '../transport/gateway.svelte';
import type { ChannelState } from '../transport/channel.svelte';
import { isLocalWritable } from '../transport/local/kinds';

export type WritePhase = 'idle' | 'confirm' | 'pending' | 'ok' | 'error';

export class WriteAction {
  phase = $state<WritePhase>('idle');
  /** the value waiting for confirmation or being written */
  proposed = $state<unknown>(null);
  message = $state('');
  #gateway: Gateway;
  #channel: ChannelState;
  #confirm: boolean;

  constructor(gateway: Gateway, channel: ChannelState, confirm: boolean) {
    this.#gateway = gateway;
    this.#channel = channel;
    this.#confirm = confirm;
  }

  /** Writes are possible: granted by the gateway, connection live, channel not read-only. */
  get enabled(): boolean {
    if (isLocalWritable(this.#channel.uri)) return true; // a value of this tab: touches no hardware
    return this.#gateway.write && this.#gateway.isLive && this.#channel.meta?.w !== false;
  }

  /** Why writes are off, for the tooltip. */
  get reason(): string {
    if (isLocalWritable(this.#channel.uri)) return '';
    if (!this.#gateway.write) return 'the gateway grants no write to this session';
    if (!this.#gateway.isLive) return 'not connected';
    if (this.#channel.meta?.w === false) return 'read-only channel';
    return '';
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
    const r = await this.#gateway.put(this.#channel.uri, this.proposed);
    this.phase = r.ok ? 'ok' : 'error';
    this.message = r.ok ? 'written' : `${r.err ?? 'error'}${r.msg ? `: ${r.msg}` : ''}`;
    return r;
  }
}
