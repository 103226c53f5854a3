#!/bin/bash
# The GPU check of the CuTe DSL Ampere fp8 GEMM's ldmatrix bank conflicts (issue 30, docs/frontends.md "Tried on
# real kernels"): `OUT=<dir> bash docs/hardware/fp8-ldsm-run.sh` from the repository root on a machine with CuPy,
# numpy and Nsight Compute (sm_89 or newer: the config's MMA is SM89's e4m3 mma.sync).
#  1. symlayout gpu: the configuration's copies (and MMA) move the right bytes; bank_conflicts is expected refuted.
#  2. ncu: one ldmatrix.x4 at the lanes' addresses under the kernel's Sw<2,4,4> (predicted 8 wavefronts: 4 phases,
#     each 2-way) and under Sw<2,4,3> (predicted 4), counted on l1tex__data_pipe_lsu_wavefronts_mem_shared_cmd_read.
export PYTHONPATH=$PWD; H="python -m symlayout.harness.datapath_run"
(nvidia-smi -L; ncu --version; python -c "import cupy,numpy;print('cupy',cupy.__version__,'numpy',numpy.__version__)") > $OUT/env.txt 2>&1
python -m symlayout gpu docs/hardware/fp8-ldsm-sm89.toml --out $OUT > $OUT/gpu.txt 2>&1; echo "gpu rc=$?" >> $OUT/env.txt
python docs/hardware/fp8-ldsm-plan.py $OUT/plan.json > $OUT/plan.txt 2>&1; echo "plan rc=$?" >> $OUT/env.txt
timeout 300 ncu --csv --page raw --metrics "$($H metrics)" -k 'regex:^pat_' $H kernels $OUT/plan.json > $OUT/ncu.csv 2> $OUT/ncu.err; echo "ncu rc=$?" >> $OUT/env.txt
$H compare $OUT/plan.json $OUT/ncu.csv > $OUT/compare.txt 2>&1; echo "compare rc=$?" >> $OUT/env.txt
cat $OUT/env.txt; tail -5 $OUT/gpu.txt; cat $OUT/plan.txt; tail -5 $OUT/ncu.err; cat $OUT/compare.txt
