// Who is calling and what they may see and call, decided against the registry as it is now: the
// bearer token names the identity, `mcp_allow` gives its scopes, the tool profile narrows its tools.
import type { ResultLimit } from './oversizedResults';
import type { ClientDef } from '../../registry/schema';
import { filterByGlobs, OPERATOR_NAME } from '../../registry/names';
import { FACADE_NAMESPACE } from '../catalog/catalog';
import { safeEqual } from '../trust/clientTokens';
import type { Identity } from './requestContext';

/** The editor's own identity: one object for every request it makes (nothing mutates it). */
export const OPERATOR: Identity = Object.freeze({ client: OPERATOR_NAME, operator: true });

export type Scope = 'read' | 'write';
/** What a facade tool needs: a client scope, or the operator (approvals, tool changes, tokens). */
export type ToolScope = Scope | 'operator';
const NO_PINS: readonly string[] = Object.freeze([]);
export type ToolProfile = NonNullable<ClientDef['tools']>;

export interface AccessPolicySources {
  operatorToken: string;
  /** The client a token belongs to, if any (tokens live in per-user files). */
  clientOf(token: string): string | undefined;
  /** The declared clients of the live registry snapshot. */
  clients(): ReadonlyMap<string, ClientDef> | undefined;
}

export class AccessPolicy {
  private readonly operatorToken: Buffer;

  constructor(private readonly sources: AccessPolicySources) {
    this.operatorToken = Buffer.from(sources.operatorToken);
  }

  /** The identity a bearer token stands for; a client token only while its client is declared. */
  authenticate(token: string): Identity | undefined {
    if (safeEqual(token, this.operatorToken)) return OPERATOR;
    const client = this.sources.clientOf(token);
    if (client && this.sources.clients()?.has(client)) return { client, operator: false };
    return undefined;
  }

  /** The scopes the registry gives this identity right now (not as they were at connect time). */
  scopes(identity: Identity): readonly Scope[] {
    if (identity.operator) return ['read', 'write'];
    return this.sources.clients()?.get(identity.client)?.mcp_allow ?? [];
  }

  may(identity: Identity, scope: Scope): boolean {
    return this.scopes(identity).includes(scope);
  }

  /**
   * The client's tool profile, or `undefined` when it sees every tool: the operator, a client
   * without a profile, or one whose allow and deny lists are both empty.
   */
  profileOf(identity: Identity): ToolProfile | undefined {
    if (identity.operator) return undefined;
    const profile = this.sources.clients()?.get(identity.client)?.tools;
    if (!profile || (!profile.allow?.length && !profile.deny?.length)) return undefined;
    return profile;
  }

  /**
   * The globs of the tools a session of this identity starts with, when its client is in
   * `toolMode: search`; `undefined` when it sees its whole profile (the operator always does).
   */
  pinnedTools(identity: Identity): readonly string[] | undefined {
    if (identity.operator) return undefined;
    const def = this.sources.clients()?.get(identity.client);
    return def?.toolMode === 'search' ? (def.pinnedTools ?? NO_PINS) : undefined;
  }

  /**
   * Whether a tool may be listed to and called by this identity, judged by its namespaced name
   * (`<server>__<tool>`, what profiles are written against) on either endpoint. The broker's own
   * tools are never hidden by a profile: each checks the caller's scope itself.
   */
  /** The client's limit on a tool result's size (guardrails: oversizedResults.ts); none for the operator. */
  resultLimit(identity: Identity): ResultLimit | undefined {
    if (identity.operator) return undefined;
    const def = this.sources.clients()?.get(identity.client);
    if (def?.maxResultBytes === undefined && def?.maxResultTokens === undefined) return undefined;
    return { bytes: def.maxResultBytes, tokens: def.maxResultTokens };
  }

  allowsTool(identity: Identity, server: string, exposedName: string, profile = this.profileOf(identity)): boolean {
    if (!profile || server === FACADE_NAMESPACE) return true;
    return filterByGlobs(exposedName, profile.allow, profile.deny);
  }

  /**
   * Whether `/servers/<name>/mcp` is served: for supervised upstreams only. The reserved
   * namespace is the aggregated endpoint's own and has no per-server endpoint.
   */
  servesServerEndpoint(name: string, exists: boolean): boolean {
    return exists && name !== FACADE_NAMESPACE;
  }
}
