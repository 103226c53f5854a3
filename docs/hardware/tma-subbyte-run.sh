#!/bin/bash
# The lead's GPU check of the packed tensor-map types on sm_90 (task tma4; not run by its author):
#   bash docs/hardware/tma-subbyte-run.sh        (on the H100/H200 device machine, from the repository root)
# Prints, per type, whether cuTensorMapEncodeTiled accepts it on this device, whether the load completes with the
# mbarrier expecting the smem / the packed byte count, and the bytes that differ from symlayout's model.
set -e
d=$(mktemp -d)
nvcc -std=c++17 -arch=sm_90a docs/hardware/tma-subbyte-sm90.cu -o "$d/tma-subbyte"
"$d/tma-subbyte" smem
"$d/tma-subbyte" gmem
