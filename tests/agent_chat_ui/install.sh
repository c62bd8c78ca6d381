#!/usr/bin/env bash
# agent-chat-ui as create-agent-chat-app@0.1.6 ships it (its Vite template, MIT), with the dependency
# versions pinned here (package-lock.json), for tests/test_agent_chat_ui.py. Needs npm and the npm
# registry; `make test` runs it, and the test says why it is skipped when it could not.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
web="$here/web"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
(cd "$scratch" && npm pack create-agent-chat-app@0.1.6 --silent >/dev/null)
tar xzf "$scratch/create-agent-chat-app-0.1.6.tgz" -C "$scratch"
rm -rf "$web"
cp -r "$scratch/package/templates/vite" "$web"
cp "$here/package-lock.json" "$web/package-lock.json"
(cd "$web" && npm ci --no-audit --no-fund --loglevel=error)
touch "$web/.installed"
