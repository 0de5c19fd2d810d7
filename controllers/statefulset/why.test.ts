import { describe, expect, it } from 'vitest';
import { planSync } from './core.ts';
import { input, pod, revision, sts } from './testing.ts';
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
});
