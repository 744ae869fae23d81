# Writes testdata/results/telemetry-constructed.jsonl: a constructed (not
# measured) telemetry fixture in internal/telemetry's Sample format, for
# internal/plot's tests. Run from the repository root:
#   python3 testdata/results/telemetry-constructed.py
import json, math
NOTE = "constructed fixture for internal/plot tests, not measured"
out = []
def sample(cell, rep, target, view, t_ms, interval_ms, cpus, threads=None, pkg=None):
    s = {"schema_version": "1.0", "cell": cell, "repeat": rep, "target": target, "view": view,
         "sampler": "proc", "t_ns": t_ms * 1_000_000, "interval_ns": interval_ms * 1_000_000}
    if cpus: s["cpus"] = cpus
    if pkg is not None: s["package_w"] = pkg
    if threads: s["threads"] = threads
    s["notes"] = [NOTE]
    out.append(s)

def wave(i, k):  # deterministic wobble in [-1, 1]
    return math.sin(0.7 * i + 1.3 * k)

host_types = ["E", "E", "P", "P"]
# Host cells on a 2E+2P host: background runs on the E cores at low clock for
# 2 s; user-interactive on the P cores at high clock for 0.5 s.
for rep in (1, 2):
    for qos, length_ms, busy_cores, mhz_busy in ((9, 2000, (0, 1), 1000), (33, 500, (2, 3), 3200)):
        cell = f"host fp qos={qos} threads=2 loops=5000000"
        for i, t in enumerate(range(0, length_ms + 1, 100)):
            first = i == 0
            cpus = []
            for c in range(4):
                d = {"id": c, "type": host_types[c]}
                if not first:
                    on = c in busy_cores
                    d["busy"] = round(0.97 + 0.02 * wave(i, c), 3) if on else round(0.05 + 0.04 * abs(wave(i, c)), 3)
                    idle_mhz = 600 if host_types[c] == "P" else 970
                    d["mhz"] = float(mhz_busy + 10 * round(wave(i, c)) if on else idle_mhz)
                cpus.append(d)
            threads = None
            if not first:
                threads = [{"tid": 5000 + 10 * rep + qos + w, "role": f"worker {w}", "cpu": busy_cores[w],
                            "busy": round(0.96 + 0.03 * wave(i, w + 5), 3),
                            "policy": "SCHED_IDLE nice=0" if qos == 9 else "SCHED_OTHER nice=-10"} for w in range(2)]
            sample(cell, rep, "host", "host", t, 0 if first else 100, cpus, threads, None if first else (2.5 if qos == 9 else 9.0))
    # between cells: the sampler keeps going while the next cell starts
    sample("", 0, "host", "host", 0, 100, [{"id": c, "type": host_types[c], "busy": 0.02} for c in range(4)])

# VM cells: the guest (2 vCPUs, no cpufreq) sees its threads run flat out at
# both classes; the host sees the two vCPU threads busy on P cores whatever
# the guest's class.
for rep in (1, 2):
    for qos in (9, 33):
        cell = f"vm fp qos={qos} threads=2 loops=5000000"
        length_ms = 700
        for i, t in enumerate(range(0, length_ms + 1, 100)):
            first = i == 0
            gcpus = [{"id": c} if first else {"id": c, "busy": round(0.95 + 0.04 * wave(i, c), 3)} for c in range(2)]
            gthreads = None if first else [{"tid": 300 + w, "role": f"worker {w}", "cpu": w, "busy": round(0.94 + 0.04 * wave(i, w), 3),
                                             "policy": "SCHED_IDLE nice=0" if qos == 9 else "SCHED_OTHER nice=-10"} for w in range(2)]
            sample(cell, rep, "vm", "guest", t, 0 if first else 100, gcpus, gthreads)
            hcpus = []
            for c in range(4):
                d = {"id": c, "type": host_types[c]}
                if not first:
                    on = c in (2, 3)
                    d["busy"] = round(0.96 + 0.03 * wave(i, c), 3) if on else round(0.08 + 0.05 * abs(wave(i, c)), 3)
                    d["mhz"] = float(3200 + 10 * round(wave(i, c))) if on else (970.0 if host_types[c] == "E" else 600.0)
                hcpus.append(d)
            vcpus = None if first else [{"tid": 23049 + v, "role": f"vcpu {v}", "cpu": 2 + v, "busy": round(0.95 + 0.04 * wave(i, v + 2), 3),
                                         "policy": "SCHED_OTHER nice=0"} for v in range(2)]
            # the host's clock starts the cell a little before the guest's
            sample(cell, rep, "vm", "host", t + 40, 0 if first else 100, hcpus, vcpus)

with open("testdata/results/telemetry-constructed.jsonl", "w") as f:
    for s in out:
        f.write(json.dumps(s, separators=(",", ":"), ensure_ascii=False) + "\n")
print(len(out), "samples")
