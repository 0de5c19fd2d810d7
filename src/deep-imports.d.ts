// Modules of packages loaded one by one rather than through the package's index, which would load all of it at
// every start (see src/client/connections.ts and src/diagnostics/metrics/prom-client.ts). Typed from the index.

declare module 'undici/lib/dispatcher/agent.js' {
  import { Agent } from 'undici';
  export = Agent;
}

declare module 'undici/lib/core/connect.js' {
  import { buildConnector } from 'undici';
  export = buildConnector;
}

declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici';

  function request(this: Dispatcher, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData>;
  export = request;
}

declare module 'prom-client/lib/registry.js' {
  import { Registry, register } from './diagnostics/metrics/prom-client.ts';

  const registryModule: typeof Registry & { globalRegistry: typeof register };
  export = registryModule;
}

declare module 'prom-client/lib/counter.js' {
  import { Counter } from './diagnostics/metrics/prom-client.ts';
  export = Counter;
}

declare module 'prom-client/lib/gauge.js' {
  import { Gauge } from './diagnostics/metrics/prom-client.ts';
  export = Gauge;
}

declare module 'prom-client/lib/histogram.js' {
  import { Histogram } from './diagnostics/metrics/prom-client.ts';
  export = Histogram;
}

declare module 'prom-client/lib/defaultMetrics.js' {
  import { collectDefaultMetrics } from './diagnostics/metrics/prom-client.ts';
  export = collectDefaultMetrics;
}
