/**
 * A palette type dragged onto the screen with a finger (or a pen), as a phone
 * does it: hold the type a moment (it lifts: `.lifted`), drag it, let go over a
 * cell. A swipe that starts on the palette without the hold still scrolls the
 * page, and a tap still adds the type (the button's click). A mouse keeps the
 * browser's drag and drop (the button is `draggable`), which touch does not start.
 */
import type { Attachment } from 'svelte/attachments';

/** How long a finger holds a type before it lifts (ms): below a long press (500 ms). */
export const HOLD_MS = 250;
/** How far a finger may wander before the hold (px): further is a swipe. */
export const SLOP_PX = 10;

/**
 * The attachment of one palette button: `drop` gets the point where the lifted
 * type was let go (it places it when the point is on the screen).
 */
export function fingerDrag(label: string, drop: (clientX: number, clientY: number) => void): Attachment<HTMLElement> {
  return (el) => {
    let state: 'idle' | 'pressed' | 'lifted' | 'dragging' = 'idle';
    let pointer = -1;
    let x0 = 0;
    let y0 = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let ghost: HTMLElement | null = null;
    /** the click a released drag may still bring is not a tap */
    let dragged = false;

    const reset = (): void => {
      clearTimeout(timer);
      state = 'idle';
      pointer = -1;
      el.classList.remove('lifted');
      ghost?.remove();
      ghost = null;
    };
    const follow = (x: number, y: number): void => {
      if (!ghost) {
        ghost = document.createElement('div');
        ghost.className = 'ed-ghost';
        ghost.textContent = label;
        document.body.append(ghost);
      }
      // above the finger, which would hide it
      ghost.style.transform = `translate(${Math.round(x)}px, ${Math.round(y)}px) translate(-50%, -140%)`;
    };
    const down = (e: PointerEvent): void => {
      dragged = false;
      if (e.pointerType === 'mouse' || !e.isPrimary) return;
      reset();
      state = 'pressed';
      pointer = e.pointerId;
      x0 = e.clientX;
      y0 = e.clientY;
      timer = setTimeout(() => {
        state = 'lifted';
        el.classList.add('lifted');
      }, HOLD_MS);
    };
    const move = (e: PointerEvent): void => {
      if (e.pointerId !== pointer) return;
      if (state === 'pressed') {
        if (Math.hypot(e.clientX - x0, e.clientY - y0) > SLOP_PX) reset(); // a swipe: the page scrolls
        return;
      }
      state = 'dragging';
      follow(e.clientX, e.clientY);
    };
    const up = (e: PointerEvent): void => {
      if (e.pointerId !== pointer) return;
      const was = state;
      reset();
      if (was !== 'dragging') return; // a tap (or a hold let go in place): the click adds it
      dragged = true;
      drop(e.clientX, e.clientY);
    };
    // once lifted, the finger's moves drag the type instead of scrolling the page
    const touchmove = (e: TouchEvent): void => {
      if ((state === 'lifted' || state === 'dragging') && e.cancelable) e.preventDefault();
    };
    const click = (e: MouseEvent): void => {
      if (!dragged) return;
      dragged = false;
      e.stopImmediatePropagation();
      e.preventDefault();
    };
    const menu = (e: Event): void => {
      if (state !== 'idle') e.preventDefault(); // a held finger is a drag, not a long press's menu
    };
    el.addEventListener('pointerdown', down);
    el.addEventListener('pointermove', move);
    el.addEventListener('pointerup', up);
    el.addEventListener('pointercancel', reset);
    el.addEventListener('touchmove', touchmove, { passive: false });
    el.addEventListener('click', click);
    el.addEventListener('contextmenu', menu);
    return () => {
      reset();
      el.removeEventListener('pointerdown', down);
      el.removeEventListener('pointermove', move);
      el.removeEventListener('pointerup', up);
      el.removeEventListener('pointercancel', reset);
      el.removeEventListener('touchmove', touchmove);
      el.removeEventListener('click', click);
      el.removeEventListener('contextmenu', menu);
    };
  };
}
