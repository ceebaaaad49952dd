// What the sessions of the endpoint are told without asking: list changes (to the sessions that can
// see the server), resource updates (to subscribers), and upstream log messages within each server's
// rate, with one "dropped N" notice once its bucket refills. Sending never waits and never fails a
// caller: a session that went away is skipped.
import type { LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '../shared/mcpTypes';
import { LogRateLimiter, type LogRate } from './logRateLimit';
import type { McpSession } from './mcpSession';
import { merged } from '../shared/objects';

export class SessionNotifier {
  private readonly limiter: LogRateLimiter;
  private readonly dropReports = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly sessions: ReadonlyMap<string, McpSession>,
    rate: LogRate,
  ) {
    this.limiter = new LogRateLimiter(rate);
  }

  /** Tells sessions that a list changed; `server` limits it to sessions that can see that server. */
  listChanged(kind: 'tools' | 'prompts' | 'resources', server?: string): void {
    for (const session of this.sessions.values()) {
      if (server !== undefined && session.ctx.server !== undefined && session.ctx.server !== server) continue;
      const s = session.server;
      const send =
        kind === 'tools'
          ? s.sendToolListChanged()
          : kind === 'prompts'
            ? s.sendPromptListChanged()
            : s.sendResourceListChanged();
      send.catch(() => undefined);
    }
  }

  /** Tells one session that its tool list changed (toolMode search: it found tools). */
  toolListChanged(sessionId: string): void {
    this.sessions
      .get(sessionId)
      ?.server.sendToolListChanged()
      .catch(() => undefined);
  }

  resourceUpdated(uri: string): void {
    for (const session of this.sessions.values()) {
      if (session.subscriptions.has(uri)) session.server.sendResourceUpdated({ uri }).catch(() => undefined);
    }
  }

  /**
   * Forwards an upstream's log message to the sessions that can see that server, within that
   * server's rate; what is dropped is reported once the server's bucket has refilled.
   */
  log(server: string, params: JsonObject): void {
    if (!this.limiter.admit(server)) {
      if (!this.dropReports.has(server)) {
        const timer = setTimeout(() => this.reportDropped(server), this.limiter.refillMs);
        timer.unref();
        this.dropReports.set(server, timer);
      }
      return;
    }
    for (const session of this.sessions.values()) {
      if (session.ctx.server !== undefined && session.ctx.server !== server) continue;
      // On the aggregated endpoint the logger says which server spoke.
      const logger = session.ctx.server
        ? (params.logger as string | undefined)
        : `${server}${params.logger ? `/${String(params.logger)}` : ''}`;
      const message = merged(params, { logger }) as LoggingMessageNotification['params'];
      // With its session id, so that the SDK holds it to that session's logging/setLevel.
      session.server.sendLoggingMessage(message, session.ctx.sessionId).catch(() => undefined);
    }
  }

  private reportDropped(server: string): void {
    this.dropReports.delete(server);
    const dropped = this.limiter.takeDropped(server);
    if (dropped === 0) return;
    const data = `dropped ${dropped} log message${dropped === 1 ? '' : 's'} from '${server}' (rate limit)`;
    const message = { level: 'warning', logger: server, data } as LoggingMessageNotification['params'];
    for (const session of this.sessions.values()) {
      if (session.ctx.server !== undefined && session.ctx.server !== server) continue;
      session.server.sendLoggingMessage(message, session.ctx.sessionId).catch(() => undefined);
    }
  }

  close(): void {
    for (const timer of this.dropReports.values()) clearTimeout(timer);
    this.dropReports.clear();
  }
}
