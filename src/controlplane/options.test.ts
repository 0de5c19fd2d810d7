import { describe, expect, it } from 'vitest';
import { ApiError } from './errors.ts';
import { parseListOptions, parseResourceVersion, prettyParam, queryBool } from './options.ts';

describe('parseResourceVersion', () => {
  it.each([
    ['', 0n],
    ['0', 0n],
    ['007', 7n],
    ['18446744073709551615', 18446744073709551615n],
  ])('parses %j', (rv, expected) => {
    expect(parseResourceVersion(rv)).toBe(expected);
  });

  it.each([
    ['18446744073709551616', 'value out of range'],
    ['1000000000000000000000000', 'value out of range'],
    ['abc', 'invalid syntax'],
    ['-1', 'invalid syntax'],
    ['+1', 'invalid syntax'],
    [' 1', 'invalid syntax'],
    ['1_000', 'invalid syntax'],
  ])('refuses %j with a 400: %s', (rv, why) => {
    const err = (() => {
      try {
        parseResourceVersion(rv);
      } catch (e) {
        return e as ApiError;
      }
    })();
    expect(err).toBeInstanceOf(ApiError);
    expect(err?.code).toBe(400);
    expect(err?.message).toBe(
      `invalid resource version: resourceVersion: Invalid value: ${JSON.stringify(rv)}: strconv.ParseUint: parsing ${JSON.stringify(rv)}: ${why}`,
    );
  });

  it('reports the options’ own problems (422) before an unparseable version (400)', () => {
    const query = new URLSearchParams({ resourceVersion: 'x', resourceVersionMatch: 'Bogus' });
    expect(() => parseListOptions(query, false, 'meta.k8s.io')).toThrow(/resourceVersionMatch: Unsupported value/);
    expect(() => parseListOptions(new URLSearchParams({ resourceVersion: 'x' }), true, 'meta.k8s.io')).toThrow(
      /^invalid resource version: /,
    );
  });
});

describe('queryBool', () => {
  it.each([
    [null, undefined],
    ['true', true],
    ['True', true],
    ['TRUE', true],
    ['1', true],
    ['t', true],
    ['yes', true],
    ['', true],
    ['false', false],
    ['False', false],
    ['fAlSe', false],
    ['0', false],
  ])('reads %j as %j, as the reference converts a query parameter', (value, expected) => {
    expect(queryBool(value)).toBe(expected);
  });
});

describe('prettyParam', () => {
  it.each([
    ['pretty=true', true],
    ['pretty=True', true],
    ['pretty=T', true],
    ['pretty=1', true],
    ['pretty=yes', false],
    ['pretty=false', false],
    ['pretty=', false],
    ['', false],
  ])('reads %j as %j, as strconv.ParseBool does', (query, expected) => {
    expect(prettyParam(new URLSearchParams(query))).toBe(expected);
  });
});
