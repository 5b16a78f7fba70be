#!/usr/bin/env bash
# Issue 50's GPU figures in one command on a GPU machine (about 6 minutes on one H100):
#
#   bash benchmarks/gpu_issue50.sh
#
# 1. benchmarks/gpu_nll_throughput.py: the NLL engine on the 135M, 1.5B and 8B shapes, one story
#    per batch against packed batches (16/2,048, 64/8,192, 128/16,384 rows/tokens), tokens/s
#    against the raw forward rate and model FLOPs utilisation against the card's bf16 peak; the
#    float32 and bfloat16 checks of packed batches.
# 2. benchmarks/batched_answers_samples.py: answers (64 prompts, 16 per padded batch) and samples
#    (K = 16) together against one at a time, on the same shapes.
#
# Random weights of real shapes, built on the GPU (no download). Needs python3 with torch (CUDA),
# transformers, numpy, pandas and tqdm; runs from the source tree. Outputs (printed figures and
# JSON) go to $OUT, else benchmarks/out. $PYTHON names another interpreter; $NLL_ARGS and
# $ROLES_ARGS add arguments to the two scripts (a try-out on a CPU: BENCH_DEVICE=cpu
# NLL_ARGS="--shapes toy" ROLES_ARGS="--shapes toy").
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-benchmarks/out}
mkdir -p "$OUT"
export OUT PYTHONPATH=src TQDM_DISABLE=1
PY=${PYTHON:-python3}
{
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
    nproc
    $PY -c "import torch, transformers; print('torch', torch.__version__, 'transformers', \
transformers.__version__, 'cuda', torch.cuda.is_available())"
} 2>&1 | tee "$OUT/gpu_issue50-machine.txt"
# shellcheck disable=SC2086  # the extra arguments are meant to split into words
$PY benchmarks/gpu_nll_throughput.py run ${NLL_ARGS:-} 2>&1 | tee "$OUT/gpu_nll_throughput.txt"
nll=$?
# shellcheck disable=SC2086
$PY benchmarks/batched_answers_samples.py ${ROLES_ARGS:-} 2>&1 | tee "$OUT/batched_answers_samples.txt"
roles=$?
echo "exit status: NLL $nll, answers and samples $roles"
[ "$nll" -eq 0 ] && [ "$roles" -eq 0 ]
