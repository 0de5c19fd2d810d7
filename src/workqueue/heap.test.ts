import { describe, expect, it } from 'vitest';
import { MinHeap } from './heap.ts';

interface Entry {
  value: number;
  index: number;
}

describe('MinHeap', () => {
  it.each([1, 2, 3, 4, 5])('pops in order after random pushes, pops and decreases (seed %i)', (seed) => {
    let s = seed;
    const rand = () => {
      s = (s * 48271) % 2147483647; // Lehmer generator: deterministic per seed
      return s / 2147483647;
    };
    const heap = new MinHeap<Entry>((a, b) => a.value < b.value);
    const model: Entry[] = [];
    for (let op = 0; op < 2000; op++) {
      const r = rand();
      if (r < 0.5 || model.length === 0) {
        const entry = { value: Math.floor(rand() * 1000), index: -1 };
        heap.push(entry);
        model.push(entry);
      } else if (r < 0.75) {
        const entry = model[Math.floor(rand() * model.length)];
        entry.value -= Math.floor(rand() * 500);
        heap.decreased(entry);
      } else {
        const min = Math.min(...model.map((e) => e.value));
        const top = heap.pop();
        expect(top?.value).toBe(min);
        model.splice(model.indexOf(top!), 1);
      }
      expect(heap.size).toBe(model.length);
    }
    const rest: number[] = [];
    for (let top = heap.pop(); top !== undefined; top = heap.pop()) rest.push(top.value);
    expect(rest).toEqual(model.map((e) => e.value).sort((a, b) => a - b));
  });

  it('is empty after clear', () => {
    const heap = new MinHeap<Entry>((a, b) => a.value < b.value);
    heap.push({ value: 1, index: -1 });
    heap.clear();
    expect(heap.size).toBe(0);
    expect(heap.peek()).toBeUndefined();
    expect(heap.pop()).toBeUndefined();
  });
});
