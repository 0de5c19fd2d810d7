/**
 * The ValidatingAdmissionPolicy status controller (`validatingadmissionpolicy-status-controller`):
 * type-checks each policy's validations against the kinds it matches and writes
 * `status.observedGeneration` and `status.typeChecking` through `/status` (a replace: observedGeneration
 * set, typeChecking replaced wholesale, the rest of status untouched). Beyond the reference, discovery is
 * re-read periodically and a policy is re-checked when the schemas it was checked against change.
 */
import { CONTROLLER_ACCOUNTS } from '../../src/api/controller-accounts.ts';
import { group } from '../../src/api/naming.ts';
import type { ValidatingAdmissionPolicy } from '../../src/api/types/admission.ts';
import { isTombstone } from '../../src/cache/informer.ts';
import { type ControllerDefinition, done, type Reconciler } from '../../src/controller/controller.ts';
import { READ, rule } from '../../src/controller/permissions.ts';
import type { Timer } from '../../src/util/clock.ts';
import { checkedStatus, kindsToCheck, needsCheck, paramKindOf } from './core.ts';
import { type Discovery, discover } from './discovery.ts';
import { schemaSource } from './schemas.ts';

export const STATUS_CONTROLLER = 'validatingadmissionpolicy-status-controller';
/** How often discovery is re-read to notice resources that appear or vanish. */
export const DISCOVERY_REFRESH_MS = 30_000;

export const statusControllerDefinition: ControllerDefinition = {
  name: STATUS_CONTROLLER,
  aliases: [],
  enabledByDefault: true,
  serviceAccount: () => CONTROLLER_ACCOUNTS.admissionPolicyStatus,
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
    const schemas = schemaSource(ctx.registry, ctx.client);
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
          schemas.reset();
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
        const paramGVK = paramKindOf(policy);
        const matched = kindsToCheck(policy.spec?.matchConstraints?.resourceRules ?? [], current.kindsFor);
        await schemas.prepare(paramGVK ? [...matched, paramGVK] : matched, signal);
        const kinds = matched.filter((k) => schemas.schemaOf(k) !== undefined);
        const params = paramGVK !== undefined && schemas.schemaOf(paramGVK) !== undefined;
        const fingerprint = JSON.stringify([kinds, params]);
        if (!needsCheck(policy, checkedAgainst.get(name), fingerprint)) return done;
        // Loaded on the first check, not at start (see type-check.ts).
        const { typeCheck } = await import('./type-check.ts');
        const warnings = typeCheck(policy, kinds, schemas.schemaOf);
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
