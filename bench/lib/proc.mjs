// /proc readers and process bookkeeping for the bench (Linux only).
// Every process the bench starts is registered here, so `killAll()` can reap it (and its group).
import fs from 'node:fs';
import { execSync, spawn } from 'node:child_process';

let clkTck = 100;
try {
  clkTck = Number(execSync('getconf CLK_TCK', { encoding: 'utf8' }).trim()) || 100;
} catch {
  /* default */
}
export const CLK_TCK = clkTck;

/** Parsed /proc/<pid>/stat, or undefined if the process is gone. cpu is utime+stime in µs. */
export function stat(pid) {
  let text;
  try {
    text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const f = text.slice(close + 2).split(' ');
  // f[0] is field 3 (state); field k is f[k - 3].
  return {
    pid,
    comm,
    state: f[0],
    ppid: Number(f[1]),
    pgrp: Number(f[2]),
    cpuUs: ((Number(f[11]) + Number(f[12])) * 1e6) / CLK_TCK,
    starttime: Number(f[19]),
  };
}

/** Resident set size in bytes (VmRSS), 0 if gone. */
export function rss(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Proportional set size in bytes (shared pages split between sharers), 0 if unreadable. */
export function pss(pid) {
  try {
    const m = /^Pss:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** All live (non-zombie) processes as stat records. */
export function allProcs() {
  const out = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = stat(Number(name));
    if (s && s.state !== 'Z' && s.state !== 'X') out.push(s);
  }
  return out;
}

/** pid itself plus every live descendant. */
export function tree(pid) {
  const procs = allProcs();
  const kids = new Map();
  for (const p of procs) {
    if (!kids.has(p.ppid)) kids.set(p.ppid, []);
    kids.get(p.ppid).push(p.pid);
  }
  const out = [];
  const root = procs.find((p) => p.pid === pid);
  if (!root) return out;
  const todo = [pid];
  while (todo.length) {
    const p = todo.pop();
    out.push(p);
    for (const k of kids.get(p) ?? []) todo.push(k);
  }
  return out;
}

/** Sum of utime+stime (µs) over pids (gone pids count 0). */
export function cpuOf(pids) {
  let t = 0;
  for (const p of pids) t += stat(p)?.cpuUs ?? 0;
  return t;
}
export const rssOf = (pids) => pids.reduce((a, p) => a + rss(p), 0);
export const pssOf = (pids) => pids.reduce((a, p) => a + pss(p), 0);

/** smaps_rollup fields in kB (Rss, Pss, Private_Clean, …), {} if the process is gone. */
function rollup(pid) {
  let text;
  try {
    text = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  } catch {
    return {};
  }
  const out = {};
  for (const m of text.matchAll(/^(\w+):\s+(\d+) kB/gm)) out[m[1]] = Number(m[2]);
  return out;
}

const PAGE = 4096;
/**
 * Physical pages resident in any of pids, each counted once (a page of the `node` binary mapped by
 * five processes counts once), from /proc/<pid>/pagemap. Needs CAP_SYS_ADMIN (root): without it the
 * kernel reports every frame number as 0, and this returns null. Only mappings with resident pages
 * (smaps Rss > 0) are read, so V8's large reservations cost nothing.
 */
export function uniqueResidentBytes(pids) {
  const frames = new Set();
  for (const pid of pids) {
    let smaps;
    let fd;
    try {
      smaps = fs.readFileSync(`/proc/${pid}/smaps`, 'utf8');
      fd = fs.openSync(`/proc/${pid}/pagemap`, 'r');
    } catch {
      continue; // gone
    }
    try {
      for (const m of smaps.matchAll(/^([0-9a-f]+)-([0-9a-f]+) [^\n]*\n(?:[A-Z]\w*:[^\n]*\n)*?Rss:\s+(\d+) kB/gm)) {
        if (m[3] === '0') continue;
        const start = parseInt(m[1], 16) / PAGE;
        const pages = parseInt(m[2], 16) / PAGE - start;
        const buf = Buffer.alloc(pages * 8);
        const got = fs.readSync(fd, buf, 0, buf.length, start * 8);
        const words = new Uint32Array(buf.buffer, buf.byteOffset, got / 4);
        for (let i = 0; i < words.length; i += 2) {
          const lo = words[i];
          const hi = words[i + 1];
          if (!(hi & 0x80000000)) continue; // not present (swapped out or never touched)
          const pfn = (hi & 0x7fffff) * 0x100000000 + lo; // bits 0–54
          if (pfn === 0) return null; // frame numbers hidden: not root
          frames.add(pfn);
        }
      }
    } catch {
      /* the process ended while being read: what was read counts */
    } finally {
      fs.closeSync(fd);
    }
  }
  return frames.size * PAGE;
}

/**
 * The memory of a set of processes four ways (bytes): RSS summed (shared pages, e.g. the `node`
 * binary's ~40 MB, once per process), PSS summed (a shared page split between every process on the
 * machine that maps it, so it moves with what else runs), USS summed (pages only that process maps),
 * and unique (every physical page in any of them once: what they take together; null if not root).
 */
export function memoryOf(pids) {
  let rssKb = 0;
  let pssKb = 0;
  let ussKb = 0;
  for (const pid of pids) {
    const r = rollup(pid);
    rssKb += r.Rss ?? 0;
    pssKb += r.Pss ?? 0;
    ussKb += (r.Private_Clean ?? 0) + (r.Private_Dirty ?? 0);
  }
  return {
    rssBytes: rssKb * 1024,
    pssBytes: pssKb * 1024,
    ussBytes: ussKb * 1024,
    uniqueBytes: uniqueResidentBytes(pids),
  };
}

/** Per-pid cpu snapshot, so a delta only counts processes alive at both ends (or born in between). */
/**
 * CPU time of a process in µs at nanosecond resolution: the sum over its threads of
 * /proc/<pid>/task/<tid>/schedstat (time on a CPU). /proc/<pid>/stat counts 10 ms ticks, too coarse
 * for blocks of a few hundred calls; threads that ended are not counted (a broker keeps its threads).
 */
export function preciseCpuUs(pid) {
  let ns = 0;
  let tasks;
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return undefined;
  }
  for (const tid of tasks) {
    try {
      ns += Number(fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      /* the thread ended */
    }
  }
  return ns / 1000;
}

/** Precise CPU readings (`preciseCpuUs`) of these processes: pid → µs, or undefined where unreadable. */
export function preciseReadings(pids) {
  return new Map(pids.map((pid) => [pid, preciseCpuUs(pid)]));
}

/**
 * CPU µs the processes of `before` (preciseReadings) spent since, counting only those readable at
 * both ends: a short-lived child (the token counter) that left the tree in between would otherwise
 * count as 0 at the end and make a short block's figure negative.
 */
export function preciseCpuSince(before) {
  let sum = 0;
  for (const [pid, was] of before) {
    const now = preciseCpuUs(pid);
    if (was !== undefined && now !== undefined) sum += now - was;
  }
  return sum;
}

export function cpuSnapshot(pids) {
  const m = new Map();
  for (const p of pids) {
    const s = stat(p);
    if (s) m.set(p, s.cpuUs);
  }
  return m;
}
export function cpuDelta(before, pids) {
  let d = 0;
  for (const p of pids) {
    const s = stat(p);
    if (!s) continue;
    d += s.cpuUs - (before.get(p) ?? s.cpuUs); // a process born mid-block is not counted
  }
  return d;
}

/** Socket inodes a process holds. */
function socketInodes(pid) {
  const out = new Set();
  let fds;
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return out;
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) out.add(m[1]);
    } catch {
      /* closed meanwhile */
    }
  }
  return out;
}

function hexToAddr(hex, v6) {
  const [a, port] = hex.split(':');
  if (!v6) {
    const b = a
      .match(/../g)
      .reverse()
      .map((h) => parseInt(h, 16));
    return { addr: b.join('.'), port: parseInt(port, 16) };
  }
  // 4 little-endian 32-bit words
  const words = a.match(/.{8}/g).map((w) => w.match(/../g).reverse().join(''));
  const full = words.join('');
  const groups = full.match(/.{4}/g).map((g) => g.replace(/^0+(?=.)/, ''));
  let addr = groups.join(':');
  if (full === '00000000000000000000000000000001') addr = '::1';
  else if (/^0+$/.test(full)) addr = '::';
  else if (full.startsWith('00000000000000000000ffff'))
    addr = `::ffff:${hexToAddr(full.slice(24).match(/../g).reverse().join('') + ':0', false).addr}`;
  return { addr, port: parseInt(port, 16) };
}

/** Listening TCP sockets held by any of pids: [{pid, addr, port, loopback}]. */
export function listeningSockets(pids) {
  const rows = [];
  for (const [file, v6] of [
    ['/proc/net/tcp', false],
    ['/proc/net/tcp6', true],
  ]) {
    let text;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== '0A') continue; // 0A = LISTEN
      rows.push({ ...hexToAddr(f[1], v6), inode: f[9] });
    }
  }
  const out = [];
  for (const pid of pids) {
    const inodes = socketInodes(pid);
    for (const r of rows) {
      if (!inodes.has(r.inode)) continue;
      const loopback = r.addr === '::1' || r.addr.startsWith('127.') || r.addr.startsWith('::ffff:127.');
      out.push({ pid, addr: r.addr, port: r.port, loopback });
    }
  }
  return out;
}

/** Throws unless every listening socket of the tree of `pid` is on loopback (and there is one). */
export function assertLoopbackOnly(pid, label) {
  const socks = listeningSockets(tree(pid));
  if (socks.length === 0) throw new Error(`${label}: no listening socket found for pid ${pid}`);
  const bad = socks.filter((s) => !s.loopback);
  if (bad.length)
    throw new Error(`${label} listens on a non-loopback address: ${bad.map((s) => `${s.addr}:${s.port}`).join(', ')}`);
  return socks.map((s) => `${s.addr}:${s.port}`);
}

// ---- process tracking ------------------------------------------------------------------------
const started = new Set(); // ChildProcess objects
const groups = new Set(); // pgids we created (detached children)

/** spawn() that registers the child (and, if detached, its process group) for killAll(). */
export function spawnTracked(cmd, args, opts = {}) {
  const child = spawn(cmd, args, opts);
  started.add(child);
  if (opts.detached && child.pid) groups.add(child.pid);
  child.once('exit', () => started.delete(child));
  return child;
}

/** Remember a pid found later (e.g. a peer's upstream child) so killAll() reaps it too. */
const extraPids = new Set();
export function trackPid(pid) {
  if (pid) extraPids.add(pid);
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGKILL a process group and every known descendant. */
export function killHard(pid) {
  const pids = tree(pid);
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    /* not a group leader or gone */
  }
  for (const p of pids) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

/** Sends SIGTERM, waits up to ms, then kills the group and the tree hard. */
export async function stopGracefully(child, ms = 5000) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const pids = tree(child.pid);
  const exited = new Promise((r) => child.once('exit', r));
  try {
    child.kill('SIGTERM');
  } catch {
    /* gone */
  }
  const timer = new Promise((r) => setTimeout(r, ms));
  await Promise.race([exited, timer]);
  if (child.exitCode === null && child.signalCode === null) killHard(child.pid);
  // Orphans (e.g. an upstream in its own group) that outlived the parent:
  for (const p of pids)
    if (p !== child.pid && alive(p)) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
}

/** Synchronous last-resort reaper: every tracked child, group and pid. Safe to call twice. */
export function killAll() {
  for (const child of started) {
    if (child.pid) {
      for (const p of tree(child.pid)) {
        try {
          process.kill(p, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
  }
  for (const g of groups) {
    try {
      process.kill(-g, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  for (const p of extraPids) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

/** Every live descendant of this bench process (used to check nothing is left behind). */
export function leftovers() {
  return tree(process.pid)
    .filter((p) => p !== process.pid)
    .map((p) => stat(p))
    .filter(Boolean);
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
