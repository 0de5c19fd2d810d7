/** The StatusError a client call fails with. */
import { StatusError } from '../../src/client/errors.ts';

/** The StatusError a call fails with; fails the test if it succeeds or fails otherwise. */
export async function failure(call: Promise<unknown>): Promise<StatusError> {
  try {
    await call;
  } catch (err) {
    if (err instanceof StatusError) return err;
    throw err;
  }
  throw new Error('expected the request to fail');
}
