#!/bin/bash
# Issue 32: `symlayout gpu` over a seeded sample of swept survivors (docs/sweep.md, "Checked on the GPU").
# Here (CPU): python bench/sweep_gpu_sample.py docs/hardware/issue32-sample --n 6
#   (24 legal candidates: 6 of each of examples/sweep/{sm80_gemm,attention_sm80,sm90_gemm,attention_sm90}.toml,
#   written by the sweep's --emit toml, the SM80 attention ones at their smallest instance; prove.json is
#   `symlayout prove --json` of them, the gate; both are committed, so nothing needs to be carried)
# On the GPU machine, from the repository root: OUT=<dir> bash docs/hardware/issue32-run.sh   (about 3 minutes at most:
# the SM80 and the SM90 halves are run apart, 85 s each at most, so one that hangs does not lose the other)
export PYTHONPATH=$PWD${EXTRA_PATH:+:$EXTRA_PATH} PYTHONUNBUFFERED=1
S=docs/hardware/issue32-sample; R=/tmp/res32; mkdir -p $R
G="python -m symlayout.cli.gpu --jobs 14 -v --prover $S/prove.json"
(nvidia-smi -L; python -c "import cupy,numpy;print('cupy',cupy.__version__,'numpy',numpy.__version__)") > $R/env.txt 2>&1
step() { local name=$1 lim=$2; shift 2; SECONDS=0; timeout $lim "$@" > $R/$name.out 2> $R/$name.err; echo "$name rc=$? ${SECONDS} s" >> $R/env.txt; tar czf $OUT/results32.tgz -C $R . ; }
step sm80 85 $G $S/configs/sm80_gemm $S/configs/attention_sm80 --out $R/sm80
step sm90 85 $G $S/configs/sm90_gemm $S/configs/attention_sm90 --out $R/sm90
tar czf $OUT/results32.tgz -C $R . ; cat $R/env.txt; for f in $R/*.err; do echo "== $f"; tail -c 1500 $f; done
for f in $R/sm80/configs.md $R/sm90/configs.md; do echo "== $f"; head -c 3000 $f 2>/dev/null; done
