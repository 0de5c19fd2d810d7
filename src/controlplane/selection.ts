/** Which objects a list, watch or delete-collection call selects: namespace, name, labels, fields, shard. */
import { assertSupportedFields, parseFieldSelector } from '../api/fields.ts';
import { parseLabelSelector } from '../api/labels.ts';
import type { KubeObject } from '../api/meta.ts';
import type { ResourceType } from '../api/registry.ts';
import { parseShardSelector } from '../api/shard-selector.ts';
import { badRequest, invalidOptions } from './errors.ts';

export interface Selection {
  namespace?: string;
  /** True when some selector beyond the namespace narrows the result. */
  filtered: boolean;
  matches(obj: KubeObject): boolean;
}

function fieldValue(rt: ResourceType, obj: KubeObject, field: string): string | undefined {
  if (field === 'metadata.name') return obj.metadata.name;
  if (field === 'metadata.namespace') return obj.metadata.namespace ?? '';
  return rt.fieldSelectors[field]?.(obj);
}

export function buildSelection(
  rt: ResourceType,
  namespace: string | undefined,
  query: URLSearchParams,
  opts: { name?: string; shardingEnabled: boolean; metaGroup: string },
): Selection {
  const tests: ((obj: KubeObject) => boolean)[] = [];
  if (opts.name !== undefined) tests.push((o) => o.metadata.name === opts.name);
  const labels = query.get('labelSelector');
  if (labels) {
    const selector = parse(() => parseLabelSelector(labels));
    if (!selector.empty()) tests.push((o) => selector.matches(o.metadata.labels));
  }
  const fields = query.get('fieldSelector');
  if (fields) {
    const selector = parse(() => {
      const parsed = parseFieldSelector(fields);
      assertSupportedFields(parsed, Object.keys(rt.fieldSelectors));
      return parsed;
    });
    tests.push((o) => selector.matches((f) => fieldValue(rt, o, f)));
  }
  const shard = query.get('shardSelector');
  if (shard && opts.shardingEnabled) {
    let selector: ReturnType<typeof parseShardSelector>;
    try {
      selector = parseShardSelector(shard);
    } catch (err) {
      const message = `shardSelector: Invalid value: ${JSON.stringify(shard)}: ${(err as Error).message}`;
      throw invalidOptions(opts.metaGroup, 'ListOptions', [
        { type: 'FieldValueInvalid', field: 'shardSelector', message },
      ]);
    }
    tests.push((o) => selector.matches(o));
  }
  const filtered = tests.length > 0;
  // Lists read one namespace's key range, but watches see every namespace's events: confine both here.
  if (namespace !== undefined) tests.unshift((o) => o.metadata.namespace === namespace);
  return {
    namespace,
    filtered,
    matches: tests.length === 0 ? () => true : (o) => tests.every((t) => t(o)),
  };
}

function parse<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw badRequest((err as Error).message);
  }
}
