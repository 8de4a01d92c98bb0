#!/usr/bin/env bash
# The main job on the embedded defaults (grows with each component).
set -eu
cd "$(dirname "$0")/.."
build/schedmate --version
