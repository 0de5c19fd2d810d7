import { describe, expect, it } from 'vitest';
import { parseIdentitySpec } from './embedded.ts';

describe('--write-identity-kubeconfig NAME=USER:GROUPS', () => {
  it.each([
    ['dana=dana', 'dana', []],
    ['dana=dana:', 'dana', []],
    ['dana=dana:devs,qa', 'dana', ['devs', 'qa']],
    ['admin=admin:system:masters', 'admin', ['system:masters']],
    ['node1=system:node:n1:system:nodes', 'system:node:n1', ['system:nodes']],
    ['node1=system:node:n1:devs,system:nodes', 'system:node:n1', ['devs', 'system:nodes']],
    [
      'boot=system:bootstrap:abcdef:system:bootstrappers,system:bootstrappers:kubeadm:default-node-token',
      'system:bootstrap:abcdef',
      ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token'],
    ],
    ['sa=system:serviceaccount:ns:sa:', 'system:serviceaccount:ns:sa', []],
    ['sched=system:kube-scheduler:', 'system:kube-scheduler', []],
    [
      'sa=system:serviceaccount:ns:sa:system:serviceaccounts',
      'system:serviceaccount:ns:sa',
      ['system:serviceaccounts'],
    ],
  ])('%s', (spec, username, groups) => {
    expect(parseIdentitySpec(spec)).toEqual({ name: spec.slice(0, spec.indexOf('=')), username, groups });
  });

  it.each(['', 'dana', '=dana', 'dana='])('refuses %j', (spec) => {
    expect(parseIdentitySpec(spec)).toBeUndefined();
  });
});
