/** Why a patch could not be applied; the API server maps each reason to its HTTP status. */
export type PatchErrorReason = 'BadRequest' | 'Invalid' | 'Conflict' | 'UnsupportedMediaType' | 'RequestEntityTooLarge';

export class PatchError extends Error {
  override readonly name = 'PatchError';

  constructor(
    readonly reason: PatchErrorReason,
    message: string,
  ) {
    super(message);
  }
}
