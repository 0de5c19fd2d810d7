/**
 * `kubectl orch`: a kubectl plugin (the `kubectl-orch` bin; kubectl finds it on PATH) for what kubectl
 * hard-wires to the `*.k8s.io` groups, in either naming flavor, plus `why`. Flags, output and error
 * lines follow kubectl's.
 */
import { parseArgs } from 'node:util';
import type { CertificateSigningRequest } from '../../api/types/certificates.ts';
import { WhyNotFound } from '../../controller/why.ts';
import { canI, whoami } from './auth.ts';
import { decide } from './certificate.ts';
import { type CreateKind, create, dryRunMode } from './create.ts';
import { describeCsr } from './describe.ts';
import { errorLine, outputFormat, UsageError } from './output.ts';
import { openSession } from './session.ts';
import { shards } from './shards.ts';
import { why } from './why.ts';

const USAGE = `kubectl orch: what kubectl's built-in commands cannot do for the orch naming flavor, and "why".

Commands:
  certificate approve|deny NAME... [--force]    approve or deny certificate signing requests
  auth can-i VERB RESOURCE [NAME] | --list      ask whether you (or --as) may do something
  auth whoami                                   the identity the server sees
  create role|clusterrole NAME --verb=... --resource=... [--resource-name=...] [--non-resource-url=...] [--aggregation-rule=k=v]
  create rolebinding|clusterrolebinding NAME --role=...|--clusterrole=... [--user=...] [--group=...] [--serviceaccount=ns:name]
  describe csr NAME                             the decoded request, its conditions and the issued certificate
  why KIND/NAME                                 why an object is as it is (pdb, pod, csr, sts)
  shards [--no-headers] [--shards=N]            the shard map of --sharding replicas, from their shard Leases

Global flags: --kubeconfig, --context, -n/--namespace, --as, --as-group, --as-uid, -o/--output.
`;

const OPTIONS = {
  kubeconfig: { type: 'string' },
  context: { type: 'string' },
  namespace: { type: 'string', short: 'n' },
  as: { type: 'string' },
  'as-group': { type: 'string', multiple: true },
  'as-uid': { type: 'string' },
  output: { type: 'string', short: 'o' },
  force: { type: 'boolean' },
  'all-namespaces': { type: 'boolean', short: 'A' },
  subresource: { type: 'string' },
  list: { type: 'boolean' },
  quiet: { type: 'boolean', short: 'q' },
  verb: { type: 'string', multiple: true },
  resource: { type: 'string', multiple: true },
  'resource-name': { type: 'string', multiple: true },
  'non-resource-url': { type: 'string', multiple: true },
  'aggregation-rule': { type: 'string' },
  role: { type: 'string' },
  clusterrole: { type: 'string' },
  user: { type: 'string', multiple: true },
  group: { type: 'string', multiple: true },
  serviceaccount: { type: 'string', multiple: true },
  'dry-run': { type: 'string' },
  'field-manager': { type: 'string', default: 'kubectl-create' },
  'no-headers': { type: 'boolean' },
  shards: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

export async function run(argv: string[], out: (t: string) => void, err: (t: string) => void): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    err(`error: ${(e as Error).message.replace(/^Unknown option '([^']+)'.*$/s, 'unknown flag: $1')}`);
    return 1;
  }
  const { values: v, positionals: p } = parsed;
  if (v.help || p.length === 0) {
    out(USAGE);
    return p.length === 0 && !v.help ? 1 : 0;
  }
  try {
    const session = () =>
      openSession({
        kubeconfig: v.kubeconfig,
        context: v.context,
        namespace: v.namespace,
        as: v.as,
        asGroups: v['as-group'] ?? [],
        asUid: v['as-uid'],
      });
    const [command, sub, ...rest] = p;
    const phrase = `${command} ${sub ?? ''}`.trim();
    switch (phrase) {
      case 'certificate approve':
      case 'certificate deny':
        return await decide(
          await session(),
          sub as 'approve' | 'deny',
          rest,
          { force: Boolean(v.force), output: outputFormat(v.output, ['', 'json', 'yaml', 'name']) },
          out,
          err,
        );
      case 'auth can-i':
        return await canI(
          await session(),
          rest,
          {
            allNamespaces: Boolean(v['all-namespaces']),
            subresource: v.subresource,
            list: Boolean(v.list),
            quiet: Boolean(v.quiet),
          },
          out,
          err,
        );
      case 'auth whoami':
        return await whoami(await session(), outputFormat(v.output, ['', 'json', 'yaml']), out);
      case 'create role':
      case 'create clusterrole':
      case 'create rolebinding':
      case 'create clusterrolebinding':
        return await create(
          await session(),
          sub as CreateKind,
          rest,
          {
            verbs: v.verb ?? [],
            resources: v.resource ?? [],
            resourceNames: v['resource-name'] ?? [],
            nonResourceUrls: v['non-resource-url'] ?? [],
            aggregationRule: v['aggregation-rule'],
            role: v.role,
            clusterRole: v.clusterrole,
            users: v.user ?? [],
            groups: v.group ?? [],
            serviceAccounts: v.serviceaccount ?? [],
            dryRun: dryRunMode(v['dry-run']),
            output: outputFormat(v.output, ['', 'json', 'yaml', 'name']),
            fieldManager: v['field-manager'] ?? 'kubectl-create',
          },
          out,
        );
    }
    if (command === 'describe') {
      if (
        !['csr', 'certificatesigningrequest', 'certificatesigningrequests'].includes(sub ?? '') ||
        rest.length !== 1
      ) {
        throw new UsageError('usage: kubectl orch describe csr NAME');
      }
      const s = await session();
      const rt = s.registry.byKind('CertificateSigningRequest')!;
      out(await describeCsr(await s.client.resource<CertificateSigningRequest>(rt).get(undefined, rest[0])));
      return 0;
    }
    if (command === 'shards') {
      if (sub !== undefined) throw new UsageError('usage: kubectl orch shards [--no-headers] [--shards=N]');
      return await shards(await session(), { shards: v.shards, noHeaders: Boolean(v['no-headers']) }, out);
    }
    if (command === 'why') return await why(await session(), p.slice(1), outputFormat(v.output, ['', 'json']), out);
    throw new UsageError(`unknown command "${p.join(' ')}" for "kubectl orch"\nRun 'kubectl orch --help' for usage.`);
  } catch (e) {
    err(e instanceof WhyNotFound ? `Error from server (NotFound): ${e.message}` : errorLine(e));
    return 1;
  }
}

process.exitCode = await run(
  process.argv.slice(2),
  (t) => process.stdout.write(t),
  (t) => process.stderr.write(`${t}\n`),
);
