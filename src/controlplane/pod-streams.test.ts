import { describe, expect, it } from 'vitest';
import type { Pod } from '../api/types/core.ts';
import { ApiError } from './errors.ts';
import { containerOf, formatLine, parseLogOptions, selectLines } from './pod-streams.ts';

const q = (s: string) => new URLSearchParams(s);
const failure = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return err instanceof ApiError ? `${err.code} ${err.message}` : String(err);
  }
  return 'no error';
};

describe('parseLogOptions', () => {
  it('reads the options the reference honours', () => {
    expect(parseLogOptions('p', q('container=c&follow=true&timestamps=1&tailLines=5&limitBytes=10'))).toEqual({
      container: 'c',
      follow: true,
      timestamps: true,
      previous: false,
      tailLines: 5,
      sinceSeconds: undefined,
      limitBytes: 10,
    });
    expect(parseLogOptions('p', q('sinceTime=2026-01-01T00:00:00Z')).sinceTimeMs).toBe(
      Date.parse('2026-01-01T00:00:00Z'),
    );
  });
  it.each([
    [
      'tailLines=-1',
      '422 PodLogOptions "p" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0',
    ],
    ['sinceSeconds=0', '422 PodLogOptions "p" is invalid: sinceSeconds: Invalid value: 0: must be greater than 0'],
    ['limitBytes=0', '422 PodLogOptions "p" is invalid: limitBytes: Invalid value: 0: must be greater than 0'],
    [
      'sinceSeconds=5&sinceTime=2026-01-01T00:00:00Z',
      '422 PodLogOptions "p" is invalid: sinceSeconds: Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified',
    ],
    ['tailLines=1.5', '400 tailLines: invalid value "1.5": must be an integer'],
    ['sinceTime=yesterday', '400 sinceTime: invalid value "yesterday": must be an RFC 3339 time'],
  ])('%s: %s', (query, want) => expect(failure(() => parseLogOptions('p', q(query)))).toBe(want));
});

describe('parseLogOptions booleans', () => {
  // The reference's query conversion: only 0 and any casing of false are false.
  it.each([
    ['follow=true', true],
    ['follow=True', true],
    ['follow=yes', true],
    ['follow=', true],
    ['follow=0', false],
    ['follow=FALSE', false],
    ['', false],
  ])('%s: %s', (query, want) => expect(parseLogOptions('p', q(query)).follow).toBe(want));
});

describe('selectLines and formatLine', () => {
  const lines = [1, 2, 3, 4].map((i) => ({ at: i * 1000, text: `l${i}` }));
  const base = { follow: false, timestamps: false, previous: false };
  it.each([
    [{}, ['l1', 'l2', 'l3', 'l4']],
    [{ tailLines: 2 }, ['l3', 'l4']],
    [{ tailLines: 0 }, []],
    [{ tailLines: 9 }, ['l1', 'l2', 'l3', 'l4']],
    [{ sinceSeconds: 2 }, ['l2', 'l3', 'l4']],
    [{ sinceTimeMs: 3000 }, ['l3', 'l4']],
    [{ sinceSeconds: 2, tailLines: 1 }, ['l4']],
  ])('%j', (opts, want) => expect(selectLines(lines, { ...base, ...opts }, 4000).map((l) => l.text)).toEqual(want));
  it('prefixes the RFC 3339 time with nanoseconds when asked', () => {
    expect(formatLine({ at: Date.parse('2026-01-02T03:04:05.678Z'), text: 'x' }, true)).toBe(
      '2026-01-02T03:04:05.678000000Z x\n',
    );
    expect(formatLine({ at: 0, text: 'x' }, false)).toBe('x\n');
  });
});

describe('containerOf', () => {
  const pod = (...names: string[]): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web-0' },
    spec: { initContainers: [{ name: 'init' }], containers: names.map((name) => ({ name })) },
  });
  it.each([
    [pod('a'), undefined, 'a'],
    [pod('a', 'b'), 'b', 'b'],
    [pod('a'), 'init', 'init'],
  ])('%#: the named or only container', (p, requested, want) => expect(containerOf(p, requested)).toBe(want));
  it.each([
    [pod('a', 'b'), undefined, '400 a container name must be specified for pod web-0, choose one of: [a b]'],
    [pod('a'), 'z', '400 container z is not valid for pod web-0'],
  ])('%#: a 400 naming the choice', (p, requested, want) =>
    expect(failure(() => containerOf(p, requested))).toBe(want),
  );
});
