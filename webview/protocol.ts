// Messages between the console webview and the extension. Types only: both sides import it.
import type { AuditTail, ServerGuardrail, ServerStatus } from '../src/broker/control/controlApi';
import type { Tool } from '../src/broker/shared/mcpTypes';
import type { ProbeResult } from '../src/broker/supervision/probe';

export type Definition = Record<string, unknown>;

export interface InitMessage {
  type: 'init';
  mode: 'new' | 'edit';
  /** The definition being edited (minimal form: defaults left out). */
  definition?: Definition;
  folder: string;
  /** e.g. `workspace/mcp-servers.d` (relative to the workspace folder), for the header. */
  registryDir: string;
  trusted: boolean;
  existingNames: string[];
  /** Set when the extension asks the console to run a probe right after loading. */
  probeNow?: boolean;
  /** A draft to resume (the console's last state, kept by the extension): wins over `definition`. */
  restore?: ConsoleState;
}

export type ToWebview =
  | InitMessage
  | {
      type: 'status';
      server?: ServerStatus;
      existingNames: string[];
      brokerUp: boolean;
      /** The server's calls, error rate and p50/p95 lately, in words (while telemetry is on). */
      liveText?: string;
    }
  | { type: 'probeResult'; result: ProbeResult; definition: Definition }
  | { type: 'probeError'; message: string }
  | { type: 'saving' }
  | { type: 'saved'; name: string; file: string; definition: Definition }
  | { type: 'saveError'; message: string }
  /** Run a probe of the form as it is, as if Probe was pressed. */
  | { type: 'probeRequest' }
  /** Show a tool in the Try-a-tool tab (`listed: false`: not in the operator's tools/list). */
  | { type: 'tryTool'; tool: Tool; listed: boolean }
  | { type: 'toolResult'; name: string; result: Record<string, unknown>; ms: number }
  | { type: 'toolError'; name: string; message: string; code?: number; ms: number }
  | { type: 'showAudit'; client?: string }
  | { type: 'audit'; tail?: AuditTail; error?: string }
  /** The Guardrails tab's reading: the server's rules and limits in force (with counts), the audit tail. */
  | { type: 'guardrails'; rules?: ServerGuardrail[]; tail?: AuditTail; error?: string };

/** The console's tabs. */
export type ConsoleView = 'server' | 'tool' | 'audit' | 'guardrails';

export type FromWebview =
  | { type: 'ready' }
  /** The tab shown now (the panel's title follows it). */
  | { type: 'view'; view: ConsoleView }
  | { type: 'probe'; definition: Definition }
  | { type: 'save'; definition: Definition }
  | { type: 'openFile'; name: string }
  | { type: 'callTool'; name: string; arguments: Record<string, unknown> }
  | { type: 'readAudit' }
  /** The rules and limits that apply to server `name` and the audit tail, for the Guardrails tab. */
  | { type: 'readGuardrails'; name: string }
  /** The console's state after each change, so the extension can resume it after the panel closed. */
  | { type: 'state'; state: ConsoleState };

/** What the console keeps across reloads (vscode.setState); the extension reads `folder`. */
export interface ConsoleState {
  folder: string;
  mode: 'new' | 'edit';
  /** Name of the saved definition being edited (the file), if any. */
  savedName?: string;
  form: Record<string, string | boolean | string[]>;
  extras: Definition;
  probe?: { result: ProbeResult; definition: Definition };
  registryDir: string;
  trusted: boolean;
  /** When this state was saved (ms since epoch): the newer of two copies wins. */
  savedAt?: number;
}
