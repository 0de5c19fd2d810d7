/**
 * Kubernetes protobuf's shared facts: its media type, the envelope's magic and the error of malformed input. The
 * embedded plane's codec (src/controlplane/protobuf/) and the client's watch reader (src/client/protobuf/) both use
 * them.
 */

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

/** `k8s\0`: an envelope's first bytes. */
export const MAGIC = Uint8Array.of(0x6b, 0x38, 0x73, 0x00);

/** Whether a media type (parameters allowed) is the Kubernetes protobuf one. */
export function isProtobufMediaType(contentType: string): boolean {
  return contentType.split(';', 1)[0].trim().toLowerCase() === PROTOBUF_MEDIA_TYPE;
}

/** Malformed protobuf input: truncated data, an over-long varint, a bad wire type. */
export class ProtobufError extends Error {
  override name = 'ProtobufError';
}
