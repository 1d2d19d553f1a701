#!/usr/bin/env bash
# Regenerates the tables in VALIDATION.md (between the table markers) from `ndtwin validate`, so
# the document always shows what the current build predicts. Usage: scripts/validation_tables.sh
set -euo pipefail
bin="${1:-build/ndtwin}"
doc="$(dirname "$0")/../VALIDATION.md"
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.body"' EXIT
{
  printf '```\n$ ndtwin validate\n'
  "$bin" validate 2>/dev/null
  printf '```\n'
} >"$tmp.body"
awk -v body="$tmp.body" '
  /<!-- tables:begin -->/ { print; while ((getline l < body) > 0) print l; skip = 1; next }
  /<!-- tables:end -->/ { skip = 0 }
  !skip { print }' "$doc" >"$tmp"
cp "$tmp" "$doc"
