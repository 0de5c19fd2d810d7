/** RFC 3339 with whole seconds, as `metav1.Time` serializes. */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** RFC 3339 with microseconds, as `metav1.MicroTime` serializes. */
export function rfc3339Micro(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}
