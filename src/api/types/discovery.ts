/** `discovery.<group suffix>/v1` shapes as raw JSON: EndpointSlice. */
import type { KubeObject } from '../meta.ts';
import type { ObjectReference, Protocol } from './core.ts';

export interface EndpointConditions {
  /** Ready to receive traffic; unset means unknown, to be treated as ready. Always false while terminating. */
  ready?: boolean;
  /** Like ready, but also true while terminating. */
  serving?: boolean;
  terminating?: boolean;
}

export interface EndpointHints {
  forZones?: { name: string }[];
  forNodes?: { name: string }[];
}

export interface Endpoint {
  /** Required; 1 to 100 addresses of the slice's address type, treated as fungible. */
  addresses: string[];
  conditions?: EndpointConditions;
  hostname?: string;
  targetRef?: ObjectReference;
  /** Deprecated; use `nodeName` and `zone`. */
  deprecatedTopology?: Record<string, string>;
  nodeName?: string;
  zone?: string;
  hints?: EndpointHints;
}

export interface EndpointSlicePort {
  /** Required (may be empty) when the slice has several ports. */
  name?: string;
  /** Default `TCP`. */
  protocol?: Protocol;
  /** Unset means all ports. */
  port?: number;
  appProtocol?: string;
}

export type AddressType = 'IPv4' | 'IPv6' | 'FQDN';

/** A subset of a service's endpoints; label `<domain>/service-name` names the service. */
export interface EndpointSlice extends KubeObject {
  /** Required; immutable. */
  addressType: AddressType;
  /** Required; at most 1000. */
  endpoints: Endpoint[];
  /** At most 100. */
  ports?: EndpointSlicePort[];
}
