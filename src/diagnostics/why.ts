/**
 * `/debug/why/<resource>/<namespace>/<name>` (`/debug/why/<resource>/<name>` for cluster-scoped
 * resources): the running daemon's `why` answers, with its own configuration. Plain text, or the answer
 * as JSON for `Accept: application/json`.
 */
import { answererFor, type WhyAnswerer, WhyNotFound, type WhySources, whyText } from '../controller/why.ts';
import { type RouteRegistry, textReply } from './server.ts';

export const WHY_PREFIX = '/debug/why/';

export function installWhy(server: RouteRegistry, answerers: readonly WhyAnswerer[], sources: () => WhySources): void {
  server.route(WHY_PREFIX, async (req) => {
    const parts = req.path.slice(WHY_PREFIX.length).split('/').map(decodeURIComponent);
    const answerer = answererFor(answerers, parts[0] ?? '');
    if (!answerer) {
      return textReply(404, `no why answers for "${parts[0]}": try ${answerers.map((a) => a.names[0]).join(', ')}\n`);
    }
    const expected = answerer.namespaced ? 3 : 2;
    if (parts.length !== expected || parts.some((p) => !p)) {
      const shape = answerer.namespaced ? '<namespace>/<name>' : '<name>';
      return textReply(400, `expected ${WHY_PREFIX}${parts[0]}/${shape}\n`);
    }
    try {
      const answer = await answerer.answer(sources(), answerer.namespaced ? parts[1] : undefined, parts.at(-1)!);
      return req.headers.accept?.includes('application/json')
        ? { status: 200, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(answer) }
        : textReply(200, whyText(answer));
    } catch (err) {
      if (err instanceof WhyNotFound) return textReply(404, `${err.message}\n`);
      throw err;
    }
  });
}
