/** The QoS class of a pod spec, case by case as the reference classifies: containers, init containers, pod level. */
import { describe, expect, it } from 'vitest';
import type { Container, PodSpec, ResourceRequirements } from '../api/types/core.ts';
import { podQosClass } from './pod-qos.ts';

const c = (resources?: ResourceRequirements): Container => ({ name: 'c', image: 'i', resources });
const both = { cpu: '1', memory: '1Gi' };

describe('podQosClass', () => {
  it.each<[string, Partial<PodSpec>, string]>([
    ['no resources', { containers: [c()] }, 'BestEffort'],
    ['zero amounts only', { containers: [c({ requests: { cpu: '0' } })] }, 'BestEffort'],
    ['other resources only', { containers: [c({ limits: { 'example.com/gpu': '1' } })] }, 'BestEffort'],
    ['requests only', { containers: [c({ requests: { cpu: '1' } })] }, 'Burstable'],
    ['equal cpu and memory', { containers: [c({ requests: both, limits: both })] }, 'Guaranteed'],
    [
      'equal amounts written alike',
      { containers: [c({ requests: { cpu: '1000m', memory: '1Gi' }, limits: both })] },
      'Guaranteed',
    ],
    ['a memory limit missing', { containers: [c({ requests: { cpu: '1' }, limits: { cpu: '1' } })] }, 'Burstable'],
    [
      'a request below its limit',
      { containers: [c({ requests: { cpu: '1', memory: '1' }, limits: both })] },
      'Burstable',
    ],
    [
      'one guaranteed, one best-effort container',
      { containers: [c({ requests: both, limits: both }), c()] },
      'Burstable',
    ],
    [
      'a best-effort init container',
      { containers: [c({ requests: both, limits: both })], initContainers: [c()] },
      'Burstable',
    ],
    ['pod-level limits and requests', { containers: [c()], resources: { requests: both, limits: both } }, 'Guaranteed'],
    [
      'pod-level requests only',
      { containers: [c({ requests: both, limits: both })], resources: { requests: both } },
      'Burstable',
    ],
  ])('%s', (_, spec, expected) => {
    expect(podQosClass({ containers: [], ...spec })).toBe(expected);
  });
});
