#!/usr/bin/env bash
# The same sweep on 1 process and on 3 MPI ranks (rank 0 writes, ranks 1-2 evaluate) gives the
# same results table. Skipped (exit 77) when mpirun is absent or ndtwin was built without MPI.
set -euo pipefail
bin="$1"
spec="$2"
command -v mpirun >/dev/null || { echo "skipped: no mpirun"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bin" sweep "$spec" --out "$dir/one.sqlite" --threads 1 >/dev/null
mpirun --oversubscribe --allow-run-as-root -n 3 "$bin" sweep "$spec" --out "$dir/mpi.sqlite" \
  --threads 1 --json >"$dir/mpi.json"
grep -q '"ranks": 3' "$dir/mpi.json" || { echo "skipped: ndtwin built without MPI"; exit 77; }
python3 - "$dir/one.sqlite" "$dir/mpi.sqlite" <<'PY'
import sqlite3, sys
def rows(p):
    return sqlite3.connect(p).execute("SELECT * FROM results ORDER BY id").fetchall()
a, b = rows(sys.argv[1]), rows(sys.argv[2])
assert len(a) > 0 and a == b, f"1 process: {len(a)} rows, 3 ranks: {len(b)} rows, equal: {a == b}"
print(f"{len(a)} rows equal on 1 process and 3 MPI ranks")
PY
