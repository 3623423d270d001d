#!/bin/sh
# Runs a TypeScript grader with bun, importing the AgentV SDK (@agentv/eval) unchanged.
# Stands in for the `npm install` a real project has done: the conformance tests run a copy of
# this folder outside conformance/, so ./node_modules is pointed at the node_modules that holds
# bun, @agentv/eval and @agentv/sdk (conformance/node_modules, whose .bin is on PATH).
modules=$(cd "$(dirname "$(command -v bun)")/.." && pwd)
[ -e node_modules ] || ln -s "$modules" node_modules 2>/dev/null || true
exec bun "$@"
