// The broker's per-server numbers of the last minutes (ServerStatus.live, kept while telemetry is
// on) as the views say them: a server's tooltip line and the status bar's busiest server.
import type { ServerStatus } from '../broker/control/controlApi';

type Live = NonNullable<ServerStatus['live']>;

function ms(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(1)} s` : `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`;
}

function percent(rate: number): string {
  return rate === 0 ? '0%' : rate < 0.01 ? '<1%' : `${Math.round(rate * 100)}%`;
}

/** "12 calls in the last 5 min, 8% errors, p50 4.2 ms, p95 31 ms" */
export function liveNumbersText(live: Live, windowMinutes = 5): string {
  const calls = `${live.requests} call${live.requests === 1 ? '' : 's'}`;
  return `${calls} in the last ${windowMinutes} min, ${percent(live.errorRate)} errors, p50 ${ms(live.p50Ms)}, p95 ${ms(live.p95Ms)}`;
}

/** The status bar tooltip's line about the server with the most calls lately; undefined when none had any. */
export function busiestServerLine(servers: readonly ServerStatus[]): string | undefined {
  let busiest: ServerStatus | undefined;
  for (const s of servers) if (s.live && (!busiest?.live || s.live.requests > busiest.live.requests)) busiest = s;
  return busiest?.live ? `Busiest: ${busiest.name} — ${liveNumbersText(busiest.live)}` : undefined;
}
