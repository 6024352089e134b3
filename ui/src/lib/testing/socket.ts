/** A WebSocket test double: open at once, keeping what the page sends (JSON mode). */
export class Socket {
  static last: Socket;
  readyState = 1;
  binaryType = '';
  sent: { op: string; id: number; ch?: string[] }[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: (() => void) | null = null;
  constructor(readonly url: string) {
    Socket.last = this;
  }
  send(data: string) {
    this.sent.push(JSON.parse(data));
  }
  close() {}
}
