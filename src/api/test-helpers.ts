/** What the selector and parser tests of this folder share. */

/** The error `fn` throws; fails when it throws none. */
export function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected an error');
}
