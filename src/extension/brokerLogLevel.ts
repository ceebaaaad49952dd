// Which level a line of the broker's own log gets in the editor's log channel, so errors show as
// errors (and filter as such) instead of every line being "info".
export type LogLevel = 'error' | 'warn' | 'info';

/** `file:1:2: error: …`, `switchboard: …` (a fatal exit), Node's own warnings, and the rest as info. */
export function brokerLineLevel(line: string): LogLevel {
  const text = line.replace(/^\[switchboard[^\]]*\]\s*/, '');
  if (/^[^\s:]+:\d+:\d+: error: /.test(text) || /^switchboard( [a-z]+)?: /.test(text)) return 'error';
  if (/^(Error|TypeError|RangeError)\b|^\s+at .+\(.+:\d+:\d+\)$|uncaught|unhandled/i.test(text)) return 'error';
  if (/^[^\s:]+:\d+:\d+: warning: /.test(text) || /^\(node:\d+\) \w*Warning/.test(text)) return 'warn';
  return 'info';
}
