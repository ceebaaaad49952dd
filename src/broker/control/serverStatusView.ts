// A server as `server_status` shows it: its definition, what its upstream is doing, its approval,
// pins, sign-in and secrets, gathered from the subsystems that own each. One function, so the
// facade, the CLI and the extension read the same view.
import { whyFilteredOut } from '../../registry/names';
import { inputsReferenced, lifecycleOf, type ServerDef } from '../../registry/schema';
import type { Approvals } from '../trust/approvals';
import { approvalSummaryText } from '../trust/approvalSummary';
import type { Pins } from '../trust/pins';
import { redactUrl } from '../trust/redact';
import { scanLines, scanReport } from '../trust/scanReport';
import { scanServer } from '../trust/toolScanner';
import type { ControlledBroker } from './controlledBroker';
import type { InputStatus, ServerStatus } from './controlApi';
import { appsOf } from '../catalog/apps/appMeta';
import { telemetry } from '../telemetry/telemetry';

export interface ServerStatusDeps {
  broker: ControlledBroker;
  approvals: Approvals;
  pins?: Pins;
  /** The definition's file (absolute). */
  file: string;
}

export function describeServer(def: ServerDef, deps: ServerStatusDeps): ServerStatus {
  const { broker, approvals, pins } = deps;
  const name = def.name;
  const upstream = broker.upstream(name);
  const snap = upstream?.snapshot();
  const approval = approvals.check(def);
  const view = broker.catalog.server(name);
  const tools = (upstream ? view.tools : []).map((t) => ({
    name: t.name,
    exposedAs: view.exposedTool(t.name) ?? t.name,
    description: t.description,
  }));
  const hiddenTools = (upstream?.state === 'running' ? upstream.tools : []).flatMap((t) => {
    const why = whyFilteredOut(t.name, def.allowedTools, def.excludeTools);
    return why ? [{ name: t.name, description: t.description, why }] : [];
  });
  const toolTokens = upstream ? broker.toolTokens.ofServer(name) : undefined;
  const listed = upstream && upstream.catalogSource !== 'none' ? upstream.listed : undefined;
  const pinState = pins?.state(name, upstream?.state === 'running');
  const apps = listed
    ? appsOf(name, listed.tools, listed.resources, (uri) => !!pinState?.quarantined.includes(uri))
    : [];
  // What the scanner finds in its tools, prompts and instructions (live or cached lists), with the approval.
  const scan =
    upstream && upstream.catalogSource !== 'none'
      ? scanReport(scanServer({ ...upstream.listed, instructions: upstream.instructions }))
      : undefined;
  const approvalItems = [...approval.lines, ...scanLines(scan)];
  const signIns = broker.supervisor.signIns;
  const auth = signIns.status(def);
  const state = snap?.state ?? 'stopped';
  return {
    name,
    description: def.description,
    trust: def.trust,
    transport: def.transport,
    enabled: def.enabled,
    state,
    lifecycle: lifecycleOf(def),
    catalog: snap?.catalog ?? 'none',
    pid: snap?.pid,
    uptimeMs: snap?.startedAt ? Date.now() - snap.startedAt : undefined,
    restarts: snap?.restarts ?? 0,
    lastError: snap?.lastError,
    nextRestartInMs: snap?.nextRestartAt ? Math.max(0, snap.nextRestartAt - Date.now()) : undefined,
    tools,
    hiddenTools,
    ...(toolTokens === undefined ? {} : { toolTokens }),
    promptCount: upstream && upstream.catalogSource !== 'none' ? upstream.listed.prompts.length : 0,
    resourceCount: upstream && upstream.catalogSource !== 'none' ? upstream.listed.resources.length : 0,
    grants: def.grants,
    enforcement: upstream?.enforcement ?? {
      network: 'not-enforced',
      filesystem: 'not-enforced',
      secrets: 'enforced',
      notes: [],
    },
    approval: approval.status,
    approvalHash: approval.hash,
    approvalItems,
    approvalSummary: approvalSummaryText(approvalItems),
    ...(scan ? { scan } : {}),
    withheldEnv: upstream?.withheldEnv ?? [],
    ...(auth ? { auth } : {}),
    ...credentialStatus(def, broker),
    ...(state === 'needs-sign-in' ? { signIn: auth?.stepUpScope ? { scope: auth.stepUpScope } : {} } : {}),
    ...(apps.length ? { apps } : {}),
    pins: pinState ?? {
      status: 'unpinned',
      quarantined: [],
      removed: [],
      locked: false,
    },
    pendingServerRequests: upstream?.serverRequests.pending ?? 0,
    ...liveNumbersOf(name),
    protocol: upstream?.state === 'running' ? upstream.protocol : undefined,
    target: def.transport === 'stdio' ? [def.command, ...def.args].join(' ') : redactUrl(def.url ?? ''),
    file: deps.file,
  };
}

/** The VS Code account and entered secrets a server uses: where they come from, never a value. */
function credentialStatus(def: ServerDef, broker: ControlledBroker): Pick<ServerStatus, 'account' | 'inputs'> {
  const credentials = broker.supervisor.credentials;
  const account = credentials.accountStatus(def);
  const granted = def.grants.includes('secrets');
  const inputs: InputStatus[] = inputsReferenced(def).map((name) => {
    const declared = def.inputs?.[name];
    const source = granted ? credentials.inputSource(name) : undefined;
    return {
      name,
      ...(declared?.description ? { description: declared.description } : {}),
      password: declared?.password ?? true,
      ...(source ? { source } : {}),
      ...(granted ? {} : { withheld: true }),
    };
  });
  return { ...(account ? { account } : {}), ...(inputs.length ? { inputs } : {}) };
}

/** The server's numbers of the last minutes while telemetry is on (the editor's tooltip and console). */
function liveNumbersOf(name: string): Pick<ServerStatus, 'live'> {
  const live = telemetry()?.serverNumbers(name);
  return live ? { live } : {};
}
