#!/bin/bash
# The GPU run of docs/hardware/configs-2026-12-01.md: every proofs/ configuration through the harness (after the
# issue-13 split of harness/config_run; the whole data path of proofs/sm80_datapath as one kernel runs in it), the GPU
# tests, and the data-path bank-conflict counters and cp.async timing (wholepath-run.sh).
# Here (CPU, with z3): mkdir -p gpu_in && symlayout prove --json proofs > gpu_in/prove.json
# On the GPU machine: OUT=<dir> bash docs/hardware/run-2026-12-01.sh
export PYTHONPATH=$PWD; R=/tmp/res; mkdir -p $R/dp
(nvidia-smi -L; python -c "import cupy,numpy,sympy;print('cupy',cupy.__version__,'numpy',numpy.__version__)"; python -c "import z3" 2>&1 | tail -1) > $R/env.txt 2>&1
SECONDS=0
python -m symlayout gpu proofs --prover gpu_in/prove.json --out $R/cfg --json > $R/cfg.json 2> $R/cfg.err; echo "gpu proofs rc=$? ${SECONDS} s" >> $R/env.txt
SECONDS=0
python -m pytest -q -p no:cacheprovider -o addopts="" tests/test_harness_configs.py tests/test_harness_atoms.py tests/test_harness_sm90.py tests/test_wholepath.py > $R/pytest.txt 2>&1; echo "pytest rc=$? ${SECONDS} s" >> $R/env.txt
SKIP_GPU_RUN=1 OUT=$R/dp timeout 420 bash docs/hardware/wholepath-run.sh > $R/dp.txt 2>&1; echo "wholepath rc=$?" >> $R/env.txt
tar czf $OUT/results.tgz -C $R . ; cat $R/env.txt; tail -3 $R/pytest.txt; tail -c 2500 $R/cfg.err; tail -c 2500 $R/dp.txt
