"""One concrete file through the CLI, this checkout beside a baseline checkout, interleaved fresh interpreters.

    python bench/cli_one_file.py BASELINE_DIR [RUNS]      # BASELINE_DIR: e.g. `git archive REV | tar -x -C DIR`
"""
import subprocess, time, statistics, os, sys, resource
def run(root):
    env = dict(os.environ, PYTHONPATH=root)
    t = time.perf_counter(); r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "symlayout", "prove", "proofs/seeds/seed_000_A_x2.toml"], cwd=root, env=env,
                   stdout=subprocess.DEVNULL, check=False)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter() - t, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
roots = {"baseline": sys.argv[1], "this checkout": HERE}
for r in roots.values():
    subprocess.run([sys.executable, "-m", "compileall", "-q", r + "/symlayout"])
res = {k: [] for k in roots}
for i in range(int(sys.argv[2]) if len(sys.argv) > 2 else 15):
    for k, r in roots.items():
        res[k].append(run(r))
for k, v in res.items():
    print(f"{k:18s} wall median {statistics.median(w for w, _ in v)*1000:.0f} ms, CPU median {statistics.median(c for _, c in v)*1000:.0f} ms, min wall {min(w for w,_ in v)*1000:.0f} ms")
