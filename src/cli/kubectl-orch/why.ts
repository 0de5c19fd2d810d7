/** `kubectl orch why KIND/NAME`: the owning controller's core, asked about one object. */
import { whyAnswerers } from '../../../controllers/why.ts';
import { answererFor, apiSources, whyText } from '../../controller/why.ts';
import { type OutputFormat, UsageError } from './output.ts';
import type { Session } from './session.ts';

export function parseTarget(args: string[]): { resource: string; name: string } {
  const [first, second] = args;
  if (args.length === 1 && first.includes('/')) {
    const [resource, name] = first.split('/', 2);
    if (resource && name) return { resource, name };
  }
  if (args.length === 2 && !first.includes('/')) return { resource: first, name: second };
  throw new UsageError('you must specify one object as KIND/NAME (or KIND NAME), e.g. pdb/web');
}

export async function why(
  s: Session,
  args: string[],
  format: OutputFormat,
  out: (text: string) => void,
): Promise<number> {
  const { resource, name } = parseTarget(args);
  const answerer = answererFor(whyAnswerers, resource);
  if (!answerer) {
    const known = whyAnswerers.map((a) => a.names.at(-1)).join(', ');
    throw new UsageError(`"why" has no answer for "${resource}" (it answers for ${known})`);
  }
  const answer = await answerer.answer(apiSources(s.client), answerer.namespaced ? s.namespace : undefined, name);
  out(format === 'json' ? `${JSON.stringify(answer, null, 2)}\n` : whyText(answer));
  return 0;
}
