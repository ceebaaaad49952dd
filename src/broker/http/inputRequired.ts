// Where the eras meet on a call: a 2025-11-25 upstream that asks its client something (elicitation,
// sampling, roots) while it handles a 2026-07-28 caller's request. The call stays parked in the
// broker; the caller gets an input_required result whose requestState names the parked call, and
// its retry (with inputResponses) answers the upstream's pending request and picks the call up.
import * as crypto from 'node:crypto';
import type { ServerRequest } from '../connection/serverRequests';
import { CallCancel } from '../shared/callCancel';
import { ErrorCodes, McpFailure, type JsonObject } from '../shared/mcpTypes';
import type { Identity } from '../routing/requestContext';
import { declares, neededCapability } from '../supervision/serverRequestDispatch';
import { sameIdentity } from './guards';
import { withResultType, type Exchange } from './exchange';
import { StatelessCodes } from './statelessEnvelope';

/** How long a parked call waits for the caller's retry before it is cancelled upstream (`serve --park-timeout`). */
export const PARK_TIMEOUT_MS = 5 * 60_000;

/** "5 minutes", "90 seconds": the park timeout as the errors tell it. */
function spoken(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds % 60 === 0 && seconds >= 60) return seconds === 60 ? '1 minute' : `${seconds / 60} minutes`;
  return seconds === 1 ? '1 second' : `${seconds} seconds`;
}

/**
 * Parked calls per client identity and in all: each holds a call in flight upstream and the broker's
 * memory for up to PARK_TIMEOUT_MS, so a caller that never retries must not be able to pile them up.
 */
export const PARK_LIMITS = { perClient: 64, total: 512 };

interface PendingAsk {
  request: ServerRequest;
  resolve(result: JsonObject): void;
  reject(error: Error): void;
}

/** What the caller must retry with for its requestState to be accepted. */
interface Origin {
  identity: Identity;
  method: string;
  target: unknown;
}

/** One call in flight whose upstream asked the caller something. */
class ParkedCall {
  readonly state = crypto.randomBytes(24).toString('base64url');
  readonly asks = new Map<string, PendingAsk>();
  /** The exchange waiting for the call's next step (none while the caller gathers input). */
  current?: Exchange;
  outcome?: { result?: JsonObject; error?: unknown };
  timer?: NodeJS.Timeout;
  private nextKey = 0;

  constructor(
    readonly origin: Origin,
    readonly cancel: CallCancel,
  ) {}

  key(): string {
    return `input-${++this.nextKey}`;
  }
}

/** The caller's declared capabilities and where to ask; `onAsk` sends the input_required. */
export interface CallInput {
  identity: Identity;
  method: string;
  /** params.name or params.uri: a retry must name the same thing. */
  target: unknown;
  capabilities: JsonObject;
}

/** The parked calls of the stateless endpoint, by requestState. */
export class InputRequiredCalls {
  private readonly parked = new Map<string, ParkedCall>();

  constructor(private readonly parkTimeoutMs = PARK_TIMEOUT_MS) {}

  get size(): number {
    return this.parked.size;
  }

  /** Whether `requestState` names one of the broker's parked calls (not an upstream's own state). */
  parks(requestState: unknown): boolean {
    return typeof requestState === 'string' && this.parked.has(requestState);
  }

  /**
   * Runs a call for a first (non-retry) request; `run` gets the call's cancellation (its signal made
   * only if read, shared/callCancel.ts) and the `ask` to give the upstream's requests. The exchange
   * is answered with the result, an error, or input_required.
   */
  start(
    exchange: Exchange,
    input: CallInput,
    run: (
      cancel: CallCancel,
      ask: (request: ServerRequest) => Promise<JsonObject>,
      channel: () => Exchange | undefined,
    ) => Promise<JsonObject>,
  ): void {
    // The call's own cancellation: the first exchange's hang-up, a refusal below, or a parked call dropped.
    const cancel = new CallCancel();
    exchange.cancel.onAbort((reason) => cancel.abort(reason));
    let call: ParkedCall | undefined;
    // Where the call's progress goes: the exchange waiting for it now (none while parked).
    const channel = (): Exchange | undefined => (call ? call.current : exchange.done ? undefined : exchange);
    const ask = (request: ServerRequest): Promise<JsonObject> => {
      const needed = neededCapability(request);
      if (!declares(input.capabilities, needed)) {
        // The revision's MissingRequiredClientCapability: fail the call, and tell the upstream.
        const failure = new McpFailure(
          StatelessCodes.MissingRequiredClientCapability,
          `Missing required client capability: server asked for ${request.method}, which needs '${needed}' ` +
            'in io.modelcontextprotocol/clientCapabilities; declare it and call again',
          { requiredCapabilities: capabilityObject(needed) },
        );
        channel()?.error(failure, 400);
        cancel.abort(failure);
        return Promise.reject(failure);
      }
      if (!call) {
        const full = this.parkingFull(input.identity);
        if (full) {
          channel()?.error(full, 429);
          cancel.abort(full);
          return Promise.reject(full);
        }
      }
      call ??= this.park(new ParkedCall(input, cancel), exchange);
      const parked = call;
      return new Promise<JsonObject>((resolve, reject) => {
        const key = parked.key();
        parked.asks.set(key, { request, resolve, reject });
        request.signal.addEventListener('abort', () => parked.asks.delete(key), { once: true });
        this.askIfWaiting(parked);
      });
    };
    let answer: Promise<JsonObject>;
    try {
      answer = run(cancel, ask, channel);
    } catch (err) {
      answer = Promise.reject(err);
    }
    answer.then(
      (result) => this.settle(call, exchange, { result }),
      (error) => this.settle(call, exchange, { error }),
    );
  }

  /** A retry: answers the pending asks and waits for the call's next step on this exchange. */
  resume(exchange: Exchange, input: CallInput, requestState: unknown, inputResponses: unknown): void {
    const call = typeof requestState === 'string' ? this.parked.get(requestState) : undefined;
    if (!call) {
      exchange.error(
        new McpFailure(
          ErrorCodes.InvalidParams,
          `Invalid params: this requestState is unknown or expired (a parked call waits ${spoken(this.parkTimeoutMs)}); ` +
            'call again without requestState',
        ),
      );
      return;
    }
    const o = call.origin;
    if (!sameIdentity(o.identity, input.identity) || o.method !== input.method || o.target !== input.target) {
      exchange.error(
        new McpFailure(ErrorCodes.InvalidParams, 'Invalid params: this requestState belongs to another request'),
      );
      return;
    }
    clearTimeout(call.timer);
    call.current?.error(new McpFailure(ErrorCodes.InvalidRequest, 'Superseded by a retry of the same request'));
    call.current = exchange;
    exchange.cancel.onAbort((reason) => {
      if (call.current === exchange) call.cancel.abort(reason);
    });
    const responses =
      inputResponses && typeof inputResponses === 'object' ? (inputResponses as Record<string, unknown>) : {};
    for (const [key, value] of Object.entries(responses)) {
      const ask = call.asks.get(key);
      if (!ask || !value || typeof value !== 'object') continue;
      call.asks.delete(key);
      ask.resolve(value as JsonObject);
    }
    if (call.outcome) return this.deliver(call, exchange);
    // What the retry left unanswered is asked again, as the revision recommends.
    this.askIfWaiting(call);
  }

  close(): void {
    for (const call of this.parked.values()) this.drop(call, new Error('the broker is shutting down'));
  }

  /** The refusal for one more parked call of `identity`, past a cap of PARK_LIMITS; else undefined. */
  private parkingFull(identity: Identity): McpFailure | undefined {
    let mine = 0;
    for (const call of this.parked.values()) if (sameIdentity(call.origin.identity, identity)) mine++;
    const advice =
      'Answer them (retry with inputResponses and their requestState) or let them go (each is cancelled ' +
      `${spoken(this.parkTimeoutMs)} after its input_required), then call again.`;
    if (mine >= PARK_LIMITS.perClient) {
      return new McpFailure(
        -32000,
        `Too many calls waiting for your answers: client '${identity.client}' has ${mine} calls parked on ` +
          `input_required, the limit. ${advice}`,
      );
    }
    if (this.parked.size >= PARK_LIMITS.total) {
      return new McpFailure(-32000, `The broker is at its limit of ${PARK_LIMITS.total} parked calls. ${advice}`);
    }
    return undefined;
  }

  private park(call: ParkedCall, exchange: Exchange): ParkedCall {
    call.current = exchange;
    this.parked.set(call.state, call);
    return call;
  }

  private askIfWaiting(call: ParkedCall): void {
    const exchange = call.current;
    if (!exchange || exchange.done || call.asks.size === 0) return;
    const inputRequests: JsonObject = {};
    for (const [key, ask] of call.asks) inputRequests[key] = { method: ask.request.method, params: ask.request.params };
    call.current = undefined;
    exchange.result({ resultType: 'input_required', inputRequests, requestState: call.state });
    call.timer = setTimeout(() => this.drop(call, new Error('the caller did not retry in time')), this.parkTimeoutMs);
    call.timer.unref();
  }

  private settle(call: ParkedCall | undefined, first: Exchange, outcome: ParkedCall['outcome'] & object): void {
    if (!call) {
      if (!first.done) this.answer(first, outcome);
      return;
    }
    call.outcome = outcome;
    for (const ask of call.asks.values()) ask.reject(new Error('the call ended'));
    call.asks.clear();
    if (call.current && !call.current.done) this.deliver(call, call.current);
    else if (!call.current) {
      // The result is kept for the retry that comes for it (within the park timeout).
      clearTimeout(call.timer);
      call.timer = setTimeout(() => this.parked.delete(call.state), this.parkTimeoutMs);
      call.timer.unref();
    }
  }

  private deliver(call: ParkedCall, exchange: Exchange): void {
    clearTimeout(call.timer);
    this.parked.delete(call.state);
    call.current = undefined;
    this.answer(exchange, call.outcome!);
  }

  private answer(exchange: Exchange, outcome: { result?: JsonObject; error?: unknown }): void {
    if (outcome.error !== undefined || !outcome.result) exchange.error(outcome.error);
    else exchange.result(withResultType(outcome.result));
  }

  private drop(call: ParkedCall, reason: Error): void {
    clearTimeout(call.timer);
    this.parked.delete(call.state);
    for (const ask of call.asks.values()) ask.reject(reason);
    call.asks.clear();
    call.cancel.abort(reason);
    call.current?.error(new McpFailure(ErrorCodes.InternalError, `The call was cancelled: ${reason.message}`));
  }
}

/** A needed capability ('elicitation.form', 'sampling') as the ClientCapabilities object that declares it. */
export function capabilityObject(needed: string): JsonObject {
  const [name, sub] = needed.split('.', 2);
  return { [name]: sub ? { [sub]: {} } : {} };
}
