#!/bin/bash
# The GPU run of docs/hardware/issue26-2026-12-07.md (issue 26 items 12-15, the TMA -> wgmma base experiment).
# Here (CPU, with z3):
#   python docs/hardware/issue26-configs.py gpu_in/campaign
#   symlayout prove --json gpu_in/campaign > gpu_in/campaign_prove.json
#   symlayout prove --json proofs > gpu_in/prove.json
# On the GPU machine: OUT=<dir> bash docs/hardware/issue26-run.sh PART   (PART: 1 = e2e, issue-26 cases,
# proofs/; 2 = the campaigns and the GPU tests; 0 = part 1 without proofs/)
export PYTHONPATH=$PWD${EXTRA_PATH:+:$EXTRA_PATH} PYTHONUNBUFFERED=1 PART=$1; R=/tmp/res$1; mkdir -p $R
G="python -m symlayout.cli.gpu --jobs 14 -v"
(nvidia-smi -L; python -c "import cupy,numpy;print('cupy',cupy.__version__,'numpy',numpy.__version__)"; python -c "import z3" 2>&1 | tail -1) > $R/env.txt 2>&1
step() { local name=$1 lim=$2; shift 2; SECONDS=0; timeout $lim "$@" > $R/$name.out 2> $R/$name.err; echo "$name rc=$? ${SECONDS} s" >> $R/env.txt; tar czf $OUT/results$PART.tgz -C $R . ; }
if [ "$1" = 0 ]; then            # the short form when little device time is left
  step e2e 100 python -m symlayout.harness.e2e_sm90 $R/e2e
  step issue26 150 $G gpu_in/campaign/issue26 gpu_in/campaign/sm90_2048 --prover gpu_in/campaign_prove.json --out $R/issue26
elif [ "$1" = 1 ]; then
  step e2e 100 python -m symlayout.harness.e2e_sm90 $R/e2e
  step issue26 150 $G gpu_in/campaign/issue26 gpu_in/campaign/sm90_2048 --prover gpu_in/campaign_prove.json --out $R/issue26
  step proofs 200 $G proofs --prover gpu_in/prove.json --out $R/proofs
else
  step campaign 380 $G gpu_in/campaign/oracle gpu_in/campaign/fuzz gpu_in/campaign/datapath gpu_in/campaign/sm90 --prover gpu_in/campaign_prove.json --out $R/campaign
  step pytest 180 python -m pytest -q -p no:cacheprovider -o addopts="" tests/test_harness_configs.py tests/test_harness_atoms.py tests/test_harness_sm90.py tests/test_wholepath.py
fi
tar czf $OUT/results$1.tgz -C $R . ; cat $R/env.txt; for f in $R/*.err; do echo "== $f"; tail -c 1500 $f; done
