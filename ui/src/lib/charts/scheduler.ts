/**
 * Chart redraws, spread over animation frames: each chart is redrawn at most once
 * a frame, oldest request first, and a frame stops drawing charts once
 * `CHART_BUDGET_MS` is spent (the rest are drawn in the next frame). Fifty trends
 * fed by one scan of an IOC would otherwise all redraw in one long frame.
 *
 * Requests made during the gateway's commit run right after it, in the same frame
 * (a microtask), so a chart shows a value in the frame that committed it.
 */
export const CHART_BUDGET_MS = 8;

const queue = new Set<() => void>();
let scheduled = false;

function schedule(nextFrame: boolean): void {
  if (scheduled) return;
  scheduled = true;
  if (nextFrame) requestAnimationFrame(run);
  else queueMicrotask(run);
}

function run(): void {
  scheduled = false;
  const start = performance.now();
  for (const draw of queue) {
    queue.delete(draw);
    draw();
    if (performance.now() - start > CHART_BUDGET_MS) break;
  }
  if (queue.size > 0) schedule(true);
}

/** Ask for `draw` to run once soon (a pending request is not repeated). */
export function requestRedraw(draw: () => void): void {
  if (queue.has(draw)) return;
  queue.add(draw);
  schedule(false);
}

/** Drop a pending request (the chart is going away). */
export function cancelRedraw(draw: () => void): void {
  queue.delete(draw);
}
