#!/bin/bash
# The GPU run of docs/hardware/datapath.md (issue 14): `OUT=<dir> bash docs/hardware/datapath-run.sh` from the
# repository root on a machine with CuPy, numpy and Nsight Compute (the device tool runs it with its own $OUT).
export PYTHONPATH=$PWD; F="proofs/sm80_datapath/*.toml proofs/sm80_datapath/pitfalls/*.toml"; H="python -m symlayout.harness.datapath_run"
(nvidia-smi -L; ncu --version; python -c "import cupy,numpy;print('cupy',cupy.__version__,'numpy',numpy.__version__)") > $OUT/env.txt 2>&1
ncu --query-metrics > $OUT/metrics_all.txt 2>&1; grep -iE "wavefronts_mem_shared|bank_conflicts_pipe_lsu_mem_shared|ldgsts" $OUT/metrics_all.txt > $OUT/metrics.txt
$H markers $F > $OUT/markers.json 2> $OUT/markers.err; echo "markers rc=$?" >> $OUT/env.txt
$H plan $OUT/plan.json $F 2> $OUT/plan.err; echo "plan rc=$?" >> $OUT/env.txt
M="l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldgsts.sum"; for k in ld st; do grep -qw "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_$k" $OUT/metrics_all.txt && M="$M,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_$k.sum"; done; echo "metrics: $M" >> $OUT/env.txt
timeout 420 ncu --csv --page raw --metrics $M -k 'regex:^(pat_|dp_copy)' $H kernels $OUT/plan.json > $OUT/ncu.csv 2> $OUT/ncu.err; echo "ncu rc=$?" >> $OUT/env.txt
$H compare $OUT/plan.json $OUT/ncu.csv > $OUT/compare.txt 2>&1; echo "compare rc=$?" >> $OUT/env.txt
cat $OUT/env.txt; head -c 1500 $OUT/markers.err; grep -c '"ok": true' $OUT/markers.json; grep -c '"ok": false' $OUT/markers.json; tail -5 $OUT/ncu.err; grep -c True $OUT/compare.txt; grep False $OUT/compare.txt | head -40
