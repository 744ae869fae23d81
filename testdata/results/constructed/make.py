# Writes the constructed results directories in this directory: each is a
# run written by hand in qoslab's results format (run.json, samples.jsonl,
# and telemetry.jsonl where telemetry matters), as a user's damaged or
# unusual run would look, for a case in which qoslab's verdict or findings
# once said the wrong thing. None is measured; run.json's notes and
# tool_version say so. Each directory's want.txt holds the lines `qoslab
# results show DIR` must print ("+ " lines) or must not ("- " lines,
# matched as substrings); internal/cli's TestConstructedFixtures checks
# them through the command.
#
# Run from the repository root (deterministic; rewrites every directory):
#   python3 testdata/results/constructed/make.py
import json, os, shutil

HERE = os.path.dirname(os.path.abspath(__file__))
NOTE = "constructed fixture, not measured: written by testdata/results/constructed/make.py"
STARTED = "2026-12-01T10:00:00Z"
FINISHED = "2026-12-01T10:30:00Z"
# Repeat-to-repeat wobble, in the order the repeats ran: within 1.5%, with
# no two repeats alike and no gap wide enough to split them in two groups.
WOBBLE = [0.99, 1.01, 0.995, 1.005, 0.985, 1.015, 0.998, 1.002]


def info(target, cpus):
    return {
        "agent_version": "constructed", "protocol": {"major": 1, "minor": 2}, "os": "linux", "arch": "amd64",
        "os_version": "constructed (not measured)", "cpu_model": "constructed (not measured)", "logical_cpus": cpus,
        "virtualized": target == "vm",
    }


class Run:
    def __init__(self, name, about, targets=("host", "vm"), matrix=None, repeats=6, quick=False, contention=0, cpus=2,
                 verdict=None, finished=True):
        self.name, self.about = name, about
        self.spec = {"name": name, "description": about, "targets": list(targets), "vm": {"cpus": 2},
                     "matrix": matrix or [], "repeats": repeats, "warmup": 0, "order": "interleaved", "seed": 1,
                     "contention": contention, "telemetry_ms": 100, "data_seed": 1,
                     "verdict": verdict or {"relative_margin": 0.1, "absolute_margin": 1.25}}
        if quick:
            self.spec["quick"] = True
        self.targets, self.cpus, self.finished = targets, cpus, finished
        self.records, self.telemetry, self.want = [], [], []
        self.planned = 0

    def cell(self, target, workload, qos, threads, repeat, ends, work, unit="loops", starts=None, duration_ns=0, loops=0):
        """One cell run: a record per thread (or process) ending at ends[i] s."""
        key = f"{target} {workload} qos={qos} threads={threads} " + (f"duration={duration_ns / 1e9:g}s" if duration_ns else f"loops={loops}")
        for i, e in enumerate(ends):
            start = int((starts[i] if starts else 0) * 1e9)
            end = int(round(e * 1e9))
            w = work[i] if isinstance(work, list) else work
            rec = {"schema_version": "1.0", "cell": key, "run_records": len(ends), "target": target, "workload": workload,
                   "qos": qos, "threads": threads, "repeat": repeat, "index": i, "start_ns": start, "end_ns": end,
                   "work": w, "unit": unit, "rate": w / ((end - start) / 1e9) if end > start else 0,
                   "qos_applied": qos, "qos_full": True, "contention": self.spec["contention"] if isinstance(self.spec["contention"], int) else self.cpus}
            if duration_ns:
                rec["duration_ns"] = duration_ns
            rec["recorded_at"] = STARTED
            self.records.append(rec)

    def rates(self, target, qos, threads, rates, duration_ns=1_000_000_000, workload="fp"):
        """Fixed-duration cells whose repeats' total rates are rates (per second)."""
        for r, rate in enumerate(rates, 1):
            per = rate * duration_ns / 1e9 / threads
            self.cell(target, workload, qos, threads, r, [duration_ns / 1e9] * threads, [round(per)] * threads, duration_ns=duration_ns)

    def write(self):
        d = os.path.join(HERE, self.name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        run = {"schema_version": "1.0", "tool_version": "constructed", "name": self.name, "spec": self.spec, "seed": 1,
               "planned": self.planned or len({(r["cell"], r["repeat"]) for r in self.records}), "started": STARTED,
               "finished": FINISHED if self.finished else None,
               "targets": {t: info(t, self.cpus) for t in self.targets}, "notes": [NOTE]}
        with open(os.path.join(d, "run.json"), "w") as f:
            json.dump(run, f, indent=2)
            f.write("\n")
        with open(os.path.join(d, "samples.jsonl"), "w") as f:
            for r in self.records:
                f.write(json.dumps(r, separators=(",", ":")) + "\n")
        if self.telemetry:
            with open(os.path.join(d, "telemetry.jsonl"), "w") as f:
                for s in self.telemetry:
                    f.write(json.dumps(s, separators=(",", ":")) + "\n")
        with open(os.path.join(d, "want.txt"), "w") as f:
            f.write(f"# {self.about}\n# constructed, not measured: qoslab results show {self.name} must print every + line and no - line\n")
            for w in self.want:
                f.write(w + "\n")


def wobble(x, n=6, start=0):
    return [x * WOBBLE[(start + i) % len(WOBBLE)] for i in range(n)]


def fp_matrix(threads, duration="1s"):
    return [{"workload": "fp", "qos": [9, 33], "threads": threads, "duration_ns": int(float(duration[:-1]) * 1e9) if duration.endswith("s") and not duration.endswith("ms") else int(float(duration[:-2]) * 1e6)}]


def verdict_run(name, about, host_hi, host_lo, vm_hi, vm_lo, threads=(1,), **kw):
    """A fp run on host and VM at QoS 9 and 33: per thread count, the
    repeats' total rates at each class (lists, one per thread count)."""
    duration = kw.pop("duration", "1s")
    run = Run(name, about, matrix=fp_matrix(list(threads), duration), **kw)
    ns = int(float(duration[:-2]) * 1e6) if duration.endswith("ms") else int(float(duration[:-1]) * 1e9)
    for i, t in enumerate(threads):
        run.rates("host", 33, t, host_hi[i], ns)
        run.rates("host", 9, t, host_lo[i], ns)
        run.rates("vm", 33, t, vm_hi[i], ns)
        run.rates("vm", 9, t, vm_lo[i], ns)
    return run


runs = []

# --- The verdict -----------------------------------------------------------

r = verdict_run("reversal", "host 33/9 = 240x; VM 33/9 = 0.194x: QoS 33 five times slower in the VM, a reversal, which the old rule called yes (SI 1.299)",
                [wobble(240e6)], [wobble(1e6, start=2)], [wobble(0.194 * 10e6, start=1)], [wobble(10e6, start=3)])
r.want = ["+ - fp: QoS subsumed in VM: no: QoS reversed in the VM, 33/9 = 0.194x (SI 1.299 [1.295..1.302]; host 33/9 = 240x [237..243], p=0.0022; vm 33/9 = 0.194x [0.192..0.197]; band 0.8x..1.25x: margins 1.73x (10% of the host's effect at its interval's low end) and 1.25x (absolute); 90% intervals, two one-sided tests at 5%)", "- QoS subsumed in VM: yes"]
runs.append(r)

r = verdict_run("large-vm-effect", "host 33/9 = 1010x; VM 33/9 = 1.87x: inside host^0.1 = 2x, which the old rule called yes, but far outside 1.25x",
                [wobble(1010e6)], [wobble(1e6, start=2)], [wobble(18.7e6, start=1)], [wobble(10e6, start=3)])
r.want = ["+ - fp: QoS subsumed in VM: no: the VM keeps a QoS effect, 33/9 = 1.87x (SI 0.909 [0.907..0.912]; host 33/9 = 1010x [998..1022], p=0.0022; vm 33/9 = 1.87x [1.85..1.89]; band 0.8x..1.25x: margins 1.99x (10% of the host's effect at its interval's low end) and 1.25x (absolute); 90% intervals, two one-sided tests at 5%)", "- QoS subsumed in VM: yes"]
runs.append(r)

# The host's repeats spread wide (6.7x at the median, 2.6x..15x between
# repeats): the margin from its point estimate would be 1.21x, from the low
# end of its interval it is much smaller.
r = verdict_run("host-uncertainty", "host 33/9 about 6.7x with a wide interval: the margin comes from the interval's low end, and SI's interval carries the host's spread",
                [[6.7e6 * m for m in (0.62, 0.8, 1.0, 1.25, 1.6, 0.9)]], [[1e6 * m for m in (1.6, 1.25, 1.0, 0.8, 0.62, 1.1)]],
                [wobble(10.3e6, start=1)], [wobble(10e6, start=3)])
r.want = ["+ - fp: QoS subsumed in VM: yes (SI 0.984 [0.967..0.993]; host 33/9 = 6.7x [4.29..9.73], p=0.0022; vm 33/9 = 1.03x [1.02..1.04]; band 0.865x..1.16x: margins 1.16x (10% of the host's effect at its interval's low end) and 1.25x (absolute), no only outside 0.8x..1.25x (at its high end); 90% intervals, two one-sided tests at 5%)"]
runs.append(r)

# 3 against 3 with equal rates within each side: the normal approximation
# said p = 0.047 (below the 0.1 these sizes allow) and the old rule yes.
r = verdict_run("ties-three-repeats", "3 repeats, one thread count, equal rates within each side: the exact test cannot go below p = 0.1",
                [[310e6, 310e6, 310e6]], [[1e6, 1e6, 1e6]], [[10e6, 10e6, 10.1e6]], [[10e6, 10.1e6, 10e6]], repeats=3)
r.want = ["+ - fp: QoS subsumed in VM: inconclusive: too few host repeats to tell (smallest reachable p 0.1 with 3 vs 3 repeats) (SI n/a; host 33/9 = 310x [310..310], p=0.1; vm 33/9 = 1x [0.9901..1.01]; 90% intervals, two one-sided tests at 5%)", "- QoS subsumed in VM: yes"]
runs.append(r)

# An interrupted run: the host has 6 repeats, the VM 2, one of them tied.
r = verdict_run("ties-two-vm-repeats", "interrupted after 2 VM repeats, one tied: a 2 against 2 interval covers 66.7%, not 90%",
                [wobble(300e6)], [wobble(1e6, start=2)], [[10e6, 10.1e6]], [[10e6, 9.9e6]], finished=False)
r.planned = 24
r.want = ["+ - fp: QoS subsumed in VM: inconclusive: too few vm repeats for a 90% interval of its ratio (2 vs 2 repeats reach 67%) (SI 0.998 [0.996..1.000] (64%); host 33/9 = 300x [296..304], p=0.0022; vm 33/9 = 1.01x [1..1.02] (67%); band 0.8x..1.25x: margins 1.77x (10% of the host's effect at its interval's low end) and 1.25x (absolute); 90% intervals, two one-sided tests at 5%)", "- QoS subsumed in VM: yes"]
runs.append(r)

r = verdict_run("vm-no-work", "the VM did no work at QoS 9 (a starved guest): the old reason said the host was not faster",
                [wobble(240e6)], [wobble(1e6, start=2)], [wobble(10e6, start=1)], [[0] * 6])
r.want = ["+ - fp: QoS subsumed in VM: inconclusive: on vm QoS 9 did no work in any repeat (rate 0), so its 33/9 ratio is undefined",
          "+   - **warning:** vm fp qos=9 threads=1: 6 of 6 repeats did no work (rate 0); the machine was busy or contention did not hold"]
runs.append(r)


def tight(x, n=6, start=0):
    return [x * (1 + 1e-4 * ((start + 5 * i) % n)) for i in range(n)]


r = verdict_run("host-half-percent", "host 33/9 = 1.005x, significant: the old rule called anything under 1.01x not faster; the VM keeps the same 1.005x",
                [tight(1.005e8)], [tight(1e8)], [tight(1.005e7)], [tight(1e7)])
r.want = ["+ - fp: QoS subsumed in VM: no: the VM keeps a QoS effect, 33/9 = 1.005x (SI 0.000 [-0.128..0.113]; host 33/9 = 1.005x [1.0048..1.0052], p=0.0022; vm 33/9 = 1.005x [1.0048..1.0052]; band 0.99952x..1.00048x: margins 1.00048x (10% of the host's effect at its interval's low end) and 1.25x (absolute), no only outside 0.99948x..1.00052x (at its high end); 90% intervals, two one-sided tests at 5%)"]
runs.append(r)

r = verdict_run("host-not-significant", "host 33/9 = 1.012x, not significant; VM 1.05x: the old rule printed SI -3.2",
                [wobble(1.012e8, start=1)], [wobble(1e8)], [wobble(1.05e7, start=1)], [wobble(1e7)])
r.want = ["+ - fp: QoS subsumed in VM: inconclusive: host shows no significant QoS effect, so there is nothing to subsume; on a Linux host whose cores are alike QoS only decides who runs when cores are scarce: run with contention, as qoslab run --default contention does (SI n/a; host 33/9 = 1.01x [1.0018..1.03], p=0.093; vm 33/9 = 1.05x [1.04..1.07]; 90% intervals, two one-sided tests at 5%)"]
runs.append(r)

# A --quick contention run on a busy machine: host background repeats 77x
# and 40x apart, the rest would say yes.
host9_1 = [1e6, 1.2e6, 77e6, 1.1e6, 1.02e6, 1.05e6]
host9_2 = [2e6, 80e6, 2.2e6, 2.4e6, 2.1e6, 2.3e6]
r = verdict_run("flagged-quick", "a --quick contention run: host background cells whose repeats are 77x and 40x apart; without them the verdict would be yes",
                [wobble(520e6), wobble(1040e6, start=1)], [host9_1, host9_2], [wobble(10e6, start=1), wobble(20e6, start=2)],
                [wobble(10e6, start=3), wobble(20e6, start=4)], threads=(1, 2), duration="250ms", quick=True, contention="all")
r.want = ["+ - fp: QoS subsumed in VM: inconclusive: host fp qos=9 threads=1 repeats 77x apart; host fp qos=9 threads=2 repeats 40x apart (SI 1.000 [0.998..1.001]; host 33/9 = 473x [438..500], p<0.001; vm 33/9 = 1x [0.993..1.01]; band 0.8x..1.25x: margins 1.84x (10% of the host's effect at its interval's low end) and 1.25x (absolute); 90% intervals, two one-sided tests at 5%)",
          "+   - **warning:** host fp qos=9 threads=1: repeats range 1M..77M loops/s (77x apart); the machine was busy or contention did not hold", "- QoS subsumed in VM: yes"]
runs.append(r)

r = verdict_run("heterogeneous-host", "host 33/9 = 206x at 1 thread and 356x at 2: pooled as one ratio with no word",
                [wobble(206e6), wobble(712e6, start=1)], [wobble(1e6, start=2), wobble(2e6, start=3)],
                [wobble(10e6, start=1), wobble(20e6, start=2)], [wobble(10e6, start=3), wobble(20e6, start=4)], threads=(1, 2))
r.want = ["+ - fp: QoS subsumed in VM: yes (SI 1.000 [0.998..1.001]; host 33/9 = 271x [207..356], p<0.001; vm 33/9 = 1x [0.993..1.01]; band 0.8x..1.25x: margins 1.7x (10% of the host's effect at its interval's low end) and 1.25x (absolute); 90% intervals, two one-sided tests at 5%); host 33/9 differs by thread count beyond the 95% intervals: 206x [203..209] at 1 thread, 357x [351..362] at 2 threads"]
runs.append(r)

# --- Findings --------------------------------------------------------------

r = Run("stragglers", "mmul: six threads with two 55% late, five threads with three 22% late (the old finding said one thread in both)",
        targets=("host",), matrix=[{"workload": "mmul", "qos": [33], "threads": [5, 6], "loops": 200000}])
for rep in range(1, 7):
    j = 0.005 * (rep % 3)
    r.cell("host", "mmul", 33, 6, rep, [2.0 + j, 2.0, 2.01, 2.0 + j, 3.1 + j, 3.1], 200000, unit="mmul", loops=200000)
    r.cell("host", "mmul", 33, 5, rep, [2.5, 2.5 + j, 3.06, 3.06 + j, 3.06], 200000, unit="mmul", loops=200000)
r.want = ["+ - host mmul qos=33 threads=5: in 6 of 6 repeats three threads finished 0.56 s (22%) after the other two",
          "+ - host mmul qos=33 threads=6: in 6 of 6 repeats two threads finished 1.10 s (55%) after the other four",
          "- one thread finished"]
runs.append(r)

r = Run("procs-batches", "30 processes in batches of 10 (the old findings also called the last batch one straggler thread), and 10 in batches of 4 with one process ending early by itself (which hid the batches behind a 149% straggler)",
        targets=("host",), matrix=[{"workload": "procs", "qos": [9, 33], "threads": [10, 30], "loops": 100000000}])
for rep in range(1, 7):
    j = 0.01 * (rep % 3)
    ends = [2.0 + 0.01 * i + j for i in range(10)] + [4.0 + 0.01 * i + j for i in range(10)] + [6.0 + 0.01 * i + j for i in range(10)]
    r.cell("host", "procs", 9, 30, rep, ends, 100000000, starts=[0.001 * i for i in range(30)], loops=100000000)
    ends = [0.8 + j] + [2.0 + 0.01 * i + j for i in range(4)] + [4.0 + 0.01 * i + j for i in range(4)] + [6.0 + j]
    r.cell("host", "procs", 33, 10, rep, ends, 100000000, starts=[0.001 * i for i in range(10)], loops=100000000)
r.want = ["+ - host procs qos=9 threads=30: completions come in batches of 10: steps at 2.1, 4.1, 6.1 s (every step but the last has 10; 6 of 6 repeats in batches of 10)",
          "+ - host procs qos=33 threads=10: completions come in batches of 4: steps at 2.0, 4.0, 6.0 s (every step but the last has 4; 6 of 6 repeats in batches of 4); in 6 of them one process ended outside the steps (at 0.80..0.82 s), left out",
          "- finished", "- straggler"]
runs.append(r)

# A 16-CPU host: 20 processes, 12 ending first and 8 after; and 16 mmul
# threads with one late in every repeat.
r = Run("sixteen-cpus", "a 16-CPU host: 20 processes whose first 12 end 0.27-0.42 s and last 8 0.39-0.52 s over the repeats (batches of 12, which the old findings also called a 38% straggler); 16 mmul threads with one late thread in 6 of 6 repeats",
        targets=("host",), cpus=16, matrix=[{"workload": "procs", "qos": [33], "threads": [20], "loops": 10000000},
                                             {"workload": "mmul", "qos": [33], "threads": [16], "loops": 200000}])
for rep in range(1, 7):
    base = 0.27 + 0.024 * (rep - 1)  # the repeats drift: first batch 0.27..0.42 s overall
    ends = [base + 0.002 * i for i in range(12)] + [base + 0.12 + 0.003 * i for i in range(8)]
    r.cell("host", "procs", 33, 20, rep, ends, 10000000, starts=[0.0005 * i for i in range(20)], loops=10000000)
    ends = [1.0 + 0.004 * i for i in range(15)] + [1.45 + 0.01 * rep]
    r.cell("host", "mmul", 33, 16, rep, ends, 200000, unit="mmul", loops=200000)
r.want = ["+ - host procs qos=33 threads=20: completions come in batches of 12: steps at 0.3, 0.4 s (every step but the last has 12; 6 of 6 repeats in batches of 12)",
          "+ - host mmul qos=33 threads=16: in 6 of 6 repeats one thread finished 0.46 s (44%) after the other 15",
          "- threads=20: in "]
runs.append(r)

# A --quick batches run on a 2-CPU machine: 10 processes of little work,
# one repeat of six ending in two steps 0.1 s apart, within the 0.15 s
# the processes took to start.
r = Run("startup-noise", "a --quick batches run on 2 CPUs: one repeat of six in 'batches of 9' with steps at 0.0 and 0.1 s, at the scale of process start-up",
        targets=("host",), quick=True, matrix=[{"workload": "procs", "qos": [9], "threads": [10], "loops": 1000000}])
for rep in range(1, 7):
    starts = [0.016 * i for i in range(10)]
    if rep == 3:
        # Nine ending close together started by then (a process never ends
        # before it starts: a record that does is damage); the tenth starts
        # last, so start-up still spreads over 0.144 s, more than the step.
        starts = [0.004 * i for i in range(9)] + [0.144]
        ends = [0.04 + 0.004 * i for i in range(9)] + [0.16]
    else:
        ends = [0.04 + 0.013 * i for i in range(10)]
    r.cell("host", "procs", 9, 10, rep, ends, 1000000, starts=starts, loops=1000000)
r.want = ["- batches of", "- finished"]
runs.append(r)

# Scaling: total rates 1e8, 2e8, 2.12e8, 2.18e8 at 1-4 threads.
r = Run("scaling-plateau", "fp at 1-4 threads whose gains stop after 2 (+1.2e7 and +0.6e7 past it): the old finding gave one slope over the plateau",
        targets=("host",), matrix=[{"workload": "fp", "qos": [33], "threads": [1, 2, 3, 4], "loops": 100000000}])
for t, total in ((1, 1.0e8), (2, 2.0e8), (3, 2.12e8), (4, 2.18e8)):
    for rep in range(1, 7):
        secs = 1e8 * t / (total * WOBBLE[rep % len(WOBBLE)])
        r.cell("host", "fp", 33, t, rep, [secs] * t, 100000000, loops=100000000)
r.want = ["+ - host fp qos=33: adding threads stopped paying at 2 threads (2e+08 loops/s, within 10% of the best, 2.18e+08 loops/s at 4); up to 2 threads each added thread brought 1e+08 loops/s [9.75e+07..1.03e+08] (Theil-Sen); past 2, the steps to 3, 4 threads changed it by +1.2e+07, +6e+06 loops/s",
          "- each added thread brought 2.8"]
runs.append(r)

# Core-type share: a 2E+2P host whose QoS 9 workers ran on the E cores and
# QoS 33 workers on the P cores only.
r = Run("core-share", "fp on a 2E+2P host: background workers on the E cores, user-interactive on the P cores only (0% on E, which got no line)",
        targets=("host",), cpus=4, matrix=[{"workload": "fp", "qos": [9, 33], "threads": [2], "loops": 5000000}])
types = ["E", "E", "P", "P"]
for rep in (1, 2):
    for qos, secs, cores in ((9, 2.0, (0, 1)), (33, 0.5, (2, 3))):
        key = f"host fp qos={qos} threads=2 loops=5000000"
        r.cell("host", "fp", qos, 2, rep, [secs, secs], 5000000, loops=5000000)
        for i in range(int(secs * 10) + 1):
            s = {"schema_version": "1.0", "cell": key, "repeat": rep, "target": "host", "view": "host", "sampler": "proc",
                 "t_ns": i * 100_000_000, "interval_ns": 0 if i == 0 else 100_000_000,
                 "cpus": [{"id": c, "type": types[c]} for c in range(4)], "notes": [NOTE]}
            if i > 0:
                s["threads"] = [{"tid": 5000 + w, "role": f"worker {w}", "cpu": cores[w], "busy": 0.98} for w in range(2)]
            r.telemetry.append(s)
r.want = ["+ - host fp qos=9 threads=2: the worker most on E cores spent 100% of its busy time there (median over 2 repeats; 100%..100%; telemetry: a share of time, not of work)",
          "+ - host fp qos=33 threads=2: the worker most on E cores spent 0% of its busy time there (median over 2 repeats; 0%..0%; telemetry: a share of time, not of work)"]
runs.append(r)

for r in runs:
    r.write()
