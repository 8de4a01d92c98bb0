#!/usr/bin/env bash
# Installs the Debian bookworm packages SchedMate needs to build, test and
# run its demo, when they are missing.  Safe to run again: it only calls
# apt-get when something is absent.  Needs root (or sudo) on a fresh box.
set -eu
PKGS=(
  gcc make pkg-config jq
  clang libclang-rt-14-dev          # fuzz targets (libFuzzer)
  libsqlite3-dev libhiredis-dev libyaml-dev libcjson-dev
  zlib1g-dev                        # gzip-compressed traces (simulator)
  coinor-libcbc-dev                 # MILP solver of the Sia policy (EPL)
  libtree-sitter-dev                # Python parsing (grammar from npm)
  libmicrohttpd-dev                 # schedmate serve (HTTP, LGPL-2.1+)
  libcurl4-openssl-dev              # optional LLM stage (OpenAI-compatible HTTP)
  libopenblas-dev                   # reference run in bench/index
  redis-server                      # shared history store in the tests
  slurmctld slurmd slurm-client munge libslurm-dev
  slurm-wlm-basic-plugins slurm-wlm-basic-plugins-dev
  python3 strace                    # reliability tests: fake servers, traces
)
# `scripts/deps.sh --test` (make test) adds what only the tests need:
# headless Chromium, which renders the demo's reports; curl, which drives
# schedmate serve; promtool (Debian's prometheus), which checks /metrics.
[ "${1:-}" = --test ] && PKGS+=(chromium curl prometheus)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
    || missing+=("$p")
done
# npm fetches the tree-sitter Python grammar at build time.  A machine may
# carry Node.js from elsewhere (with its own npm); only add Debian's when
# there is no npm at all.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
  "${missing[@]}" >/dev/null
