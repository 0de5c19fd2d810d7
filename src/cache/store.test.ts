import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../api/meta.ts';
import { type IndexFunc, keyOf, NAMESPACE_INDEX, Store } from './store.ts';

function obj(namespace: string | undefined, name: string, labels: Record<string, string> = {}, rv = '1'): KubeObject {
  return { metadata: { namespace, name, labels, resourceVersion: rv } };
}

const byApp: IndexFunc<KubeObject> = (o) => (o.metadata.labels?.app ? [o.metadata.labels.app] : []);
/** Multi-valued, with duplicates on purpose: every label value. */
const byLabelValue: IndexFunc<KubeObject> = (o) => Object.values(o.metadata.labels ?? {});

function newStore() {
  return new Store<KubeObject>({ app: byApp, labelValue: byLabelValue });
}

describe('Store: keys and basic operations', () => {
  it.each([
    { o: obj('ns', 'a'), key: 'ns/a' },
    { o: obj(undefined, 'node-1'), key: 'node-1' },
  ])('keys $key', ({ o, key }) => {
    const s = newStore();
    s.add(o);
    expect(keyOf(o)).toBe(key);
    expect(s.keys()).toEqual([key]);
    expect(s.get(key)).toBe(o);
  });

  it('update replaces, delete removes by object or key, unknown keys are ignored', () => {
    const s = newStore();
    const a1 = obj('ns', 'a', {}, '1');
    const a2 = obj('ns', 'a', {}, '2');
    s.add(a1);
    s.update(a2);
    expect(s.size).toBe(1);
    expect(s.get('ns/a')).toBe(a2);
    s.delete('ns/missing');
    s.delete(a1);
    expect(s.size).toBe(0);
    s.add(a1);
    s.delete('ns/a');
    expect(s.list()).toEqual([]);
  });

  it('replace swaps the content and records the resourceVersion', () => {
    const s = newStore();
    s.add(obj('ns', 'a', { app: 'x' }));
    s.add(obj('ns', 'b', { app: 'x' }));
    expect(s.resourceVersion()).toBe('');
    s.replace([obj('ns', 'b', { app: 'y' }), obj('other', 'c', { app: 'x' })], '42');
    expect(s.keys().sort()).toEqual(['ns/b', 'other/c']);
    expect(s.indexKeys('app', 'x')).toEqual(['other/c']);
    expect(s.indexKeys('app', 'y')).toEqual(['ns/b']);
    expect(s.byNamespace('ns').map(keyOf)).toEqual(['ns/b']);
    expect(s.resourceVersion()).toBe('42');
  });

  it('replace takes a filled empty copy whole, leaves the copy empty and returns the content it replaced', () => {
    const s = newStore();
    const old = obj('ns', 'a', { app: 'x' });
    s.add(old);
    const staged = s.emptyCopy();
    expect(staged.size).toBe(0);
    staged.add(obj('ns', 'b', { app: 'y' }));
    staged.add(obj('other', 'c', { app: 'x', tier: 'web' }));
    staged.delete('ns/b');
    const previous = s.replace(staged, '7');
    expect([...previous]).toEqual([['ns/a', old]]);
    expect(s.keys()).toEqual(['other/c']);
    expect(s.indexKeys('app', 'x')).toEqual(['other/c']);
    expect(s.indexKeys('labelValue', 'web')).toEqual(['other/c']);
    expect(s.byNamespace('ns')).toEqual([]);
    expect(s.resourceVersion()).toBe('7');
    expect(staged.size).toBe(0);
    expect(staged.indexValues('app')).toEqual([]);
    // The two stores share nothing afterwards.
    staged.add(obj('ns', 'd', { app: 'x' }));
    expect(s.indexKeys('app', 'x')).toEqual(['other/c']);
  });

  it('replace indexes a copy made before an index was added as a list', () => {
    const s = newStore();
    const staged = s.emptyCopy();
    staged.add(obj('ns', 'a', { app: 'x', team: 'blue' }));
    s.addIndexer('team', (o) => [o.metadata.labels?.team ?? '']);
    s.replace(staged, '3');
    expect(s.indexKeys('team', 'blue')).toEqual(['ns/a']);
    expect(s.indexKeys('app', 'x')).toEqual(['ns/a']);
    expect(staged.size).toBe(0);
  });
});

describe('Store: indexes', () => {
  it.each([
    {
      name: 'update moves an object between values',
      steps: (s: Store<KubeObject>) => {
        s.add(obj('ns', 'a', { app: 'x' }));
        s.update(obj('ns', 'a', { app: 'y' }));
      },
      app: { x: [], y: ['ns/a'] },
    },
    {
      name: 'update to no value removes it from the index',
      steps: (s: Store<KubeObject>) => {
        s.add(obj('ns', 'a', { app: 'x' }));
        s.update(obj('ns', 'a'));
      },
      app: { x: [] },
    },
    {
      name: 'delete removes every entry',
      steps: (s: Store<KubeObject>) => {
        s.add(obj('ns', 'a', { app: 'x' }));
        s.add(obj('ns', 'b', { app: 'x' }));
        s.delete('ns/a');
      },
      app: { x: ['ns/b'] },
    },
    {
      name: 'same name in two namespaces are two keys',
      steps: (s: Store<KubeObject>) => {
        s.add(obj('n1', 'a', { app: 'x' }));
        s.add(obj('n2', 'a', { app: 'x' }));
      },
      app: { x: ['n1/a', 'n2/a'] },
    },
  ])('$name', ({ steps, app }) => {
    const s = newStore();
    steps(s);
    for (const [value, keys] of Object.entries(app)) expect(s.indexKeys('app', value).sort()).toEqual(keys);
  });

  it('files an object once per distinct value, and drops values left empty', () => {
    const s = newStore();
    s.add(obj('ns', 'a', { one: 'v', two: 'v', three: 'w' }));
    expect(s.indexKeys('labelValue', 'v')).toEqual(['ns/a']);
    expect(s.indexValues('labelValue').sort()).toEqual(['v', 'w']);
    s.update(obj('ns', 'a', { one: 'w' }));
    expect(s.indexValues('labelValue')).toEqual(['w']);
  });

  it('the namespace index is built in; cluster-scoped objects file under ""', () => {
    const s = new Store<KubeObject>();
    s.add(obj('ns', 'a'));
    s.add(obj(undefined, 'n'));
    expect(s.byNamespace('ns').map(keyOf)).toEqual(['ns/a']);
    expect(s.byIndex(NAMESPACE_INDEX, '').map(keyOf)).toEqual(['n']);
    // Filed by its key: a cached object whose namespace someone changed still leaves its bucket.
    s.get('ns/a')!.metadata.namespace = 'elsewhere';
    s.delete('ns/a');
    expect(s.indexValues(NAMESPACE_INDEX)).toEqual(['']);
  });

  it('an indexer added later indexes what is already stored', () => {
    const s = new Store<KubeObject>();
    s.add(obj('ns', 'a', { app: 'x' }));
    s.addIndexer('app', byApp);
    expect(s.byIndex('app', 'x').map(keyOf)).toEqual(['ns/a']);
  });

  it('rejects unknown and duplicate index names', () => {
    const s = newStore();
    expect(() => s.byIndex('nope', 'x')).toThrow(/no indexer named "nope"/);
    expect(() => s.addIndexer('app', byApp)).toThrow(/already exists/);
    expect(() => s.addIndexer(NAMESPACE_INDEX, byApp)).toThrow(/already exists/);
  });

  it('a throwing index function leaves the store unchanged', () => {
    const s = new Store<KubeObject>({ picky: (o) => (o.metadata.labels?.bad ? oops() : ['ok']) });
    const good = obj('ns', 'a');
    s.add(good);
    expect(() => s.update(obj('ns', 'a', { bad: '1' }))).toThrow('boom');
    expect(s.get('ns/a')).toBe(good);
    expect(s.indexKeys('picky', 'ok')).toEqual(['ns/a']);
  });

  it('keeps removal exact even if a cached object was mutated', () => {
    const s = newStore();
    const a = obj('ns', 'a', { app: 'x' });
    s.add(a);
    a.metadata.labels = { app: 'mutated' };
    s.delete('ns/a');
    expect(s.indexValues('app')).toEqual([]);
  });
});

function oops(): never {
  throw new Error('boom');
}

/** A small seeded generator (mulberry32), so a failing sequence can be replayed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('Store: shared index arrays', () => {
  it('hands out one frozen array per bucket until an object filed there changes', () => {
    const s = newStore();
    const a = obj('ns', 'a', { app: 'web' });
    const b = obj('ns', 'b', { app: 'web' });
    s.add(a);
    s.add(b);
    s.add(obj('ns', 'c', { app: 'db' }));
    const web = s.byIndexShared('app', 'web');
    expect(web).toEqual([a, b]);
    expect(Object.isFrozen(web)).toBe(true);
    expect(s.byIndexShared('app', 'web')).toBe(web);
    expect(s.byIndex('app', 'web')).not.toBe(web); // the copying one is the caller's to change

    s.update(obj('ns', 'c', { app: 'db' }, '2')); // another bucket
    expect(s.byIndexShared('app', 'web')).toBe(web);

    const changes: Array<[string, () => void]> = [
      ['update of a member', () => s.update(obj('ns', 'a', { app: 'web' }, '2'))],
      ['a member added', () => s.add(obj('ns', 'd', { app: 'web' }))],
      ['a member moved out', () => s.update(obj('ns', 'd', { app: 'db' }))],
      ['a member deleted', () => s.delete('ns/b')],
      ['replace', () => s.replace([obj('ns', 'e', { app: 'web' })], '9')],
    ];
    let last = web;
    for (const [what, change] of changes) {
      change();
      const now = s.byIndexShared('app', 'web');
      expect(now, what).not.toBe(last);
      expect(now, what).toEqual(s.byIndex('app', 'web'));
      last = now;
    }
    expect(s.byIndexShared('app', 'none')).toEqual([]);
  });
});

describe('Store: property', () => {
  const indexers: Record<string, IndexFunc<KubeObject>> = {
    [NAMESPACE_INDEX]: (o) => [o.metadata.namespace ?? ''],
    app: byApp,
    labelValue: byLabelValue,
  };

  /** Every index, recomputed from the stored objects alone: value → sorted keys. */
  function recompute(s: Store<KubeObject>, name: string): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const o of s.list()) {
      for (const v of new Set(indexers[name](o))) out.set(v, [...(out.get(v) ?? []), keyOf(o)]);
    }
    for (const keys of out.values()) keys.sort();
    return out;
  }

  function actual(s: Store<KubeObject>, name: string): Map<string, string[]> {
    return new Map(s.indexValues(name).map((v) => [v, s.indexKeys(name, v).sort()]));
  }

  it.each([1, 2, 3, 4, 5, 6, 7, 8])('random add/update/delete/replace keep every index exact (seed %i)', (seed) => {
    const random = rng(seed);
    const pick = <V>(xs: V[]) => xs[Math.floor(random() * xs.length)];
    const s = new Store<KubeObject>({ app: byApp, labelValue: byLabelValue });
    const randomObj = () => {
      const labels: Record<string, string> = {};
      for (const k of ['app', 'tier', 'zone']) if (random() < 0.6) labels[k] = pick(['a', 'b', 'c']);
      return obj(
        pick(['n1', 'n2', undefined]),
        pick(['p', 'q', 'r', 's', 't']),
        labels,
        String(Math.floor(random() * 1e6)),
      );
    };
    for (let step = 0; step < 400; step++) {
      const r = random();
      if (r < 0.4) s.add(randomObj());
      else if (r < 0.7) s.update(randomObj());
      else if (r < 0.95) s.delete(pick([...s.keys(), 'n1/p', 'missing']));
      else s.replace(Array.from({ length: Math.floor(random() * 6) }, randomObj), String(step));
      for (const name of Object.keys(indexers)) expect(actual(s, name)).toEqual(recompute(s, name));
    }
  });
});
