#!/usr/bin/env bash
# The proxy's cases (proxy.py), in the e2e runner's form: one ok/not ok line each.
exec timeout 600 python3 "$(dirname "$0")/proxy.py"
