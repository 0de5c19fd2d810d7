/**
 * The informer cache: objects keyed `namespace/name` (or `name` when cluster-scoped), with named
 * secondary indexes kept exact across add, update, delete and replace. Like client-go's
 * thread-safe store, it hands out the stored objects themselves: callers must not mutate them.
 */
import { type KubeObject, objectKey } from '../api/meta.ts';

/** The values an object is filed under in one index (duplicates are ignored). */
export type IndexFunc<T> = (obj: T) => string[];

/** The built-in index: every object filed under its namespace ("" when cluster-scoped). */
export const NAMESPACE_INDEX = 'namespace';

export function keyOf(obj: KubeObject): string {
  return objectKey(obj.metadata);
}

export class Store<T extends KubeObject> {
  private items = new Map<string, T>();
  /** The indexes added to the built-in one. */
  private readonly indexers = new Map<string, IndexFunc<T>>();
  /** index name → index value → keys filed under that value. */
  private indices = new Map<string, Map<string, Set<string>>>();
  /** The built-in index: namespace → keys. The namespace is part of the key: nothing to keep per object. */
  private namespaces = new Map<string, Set<string>>();
  /**
   * key → the values the object was filed under, one list per index in `indices` order (no entry while
   * there are none). Kept rather than recomputed from the old object, so removal stays exact even if
   * someone mutated a cached object.
   */
  private filed = new Map<string, string[][]>();
  /** Index bucket → the frozen array `byIndexShared` handed out for it; dropped whenever the bucket changes. */
  private readonly shared = new WeakMap<Set<string>, readonly T[]>();
  private lastReplaceRv = '';

  constructor(indexers: Record<string, IndexFunc<T>> = {}) {
    for (const [name, fn] of Object.entries(indexers)) this.addIndexer(name, fn);
  }

  get size(): number {
    return this.items.size;
  }

  /** Adds an index; objects already stored are filed in it at once. */
  addIndexer(name: string, fn: IndexFunc<T>): void {
    if (name === NAMESPACE_INDEX || this.indexers.has(name))
      throw new Error(`indexer ${JSON.stringify(name)} already exists`);
    // Compute everything first, so a throwing index function leaves the store unchanged.
    const computed = [...this.items].map(([key, obj]) => [key, unique(fn(obj))] as const);
    const index = new Map<string, Set<string>>();
    for (const [key, values] of computed) {
      for (const value of values) fileUnder(index, key, value);
      const filed = this.filed.get(key);
      if (filed) filed.push(values);
      else this.filed.set(key, [values]);
    }
    this.indexers.set(name, fn);
    this.indices.set(name, index);
  }

  /** Inserts the object under its key, or replaces the one there. */
  add(obj: T): void {
    const key = keyOf(obj);
    const values = this.compute(obj);
    if (this.items.has(key)) this.unindex(key);
    this.items.set(key, obj);
    this.index(key, values);
  }

  update(obj: T): void {
    this.add(obj);
  }

  /** Removes an object, given it or its key; unknown keys are ignored. */
  delete(objOrKey: T | string): void {
    const key = typeof objOrKey === 'string' ? objOrKey : keyOf(objOrKey);
    if (!this.items.has(key)) return;
    this.unindex(key);
    this.items.delete(key);
  }

  /** An empty store with the same indexes: fill it, then hand it to `replace`. */
  emptyCopy(): Store<T> {
    return new Store<T>(Object.fromEntries(this.indexers));
  }

  /**
   * Swaps the whole content for `items` (a relist at `resourceVersion`) and returns the content it replaced.
   * `items` is a list (a key listed twice keeps its last object) or a store from `emptyCopy`, which is left
   * empty: its content is taken as it is, already indexed (unless an index was added since the copy).
   */
  replace(items: readonly T[] | Store<T>, resourceVersion: string): ReadonlyMap<string, T> {
    const previous = this.items;
    if (items instanceof Store && this.indexedAs(items)) {
      [this.items, this.filed, this.indices, this.namespaces] = [
        items.items,
        items.filed,
        items.indices,
        items.namespaces,
      ];
      items.empty();
    } else {
      const list = items instanceof Store ? items.list() : items;
      // Every index value is computed before anything changes, so an indexer that throws leaves the store as it was.
      const computed = list.map((obj) => this.compute(obj));
      this.empty();
      if (items instanceof Store) items.empty();
      for (let i = 0; i < list.length; i++) {
        const key = keyOf(list[i]);
        if (this.items.has(key)) this.unindex(key);
        this.items.set(key, list[i]);
        this.index(key, computed[i]);
      }
    }
    this.lastReplaceRv = resourceVersion;
    return previous;
  }

  /** The resourceVersion given to the last replace ("" before the first). */
  resourceVersion(): string {
    return this.lastReplaceRv;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  has(key: string): boolean {
    return this.items.has(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  /** Key and object of every stored object. */
  entries(): IterableIterator<[string, T]> {
    return this.items.entries();
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  /** Objects filed under `value` in the index `name`, in a fresh array the caller may keep or change. */
  byIndex(name: string, value: string): T[] {
    const objects: T[] = [];
    // Straight from the bucket: this is on every controller's sync path, so no intermediate key array.
    for (const key of this.indexNamed(name).get(value) ?? []) objects.push(this.items.get(key)!);
    return objects;
  }

  /**
   * Objects filed under `value` in the index `name`, as one frozen array shared by every caller until an object
   * filed there is added, replaced or removed: the same array again means the same objects.
   */
  byIndexShared(name: string, value: string): readonly T[] {
    const keys = this.indexNamed(name).get(value);
    if (!keys) return NONE;
    let objects = this.shared.get(keys);
    if (!objects) {
      objects = Object.freeze(this.byIndex(name, value));
      this.shared.set(keys, objects);
    }
    return objects as readonly T[];
  }

  /** Keys filed under `value` in the index `name`. */
  indexKeys(name: string, value: string): string[] {
    return [...(this.indexNamed(name).get(value) ?? [])];
  }

  /** The values of an index that have at least one object filed under them. */
  indexValues(name: string): string[] {
    return [...this.indexNamed(name).keys()];
  }

  byNamespace(namespace: string): T[] {
    return this.byIndex(NAMESPACE_INDEX, namespace);
  }

  /** Drops the content, keeping the indexes (fresh containers: the old ones may live on elsewhere). */
  private empty(): void {
    this.items = new Map();
    this.filed = new Map();
    this.indices = new Map([...this.indices.keys()].map((name) => [name, new Map()]));
    this.namespaces = new Map();
  }

  /** Whether `other` files objects as this store does: the same index functions, in the same order. */
  private indexedAs(other: Store<T>): boolean {
    const mine = [...this.indexers];
    return (
      other.indexers.size === mine.length &&
      [...other.indexers].every(([name, fn], i) => mine[i][0] === name && mine[i][1] === fn)
    );
  }

  private indexNamed(name: string): Map<string, Set<string>> {
    const index = name === NAMESPACE_INDEX ? this.namespaces : this.indices.get(name);
    if (!index) throw new Error(`no indexer named ${JSON.stringify(name)}`);
    return index;
  }

  /** The values `obj` is filed under in each of `indices`. */
  private compute(obj: T): string[][] {
    const out: string[][] = [];
    for (const fn of this.indexers.values()) out.push(unique(fn(obj)));
    return out;
  }

  /** `values`: as `compute` gives them. */
  private index(key: string, values: string[][]): void {
    this.shared.delete(fileUnder(this.namespaces, key, namespaceOf(key)));
    if (!values.length) return;
    let i = 0;
    for (const index of this.indices.values()) {
      for (const value of values[i++]) this.shared.delete(fileUnder(index, key, value));
    }
    this.filed.set(key, values);
  }

  /** Takes a stored key out of every index. */
  private unindex(key: string): void {
    this.unfile(this.namespaces, key, namespaceOf(key));
    const values = this.filed.get(key);
    if (!values) return;
    let i = 0;
    for (const index of this.indices.values()) {
      for (const value of values[i++]) this.unfile(index, key, value);
    }
    this.filed.delete(key);
  }

  private unfile(index: Map<string, Set<string>>, key: string, value: string): void {
    const keys = index.get(value);
    if (!keys) return;
    keys.delete(key);
    this.shared.delete(keys);
    // Drop empty buckets so churn over many distinct values does not leak memory.
    if (keys.size === 0) index.delete(value);
  }
}

/** The namespace part of a key ("" for a cluster-scoped object's). */
function namespaceOf(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? '' : key.slice(0, slash);
}

function unique(values: string[]): string[] {
  return values.length < 2 ? values : [...new Set(values)];
}

const NONE: readonly never[] = Object.freeze([]);

/** Files `key` under `value`; returns the bucket it went into. */
function fileUnder(index: Map<string, Set<string>>, key: string, value: string): Set<string> {
  let keys = index.get(value);
  if (!keys) {
    keys = new Set();
    index.set(value, keys);
  }
  return keys.add(key);
}
