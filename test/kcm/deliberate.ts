/**
 * The differences from kube-controller-manager that are deliberate, each with its reason: where the spec
 * (/work/shared/spec/) or the reference's own documented intent says otherwise, or an extension of ours that KCM
 * lacks. A difference is written down when `<scenario> <checkpoint> <object key> <field path>` matches an entry's
 * `match`, and, with `only`, the other side has nothing there.
 */
export interface Deliberate {
  /** A short name, printed with each difference it explains. */
  id: string;
  match: RegExp;
  /** Only this side has the field or event: the other's must be absent. */
  only?: 'ours' | 'kcm';
  reason: string;
}

/** The reasons of our StatefulSet `RolloutProgressing` condition (controllers/statefulset/core.ts). */
const ROLLOUT_REASONS = [
  'RolloutComplete',
  'Progressing',
  'PodNotRunning',
  'PodNotReady',
  'WaitingForMinReadySeconds',
  'PodTerminating',
  'ClaimTerminating',
  'StaleClaimOwner',
  'ScalingDown',
  'OnDelete',
  'BudgetSpent',
  'PartitionReached',
].join('|');

export const DELIBERATE: Deliberate[] = [
  {
    id: 'rollout-condition',
    match: /^\S+ \S+ StatefulSet\/\S+ status\.conditions$/,
    only: 'ours',
    reason:
      'our documented extension (README, statefulset-controller): a RolloutProgressing condition naming the pod and ' +
      'the reason a rollout waits on; KCM writes no StatefulSet conditions',
  },
  {
    id: 'rollout-events',
    match: new RegExp(`^\\S+ \\S+ events StatefulSet/\\S+ Normal (${ROLLOUT_REASONS})$`),
    only: 'ours',
    reason:
      'our documented extension (README: "Each new reason is also an event on the set"): each new reason of the ' +
      'RolloutProgressing condition is also an event; KCM records only SuccessfulCreate/SuccessfulDelete and failures',
  },
  {
    id: 'signer-failure-event',
    match: /^csr-\S+ \S+ events CertificateSigningRequest\/\S+ Warning SignerValidationFailure$/,
    only: 'ours',
    reason:
      'ours also records the Failed condition the signer writes (reason SignerValidationFailure) as a Warning event ' +
      'on the CSR, so `kubectl describe csr` and event watchers see the refusal; KCM writes only the condition',
  },
  {
    id: 'cleaner-start-pass',
    match:
      /^csr-cleaner end (CertificateSigningRequest\/csr-cleaner-(issued-old|denied-old|failed-old|expired)|recorded wait: old CSRs cleaned)$/,
    reason:
      'both cleaners pass over every CSR at start and hourly after (reference §4), and ours does so at the restart; ' +
      "KCM's pass at start lists its informer cache before the cache has synced (cleaner.go runs the worker without " +
      'WaitForCacheSync), sees no CSRs, and so deletes the expired and past-deadline ones only an hour later',
  },
  {
    id: 'unmanaged-pods-note',
    match: /^pdb-bare-pods \S+ events PodDisruptionBudget\/\S+ Warning UnmanagedPods\[\d+\]$/,
    reason:
      'the same UnmanagedPods warning (type and reason) with our own note: it names the pods (at most five) and ' +
      "prints the selector as JSON, where KCM prints Go's LabelSelector struct dump and no pod names",
  },
  {
    id: 'recover-broken-rollout',
    match: /^sts-broken-recover end /,
    reason:
      'our documented opt-in (README: the annotation statefulset.kubernetes.io/recover-broken-rollout=true): after ' +
      'the template is reverted, a pod of the broken revision that was never Ready is replaced (event ' +
      'RecoveringBrokenPod); KCM ignores the annotation and, as the reference documents (the stuck rollout that ' +
      'needs a manual pod deletion), waits for the never-Ready pod forever',
  },
  {
    id: 'claim-owner-update-conflict',
    match: /^sts-claims \S+ events StatefulSet\/\S+ Warning FailedUpdate$/,
    only: 'kcm',
    reason:
      "KCM sets a claim's owner references by updating the whole claim, which conflicts when the pvc-protection " +
      'controller or the volume binder wrote it meanwhile, and records FailedUpdate before retrying; ours patches ' +
      'only the owner references (no resourceVersion to conflict on), so there is nothing to retry or report',
  },
];

export function writtenDown(where: string, kcm: unknown, ours: unknown): Deliberate | undefined {
  const absent = { ours: kcm === undefined, kcm: ours === undefined };
  return DELIBERATE.find((entry) => entry.match.test(where) && (!entry.only || absent[entry.only]));
}
