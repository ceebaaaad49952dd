// Identities, scopes, trust tiers and the facade: everything that decides who may do what.
import * as crypto from 'node:crypto';
import type { Broker, ControlHooks } from './broker';
import type { Identity } from './endpoint';
import type { RuntimePaths } from './runtime';
import type { StartDecision } from './supervisor';
import type { ServerDef } from '../registry/schema';

export interface ControlPlaneOptions {
  untrusted: boolean;
}

export class ControlPlane {
  private broker?: Broker;

  constructor(
    readonly root: string,
    readonly paths: RuntimePaths,
    private readonly operatorToken: string,
    private readonly opts: ControlPlaneOptions,
  ) {}

  attach(broker: Broker): void {
    this.broker = broker;
  }

  hooks(): ControlHooks {
    return {
      authenticate: (token) => this.authenticate(token),
      policy: (def) => this.decide(def),
    };
  }

  authenticate(token: string): Identity | undefined {
    if (safeEqual(token, this.operatorToken)) return { client: 'operator', operator: true };
    return undefined;
  }

  decide(def: ServerDef): StartDecision {
    if (this.opts.untrusted) return { run: false, state: 'blocked', reason: 'the workspace is not trusted' };
    if (!def.enabled) return { run: false, state: 'disabled', reason: 'disabled in its definition (enabled: false)' };
    return { run: true };
  }

  close(): void {}
}

function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && crypto.timingSafeEqual(x, y);
}
