/**
 * "Why" answers: a short account in plain words of why an object is in the state it is in, computed by
 * the pure core of the controller that owns it, never by a second copy of its logic. Served by the daemon
 * under `/debug/why/<resource>/<namespace>/<name>` and by the `kubectl orch why` plugin command.
 */
import type { KubeObject } from '../api/meta.ts';
import type { Naming } from '../api/naming.ts';
import type { ResourceRegistry } from '../api/registry.ts';
import type { KubeClient } from '../client/client.ts';
import { isNotFound } from '../client/errors.ts';

export interface WhyAnswer {
  /** The resource and name asked about, e.g. `poddisruptionbudget/web`. */
  subject: string;
  namespace?: string;
  /** One sentence: the state and its main cause. */
  summary: string;
  /** The evidence, one fact a line. */
  details: string[];
}

/** Where answerers read objects: the API server, or the daemon's view of it. */
export interface WhySources {
  naming: Naming;
  registry: ResourceRegistry;
  /** For what only a request can tell (a `/scale`, a SubjectAccessReview). */
  client: KubeClient;
  now: Date;
  /** The controller part of the daemon's configuration; undefined where it is not known (the plugin). */
  config?: Record<string, unknown>;
  /** The daemon's feature gates; undefined where they are not known (the defaults apply). */
  features?: (gate: string) => boolean;
  get<T extends KubeObject>(kind: string, namespace: string | undefined, name: string): Promise<T | undefined>;
  list<T extends KubeObject>(kind: string, namespace?: string): Promise<T[]>;
}

export interface WhyAnswerer {
  /** The resource names it answers for: plural first, then singular and short names. */
  names: readonly string[];
  namespaced: boolean;
  answer(src: WhySources, namespace: string | undefined, name: string): Promise<WhyAnswer>;
}

/** The object asked about does not exist. */
export class WhyNotFound extends Error {}

/** Sources read straight from the API server; `daemon` is what the running daemon knows of itself. */
export function apiSources(
  client: KubeClient,
  daemon: Pick<WhySources, 'config' | 'features'> = {},
  now = new Date(),
): WhySources {
  const rt = (kind: string) => {
    const found = client.registry.byKind(kind);
    if (!found) throw new Error(`the API has no ${kind}`);
    return found;
  };
  return {
    naming: client.registry.naming,
    registry: client.registry,
    client,
    now,
    ...daemon,
    async get<T extends KubeObject>(kind: string, namespace: string | undefined, name: string) {
      try {
        return await client.resource<T>(rt(kind)).get(namespace, name);
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    async list<T extends KubeObject>(kind: string, namespace?: string) {
      return (await client.resource<T>(rt(kind)).listAll(namespace)).items;
    },
  };
}

/** The answerer for a resource name (`pdb`, `poddisruptionbudgets`, ...), if any. */
export function answererFor(answerers: readonly WhyAnswerer[], resource: string): WhyAnswerer | undefined {
  const wanted = resource.toLowerCase();
  return answerers.find((a) => a.names.includes(wanted));
}

/** The answer as plain text, the way both the plugin and the daemon print it. */
export function whyText(a: WhyAnswer): string {
  const where = a.namespace ? ` in namespace ${a.namespace}` : '';
  return [`${a.subject}${where}: ${a.summary}`, ...a.details.map((d) => `  - ${d}`)].join('\n') + '\n';
}
