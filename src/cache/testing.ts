/**
 * Test helpers for the cache: a scripted ListerWatcher whose LIST answers and watch streams the
 * test drives by hand, with the REST client's contract (a watch resolves when its stream ends or
 * its signal aborts, and rejects when an event callback throws or it cannot start).
 */
import type { KubeList, KubeObject, WatchEvent, WatchEventType } from '../api/meta.ts';
import type { ListOptions, WatchOptions } from '../client/resource.ts';
import type { ListerWatcher } from './reflector.ts';

export interface FakeWatch<T> {
  opts: WatchOptions;
  signal: AbortSignal;
  /** Delivers one event; if the consumer throws, the watch rejects with that error. */
  emit(type: WatchEventType, object: T | Record<string, unknown>): void;
  /** The server ends the stream normally. */
  end(): void;
  ended: boolean;
}

export class FakeListerWatcher<T extends KubeObject> implements ListerWatcher<T> {
  readonly lists: ListOptions[] = [];
  readonly watches: FakeWatch<T>[] = [];
  /** Answers each LIST (throw to fail it). */
  onList: (opts: ListOptions) => KubeList<T> = () => page([], '1');
  /** Called as each watch starts; throw to make the watch fail to start. */
  onWatch: (opts: WatchOptions) => void = () => {};

  async list(_namespace: string | undefined, opts: ListOptions & { signal?: AbortSignal }): Promise<KubeList<T>> {
    const { signal: _signal, ...rest } = opts;
    this.lists.push(rest);
    return this.onList(rest);
  }

  watch(
    _namespace: string | undefined,
    opts: WatchOptions,
    onEvent: (e: WatchEvent<T>) => void,
    signal: AbortSignal,
  ): Promise<void> {
    return new Promise((resolve, reject) => {
      this.onWatch(opts);
      const w: FakeWatch<T> = {
        opts,
        signal,
        ended: false,
        emit: (type, object) => {
          if (w.ended) throw new Error('emit on an ended watch');
          try {
            onEvent({ type, object: object as T });
          } catch (err) {
            w.ended = true;
            reject(err);
          }
        },
        end: () => {
          w.ended = true;
          resolve();
        },
      };
      this.watches.push(w);
      signal.addEventListener('abort', () => w.end(), { once: true });
    });
  }

  get lastWatch(): FakeWatch<T> {
    return this.watches[this.watches.length - 1];
  }
}

export function page<T extends KubeObject>(items: T[], resourceVersion: string, continueToken?: string): KubeList<T> {
  return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion, continue: continueToken }, items };
}

export function pod(name: string, resourceVersion: string, labels?: Record<string, string>): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'ns', name, resourceVersion, labels } };
}

/** Lets pending promise callbacks and immediates run (several rounds, for chained awaits). */
export async function settle(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
