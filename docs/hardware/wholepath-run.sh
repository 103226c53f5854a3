#!/bin/bash
# The GPU run of docs/hardware/wholepath.md (issue 14, hardware confirmation), from the repository root on a machine
# with CuPy, numpy and Nsight Compute: `OUT=<dir> bash docs/hardware/wholepath-run.sh` (results: $OUT/wholepath.tgz).
#  1. `symlayout gpu proofs/sm80_datapath` (every configuration at a few instances: [copy.X] marker/compute runs and
#     the whole data path as one kernel; refutations that may fault last, each in its own process).  SKIP_GPU_RUN=1
#     leaves it out (docs/hardware/run-*.sh has run `symlayout gpu proofs` already)
#  2. the GPU tests of the whole path; marker runs of every [g2s.X]/[s2g.C] alone
#  2b. partial tiles (residue predication) under compute-sanitizer memcheck, every global buffer ending at the
#     problem's last element (--exact): the configurations (first instance each) must show 0 errors; then, last and
#     in its own process, the in_bounds pitfall at the prover's counterexample residue must show the reads past it
#  3. Nsight Compute: ld/st/ldmatrix patterns, ldmatrix .x1/.x2, cp.async (LDGSTS) patterns and the
#     configurations' g2s copies (counters: `python -m symlayout.harness.datapath_run metrics`)
#  4. cp.async bank conflicts by timing against conflict-free twins (clock64, median of 7 launches)
export PYTHONPATH=$PWD; F="proofs/sm80_datapath/*.toml proofs/sm80_datapath/pitfalls/*.toml"; H="python -m symlayout.harness.datapath_run"
R=$(mktemp -d); mkdir -p $R/whole
(nvidia-smi -L; ncu --version | tail -1; python -c "import cupy,numpy;print('cupy',cupy.__version__,'numpy',numpy.__version__)") > $R/env.txt 2>&1
if [ -z "$SKIP_GPU_RUN" ]; then SECONDS=0
  timeout 240 python -m symlayout.cli.gpu proofs/sm80_datapath --out $R/whole -v > $R/whole.txt 2> $R/whole.err; echo "gpu sm80_datapath rc=$? ${SECONDS} s" >> $R/env.txt; fi
SECONDS=0
timeout 120 python -m pytest -q -p no:cacheprovider -o addopts="" tests/test_wholepath.py > $R/pytest.txt 2>&1; echo "pytest wholepath rc=$? ${SECONDS} s" >> $R/env.txt
W="python -m symlayout.harness.wholepath --exact"; SAN="compute-sanitizer --tool memcheck --leak-check no --print-limit 12"
SECONDS=0
timeout 150 $SAN $W --cases partial proofs/sm80_datapath/*.toml proofs/sm80_datapath/pitfalls/fa2_hd64_ld_multiple_of_8.toml > $R/memcheck.txt 2>&1; echo "memcheck partial tiles rc=$? ${SECONDS} s" >> $R/env.txt
SECONDS=0
timeout 60 $SAN $W --cases counterexample proofs/sm80_datapath/pitfalls/fa2_hd64_headdim_not_multiple_of_8.toml > $R/memcheck-pitfall.txt 2>&1; echo "memcheck pitfall rc=$? ${SECONDS} s" >> $R/env.txt
$H markers $F > $R/markers.json 2> $R/markers.err; echo "markers rc=$?" >> $R/env.txt
$H plan $R/plan.json $F 2> $R/plan.err; echo "plan rc=$?" >> $R/env.txt
M=$($H metrics); SECONDS=0
timeout 200 ncu --csv --page raw --metrics "$M" -k 'regex:^(pat_|dp_copy)' $H kernels $R/plan.json > $R/ncu.csv 2> $R/ncu.err; echo "ncu rc=$? ${SECONDS} s" >> $R/env.txt
$H compare $R/plan.json $R/ncu.csv > $R/compare.txt 2>&1; echo "compare rc=$?" >> $R/env.txt
SECONDS=0
timeout 100 $H timing $R/timing.json $F > $R/timing.txt 2> $R/timing.err; echo "timing rc=$? ${SECONDS} s" >> $R/env.txt
tar czf $OUT/wholepath.tgz -C $R .
cat $R/env.txt; tail -3 $R/pytest.txt; tail -c 800 $R/whole.err 2>/dev/null
grep -v "^RESULT" $R/memcheck.txt | grep -E "ERROR SUMMARY|Invalid|: (pass|fail|error)" | cut -c1-300 | head -20
grep -v "^RESULT" $R/memcheck-pitfall.txt | grep -E "ERROR SUMMARY|Invalid|by thread|bytes after|: (pass|fail|error)" | cut -c1-300 | head -20
grep -A40 "whole data path as one kernel" $R/whole/configs.md 2>/dev/null | grep "^|" | cut -c1-400
echo "compare: $(grep -c ' | True | ' $R/compare.txt) agree, $(grep -c ' | False | ' $R/compare.txt) differ"; grep ' | False | ' $R/compare.txt | cut -c1-260 | head -30
grep -E "^ldgsts|dp_copy|g2s" $R/compare.txt | cut -c1-260 | head -30; cat $R/timing.txt | cut -c1-200; tail -3 $R/ncu.err
