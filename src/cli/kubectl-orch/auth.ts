/**
 * `kubectl orch auth can-i` and `kubectl orch auth whoami`: kubectl's own commands, aimed at either
 * flavor's authorization and authentication groups.
 */

import { stringify } from 'yaml';
import type { KubeObject } from '../../api/meta.ts';
import type {
  SelfSubjectAccessReview,
  SelfSubjectReview,
  SelfSubjectRulesReview,
  SubjectRulesReviewStatus,
} from '../../api/types/authz.ts';
import { goList, type OutputFormat, table, UsageError } from './output.ts';
import { resolveResource } from './resources.ts';
import type { Session } from './session.ts';

export interface CanIOptions {
  allNamespaces: boolean;
  subresource?: string;
  list: boolean;
  quiet: boolean;
}

function review<T extends KubeObject>(
  s: Session,
  kind: string,
  body: Omit<T, 'apiVersion' | 'kind' | 'metadata'>,
): Promise<T> {
  const rt = s.registry.byKind(kind);
  if (!rt) throw new Error(`the server has no ${kind}`);
  return s.client.resource<T>(rt).create({ apiVersion: `${rt.group}/${rt.version}`, kind, metadata: {}, ...body } as T);
}

/** The `--list` table: one row per resource and group of each rule, then the non-resource rules. */
export function rulesTable(status: SubjectRulesReviewStatus): string {
  const rows: string[][] = [];
  for (const r of status.resourceRules ?? []) {
    for (const resource of r.resources ?? []) {
      for (const g of r.apiGroups ?? ['']) {
        rows.push([g ? `${resource}.${g}` : resource, '[]', goList(r.resourceNames), goList(r.verbs)]);
      }
    }
  }
  rows.sort((a, b) => a[0].localeCompare(b[0]));
  for (const r of status.nonResourceRules ?? []) rows.push(['', goList(r.nonResourceURLs), '[]', goList(r.verbs)]);
  return table([['Resources', 'Non-Resource URLs', 'Resource Names', 'Verbs'], ...rows]);
}

export async function canI(
  s: Session,
  args: string[],
  o: CanIOptions,
  out: (text: string) => void,
  err: (text: string) => void,
): Promise<number> {
  const namespace = o.allNamespaces ? '' : s.namespace;
  if (o.list) {
    if (args.length) throw new UsageError('list option must be specified with no arguments');
    const answer = await review<SelfSubjectRulesReview>(s, 'SelfSubjectRulesReview', { spec: { namespace } });
    if (answer.status?.incomplete)
      err('Warning: the list may be incomplete: webhook authorizer does not support user rule resolution');
    out(rulesTable(answer.status ?? { resourceRules: [], nonResourceRules: [], incomplete: false }));
    return 0;
  }
  const [verb, target, name] = args;
  if (!verb || !target || args.length > 3)
    throw new UsageError('you must specify two or three arguments: verb, resource, and optional resourceName');
  let spec: SelfSubjectAccessReview['spec'];
  if (target.startsWith('/')) {
    spec = { nonResourceAttributes: { verb, path: target } };
  } else {
    const ref = resolveResource(s.registry, target);
    if (!ref.rt) err(`Warning: the server doesn't have a resource type '${ref.resource}'`);
    else if (!ref.rt.namespaced && s.namespaceGiven) err(`Warning: resource '${ref.resource}' is not namespace scoped`);
    spec = {
      resourceAttributes: {
        namespace: ref.rt && !ref.rt.namespaced ? '' : namespace,
        verb,
        group: ref.group,
        resource: ref.resource,
        subresource: o.subresource ?? '',
        name: name ?? '',
      },
    };
  }
  const answer = await review<SelfSubjectAccessReview>(s, 'SelfSubjectAccessReview', { spec });
  const status = answer.status ?? { allowed: false };
  if (!o.quiet) {
    const why = [status.reason, status.evaluationError]
      .filter(Boolean)
      .map((t) => ` - ${t}`)
      .join('');
    out(status.allowed ? 'yes\n' : `no${why}\n`);
  }
  return status.allowed ? 0 : 1;
}

export async function whoami(s: Session, format: OutputFormat, out: (text: string) => void): Promise<number> {
  const answer = await review<SelfSubjectReview>(s, 'SelfSubjectReview', {});
  if (format) {
    out(format === 'json' ? `${JSON.stringify(answer, null, 4)}\n` : stringify(answer));
    return 0;
  }
  const user = answer.status?.userInfo ?? {};
  const rows = [
    ['ATTRIBUTE', 'VALUE'],
    ['Username', user.username ?? ''],
  ];
  if (user.uid) rows.push(['UID', user.uid]);
  if (user.groups?.length) rows.push(['Groups', goList(user.groups)]);
  for (const [key, values] of Object.entries(user.extra ?? {}).sort()) rows.push([`Extra: ${key}`, goList(values)]);
  out(table(rows));
  return 0;
}
