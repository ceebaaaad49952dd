// The broker's gauges, read once per collection (a batch callback): sessions, upstreams by state,
// requests servers sent clients that wait for an answer, restarts, quarantined tools, and what the
// tool definitions a client sees cost in tokens.
import type { Meter } from '@opentelemetry/api';
import type { BrokerGauges } from './types';

export function observeGauges(meter: Meter, read: () => BrokerGauges): void {
  const sessions = meter.createObservableGauge('switchboard.sessions', {
    unit: '{session}',
    description: 'MCP sessions open on the broker.',
  });
  const upstreams = meter.createObservableGauge('switchboard.upstreams', {
    unit: '{server}',
    description: 'Upstream servers by state.',
  });
  const pending = meter.createObservableGauge('switchboard.client_requests.pending', {
    unit: '{request}',
    description: 'Requests upstream servers sent a client (elicitation, sampling, roots) still waiting for an answer.',
  });
  const restarts = meter.createObservableCounter('switchboard.upstream.restarts', {
    unit: '{restart}',
    description: 'Restarts of an upstream server after it failed.',
  });
  const quarantined = meter.createObservableGauge('switchboard.tools.quarantined', {
    unit: '{tool}',
    description: 'Tools held back because their definition changed since it was approved.',
  });
  const tokens = meter.createObservableGauge('switchboard.tool_definitions.tokens', {
    unit: '{token}',
    description: 'Tokens the tool definitions a client sees cost.',
  });
  meter.addBatchObservableCallback(
    (result) => {
      const now = read();
      result.observe(sessions, now.sessions);
      for (const [state, count] of Object.entries(now.upstreamStates)) {
        result.observe(upstreams, count, { 'switchboard.upstream.state': state });
      }
      result.observe(pending, now.pendingClientRequests);
      for (const [server, count] of Object.entries(now.restarts)) {
        result.observe(restarts, count, { 'switchboard.server': server });
      }
      result.observe(quarantined, now.quarantinedTools);
      for (const [client, count] of Object.entries(now.toolTokensPerClient)) {
        result.observe(tokens, count, { 'switchboard.client': client });
      }
    },
    [sessions, upstreams, pending, restarts, quarantined, tokens],
  );
}
