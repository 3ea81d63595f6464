/**
 * Which Host headers the web view answers, decided from the address it is bound to (not from
 * how `--listen` spelled it: `127.1`, `localhost` and `[::ffff:127.0.0.1]` are all loopback).
 *
 * DNS rebinding is a page of some site whose name the attacker then points at 127.0.0.1: the
 * browser sends the attacker's name as the Host. So a name is answered only when it is one of
 * ours: `localhost` always; on an address other machines reach also this machine's host name and
 * the names of `--allow-host` (a proxy in front). An IP literal is not a rebinding (no name was
 * resolved): on loopback only loopback literals, elsewhere any. The port must be ours (absent
 * means 80).
 *
 * An Origin header (sent by a browser for a scripted request) is ours when it names the host and
 * port the request is addressed to: the server refuses a foreign one when the browser sends no
 * fetch metadata to say the same (server.ts, foreignRequest).
 */
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';

export interface HostPolicy {
  port: number;
  /** Bound to a loopback address: only loopback literals and `localhost`. */
  loopback: boolean;
  /** Host names answered (lower case). */
  names: ReadonlySet<string>;
}

const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;

/** 127.0.0.0/8, ::1, and IPv4-mapped 127.x.x.x. */
export function isLoopbackAddress(address: string): boolean {
  const v4 = address.replace(/^::ffff:/i, '');
  return (IPV4.test(v4) && v4.startsWith('127.')) || /^(?:0{0,4}:){7}0{0,3}1$|^::1$/.test(address);
}

export function hostPolicyOf(address: AddressInfo, allowHosts: readonly string[]): HostPolicy {
  const loopback = isLoopbackAddress(address.address);
  const names = new Set(['localhost', ...allowHosts.map((n) => n.toLowerCase())]);
  if (!loopback) names.add(hostname().toLowerCase());
  return { port: address.port, loopback, names };
}

/** The host and port of a Host header (`name:port`, `[v6]:port`, either without a port), or undefined when malformed. */
export function parseHost(header: string): { host: string; port: number; literal: boolean } | undefined {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+))(?::(\d{1,5}))?$/.exec(header);
  if (!m) return undefined;
  const host = (m[1] ?? m[2]!).toLowerCase();
  return { host, port: m[3] === undefined ? 80 : Number(m[3]), literal: m[1] !== undefined || IPV4.test(host) };
}

export function hostAllowed(header: string | undefined, policy: HostPolicy): boolean {
  const parsed = header === undefined ? undefined : parseHost(header);
  if (!parsed || parsed.port !== policy.port) return false;
  if (parsed.literal) return !policy.loopback || isLoopbackAddress(parsed.host);
  return policy.names.has(parsed.host);
}

/**
 * Does an Origin header name the origin of the request's Host (same host, same port)? `null` (a
 * sandboxed frame, a file) and anything that is not `scheme://host[:port]` do not.
 */
export function originMatchesHost(origin: string, host: string | undefined): boolean {
  const target = host === undefined ? undefined : parseHost(host);
  if (!target || !/^https?:\/\/[^/?#@\s]+$/i.test(origin)) return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  const port = url.port !== '' ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  return url.hostname.replace(/^\[(.*)\]$/, '$1') === target.host && port === target.port;
}
