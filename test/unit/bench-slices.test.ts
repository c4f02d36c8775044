import { sliceRatios, type CpuRow } from '../../bench/cpu';

const row = (sliceTotals: number[]) => ({ sliceTotals }) as CpuRow;

test('slice by slice: the median of paired ratios, their range, unpaired or unmeasured slices left out', () => {
  // The host slows down over the run: each pair moves together, the ratio stays.
  expect(sliceRatios(row([0.3, 0.6, 0.9, 1.2]), row([0.1, 0.2, 0.3, 0.4]))).toEqual({
    median: expect.closeTo(3, 10),
    low: expect.closeTo(3, 10),
    high: expect.closeTo(3, 10),
    n: 4,
  });
  const r = sliceRatios(row([0.2, 0.5, 0.33, NaN, 0.4]), row([0.1, 0.1, 0.11, 0.1]))!;
  expect(r.n).toBe(3);
  expect(r.median).toBeCloseTo(3, 10);
  expect(r.low).toBeCloseTo(2, 10);
  expect(r.high).toBeCloseTo(5, 10);
  expect(sliceRatios(row([NaN]), row([0.1]))).toBeNull();
});
