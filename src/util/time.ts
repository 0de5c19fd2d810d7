/** Longest delay Node's setTimeout honours (a longer one fires after 1 ms, with a TimeoutOverflowWarning). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** RFC 3339 with whole seconds, as `metav1.Time` serializes. */
export function rfc3339(d: Date): string {
  // Whole seconds: every write of the same second reuses one string.
  const second = Math.floor(d.getTime() / 1000);
  if (second !== lastSecond.at) lastSecond.text = d.toISOString().replace(/\.\d{3}Z$/, 'Z');
  lastSecond.at = second;
  return lastSecond.text;
}

const lastSecond = { at: Number.NaN, text: '' };

/** RFC 3339 with microseconds, as `metav1.MicroTime` serializes. */
export function rfc3339Micro(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** The reference's human-readable duration (`HumanDuration`): 45s, 2m30s, 12m, 3h20m, 5d4h, 400d, 3y2d. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  const withRest = (big: number, unit: string, rest: number, restUnit: string) =>
    rest === 0 ? `${big}${unit}` : `${big}${unit}${rest}${restUnit}`;
  if (minutes < 10) return withRest(minutes, 'm', seconds % 60, 's');
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) return withRest(hours, 'h', minutes % 60, 'm');
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) return withRest(days, 'd', hours % 24, 'h');
  if (days < 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (days < 365 * 8) return withRest(years, 'y', days % 365, 'd');
  return `${years}y`;
}
