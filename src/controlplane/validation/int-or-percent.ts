/** Integer-or-percentage values (`3`, `"25%"`) as the reference checks them. */

import { type FieldError, invalid } from '../../api/field-errors.ts';
import { IS_NEGATIVE_ERROR, isValidPercent } from './common.ts';

/** A non-negative integer or a `N%` string (other types are left to the shape check). */
export function validatePositiveIntOrPercent(value: unknown, path: string): FieldError[] {
  if (typeof value === 'string') return isValidPercent(value).map((msg) => invalid(path, value, msg));
  if (typeof value === 'number' && Number.isInteger(value))
    return value < 0 ? [invalid(path, value, IS_NEGATIVE_ERROR)] : [];
  // Any other JSON type is reported by the shape check (with the reference's text).
  return [];
}

/** The percentage of a valid `N%` string, `undefined` otherwise. */
export function percentValue(value: unknown): number | undefined {
  if (typeof value !== 'string' || isValidPercent(value).length) return undefined;
  return Number.parseInt(value.slice(0, -1), 10);
}

/** The number of a value: the percentage for `N%`, the integer itself, 0 for anything else. */
export function intOrPercentValue(value: unknown): number {
  const p = percentValue(value);
  if (p !== undefined) return p;
  return typeof value === 'number' && Number.isInteger(value) ? value : 0;
}

export function isNotMoreThan100Percent(value: unknown, path: string): FieldError[] {
  const p = percentValue(value);
  return p === undefined || p <= 100 ? [] : [invalid(path, value, 'must not be greater than 100%')];
}
