import { describe, expect, it } from 'vitest';
import * as echarts from 'echarts';
import { gaugeSplits, tickLabel, valueSplits } from './ticks';

describe('gauge ticks', () => {
  it('gives a small gauge fewer labels, round intervals, 2 to 10', () => {
    expect(gaugeSplits(20)).toBe(2);
    expect(gaugeSplits(60)).toBe(5);
    expect(gaugeSplits(80)).toBe(5);
    expect(gaugeSplits(120)).toBe(10);
    expect(gaugeSplits(400)).toBe(10);
    // neighbouring labels stay ~30 px apart along the dial
    for (const r of [40, 70, 100, 130]) {
      const n = gaugeSplits(r);
      expect((1.5 * Math.PI * 0.75 * r) / (n + 1)).toBeGreaterThanOrEqual(26);
    }
  });

  it('labels with at most 3 significant digits', () => {
    expect(tickLabel(1.4285714285714)).toBe('1.43');
    expect(tickLabel(-10)).toBe('-10');
    expect(tickLabel(0.25)).toBe('0.25');
    expect(tickLabel(12345)).toBe('12300');
  });
});

// text measured as 6 px a character (jsdom draws no canvas; tick placement does not depend on it)
echarts.setPlatformAPI({ measureText: (text: string) => ({ width: text.length * 6 }) });

/** The ticks ECharts puts on a `scale` value axis `h` px high over values `lo`…`hi`, asking `splits` intervals. */
function valueTicks(chart: echarts.ECharts, h: number, lo: number, hi: number, splits: number): number[] {
  chart.resize({ width: 230, height: h + 60 });
  chart.setOption(
    {
      animation: false,
      grid: { left: 48, right: 10, top: 38, bottom: 22 },
      xAxis: { type: 'value' },
      yAxis: { type: 'value', scale: true, splitNumber: splits },
      series: [{ type: 'line', data: [[0, lo], [1, hi]] }],
    },
    true,
  );
  type Axis = { axis: { scale: { getTicks: () => { value: number }[] } } };
  type Model = { getModel: () => { getComponent: (type: string, i: number) => Axis } };
  return (chart as unknown as Model).getModel().getComponent('yAxis', 0).axis.scale.getTicks().map((t) => t.value);
}

describe('value axis ticks', () => {
  // ranges a trend meets: a sine's first samples, a walk, a counter, a noise band
  const ranges: [number, number][] = [[4.1, 4.9], [4.05, 4.95], [3.9, 5.05], [-0.3, 0.7], [0, 10], [-10, 10], [99, 131], [0.001, 0.0049], [1234, 1301]];
  const chart = echarts.init(null, null, { renderer: 'svg', ssr: true, width: 230, height: 100 });

  it('keeps ticks clear of each other\'s labels (13 px apart at least), from a 40 px plot to a 400 px one', () => {
    for (const h of [40, 45, 50, 60, 70, 79, 80, 90, 100, 119, 120, 140, 160, 199, 200, 300, 400]) {
      for (const [lo, hi] of ranges) {
        const ticks = valueTicks(chart, h, lo, hi, valueSplits(h));
        expect(ticks.length, `${h} px, ${lo}…${hi}`).toBeGreaterThanOrEqual(2);
        expect(h / (ticks.length - 1), `${h} px, ${lo}…${hi}: ${ticks.join(' ')}`).toBeGreaterThanOrEqual(13);
      }
    }
  }, 30_000);

  it('asks for ECharts\' 5 intervals on a tall plot, 1 on a small one', () => {
    expect(valueSplits(400)).toBe(5);
    expect(valueSplits(200)).toBe(5);
    expect(valueSplits(80)).toBe(2);
    expect(valueSplits(40)).toBe(1);
    expect(valueSplits(12)).toBe(1);
    // the default 5 on a small canvas trend's 40 px plot: labels 10 px apart or less (they met)
    expect(40 / (valueTicks(chart, 40, 4.05, 4.95, 5).length - 1)).toBeLessThan(12);
  });
});
