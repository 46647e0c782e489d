#!/usr/bin/env python3
"""A recorded stand-in for the GitHub CLI, for the PR tests: GitHub cannot be
reached here. It answers the calls workrex makes (pr create, pr view, issue view) from a
state file the test can edit ($FAKE_GH_STATE: the PRs, their state and
checks; the issues) and logs every call's arguments ($FAKE_GH_LOG, a JSON line each).
Like gh, pr create refuses a head branch the remote does not have."""
import json, os, subprocess, sys

state_path = os.environ["FAKE_GH_STATE"]
with open(os.environ["FAKE_GH_LOG"], "a") as log:
    log.write(json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd()}) + "\n")


def load():
    try:
        with open(state_path) as f:
            return json.load(f)
    except FileNotFoundError:
        return {"next": 1, "prs": []}


def save(s):
    with open(state_path, "w") as f:
        json.dump(s, f, indent=1)


def opt(args, name, default=None):
    return args[args.index(name) + 1] if name in args else default


args = sys.argv[1:]
if args[:2] == ["pr", "create"]:
    head, base = opt(args, "--head"), opt(args, "--base")
    pushed = subprocess.run(["git", "ls-remote", "--exit-code", "--heads", "origin", head],
                            capture_output=True).returncode == 0
    if not pushed:
        sys.stderr.write("aborted: you must first push the current branch to a remote\n")
        sys.exit(1)
    s = load()
    n = s["next"]
    s["next"] = n + 1
    url = "https://github.example/o/r/pull/%d" % n
    s["prs"].append({"number": n, "headRefName": head, "baseRefName": base,
                     "title": opt(args, "--title"), "body": opt(args, "--body"),
                     "isDraft": "--draft" in args, "state": "OPEN", "url": url,
                     "statusCheckRollup": []})
    save(s)
    print(url)
elif args[:2] == ["pr", "view"] and len(args) >= 3:
    ref, fields = args[2], opt(args, "--json", "number").split(",")
    number = ref.rsplit("/", 1)[-1] if "/pull/" in ref else ref
    prs = load()["prs"]
    found = [p for p in prs if str(p["number"]) == number] if number.isdigit() else \
        [p for p in prs if p["headRefName"] == ref]
    if not found:
        sys.stderr.write('no pull requests found for branch "%s"\n' % ref)
        sys.exit(1)
    print(json.dumps({k: found[-1].get(k) for k in fields}))
elif args[:2] == ["issue", "list"]:
    # What --jq '.[] | "#\(.number) \(.title)"' prints, the open ones (all here).
    for i in load().get("issues", []):
        print("#%d %s" % (i["number"], i["title"]))
elif args[:2] == ["issue", "view"] and len(args) >= 3:
    ref, fields = args[2], opt(args, "--json", "number").split(",")
    number = ref.rsplit("/", 1)[-1]
    issues = [i for i in load().get("issues", []) if str(i["number"]) == number]
    if not issues:
        sys.stderr.write("GraphQL: Could not resolve to an issue or pull request with the "
                         "number of %s. (repository.issue)\n" % number)
        sys.exit(1)
    print(json.dumps({k: issues[0].get(k) for k in fields}))
else:
    sys.stderr.write("fake gh: not recorded: %s\n" % " ".join(args))
    sys.exit(2)
