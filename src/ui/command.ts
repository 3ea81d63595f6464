/**
 * `nyl ui`: serves a read-only web view of the project's environments until interrupted. The
 * server and its pages (ui-serve.ts, src/ui/) load only when it serves.
 */
import type { Command } from '../commands/command';
import { LOCAL } from '../commands/options';

/** A command that serves instead of reporting: its refusals (a bad --listen) are state operation refusals. */
export const uiCommand: Command = {
  words: ['ui'],
  summary: 'Serve a read-only web view of the environments, units, runs and history',
  usage: 'nyl ui [--listen <host>:<port>] [--allow-host <name>] [--poll-interval <duration>] [--local] [PATH]',
  description:
    "Serves pages rendered from the state refs (no database, nothing to install): the environments with their units' states, last operation and lease holder; " +
    "per environment the units with their state and why each one waits (the planner's reason), the dependency graph drawn, and the latest operations; " +
    "per unit its receipt, outputs (a sensitive output by its name only: no value, no digest), condition, hold and documents; the history with who asked and why; and each run's units. " +
    'Open pages refresh when the state refs change. It answers GET and HEAD only, only requests addressed to one of its own names (on loopback, the default 127.0.0.1:4780, its loopback addresses and localhost), ' +
    "and never another site's page but to open one of its pages; an address that is not loopback warns NYL-UI-EXPOSED. Takes no lease and writes no state. Runs until interrupted (Ctrl-C), then exits 0.",
  options: [
    {
      name: 'listen',
      type: 'string',
      value: '<host>:<port>',
      help: 'The address to serve on. Default 127.0.0.1:4780; port 0 takes any free port. A bare port means 127.0.0.1:<port>.',
    },
    {
      name: 'allow-host',
      type: 'string',
      multiple: true,
      value: '<name>',
      help: "Also answer requests addressed to this host name (a proxy in front of nyl ui); repeatable. localhost is always answered, and off loopback this machine's name.",
    },
    {
      name: 'poll-interval',
      type: 'string',
      value: '<duration>',
      help: 'How often an open page asks whether the state refs changed (the refs are read at most this often). Default 2s.',
    },
    LOCAL,
  ],
  examples: ['nyl ui', 'nyl ui --listen 127.0.0.1:0 ./infra', 'nyl ui --listen 8080 --poll-interval 10s'],
  report: 'StateOperationReport',
  execute: async (rt, p, io) => (await import('./serve')).serve(rt, p, io),
};
