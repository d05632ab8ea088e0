#!/usr/bin/env bash
# Harness check (run by hand, after `swift build --build-tests`): SIGKILLs the test process while the
# first TestPostgresServer's initdb runs, then checks that no storeflowable-pg-* folder and no server
# of this run is left once the test process is gone (the watchdogs poll every second: give them 10 s).
# Exits 1 when something is left behind (and removes it).
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
binary=$(ls "$here"/.build/*/debug/StoreFlowablePostgresPackageTests.xctest | head -1)
before=$(ls -d /tmp/storeflowable-pg-* 2>/dev/null | sort)
"$binary" --testing-library swift-testing >/dev/null 2>&1 &
pid=$!
# Wait (20 s at most) for an initdb started by this test process, then kill the test process.
for _ in $(seq 200); do
    if pgrep -f "initdb -D /tmp/storeflowable-pg-" >/dev/null; then break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
done
kill -KILL "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
left=""
for _ in $(seq 100); do
    left=$(comm -13 <(echo "$before") <(ls -d /tmp/storeflowable-pg-* 2>/dev/null | sort) | grep . || true)
    [ -z "$left" ] && break
    sleep 0.1
done
if [ -n "$left" ]; then
    echo "FAIL: left behind after the test process was killed during initdb:"
    for folder in $left; do
        echo "  $folder ($(du -sh "$folder" | cut -f1))"
        pkill -KILL -f "postgres -D $folder/data" 2>/dev/null
        rm -rf "$folder"
    done
    exit 1
fi
echo "ok: nothing left behind"
