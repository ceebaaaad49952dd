// A server's guardrails in the Servers view: each rule and limit in force that can apply to its calls.
import type { ServerStatus } from '../broker/control/controlApi';
import type { IconSpec } from './presentation';

export interface GuardrailRow {
  id: string;
  label: string;
  description: string;
  tooltip: string;
  icon: IconSpec;
}

const ICONS: Record<string, IconSpec> = {
  allow: { id: 'pass' },
  deny: { id: 'circle-slash', color: 'list.errorForeground' },
  ask: { id: 'question', color: 'list.warningForeground' },
  limit: { id: 'dashboard' },
};

export function guardrailRows(s: ServerStatus): GuardrailRow[] {
  return (s.guardrails ?? []).map((g) => {
    const what = [g.tools ? g.tools.join(', ') : 'every tool', g.clients ? `for ${g.clients.join(', ')}` : undefined]
      .filter(Boolean)
      .join(' ');
    const label = g.action === 'limit' ? `limit ${g.name}` : `${g.action} ${g.name}`;
    return {
      id: `guardrail-${g.policy}/${g.name}`,
      label,
      description: g.detail ? `${what} · ${g.detail}` : g.when ? `${what} · when ${g.when}` : what,
      tooltip: `Guardrail '${g.name}' of policy '${g.policy}' (policies.d/${g.policy}.yaml)`,
      icon: ICONS[g.action],
    };
  });
}
