// A server's launch (spawning a stdio server, connecting to a remote one) in a span while telemetry
// is on: a child of the request that woke a lazy server, else a trace of its own, with the kind of
// sandbox it runs in; never its command line, arguments or environment values.
import { telemetry, type TraceParent } from '../telemetry/telemetry';

/** What a launch tells its span once it has planned: the sandbox kind (launchUpstream.ts SandboxKind). */
export type SandboxNote = (kind: string) => void;

/**
 * Runs `open` in a `launch <server>` span, or plainly while telemetry is off. The connection `open`
 * makes outlives the span: it is opened outside any trace, as a start outside a request is.
 */
export function tracedLaunch<T>(
  server: string,
  transport: string,
  cause: TraceParent | undefined,
  open: (sandbox?: SandboxNote) => Promise<T>,
): Promise<T> {
  const traced = telemetry();
  if (!traced) return open();
  const span = {
    name: `launch ${server}`,
    kind: 'internal' as const,
    attributes: { 'switchboard.server': server, 'switchboard.transport': transport },
    parent: cause ?? null,
  };
  return traced.span(span, (note) => traced.untraced(() => open((kind) => note({ 'switchboard.sandbox': kind }))));
}
