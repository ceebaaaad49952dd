// A rule's `ask`: the operator confirms the call in VS Code, through the editor session that
// answers elicitations for callers that cannot (supervision/editorLink.ts). No editor: refused.
import type { JsonObject } from '../../shared/mcpTypes';
import type { PolicyRule } from '../../../registry/schema';
import type { GuardedCall } from './ruleSet';

/** The editor session, as far as asking it goes (supervision's ServerRequestCaller fits). */
export interface EditorAsker {
  ask(request: { method: string; params: JsonObject; signal: AbortSignal }): Promise<JsonObject>;
}

/** The key the editor reads to say who asks (serverRequestDispatch.ts ORIGIN_META). */
const ORIGIN_META = 'switchboard/origin';
/** How much of the arguments the question shows: enough to judge, never a wall of text. */
const ARGS_SHOWN = 300;

export type OperatorAnswer = 'accept' | 'decline' | 'cancel' | 'no-editor';

export async function askOperator(
  editor: EditorAsker | undefined,
  call: GuardedCall,
  policy: string,
  rule: PolicyRule,
  signal: AbortSignal,
): Promise<OperatorAnswer> {
  if (!editor) return 'no-editor';
  let args = JSON.stringify(call.args);
  if (args.length > ARGS_SHOWN) args = `${args.slice(0, ARGS_SHOWN)}… (${args.length} characters)`;
  const message =
    `Client '${call.client}' calls ${call.server}__${call.tool} with ${args}. ` +
    `Rule '${rule.name}' of policy '${policy}' asks you to confirm it. Allow this call?`;
  const params: JsonObject = {
    mode: 'form',
    message,
    requestedSchema: { type: 'object', properties: {} },
    _meta: { [ORIGIN_META]: { server: 'switchboard', trust: 'builtin', client: call.client } },
  };
  try {
    const answer = await editor.ask({ method: 'elicitation/create', params, signal });
    return answer.action === 'accept' ? 'accept' : answer.action === 'decline' ? 'decline' : 'cancel';
  } catch {
    // The window went away or could not show it: not a yes.
    return 'cancel';
  }
}
