// A stand-in for OpenCode running its plugins, for the status e2e tests.
// It loads the plugin `workrex setup` wrote (workrex-status.js in OpenCode's
// plugin directory) as an ES module, the way each version of OpenCode does:
//   v1  every exported function is called with { $, directory };
//   v2  only the default export's setup, found by its id, and its commands
//       run as in a shared `opencode serve`: from /, without the pane's
//       environment (no WORKREX_* variable), the session id its own.
// $ is a small Bun-shell lookalike that really runs the command (an array
// value is one argument per item, as Bun's). It hands the plugin OpenCode's
// events as the test types: "go" (session.status busy), "ask"
// (permission.asked), "finish" (session.idle), "quit".
import { readFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const version = process.argv[2] || "v1";
const session = process.argv[3] || "ses_stand_in";
const dir = `${process.env.XDG_CONFIG_HOME || process.env.HOME + "/.config"}/opencode/plugins`;
const text = readFileSync(`${dir}/workrex-status.js`, "utf8");
const plugin = await import("data:text/javascript," + encodeURIComponent(text));

const daemonEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith("WORKREX_")),
);

function $(strings, ...values) {
  const argv = [];
  strings.forEach((s, i) => {
    argv.push(...s.split(/\s+/).filter(Boolean));
    if (i < values.length) {
      const v = values[i];
      if (Array.isArray(v)) argv.push(...v.map(String));
      else argv.push(String(v));
    }
  });
  const opts =
    version === "v2" ? { stdio: "ignore", cwd: "/", env: daemonEnv } : { stdio: "ignore" };
  const run = () =>
    new Promise((resolve) => {
      const p = spawn(argv[0], argv.slice(1), opts);
      p.on("error", () => resolve({ exitCode: 127 }));
      p.on("close", (code) => {
        console.log(`plugin ran ${argv.join(" ")} rc=${code}`);
        resolve({ exitCode: code });
      });
    });
  const cmd = { quiet: () => cmd, nothrow: () => cmd, then: (ok, bad) => run().then(ok, bad) };
  return cmd;
}

const input = { $, directory: process.cwd() };
const hooks = [];
if (version === "v2") {
  const p = plugin.default;
  if (!p || typeof p.id !== "string" || typeof p.setup !== "function") {
    console.log("fake opencode v2: no default export with id and setup");
    process.exit(1);
  }
  hooks.push(await p.setup(input));
} else {
  for (const make of Object.values(plugin)) if (typeof make === "function") hooks.push(await make(input));
}
const events = {
  go: { type: "session.status", properties: { sessionID: session, status: { type: "busy" } } },
  ask: { type: "permission.asked", properties: { sessionID: session, permission: "bash" } },
  finish: { type: "session.idle", properties: { sessionID: session } },
};
console.log(`fake opencode ${version} ready`);
for await (const line of createInterface({ input: process.stdin })) {
  const word = line.trim();
  if (word === "quit") break;
  if (events[word]) for (const h of hooks) await h.event({ event: events[word] });
}
process.exit(0);
