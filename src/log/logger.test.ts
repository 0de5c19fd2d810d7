import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, type LoggingFormat, V } from './logger.ts';

function capture(format: LoggingFormat, verbosity: number) {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  return { logger: createLogger({ format, verbosity, destination }), lines };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('JSON logs in the reference shape', () => {
  it('ts in seconds, msg, level, structured fields, err as a string, the logger name', async () => {
    const { logger, lines } = capture('json', 2);
    const before = Date.now() / 1000;
    logger
      .child({ logger: 'disruption-controller' })
      .error({ err: new Error('boom'), pdb: { name: 'web', namespace: 'default' } }, 'sync failed');
    await settle();
    const entry = JSON.parse(lines[0]);
    expect(entry).toMatchObject({
      level: 'error',
      msg: 'sync failed',
      err: 'boom',
      logger: 'disruption-controller',
      pdb: { name: 'web', namespace: 'default' },
    });
    expect(entry.ts).toBeGreaterThanOrEqual(before);
    expect(entry.ts).toBeLessThan(before + 60);
  });

  it('V(n) lines carry v and pass only up to the verbosity, also through child loggers', async () => {
    const { logger, lines } = capture('json', 2);
    const child = logger.child({ logger: 'x' });
    V(child, 2).info('shown');
    V(child, 3).info('hidden');
    V(logger, 0).info('always');
    await settle();
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ msg: 'shown', v: 2, logger: 'x' }),
      expect.objectContaining({ msg: 'always', v: 0 }),
    ]);
  });
});

describe('text logs for people', () => {
  it('klog-style: severity letter, date, time, quoted message, key=value pairs', async () => {
    const { logger, lines } = capture('text', 2);
    logger.warn({ key: 'default/web', attempt: 3 }, 'retrying');
    await settle();
    expect(lines[0]).toMatch(/^W\d{4} \d{2}:\d{2}:\d{2}\.\d{6}\] "retrying" key="default\/web" attempt=3$/);
  });
});
