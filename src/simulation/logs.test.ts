import { describe, expect, it } from 'vitest';
import { PodLogs } from './logs.ts';

describe('PodLogs', () => {
  it('keeps the last lines of the ring, ends followers when the container ends, forgets a pod dropped', () => {
    const logs = new PodLogs(['n1'], 3);
    for (let i = 1; i <= 5; i++) logs.append('u', 'c', `l${i}`);
    expect(logs.read('u', 'c')?.lines.map((l) => l.text)).toEqual(['l3', 'l4', 'l5']);
    const seen: string[] = [];
    logs.follow(
      'u',
      'c',
      (l) => seen.push(l.text),
      () => seen.push('end'),
    );
    logs.append('u', 'c', 'l6');
    logs.end('u', 'c');
    logs.append('u', 'c', 'restarted'); // a new run: the ended follower hears nothing more
    expect(seen).toEqual(['l6', 'end']);
    logs.drop('u');
    expect(logs.read('u', 'c')).toBeUndefined();
    expect(logs.runs('n1')).toBe(true);
    expect(logs.runs('n2')).toBe(false);
  });

  it('ends at once a follower of an ended or unknown container; unsubscribing stops the lines', () => {
    const logs = new PodLogs(['n1']);
    const ended: string[] = [];
    logs.follow(
      'none',
      'c',
      () => ended.push('line'),
      () => ended.push('end'),
    );
    expect(ended).toEqual(['end']);
    logs.append('u', 'c', 'a');
    const seen: string[] = [];
    const stop = logs.follow(
      'u',
      'c',
      (l) => seen.push(l.text),
      () => seen.push('end'),
    );
    stop();
    logs.append('u', 'c', 'b');
    logs.drop('u');
    expect(seen).toEqual([]);
  });
});
