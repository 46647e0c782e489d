// A stand-in for OpenCode running its plugins, for the status e2e test.
// It loads the plugin `workrex setup` wrote (workrex-status.js in OpenCode's
// plugin directory) as OpenCode does, an ES module given { $ }, with $ a
// small Bun-shell lookalike that really runs the command, and hands it
// OpenCode's events as the test types: "go" (session.status busy), "ask"
// (permission.asked), "finish" (session.idle), "quit".
import { readFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const dir = `${process.env.XDG_CONFIG_HOME || process.env.HOME + "/.config"}/opencode/plugins`;
const text = readFileSync(`${dir}/workrex-status.js`, "utf8");
const plugin = await import("data:text/javascript," + encodeURIComponent(text));

// $`cmd ${arg}`: the literal parts split at spaces, each value one argument.
function $(strings, ...values) {
  const argv = [];
  strings.forEach((s, i) => {
    argv.push(...s.split(/\s+/).filter(Boolean));
    if (i < values.length) argv.push(String(values[i]));
  });
  const run = () =>
    new Promise((resolve) => {
      const p = spawn(argv[0], argv.slice(1), { stdio: "ignore" });
      p.on("error", () => resolve({ exitCode: 127 }));
      p.on("close", (code) => {
        console.log(`plugin ran ${argv.join(" ")} rc=${code}`);
        resolve({ exitCode: code });
      });
    });
  const cmd = { quiet: () => cmd, nothrow: () => cmd, then: (ok, bad) => run().then(ok, bad) };
  return cmd;
}

const hooks = [];
for (const make of Object.values(plugin)) hooks.push(await make({ $ }));
const events = {
  go: { type: "session.status", properties: { sessionID: "s", status: { type: "busy" } } },
  ask: { type: "permission.asked", properties: { sessionID: "s", permission: "bash" } },
  finish: { type: "session.idle", properties: { sessionID: "s" } },
};
console.log("fake opencode ready");
for await (const line of createInterface({ input: process.stdin })) {
  const word = line.trim();
  if (word === "quit") break;
  if (events[word]) for (const h of hooks) await h.event({ event: events[word] });
}
process.exit(0);
