// GET /metrics on the broker's loopback port: every metric in the Prometheus text format, for the
// operator's token only (the numbers name clients and servers). The endpoint has checked the token.
import type * as http from 'node:http';
import { telemetry } from './telemetry';

const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

function answer(res: http.ServerResponse, status: number, body: string, type = 'text/plain; charset=utf-8'): void {
  res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(body)) }).end(body);
}

export function serveMetrics(operator: boolean, res: http.ServerResponse): void {
  if (!operator) {
    return answer(res, 403, "Forbidden: /metrics is for the operator's token (see `switchboard status`).\n");
  }
  const running = telemetry();
  if (!running) {
    return answer(
      res,
      404,
      'Telemetry is off: turn it on with the OTEL_* environment, telemetry.yaml or the ' +
        'switchboard.telemetry.enabled setting (docs/telemetry.md).\n',
    );
  }
  running.prometheusText().then(
    (text) => answer(res, 200, text, PROMETHEUS_TEXT),
    (err: Error) => answer(res, 500, `The metrics could not be collected: ${err.message}\n`),
  );
}
