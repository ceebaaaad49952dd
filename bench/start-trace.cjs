// `--require`d into one broker of the scale-start section (never into the timed runs): prints the
// milestones of its start to stderr as `START-TRACE <name> <ms since process start> <cpu ms>`, so
// the doc can say where a warm start's time goes. Hooks only: nothing the broker does changes.
'use strict';
const { performance } = require('node:perf_hooks');
const http = require('node:http');
const Module = require('node:module');

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
// performance.now() counts from the process's time origin (its start), not from this preload.
const mark = (name) =>
  process.stderr.write(`START-TRACE ${name} ${performance.now().toFixed(1)} ${cpuMs().toFixed(1)}\n`);
mark('node-ready');

const load = Module._load;
let main = true;
Module._load = function (request, parent, isMain) {
  if (!isMain || !main) return load.apply(this, arguments);
  main = false;
  const exported = load.apply(this, arguments);
  mark('bundle-loaded');
  return exported;
};

const listen = http.Server.prototype.listen;
http.Server.prototype.listen = function (...args) {
  this.once('listening', () => mark('listening'));
  // The bench's raw client posts initialize, notifications/initialized, then tools/list (again
  // until complete): the answers are told apart by their order. The bodies are not read here.
  let posts = 0;
  this.prependListener('request', (req, res) => {
    if (req.method !== 'POST') return;
    const n = ++posts;
    res.once('finish', () =>
      mark(n === 1 ? 'initialize-answered' : n === 2 ? 'initialized-answered' : 'tools-list-answered'),
    );
  });
  return listen.apply(this, args);
};

const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => {
  if (String(chunk).includes('"event":"ready"')) mark('ready-line');
  return write(chunk, ...rest);
};
