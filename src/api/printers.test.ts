/** The reference's cell formats of the built-in kinds, case by case. */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from './meta.ts';
import { naming } from './naming.ts';
import {
  accessModes,
  bindingSubjects,
  budgetField,
  claimCells,
  controllerOf,
  endpointSliceCell,
  endpointsCell,
  formatLabelSelector,
  formatLabels,
  ingressClassParameters,
  ingressHosts,
  ingressPorts,
  keyCount,
  nodeAddress,
  nodeInfo,
  nodeRoles,
  nodeStatus,
  podCells,
  podIP,
  policyParamRef,
  readinessGates,
  serviceExternalIP,
  servicePorts,
  storageClassName,
  storageClassOf,
  templateContainers,
  volumeClaim,
} from './printers.ts';

const now = new Date('2026-01-01T01:00:00Z');
const obj = (fields: Record<string, unknown>, metadata: Record<string, unknown> = {}): KubeObject =>
  ({ metadata: { name: 'x', ...metadata }, ...fields }) as KubeObject;
const pod = (status: Record<string, unknown>, containers = 1, metadata = {}) =>
  obj({ spec: { containers: Array.from({ length: containers }, (_, i) => ({ name: `c${i}` })) }, status }, metadata);
const running = { ready: true, restartCount: 0, state: { running: { startedAt: '2026-01-01T00:00:00Z' } } };

describe('pod Ready, Status and Restarts', () => {
  it.each([
    ['pending, nothing reported', pod({ phase: 'Pending' }), { ready: '0/1', status: 'Pending', restarts: '0' }],
    [
      'running and ready',
      pod({ phase: 'Running', containerStatuses: [running] }),
      { ready: '1/1', status: 'Running', restarts: '0' },
    ],
    [
      'one of two ready',
      pod({ phase: 'Running', containerStatuses: [running, { ready: false, state: { running: {} } }] }, 2),
      { ready: '1/2', status: 'Running', restarts: '0' },
    ],
    [
      'crash looping: the waiting reason, restarts with the last exit',
      pod({
        phase: 'Running',
        containerStatuses: [
          {
            restartCount: 3,
            state: { waiting: { reason: 'CrashLoopBackOff' } },
            lastState: { terminated: { exitCode: 1, finishedAt: '2026-01-01T00:59:15Z' } },
          },
        ],
      }),
      { ready: '0/1', status: 'CrashLoopBackOff', restarts: '3 (45s ago)' },
    ],
    [
      'restarts summed over containers, the latest exit shown',
      pod(
        {
          phase: 'Running',
          containerStatuses: [
            { ...running, restartCount: 2, lastState: { terminated: { finishedAt: '2026-01-01T00:30:00Z' } } },
            { ...running, restartCount: 1, lastState: { terminated: { finishedAt: '2026-01-01T00:50:00Z' } } },
          ],
        },
        2,
      ),
      { ready: '2/2', status: 'Running', restarts: '3 (10m ago)' },
    ],
    [
      'terminated with a reason',
      pod({ phase: 'Failed', containerStatuses: [{ state: { terminated: { exitCode: 1, reason: 'Error' } } }] }),
      { ready: '0/1', status: 'Error', restarts: '0' },
    ],
    [
      'terminated by a signal, no reason',
      pod({ phase: 'Failed', containerStatuses: [{ state: { terminated: { exitCode: 137, signal: 9 } } }] }),
      { ready: '0/1', status: 'Signal:9', restarts: '0' },
    ],
    [
      'terminated with an exit code only',
      pod({ phase: 'Failed', containerStatuses: [{ state: { terminated: { exitCode: 2 } } }] }),
      { ready: '0/1', status: 'ExitCode:2', restarts: '0' },
    ],
    [
      'the pod reason over the phase',
      pod({ phase: 'Failed', reason: 'Evicted' }),
      { ready: '0/1', status: 'Evicted', restarts: '0' },
    ],
    [
      'an init container still running',
      pod({ phase: 'Pending', initContainerStatuses: [{ state: { running: {} } }, { state: { waiting: {} } }] }),
      { ready: '0/1', status: 'Init:0/2', restarts: '0' },
    ],
    [
      'an init container failing',
      pod({
        phase: 'Pending',
        initContainerStatuses: [
          { state: { terminated: { exitCode: 0 } } },
          { restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff' } } },
        ],
      }),
      { ready: '0/1', status: 'Init:CrashLoopBackOff', restarts: '2' },
    ],
    [
      'an init container that exited with an error',
      pod({ phase: 'Pending', initContainerStatuses: [{ state: { terminated: { exitCode: 3 } } }] }),
      { ready: '0/1', status: 'Init:ExitCode:3', restarts: '0' },
    ],
    [
      'completed containers beside a running one: Running when the pod is ready',
      pod(
        {
          phase: 'Running',
          conditions: [{ type: 'Ready', status: 'True' }],
          containerStatuses: [{ state: { terminated: { exitCode: 0, reason: 'Completed' } } }, running],
        },
        2,
      ),
      { ready: '1/2', status: 'Running', restarts: '0' },
    ],
    [
      'completed beside running, pod not ready',
      pod(
        {
          phase: 'Running',
          containerStatuses: [{ state: { terminated: { exitCode: 0, reason: 'Completed' } } }, running],
        },
        2,
      ),
      { ready: '1/2', status: 'NotReady', restarts: '0' },
    ],
    [
      'deleted',
      pod({ phase: 'Running', containerStatuses: [running] }, 1, { deletionTimestamp: '2026-01-01T00:59:00Z' }),
      { ready: '1/1', status: 'Terminating', restarts: '0' },
    ],
    [
      'deleted on a lost node',
      pod({ phase: 'Running', reason: 'NodeLost' }, 1, { deletionTimestamp: '2026-01-01T00:59:00Z' }),
      { ready: '0/1', status: 'Unknown', restarts: '0' },
    ],
  ])('%s', (_what, p, expected) => {
    expect(podCells(p, now)).toEqual(expected);
  });
});

describe('pod wide cells', () => {
  it.each([
    [{}, '<none>'],
    [{ podIP: '10.244.1.2' }, '10.244.1.2'],
    [{ podIP: '10.244.1.2', podIPs: [{ ip: 'fd00::2' }, { ip: '10.244.1.2' }] }, 'fd00::2'],
  ])('IP of %j is %s', (status, expected) => {
    expect(podIP(obj({ status }))).toBe(expected);
  });

  it.each([
    [[], [], '<none>'],
    [[{ conditionType: 'a' }, { conditionType: 'b' }], [{ type: 'a', status: 'True' }], '1/2'],
    [[{ conditionType: 'a' }], [{ type: 'a', status: 'False' }], '0/1'],
  ])('readiness gates %j with %j: %s', (readinessGates_, conditions, expected) => {
    expect(readinessGates(obj({ spec: { readinessGates: readinessGates_ }, status: { conditions } }))).toBe(expected);
  });
});

describe('node cells', () => {
  const n = naming('kubernetes');
  it.each([
    [{ conditions: [{ type: 'Ready', status: 'True' }] }, {}, 'Ready'],
    [{ conditions: [{ type: 'Ready', status: 'False' }] }, {}, 'NotReady'],
    [{ conditions: [{ type: 'Ready', status: 'Unknown' }] }, {}, 'NotReady'],
    [{}, {}, 'Unknown'],
    [{ conditions: [{ type: 'Ready', status: 'True' }] }, { unschedulable: true }, 'Ready,SchedulingDisabled'],
  ])('status %j spec %j: %s', (status, spec, expected) => {
    expect(nodeStatus(obj({ status, spec }))).toBe(expected);
  });

  it.each([
    [{}, '<none>'],
    [{ 'node-role.kubernetes.io/control-plane': '' }, 'control-plane'],
    [{ 'node-role.kubernetes.io/worker': '', 'node-role.kubernetes.io/control-plane': 'x' }, 'control-plane,worker'],
    [{ 'kubernetes.io/role': 'node', 'node-role.kubernetes.io/node': '' }, 'node'],
    [{ 'node-role.kubernetes.io/': '' }, '<none>'],
  ])('roles of %j: %s', (labels, expected) => {
    expect(nodeRoles(obj({}, { labels }), n.domain)).toBe(expected);
  });

  it('addresses and system info, with <none> and <unknown> when missing', () => {
    const node = obj({
      status: {
        addresses: [
          { type: 'Hostname', address: 'n1' },
          { type: 'InternalIP', address: '10.0.0.1' },
          { type: 'InternalIP', address: '10.0.0.9' },
        ],
        nodeInfo: { osImage: 'Debian', kernelVersion: '', containerRuntimeVersion: 'containerd://2.0' },
      },
    });
    expect(nodeAddress(node, 'InternalIP')).toBe('10.0.0.1');
    expect(nodeAddress(node, 'ExternalIP')).toBe('<none>');
    expect(nodeInfo(node, 'osImage')).toBe('Debian');
    expect(nodeInfo(node, 'kernelVersion')).toBe('<unknown>');
    expect(nodeInfo(obj({}), 'containerRuntimeVersion')).toBe('<unknown>');
  });
});

describe('workload, claim, volume and class cells', () => {
  it('lists the template containers and images in order', () => {
    const sts = obj({
      spec: {
        template: {
          spec: {
            containers: [
              { name: 'app', image: 'nginx' },
              { name: 'log', image: 'busybox' },
            ],
          },
        },
      },
    });
    expect(templateContainers(sts, 'name')).toBe('app,log');
    expect(templateContainers(sts, 'image')).toBe('nginx,busybox');
    expect(templateContainers(obj({}), 'name')).toBe('');
  });

  it.each([
    [['ReadWriteMany', 'ReadWriteOnce'], 'RWO,RWX'],
    [['ReadWriteOncePod', 'ReadOnlyMany', 'ReadOnlyMany'], 'ROX,RWOP'],
    [[], ''],
    [undefined, ''],
  ])('access modes %j: %j', (modes, expected) => {
    expect(accessModes(modes)).toBe(expected);
  });

  it.each([
    [
      'unbound: no capacity or modes',
      { spec: {}, status: { phase: 'Pending' } },
      {},
      { status: 'Pending', capacity: '', modes: '' },
    ],
    [
      'bound',
      {
        spec: { volumeName: 'pv-1' },
        status: { phase: 'Bound', capacity: { storage: '5Gi' }, accessModes: ['ReadWriteOnce'] },
      },
      {},
      { status: 'Bound', capacity: '5Gi', modes: 'RWO' },
    ],
    [
      'being deleted',
      { spec: { volumeName: 'pv-1' }, status: { phase: 'Bound', capacity: { storage: '5Gi' } } },
      { deletionTimestamp: '2026-01-01T00:00:00Z' },
      { status: 'Terminating', capacity: '5Gi', modes: '' },
    ],
  ])('claim %s', (_what, fields, metadata, expected) => {
    expect(claimCells(obj(fields, metadata))).toEqual(expected);
  });

  it('takes the class from the spec, else the beta annotation', () => {
    const beta = naming('kubernetes').annotations.betaStorageClass;
    expect(storageClassOf(obj({ spec: { storageClassName: 'fast' } }, { annotations: { [beta]: 'slow' } }), beta)).toBe(
      'fast',
    );
    expect(storageClassOf(obj({ spec: {} }, { annotations: { [beta]: 'slow' } }), beta)).toBe('slow');
    expect(storageClassOf(obj({ spec: {} }), beta)).toBe('');
  });

  it('names the claim of a volume', () => {
    expect(volumeClaim(obj({ spec: { claimRef: { namespace: 'ns', name: 'data' } } }))).toBe('ns/data');
    expect(volumeClaim(obj({ spec: {} }))).toBe('');
  });

  it.each([
    [{ a: 'true' }, 'standard (default)'],
    [{ b: 'true' }, 'standard (default)'],
    [{ a: 'True' }, 'standard'],
    [{}, 'standard'],
  ])('class annotations %j: %s', (annotations, expected) => {
    expect(storageClassName(obj({}, { name: 'standard', annotations }), ['a', 'b'])).toBe(expected);
  });
});

describe('selectors and label maps', () => {
  it.each([
    [undefined, '<none>'],
    [{}, '<none>'],
    [{ matchLabels: { b: '2', a: '1' } }, 'a=1,b=2'],
    [{ matchExpressions: [{ key: 'k', operator: 'In', values: ['y', 'x'] }] }, 'k in (x,y)'],
    [{ matchExpressions: [{ key: 'k', operator: 'Bogus' }] }, '<error>'],
  ])('selector %j prints %s', (sel, want) => expect(formatLabelSelector(sel)).toBe(want));

  it('a label map prints in key order, <none> when empty', () => {
    expect(formatLabels({ z: '1', app: 'rc' })).toBe('app=rc,z=1');
    expect(formatLabels(undefined)).toBe('<none>');
  });
});

describe('endpoints and slices', () => {
  const ep = (subsets: unknown[]) => obj({ subsets });
  it.each([
    [[], '<none>'],
    [[{ addresses: [{ ip: '10.1.2.3' }], ports: [{ port: 80 }] }], '10.1.2.3:80'],
    [[{ addresses: [{ ip: 'fd00::1' }], ports: [{ port: 80 }] }], '[fd00::1]:80'],
    [[{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }] }], '10.0.0.1,10.0.0.2'],
    [[{ addresses: [{ ip: 'a' }, { ip: 'b' }], ports: [{ port: 1 }, { port: 2 }] }], 'a:1,b:1,a:2 + 1 more...'],
  ])('subsets %j print %s', (subsets, want) => expect(endpointsCell(ep(subsets))).toBe(want));

  it('slice ports by number, else name, else *; addresses flattened; <unset> for none', () => {
    const slice = obj({ ports: [{ port: 80 }, { name: 'http' }, {}], endpoints: [{ addresses: ['10.1.2.3'] }] });
    expect(endpointSliceCell(slice, 'ports')).toBe('80,http,*');
    expect(endpointSliceCell(slice, 'endpoints')).toBe('10.1.2.3');
    expect(endpointSliceCell(obj({}), 'ports')).toBe('<unset>');
  });
});

describe('service cells', () => {
  it.each([
    [{ ports: [{ port: 80, protocol: 'TCP' }] }, '80/TCP'],
    [
      {
        ports: [
          { port: 80, nodePort: 30080, protocol: 'TCP' },
          { port: 53, protocol: 'UDP' },
        ],
      },
      '80:30080/TCP,53/UDP',
    ],
    [{}, '<none>'],
  ])('ports of %j print %s', (spec, want) => expect(servicePorts(obj({ spec }))).toBe(want));

  it.each([
    [{}, {}, '<none>'],
    [{ type: 'NodePort', externalIPs: ['1.2.3.4'] }, {}, '1.2.3.4'],
    [{ type: 'LoadBalancer' }, {}, '<pending>'],
    [{ type: 'LoadBalancer' }, { loadBalancer: { ingress: [{ ip: '5.6.7.8' }, { hostname: 'lb' }] } }, '5.6.7.8,lb'],
    [{ type: 'ExternalName', externalName: 'db.example' }, {}, 'db.example'],
  ])('external IP of %j %j prints %s', (spec, status, want) =>
    expect(serviceExternalIP(obj({ spec, status }))).toBe(want),
  );
});

describe('ingress cells', () => {
  it.each([
    [{}, '*'],
    [{ rules: [{}] }, '*'],
    [{ rules: [{ host: 'a' }, {}, { host: 'c' }] }, 'a,c'],
    [{ rules: [{ host: 'a' }, { host: 'b' }, { host: 'c' }, { host: 'd' }, { host: 'e' }] }, 'a,b,c + 2 more...'],
  ])('hosts of %j print %s', (spec, want) => expect(ingressHosts(obj({ spec }))).toBe(want));

  it('ports are 80, with 443 once TLS is configured', () => {
    expect(ingressPorts(obj({ spec: {} }))).toBe('80');
    expect(ingressPorts(obj({ spec: { tls: [{}] } }))).toBe('80, 443');
  });

  it('class parameters as Kind[.group]/name', () => {
    expect(ingressClassParameters(obj({ spec: {} }))).toBe('<none>');
    expect(ingressClassParameters(obj({ spec: { parameters: { kind: 'Cfg', apiGroup: 'x.io', name: 'p' } } }))).toBe(
      'Cfg.x.io/p',
    );
  });
});

describe('other cells', () => {
  it('binding subjects by kind, service accounts with their namespace', () => {
    const b = obj({
      subjects: [
        { kind: 'User', name: 'u1' },
        { kind: 'User', name: 'u2' },
        { kind: 'ServiceAccount', name: 'default', namespace: 'ns' },
      ],
    });
    expect(bindingSubjects(b, 'User')).toBe('u1, u2');
    expect(bindingSubjects(b, 'Group')).toBe('');
    expect(bindingSubjects(b, 'ServiceAccount')).toBe('ns/default');
  });

  it('the controller owner as kind.group/name in lower case', () => {
    const owned = (apiVersion: string, kind: string) =>
      obj({}, { ownerReferences: [{ apiVersion, kind, name: 'web', uid: 'u', controller: true }] });
    expect(controllerOf(owned('apps/v1', 'StatefulSet'))).toBe('statefulset.apps/web');
    expect(controllerOf(owned('v1', 'ReplicationController'))).toBe('replicationcontroller/web');
    expect(controllerOf(obj({}))).toBe('<none>');
  });

  it('budget fields as text, N/A when unset', () => {
    expect(budgetField(obj({ spec: { minAvailable: 1 } }), 'minAvailable')).toBe('1');
    expect(budgetField(obj({ spec: { maxUnavailable: '50%' } }), 'maxUnavailable')).toBe('50%');
    expect(budgetField(obj({ spec: {} }), 'maxUnavailable')).toBe('N/A');
  });

  it('policy parameter references', () => {
    expect(policyParamRef(obj({ spec: {} }))).toBe('<unset>');
    expect(policyParamRef(obj({ spec: { paramRef: { name: 'p', namespace: 'ns' } } }))).toBe('ns/p');
    expect(policyParamRef(obj({ spec: { paramRef: { name: 'p' } } }))).toBe('*/p');
    expect(policyParamRef(obj({ spec: { paramRef: { selector: { matchLabels: { a: 'b' } } } } }))).toBe('a=b');
  });

  it('key counts over several maps', () => {
    expect(keyCount(obj({ data: { a: '1' }, binaryData: { b: 'Ag==' } }), 'data', 'binaryData')).toBe(2);
    expect(keyCount(obj({}), 'data')).toBe(0);
  });
});
