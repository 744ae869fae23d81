#!/usr/bin/env python3
"""A steady load beside a run, as a user's everyday work is: busy BUSY ms of
every PERIOD ms (default 100 of 200: half a CPU) until killed.

    python3 scripts/steady-load.py & load=$!; make run; kill $load
"""
import sys
import time

busy_ms = float(sys.argv[1]) if len(sys.argv) > 1 else 100.0
period_ms = float(sys.argv[2]) if len(sys.argv) > 2 else 200.0
if not 0 < busy_ms <= period_ms:
    sys.exit(f"steady-load: busy {busy_ms} ms of every {period_ms} ms: want 0 < busy <= period")
while True:
    t0 = time.monotonic()
    while time.monotonic() - t0 < busy_ms / 1000:
        pass
    time.sleep(max(0.0, period_ms / 1000 - (time.monotonic() - t0)))
