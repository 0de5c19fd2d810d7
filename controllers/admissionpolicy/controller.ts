/**
 * The ValidatingAdmissionPolicy status controller (`validatingadmissionpolicy-status-controller`):
 * type-checks each policy's validations against the kinds it matches and writes
 * `status.observedGeneration` and `status.typeChecking` through `/status` (a replace: observedGeneration
 * set, typeChecking replaced wholesale, the rest of status untouched). Beyond the reference, discovery is
 * re-read periodically and a policy is re-checked when the schemas it was checked against change.
 */
import { group } from '../../src/api/naming.ts';
import { apiVersionOf, type ResourceRegistry } from '../../src/api/registry.ts';
import { schemaFor } from '../../src/api/schema.ts';
import type { ValidatingAdmissionPolicy } from '../../src/api/types/admission.ts';
import { isTombstone } from '../../src/cache/informer.ts';
import { type DeclType, declType, openAPIFromNode } from '../../src/cel/schema-types.ts';
import { type ControllerDefinition, done, type Reconciler } from '../../src/controller/controller.ts';
import { READ, rule } from '../../src/controller/permissions.ts';
import type { Timer } from '../../src/util/clock.ts';
import { checkedStatus, type GVK, kindsToCheck, needsCheck, parseApiVersion, typeCheck } from './core.ts';
import { type Discovery, discover } from './discovery.ts';

export const STATUS_CONTROLLER = 'validatingadmissionpolicy-status-controller';
/** How often discovery is re-read to notice resources that appear or vanish. */
export const DISCOVERY_REFRESH_MS = 30_000;

/** Schemas of the kinds this program knows (the built-in ones), by group, version and kind. */
function builtInSchemas(registry: ResourceRegistry): (k: GVK) => DeclType | undefined {
  const cache = new Map<string, DeclType | undefined>();
  return (k) => {
    const apiVersion = apiVersionOf(k);
    const id = `${apiVersion}/${k.kind}`;
    if (!cache.has(id)) {
      const node = registry.kind(apiVersion, k.kind) ? schemaFor(k.kind, apiVersion) : undefined;
      cache.set(id, node && declType(openAPIFromNode(node)));
    }
    return cache.get(id);
  };
}

export const statusControllerDefinition: ControllerDefinition = {
  name: STATUS_CONTROLLER,
  aliases: [],
  enabledByDefault: true,
  servedByApiServer: true,
  // The reference's ConcurrentPolicySyncs.
  workers: 5,
  permissions: (n) => [
    rule([group(n, 'admissionregistration')], ['validatingadmissionpolicies'], READ),
    rule([group(n, 'admissionregistration')], ['validatingadmissionpolicies/status'], ['update']),
  ],
  setup(ctx, enqueue): Reconciler {
    const rt = ctx.registry.byKind('ValidatingAdmissionPolicy');
    if (!rt) throw new Error('the registry has no ValidatingAdmissionPolicy');
    const logger = ctx.logger.child({ controller: STATUS_CONTROLLER });
    const informer = ctx.informers.informerFor<ValidatingAdmissionPolicy>(rt);
    const lister = informer.lister();
    const policies = ctx.client.resource<ValidatingAdmissionPolicy>(rt);
    const schemaOf = builtInSchemas(ctx.registry);
    /** The schema fingerprint of each policy's last check by this process. */
    const checkedAgainst = new Map<string, string>();
    const enqueueName = (p: ValidatingAdmissionPolicy) => enqueue.add(p.metadata.name ?? '');
    informer.addEventHandler({
      add: enqueueName,
      update: (_, p) => enqueueName(p),
      delete: (p) => checkedAgainst.delete((isTombstone(p) ? p.obj : p).metadata.name ?? ''),
    });

    let discovery: Promise<Discovery> | undefined;
    const readDiscovery = () => {
      const reading = discover(ctx.client);
      discovery = reading;
      reading.catch(() => {
        if (discovery === reading) discovery = undefined;
      });
      return reading;
    };
    let timer: Timer | undefined;
    let stopped = false;
    const refresh = async () => {
      const previous = await discovery?.catch(() => undefined);
      try {
        const next = await readDiscovery();
        if (previous && next.fingerprint !== previous.fingerprint) {
          logger.info('served resources changed: re-checking policies');
          for (const p of lister.list()) enqueueName(p);
        }
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'reading discovery failed');
      }
      if (!stopped) timer = ctx.clock.setTimeout(() => void refresh(), DISCOVERY_REFRESH_MS);
    };
    timer = ctx.clock.setTimeout(() => void refresh(), DISCOVERY_REFRESH_MS);

    return {
      async reconcile(name, signal) {
        const policy = lister.get(undefined, name);
        if (!policy) return done;
        const current = await (discovery ?? readDiscovery());
        const kinds = kindsToCheck(policy.spec?.matchConstraints?.resourceRules ?? [], current.kindsFor).filter(
          (k) => schemaOf(k) !== undefined,
        );
        const paramKind = policy.spec?.paramKind;
        const params =
          paramKind?.apiVersion && paramKind.kind
            ? schemaOf({ ...parseApiVersion(paramKind.apiVersion), kind: paramKind.kind }) !== undefined
            : false;
        const fingerprint = JSON.stringify([kinds, params]);
        if (!needsCheck(policy, checkedAgainst.get(name), fingerprint)) return done;
        const warnings = typeCheck(policy, kinds, schemaOf);
        await policies.replaceStatus({ ...policy, status: checkedStatus(policy, warnings) }, { signal });
        checkedAgainst.set(name, fingerprint);
        logger.debug({ policy: name, warnings: warnings.length }, 'type-checked');
        return done;
      },
      stop() {
        stopped = true;
        if (timer) ctx.clock.clearTimeout(timer);
      },
    };
  },
};
