#!/usr/bin/env bash
# A bash code grader: plain text on stdout, the verdict in the exit code.
payload=$(cat)
if printf '%s' "$payload" | grep -qiE '"output": *"[^"]*please'; then
  echo "the answer says please"
  exit 0
fi
echo "the answer never says please"
exit 1
