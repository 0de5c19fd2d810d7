/**
 * Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`), as kubectl's typed clients
 * send them, decoded into the JSON object form the rest of the server works with.
 */
export {
  decodeKubernetesProtobuf,
  encodeKubernetesProtobuf,
  isProtobufMediaType,
  MAGIC,
  PROTOBUF_MEDIA_TYPE,
  type ProtobufListEncoder,
  protobufBytes,
  protobufListEncoder,
  readEnvelope,
} from './envelope.ts';
export { decodeMessage, type FieldSpec, type MessageTable, type ScalarKind } from './schema.ts';
export { listTableForKind, messageOfKind, PROTOBUF_KINDS, tableForKind } from './tables.ts';
export { ProtobufError, ProtoReader, WireType } from './wire.ts';

import { decodeKubernetesProtobuf, protobufBytes } from './envelope.ts';

/** Decodes a protobuf request body (binary string or bytes) into the object's JSON form. */
export function decodeProtobufBody(body: string | Uint8Array): Record<string, unknown> {
  return decodeKubernetesProtobuf(protobufBytes(body));
}
