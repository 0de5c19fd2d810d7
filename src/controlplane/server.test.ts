import { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { readBody } from './server.ts';

const request = () => {
  const req = new IncomingMessage(new Socket());
  req.headers['content-type'] = 'application/json';
  return req;
};

describe('readBody', () => {
  it('reads a body that arrives in chunks', async () => {
    const req = request();
    const body = readBody(req, 1024);
    req.push('{"a":');
    req.push('1}');
    req.complete = true;
    req.push(null);
    expect(await body).toMatchObject({ text: '{"a":1}', contentType: 'application/json' });
  });

  it('gives up on a request whose client left before it was read, or while it was', async () => {
    const gone = request();
    gone.destroy();
    await expect(readBody(gone, 1024)).rejects.toMatchObject({ code: 400 });
    const leaving = request();
    const body = readBody(leaving, 1024);
    leaving.push('{"a":');
    leaving.destroy();
    await expect(body).rejects.toThrow(/closed the connection before sending the whole request body/);
  });
});
