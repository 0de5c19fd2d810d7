/**
 * A create client in a process of its own, for `npm run bench -- creates`: it reads commands on stdin, one JSON
 * line each, `{ url, n, concurrency, prefix }`, POSTs `n` ConfigMaps named `<prefix>-<i>` to `url` with that many
 * in flight over HTTPS keep-alive connections, and answers one line `{ ms }` (or `{ error }`). TLS material comes
 * from the environment: BENCH_CA, BENCH_CERT, BENCH_KEY (PEM).
 */
import { Agent, request } from 'node:https';
import { createInterface } from 'node:readline';

interface Command {
  url: string;
  n: number;
  concurrency: number;
  prefix: string;
}

const tls = { ca: process.env.BENCH_CA, cert: process.env.BENCH_CERT, key: process.env.BENCH_KEY };
/** One keep-alive pool per server, kept between commands. */
const agents = new Map<string, Agent>();

function configMap(name: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default', labels: { app: 'bench' } },
    data: { key: name, payload: 'x'.repeat(200) },
  });
}

function post(url: URL, agent: Agent, body: string): Promise<void> {
  return new Promise((done, fail) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 201 ? done() : fail(new Error(`${url}: HTTP ${res.statusCode}`))));
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

async function run({ url, n, concurrency, prefix }: Command): Promise<number> {
  const target = new URL(url);
  let agent = agents.get(target.origin);
  if (!agent) {
    agent = new Agent({ ...tls, keepAlive: true, maxSockets: concurrency });
    agents.set(target.origin, agent);
  }
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await post(target, agent, configMap(`${prefix}-${next++}`));
    }),
  );
  return performance.now() - started;
}

for await (const line of createInterface({ input: process.stdin })) {
  const reply = await run(JSON.parse(line) as Command).then(
    (ms) => ({ ms }),
    (err: Error) => ({ error: err.message }),
  );
  process.stdout.write(`${JSON.stringify(reply)}\n`);
}
