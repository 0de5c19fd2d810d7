/**
 * The Swagger 2.0 document in the protobuf form kubectl downloads from `/openapi/v2`
 * (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`): gnostic's `openapi.v2.Document`. Only
 * what the documents here use is written: swagger, info and the definitions, whose schemas carry `$ref`,
 * format, description, type, items, properties, additionalProperties and vendor extensions (as YAML).
 */
import { stringify } from 'yaml';
import { WireType } from '../protobuf/wire.ts';
import { ProtoWriter } from '../protobuf/writer.ts';
import type { JsonSchema } from './model.ts';

export const SWAGGER_PROTOBUF_MEDIA_TYPE = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

interface SwaggerDocument {
  swagger: string;
  info: { title: string; version: string };
  definitions: Record<string, JsonSchema>;
}

export function encodeSwaggerProtobuf(document: SwaggerDocument): Uint8Array {
  const w = new ProtoWriter();
  text(w, 1, document.swagger);
  w.message(2, (info) => {
    text(info, 1, document.info.title);
    text(info, 2, document.info.version);
  });
  w.message(9, (definitions) => namedSchemas(definitions, document.definitions));
  return w.finish();
}

/** `repeated NamedSchema additional_properties = 1`, as Definitions and Properties hold them. */
function namedSchemas(w: ProtoWriter, schemas: Record<string, JsonSchema>): void {
  for (const [name, schema] of Object.entries(schemas)) {
    w.message(1, (named) => {
      text(named, 1, name);
      named.message(2, (s) => writeSchema(s, schema));
    });
  }
}

function writeSchema(w: ProtoWriter, schema: JsonSchema): void {
  if (typeof schema.$ref === 'string') text(w, 1, schema.$ref);
  if (typeof schema.format === 'string') text(w, 2, schema.format);
  if (typeof schema.description === 'string') text(w, 4, schema.description);
  const additional = schema.additionalProperties as JsonSchema | undefined;
  if (additional) w.message(21, (item) => item.message(1, (s) => writeSchema(s, additional)));
  if (typeof schema.type === 'string') w.message(22, (type) => text(type, 1, schema.type as string));
  const items = schema.items as JsonSchema | undefined;
  if (items) w.message(23, (item) => item.message(1, (s) => writeSchema(s, items)));
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (properties) w.message(25, (p) => namedSchemas(p, properties));
  for (const [name, value] of Object.entries(schema)) {
    if (!name.startsWith('x-')) continue;
    w.message(31, (named) => {
      text(named, 1, name);
      named.message(2, (any) => text(any, 2, stringify(value)));
    });
  }
}

function text(w: ProtoWriter, field: number, value: string): void {
  w.tag(field, WireType.LENGTH_DELIMITED);
  w.string(value);
}
