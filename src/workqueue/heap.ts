/** Entries carry their own array position so one can be re-sifted in place after its key changes. */
export interface HeapEntry {
  index: number;
}

/** A binary min-heap ordered by `less`. */
export class MinHeap<T extends HeapEntry> {
  private readonly items: T[] = [];
  private readonly less: (a: T, b: T) => boolean;

  constructor(less: (a: T, b: T) => boolean) {
    this.less = less;
  }

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(entry: T): void {
    entry.index = this.items.length;
    this.items.push(entry);
    this.up(entry.index);
  }

  pop(): T | undefined {
    const top = this.items[0];
    const last = this.items.pop();
    if (last !== undefined && this.items.length > 0) {
      this.place(last, 0);
      this.down(0);
    }
    return top;
  }

  /** Restores the order after `entry`'s key moved earlier. */
  decreased(entry: T): void {
    this.up(entry.index);
  }

  clear(): void {
    this.items.length = 0;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(this.items[i], this.items[parent])) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.items.length;
    for (let left = 2 * i + 1; left < n; left = 2 * i + 1) {
      const right = left + 1;
      const child = right < n && this.less(this.items[right], this.items[left]) ? right : left;
      if (!this.less(this.items[child], this.items[i])) return;
      this.swap(i, child);
      i = child;
    }
  }

  private swap(i: number, j: number): void {
    const a = this.items[i];
    this.place(this.items[j], i);
    this.place(a, j);
  }

  private place(entry: T, i: number): void {
    this.items[i] = entry;
    entry.index = i;
  }
}
