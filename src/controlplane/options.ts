/** Validation of the query parameters shared by list, watch and write calls, with the reference's messages. */
import { badRequest, type FieldProblem, invalidOptions } from './errors.ts';

export type RvMatch = '' | 'NotOlderThan' | 'Exact';

export interface ListOptions {
  resourceVersion: string;
  resourceVersionMatch: RvMatch;
  limit: number;
  continueToken: string;
  watch: boolean;
  allowWatchBookmarks: boolean;
  sendInitialEvents?: boolean;
  timeoutSeconds?: number;
}

const forbiddenProblem = (field: string, detail: string): FieldProblem => ({
  type: 'FieldValueForbidden',
  field,
  message: `${field}: Forbidden: ${detail}`,
});

/**
 * A boolean query parameter as the reference's conversion reads one: absent is unset, `0` and any casing of
 * `false` are false, and every other value (`true`, `True`, `1`, even empty) is true; never an error.
 */
export function queryBool(value: string | null): boolean | undefined {
  if (value === null) return undefined;
  return !(value === '0' || value.toLowerCase() === 'false');
}

/** `pretty` alone is read with Go's strconv.ParseBool, anything it refuses being false. */
export function prettyParam(query: URLSearchParams): boolean {
  return ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(query.get('pretty') ?? '');
}

const parseBool = (query: URLSearchParams, name: string) => queryBool(query.get(name));

function parseInt64(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null || v === '') return undefined;
  // Go's strconv.ParseInt message, as the reference's query conversion answers it.
  if (!/^-?\d+$/.test(v)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  const n = Number(v);
  // Past 2^53 a number is no longer exact: refused as Go refuses one past int64.
  if (!Number.isSafeInteger(n)) throw badRequest(`strconv.ParseInt: parsing ${JSON.stringify(v)}: value out of range`);
  return n;
}

/** `watchListEnabled`: whether the server serves sendInitialEvents (its WatchList gate). */
export function parseListOptions(
  query: URLSearchParams,
  watchVerb: boolean,
  metaGroup: string,
  watchListEnabled = true,
): ListOptions {
  const opts: ListOptions = {
    resourceVersion: query.get('resourceVersion') ?? '',
    resourceVersionMatch: (query.get('resourceVersionMatch') ?? '') as RvMatch,
    limit: parseInt64(query, 'limit') ?? 0,
    continueToken: query.get('continue') ?? '',
    watch: watchVerb,
    allowWatchBookmarks: parseBool(query, 'allowWatchBookmarks') ?? false,
    sendInitialEvents: parseBool(query, 'sendInitialEvents'),
    timeoutSeconds: parseInt64(query, 'timeoutSeconds'),
  };
  const problems: FieldProblem[] = [];
  const { resourceVersion: rv, resourceVersionMatch: match } = opts;
  const watchList = opts.watch && opts.sendInitialEvents !== undefined;
  if (match !== '') {
    if (!['NotOlderThan', 'Exact'].includes(match)) {
      problems.push({
        type: 'FieldValueNotSupported',
        field: 'resourceVersionMatch',
        message: `resourceVersionMatch: Unsupported value: ${JSON.stringify(match)}: supported values: "Exact", "NotOlderThan", ""`,
      });
    } else if (opts.watch && !watchList) {
      problems.push(
        forbiddenProblem(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
        ),
      );
    } else if (rv === '' && !watchList) {
      problems.push(
        forbiddenProblem(
          'resourceVersionMatch',
          'resourceVersionMatch is forbidden unless resourceVersion is provided',
        ),
      );
    } else if (opts.continueToken) {
      problems.push(
        forbiddenProblem('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'),
      );
    } else if (match === 'Exact' && rv === '0') {
      problems.push(
        forbiddenProblem('resourceVersionMatch', `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`),
      );
    }
  }
  if (opts.sendInitialEvents !== undefined) {
    if (!opts.watch) {
      problems.push(forbiddenProblem('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
    } else {
      if (match !== 'NotOlderThan') {
        problems.push(
          forbiddenProblem(
            'resourceVersionMatch',
            'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
          ),
        );
        if (match !== '') {
          problems.push({
            type: 'FieldValueNotSupported',
            field: 'resourceVersionMatch',
            message: `resourceVersionMatch: Unsupported value: ${JSON.stringify(match)}: supported values: "NotOlderThan"`,
          });
        }
      }
      if (!watchListEnabled) {
        problems.push(
          forbiddenProblem(
            'sendInitialEvents',
            'sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
          ),
        );
      }
    }
  }
  if (problems.length) throw invalidOptions(metaGroup, 'ListOptions', problems);
  // As the reference's storage, after the options' validation: an unparseable version is a 400.
  parseResourceVersion(rv);
  return opts;
}

const UINT64_MAX = (1n << 64n) - 1n;

/**
 * A request's resourceVersion as the reference's storage parses it (a uint64; empty is 0): anything else is
 * a 400 with Go's parse error. A bigint, so that a valid version beyond any we hold keeps its digits.
 */
export function parseResourceVersion(rv: string): bigint {
  if (rv === '') return 0n;
  const why = !/^\d+$/.test(rv) ? 'invalid syntax' : BigInt(rv) > UINT64_MAX ? 'value out of range' : undefined;
  if (why) {
    const quoted = JSON.stringify(rv);
    throw badRequest(
      `invalid resource version: resourceVersion: Invalid value: ${quoted}: strconv.ParseUint: parsing ${quoted}: ${why}`,
    );
  }
  return BigInt(rv);
}

export interface WriteOptions {
  dryRun: boolean;
  fieldManager?: string;
  fieldValidation: 'Ignore' | 'Warn' | 'Strict';
  force?: boolean;
}

/** Write options; `kind` names the options object in errors (CreateOptions, UpdateOptions, PatchOptions). */
export function parseWriteOptions(
  query: URLSearchParams,
  kind: string,
  metaGroup: string,
  isApply = false,
): WriteOptions {
  const problems: FieldProblem[] = [];
  const dryRun = parseDryRun(query, problems);
  const fieldManager = query.get('fieldManager') ?? undefined;
  if (fieldManager !== undefined) {
    if (fieldManager.length > 128) {
      problems.push({
        type: 'FieldValueTooLong',
        field: 'fieldManager',
        message: `fieldManager: Too long: may not be more than 128 bytes`,
      });
    }
    if (/[^\x20-\x7e]/u.test(fieldManager)) {
      problems.push({
        type: 'FieldValueInvalid',
        field: 'fieldManager',
        message: `fieldManager: Invalid value: ${JSON.stringify(fieldManager)}: must be made of printable characters`,
      });
    }
  }
  const force = parseBool(query, 'force');
  if (kind === 'PatchOptions') {
    if (isApply && !fieldManager) {
      problems.push({
        type: 'FieldValueRequired',
        field: 'fieldManager',
        message: 'fieldManager: Required value: is required for apply patch',
      });
    }
    if (!isApply && force !== undefined) {
      problems.push({
        type: 'FieldValueForbidden',
        field: 'force',
        message: 'force: Forbidden: may not be specified for non-apply patch',
      });
    }
  }
  const validation = query.get('fieldValidation') ?? 'Warn';
  if (!['Ignore', 'Warn', 'Strict'].includes(validation)) {
    problems.push({
      type: 'FieldValueNotSupported',
      field: 'fieldValidation',
      message: `fieldValidation: Unsupported value: ${JSON.stringify(validation)}: supported values: "", "Ignore", "Strict", "Warn"`,
    });
  }
  if (problems.length) throw invalidOptions(metaGroup, kind, problems);
  return { dryRun, fieldManager, fieldValidation: validation as WriteOptions['fieldValidation'], force };
}

export function parseDryRun(query: URLSearchParams, problems: FieldProblem[]): boolean {
  const values = query.getAll('dryRun');
  if (values.some((v) => v !== 'All')) {
    problems.push({
      type: 'FieldValueNotSupported',
      field: 'dryRun',
      // The reference checks the list as a whole, and prints it in Go's syntax: ["Some"].
      message: `dryRun: Unsupported value: ${JSON.stringify(values)}: supported values: "All"`,
    });
  }
  return values.length > 0;
}
