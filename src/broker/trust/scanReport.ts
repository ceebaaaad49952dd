// What the tool-description scanner found in a server, as the state, the approval summary and the
// tree show it: one entry per finding, named by the tool, prompt or instructions it is in.
import type { ApprovalLine } from './approvalSummary';
import { SIGN_LABELS, type ScanFinding, type ServerScan, type Severity } from './toolScanner';

export interface ScanItemFinding extends ScanFinding {
  /** `tool 'x'`, `prompt 'p'` or `instructions`. */
  item: string;
}

export interface ScanReport {
  /** How many tools, prompts and instructions have findings. */
  flagged: number;
  severity: Severity;
  /** The tools with findings (by the name the server lists them under). */
  tools: string[];
  findings: ScanItemFinding[];
}

/** The report of a scan; undefined when nothing was found. */
export function scanReport(scan: ServerScan): ScanReport | undefined {
  const findings: ScanItemFinding[] = [];
  for (const [name, list] of Object.entries(scan.tools))
    findings.push(...list.map((f) => ({ ...f, item: `tool '${name}'` })));
  for (const [name, list] of Object.entries(scan.prompts))
    findings.push(...list.map((f) => ({ ...f, item: `prompt '${name}'` })));
  findings.push(...scan.instructions.map((f) => ({ ...f, item: 'instructions' })));
  if (!findings.length) return undefined;
  const items = new Set(findings.map((f) => f.item));
  return {
    flagged: items.size,
    severity: findings.some((f) => f.severity === 'high') ? 'high' : 'medium',
    tools: Object.keys(scan.tools),
    findings,
  };
}

/** "instructions to the model, asks for credentials" for the findings of one item. */
export function signsOf(findings: readonly ScanFinding[]): string {
  return [...new Set(findings.map((f) => SIGN_LABELS[f.sign]))].join(', ');
}

/** Lines for the approval summary: one per flagged item, its signs and the first excerpt. */
export function scanLines(report: ScanReport | undefined): ApprovalLine[] {
  if (!report) return [];
  const byItem = new Map<string, ScanItemFinding[]>();
  for (const f of report.findings) byItem.set(f.item, [...(byItem.get(f.item) ?? []), f]);
  return [...byItem].map(([item, list]) => {
    const severity = list.some((f) => f.severity === 'high') ? 'high' : 'medium';
    return {
      label: `Scanner: ${item}`,
      value: `${signsOf(list)} (${list[0].where}: "${list[0].excerpt}")`,
      warning: `⚠ ${severity}: read its description before you approve or accept it`,
    };
  });
}
