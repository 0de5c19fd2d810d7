/** What a typed resource client needs from the HTTP client beneath it: one request, and one watch. */
import type { KubeObject, WatchEvent } from '../api/meta.ts';

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  signal?: AbortSignal;
  /** The controller on whose behalf the call is made, appended to the user agent. */
  caller?: string;
  /** Turns a successful answer's text into its body (default: JSON.parse). */
  decode?: (text: string) => unknown;
}

export interface Response<T> {
  status: number;
  body: T;
  warnings: string[];
}

export interface Transport {
  request<T = unknown>(method: string, path: string, opts?: RequestOptions): Promise<Response<T>>;
  /**
   * With `protobuf`, asks for Kubernetes protobuf (the server may answer JSON): objects read from it come without
   * their managedFields. A field the client's tables lack fails the watch with UnknownProtobufField.
   */
  watch<T extends KubeObject = KubeObject>(
    path: string,
    query: RequestOptions['query'],
    onEvent: (e: WatchEvent<T>) => void,
    signal: AbortSignal,
    caller?: string,
    protobuf?: boolean,
  ): Promise<void>;
}
