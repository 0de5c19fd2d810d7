import { describe, expect, it } from 'vitest';
import { planSync } from './core.ts';
import { at, input, n, pod, revision, sts } from './testing.ts';
import { explainStatefulSet } from './why.ts';

describe('why sts', () => {
  it('names the ordinal an OrderedReady rollout waits on, and the next step', () => {
    const set = sts();
    const rev = revision(set);
    const plan = planSync(input(set, [pod(set, 0, rev, 'ready'), pod(set, 1, rev, 'running')]));
    const a = explainStatefulSet(set, plan);
    expect(a.subject).toBe('statefulset/web');
    expect(a.summary).toMatch(/web-1/);
    expect(a.details[0]).toBe(
      `1 of 3 ready, 2 at the update revision ${rev.metadata.name}, 2 at the current revision ${rev.metadata.name}`,
    );
    expect(a.details[1]).toBe('nothing to do until a pod changes');
    expect(a.details[2]).toBe('the stored status has no rollout condition: is the StatefulSet controller running?');
  });

  it('a set with nothing yet plans its first pod', () => {
    const set = sts({ replicas: 2 });
    const a = explainStatefulSet(set, planSync(input(set, [])));
    expect(a.details[1]).toBe('next: create pod web-0');
  });

  it('a finished rollout says so', () => {
    const set = sts({ replicas: 2 });
    const rev = revision(set);
    const pods = [pod(set, 0, rev), pod(set, 1, rev)];
    const first = planSync(input(set, pods));
    const settled = { ...set, status: first.status };
    const a = explainStatefulSet(settled, planSync(input(settled, pods)));
    expect(a.summary).toBe(`RolloutComplete: 2 pod(s) at revision ${rev.metadata.name}`);
    expect(a.details).toHaveLength(2);
  });

  describe('a rollout held by a pod that is not Ready ends with what unblocks it', () => {
    const rev1 = revision(sts(), 1);
    const R1 = rev1.metadata.name!;
    const annotate = `\`kubectl annotate sts/web ${n.annotations.statefulSetRecovery}=true\``;
    /** web-2 as a simulated node reports a crash-looping container. */
    const crashing = (p: ReturnType<typeof pod>) => ({
      ...p,
      status: {
        ...p.status,
        conditions: [
          {
            type: 'Ready',
            status: 'False' as const,
            lastTransitionTime: p.status?.startTime,
            reason: 'ContainersNotReady',
            message: 'containers with unready status: [app]',
          },
        ],
        containerStatuses: [
          {
            name: 'app',
            image: 'app:broken',
            imageID: '',
            ready: false,
            restartCount: 3,
            state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 1m20s' } },
          },
        ],
      },
    });

    it('at the new revision: fix or revert the template, then delete the pod (or revert and annotate)', () => {
      const set = sts({ image: 'app:broken', status: { replicas: 3, currentRevision: R1, currentReplicas: 3 } });
      const rev2 = revision(set, 2);
      const pods = [pod(set, 0, rev1), pod(set, 1, rev1), crashing(pod(set, 2, rev2, 'running'))];
      const plan = planSync(input(set, pods, { revisions: [rev1, rev2] }));
      const a = explainStatefulSet(set, plan, pods, n);
      expect(a.summary).toMatch(/^PodNotReady: waiting for web-2 /);
      expect(a.details.slice(-3)).toEqual([
        'web-2: ContainersNotReady: containers with unready status: [app]',
        'web-2 container app: CrashLoopBackOff, restarted 3 time(s)',
        `to unblock: fix the template or revert it (kubectl rollout undo sts/web), then delete pod web-2, which the rollout waits on until it is Ready; or revert and ${annotate} so that the controller replaces it`,
      ]);
    });

    const broken = revision(sts({ image: 'app:broken' }), 2);
    const reverted = (annotations?: Record<string, string>) =>
      sts({ status: { replicas: 3, currentRevision: R1 }, annotations });

    it('after a revert: delete the pod of the abandoned revision, or set the recovery annotation', () => {
      const set = reverted();
      const pods = [pod(set, 0, rev1), pod(set, 1, rev1), pod(set, 2, broken, 'running')];
      const a = explainStatefulSet(set, planSync(input(set, pods, { revisions: [rev1, broken] })), pods, n);
      expect(a.details.at(-1)).toBe(
        `to unblock: delete pod web-2 (revision ${broken.metadata.name}, no longer the template): it is recreated at revision ${R1}; or ${annotate} and the controller replaces it if it was never Ready`,
      );
    });

    it('with the annotation set but a pod that was Ready once: only deleting it helps', () => {
      const set = reverted({ [n.annotations.statefulSetRecovery]: 'true' });
      const once = pod(set, 2, broken, 'running');
      once.status!.conditions![0]!.lastTransitionTime = at(-1000); // changed after the start: was Ready once
      const pods = [pod(set, 0, rev1), pod(set, 1, rev1), once];
      const a = explainStatefulSet(set, planSync(input(set, pods, { revisions: [rev1, broken] })), pods, n);
      expect(a.details.at(-1)).toBe(
        `to unblock: delete pod web-2 (revision ${broken.metadata.name}, no longer the template): it is recreated at revision ${R1}`,
      );
    });

    it('no hint while the pod is only starting', () => {
      const set = sts();
      const pods = [pod(set, 0, rev1), pod(set, 1, rev1, 'pending')];
      const a = explainStatefulSet(set, planSync(input(set, pods)), pods, n);
      expect(a.details.some((d) => d.startsWith('to unblock'))).toBe(false);
    });
  });
});
