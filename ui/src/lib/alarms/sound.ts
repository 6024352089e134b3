/**
 * The alarm sound: a short two-tone beep every few seconds while unacknowledged
 * alarms exist and the user turned it on (remembered in this browser). Browsers
 * only start audio after a user gesture: turning it on is one.
 */
const KEY = 'synoptic-alarm-sound';
const PERIOD_MS = 4000;

export function soundWanted(): boolean {
  return localStorage.getItem(KEY) === 'on';
}

export function setSoundWanted(on: boolean): void {
  localStorage.setItem(KEY, on ? 'on' : 'off');
}

export class AlarmSound {
  #ctx: AudioContext | null = null;
  #timer: ReturnType<typeof setInterval> | null = null;
  /** beeps played (tests read it) */
  beeps = 0;

  /** Sound (or not) now: `active` when on and unacknowledged alarms exist. */
  set(active: boolean): void {
    if (active && !this.#timer) {
      this.#beep();
      this.#timer = setInterval(() => this.#beep(), PERIOD_MS);
    } else if (!active && this.#timer) {
      clearInterval(this.#timer);
      this.#timer = null;
    }
  }

  #beep(): void {
    this.beeps++;
    try {
      this.#ctx ??= new AudioContext();
      const ctx = this.#ctx;
      const gain = ctx.createGain();
      gain.gain.value = 0.08;
      gain.connect(ctx.destination);
      [880, 660].forEach((hz, i) => {
        const osc = ctx.createOscillator();
        osc.frequency.value = hz;
        osc.connect(gain);
        osc.start(ctx.currentTime + i * 0.18);
        osc.stop(ctx.currentTime + i * 0.18 + 0.15);
      });
    } catch {
      // no audio here (a test browser, a policy): the page still shows the count
    }
  }
}
