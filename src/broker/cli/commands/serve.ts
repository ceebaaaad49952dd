// `switchboard serve`: run the broker for a workspace registry (or reuse the one already running).
import * as path from 'node:path';
import * as readline from 'node:readline';
import { approvalSummaryBlock } from '../../trust/approvalSummary';
import { serveOrReuse, type RunningBroker } from '../../daemon/daemon';
import { exposeGc } from '../../daemon/idleCollector';
import { parseLogRate } from '../../http/logRateLimit';
import { withTraceId } from '../../telemetry/telemetry';
import { type Command, rootOption, rootOf, parseNumber, print, printError } from '../command';

export const serveCommand: Command = {
  summary: 'run the broker for a workspace registry (or reuse the one already running)',
  usage: `switchboard serve [--root <dir>] [--port <n>] [--untrusted] [--accept-workspace-trust]
                 [--idle-exit <s>] [--json]

  Runs the broker on the registry in <dir> (default: the current directory), which holds
  mcp-servers.d/, prompts.d/ and clients.d/. Serves MCP Streamable HTTP on 127.0.0.1 only.
  If a broker already serves <dir>, prints its endpoint and exits (one broker per workspace).

  --root <dir>        registry root (default: .)
  --port <n>          port to listen on; 0 picks a free one (default: 0)
  --untrusted         read the registry but start no server from it (untrusted workspace)
  --accept-workspace-trust
                      start the servers the workspace marks trusted or builtin without asking
                      (for scripts; on a terminal serve lists them and asks once, and the answer
                      is remembered for you per definition)
  --idle-exit <s>     exit after <s> seconds in which no client held a stream or sent a request
  --max-body <bytes>  largest request body accepted (default: 4194304)
  --log-rate <n>[/<burst>]
                      log messages per second from one server that reach the agents, after a
                      burst (default: 50/100); what is over it is dropped and counted
  --session-idle <s>  close a session after <s> seconds without a request or stream (default: 1800)
  --park-timeout <s>  how long a 2026-07-28 call whose server asked a question (input_required) waits
                      for the caller's retry before it is cancelled upstream (default: 300)
  --json              print one JSON line when ready instead of the human summary`,
  options: {
    'session-idle': { type: 'string' },
    'park-timeout': { type: 'string' },
    ...rootOption,
    port: { type: 'string', short: 'p' },
    untrusted: { type: 'boolean' },
    'accept-workspace-trust': { type: 'boolean' },
    'idle-exit': { type: 'string' },
    'max-body': { type: 'string' },
    'log-rate': { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(values) {
    // Before the broker is made: its idle collector takes gc() when it is constructed.
    exposeGc();
    const root = rootOf(values);
    const port = parseNumber(values.port, 'port', 0);
    const json = values.json === true;
    const idleExit = values['idle-exit'] !== undefined ? parseNumber(values['idle-exit'], 'idle-exit', 0) : undefined;
    const log = (line: string): void => {
      // A line written while a request runs names its trace (when telemetry is on).
      printError(`[switchboard] ${withTraceId(line)}\n`);
    };
    const outcome = await serveOrReuse({
      root,
      port,
      untrusted: values.untrusted === true,
      acceptWorkspaceTrust: acceptsWorkspaceTrust(values['accept-workspace-trust'] === true),
      maxBodyBytes: values['max-body'] ? parseNumber(values['max-body'], 'max-body', 0) : undefined,
      logRate: values['log-rate'] !== undefined ? parseLogRate(String(values['log-rate'])) : undefined,
      idleSessionMs: values['session-idle'] ? parseNumber(values['session-idle'], 'session-idle', 0) * 1000 : undefined,
      parkTimeoutMs: values['park-timeout'] !== undefined ? parkTimeoutMs(values['park-timeout']) : undefined,
      log,
    });
    if ('reused' in outcome) {
      const r = outcome.reused;
      if (json)
        print(
          JSON.stringify({
            event: 'ready',
            reused: true,
            url: r.url,
            port: r.port,
            pid: r.pid,
            root,
            tokenFile: r.operatorTokenFile,
          }) + '\n',
        );
      else print(`A broker already serves ${root} (pid ${r.pid}): ${r.url}\n  token file  ${r.operatorTokenFile}\n`);
      return 0;
    }
    const running = outcome.started;
    const { url, paths } = running;
    if (json) {
      print(
        JSON.stringify({
          event: 'ready',
          url,
          port: running.port,
          pid: process.pid,
          root,
          tokenFile: paths.operatorTokenFile,
        }) + '\n',
      );
    } else {
      const cliPath = path.relative(process.cwd(), process.argv[1]) || process.argv[1];
      print(
        [
          `MCP Switchboard is serving ${root}`,
          `  endpoint    ${url}`,
          `  token file  ${paths.operatorTokenFile}  (operator token; keep it private)`,
          '',
          'The port is picked at random on each start (--port <n> fixes it). Connect any MCP client over',
          'Streamable HTTP with the token as a bearer header; e.g. the MCP Inspector (it needs Node >= 22.19;',
          "'-p node@24' brings one from npm on an older Node):",
          `  npx -y -p node@24 -p @modelcontextprotocol/inspector@2 -- mcp-inspector --cli ${url} ` +
            `--transport http --method tools/list --header "Authorization: Bearer $(cat ${paths.operatorTokenFile})"`,
          `or bridge a stdio-only agent:  node ${cliPath} connect --root ${root} --client terminal`,
          `Status of the servers:         node ${cliPath} status --root ${root}`,
          '',
          'Press Ctrl+C to stop.',
          '',
        ].join('\n'),
      );
    }
    let stopping = false;
    const shutdown = (why: string): void => {
      if (stopping) return;
      stopping = true;
      log(`${why}: stopping upstreams`);
      void running.stop().then(() => process.exit(0));
    };
    process.on('SIGINT', () => shutdown('SIGINT'));
    process.on('SIGTERM', () => shutdown('SIGTERM'));
    process.on('SIGHUP', () => shutdown('SIGHUP'));
    if (idleExit !== undefined) {
      setInterval(
        () => {
          if (running.broker.endpoint.idleMs() >= idleExit * 1000)
            shutdown(`idle for ${idleExit} s: no client holds the broker`);
        },
        Math.min(1000, Math.max(100, idleExit * 250)),
      ).unref();
    }
    if (!json && process.stdin.isTTY) await askWorkspaceTrust(running, () => shutdown('SIGINT'));
    return undefined;
  },
};

/** The flag, or SWITCHBOARD_ACCEPT_WORKSPACE_TRUST=1 in the environment of whoever starts the broker. */
function acceptsWorkspaceTrust(flag: boolean): boolean {
  return flag || process.env.SWITCHBOARD_ACCEPT_WORKSPACE_TRUST === '1';
}

/**
 * On a terminal: lists the servers the workspace marks trusted/builtin that this user has not
 * accepted as they are, and accepts them on "y" (remembered per user, per definition).
 */
async function askWorkspaceTrust(running: RunningBroker, interrupted: () => void): Promise<void> {
  const ops = running.control.operations;
  const waiting = ops
    .listServers()
    .filter((s) => s.trust !== 'community' && ['required', 'changed'].includes(s.approval));
  if (!waiting.length) return;
  const n = waiting.length;
  const them = n === 1 ? 'it does' : 'they do';
  print(`This workspace marks ${n} server${n === 1 ? '' : 's'} trusted; ${them} not start until you accept:\n`);
  for (const s of waiting) {
    const why = s.approval === 'changed' ? ` (${s.lastError ?? 'changed since you accepted it'})` : '';
    print(`\n  ${s.name}${why}\n${approvalSummaryBlock(s.approvalItems, '    ')}\n`);
  }
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
  // readline takes Ctrl+C from the terminal while it asks: it still means stop.
  rl.on('SIGINT', interrupted);
  const question = `\nStart these ${n} servers this workspace trusts? [y/N] `;
  const answer = await new Promise<string>((resolve) => rl.question(question, resolve));
  rl.close();
  if (!/^y(es)?$/i.test(answer.trim())) {
    print(`Not started. Accept one later with: switchboard approve <server> --root ${running.broker.root}\n\n`);
    return;
  }
  for (const s of waiting) {
    try {
      const status = await ops.approve(s.name, s.approvalHash);
      // Accepted in-process, not through the facade: audit it as the facade's approvals are.
      running.broker.audit.write({
        client: 'operator',
        event: 'accept-workspace-trust',
        server: s.name,
        trust: s.trust,
      });
      print(`  ${s.name}: ${status.state}${status.lastError ? ` (${status.lastError})` : ''}\n`);
    } catch (err) {
      print(`  ${s.name}: not accepted: ${(err as Error).message}\n`);
    }
  }
  print('\n');
}

/** `--park-timeout` in ms: whole seconds, at least one (0 would cancel every question as it is asked). */
function parkTimeoutMs(value: unknown): number {
  const seconds = parseNumber(value, 'park-timeout', 300);
  if (seconds < 1) throw new Error(`--park-timeout must be at least 1 second, got '${String(value)}'`);
  return seconds * 1000;
}
