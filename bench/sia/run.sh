#!/usr/bin/env bash
# Sia's scheduling round at scale, beside a reference run.
#
#  1. One round with 1,000 active jobs on the 64-GPU heterogeneous cluster
#     (T4 6x4, RTX 2080Ti 3x8, A100 2x8): goodput matrix, allocation
#     problem, placement; the reference run hands CBC every column (no
#     exact reductions).  Target: the solve within 100 ms.
#  2. The same round on the 2,048-GPU scale-out cluster (32 times larger).
#  3. A whole run of the scale-out case (Sia's scale_32x workload, 5,120
#     jobs) on 2,048 GPUs with a short solver time limit, which reports
#     how many rounds stopped at the limit or fell back to the greedy
#     allocation (SIA_BENCH_SCALE=0 skips it; it takes minutes).
#     The run limits CBC by branch-and-bound nodes (SIA_BENCH_NODES, 50;
#     sia.max_nodes), a work limit that does not depend on the machine's
#     load, with the wall clock (SIA_BENCH_LIMIT, 10 s) only as a safety
#     net that it reports if it ever fires: its counts are then the same
#     on a quiet or a loaded machine.  SIA_BENCH_NODES=0
#     SIA_BENCH_LIMIT=0.2 gives the earlier wall-clock reading.
# Sia's tables and workloads come from ../shared (SM_SHARED) at run time;
# without them the synthetic tables of tests/data/sia stand in for 1 and 2.
set -eu
cd "$(dirname "$0")/../.."
make -s all >/dev/null
SHARED=${SM_SHARED:-../shared}
D="$SHARED/traces/sia"
out=build/bench/bench_sia
mkdir -p build/bench
cbc=$(pkg-config --libs cbc 2>/dev/null || true)
cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Isrc bench/sia/bench_sia.c \
  -o "$out" build/libschedmate.a \
  $(pkg-config --libs sqlite3 hiredis yaml-0.1 libcjson tree-sitter zlib) \
  $cbc $(test -f /usr/include/slurm/slurm.h && echo -lslurm) -lm -lpthread
if [ -d "$D/traces/cifar10" ]; then
  T="$D/traces"
  small="6x4:t4,3x8:rtx,2x8:a100"
  large="192x4:t4,96x8:rtx,64x8:a100"
else
  echo "(Sia's tables not staged: synthetic tables of tests/data/sia)"
  T=tests/data/sia/tables
  small="6x4:slow,5x8:fast"
  large="192x4:slow,160x8:fast"
fi
echo "== one round, 1,000 active jobs, 64 GPUs"
"$out" "$T" "$small" 1000 5
echo "== one round, 1,000 active jobs, 2,048 GPUs"
"$out" "$T" "$large" 1000 3
if [ "${SIA_BENCH_SCALE:-1}" != 0 ] &&
   [ -f "$D/workloads/scale/scale_32x/workload-1.csv" ]; then
  echo "== scale-out run: scale_32x/workload-1 (5,120 jobs) on 2,048 GPUs," \
       "time limit ${SIA_BENCH_LIMIT:-10} s, node limit ${SIA_BENCH_NODES:-50}"
  build/schedmate simulate --trace "$D/workloads/scale/scale_32x/workload-1.csv" \
    --cluster "$large" --policy sia --param sia.tables="$T" \
    --param sia.time_limit="${SIA_BENCH_LIMIT:-10}" \
    --param sia.max_nodes="${SIA_BENCH_NODES:-50}" --json |
    jq -r '"  avg JCT \(.avg_jct_s/3600*100|round/100) h, makespan \(.makespan_s/3600*100|round/100) h, \(.jobs) jobs, wall \(.wall_s|round) s",
           "  rounds \(.stats.sia_rounds): optimal \(.stats.sia_solves_optimal), stopped at the time limit \(.stats.sia_solves_time_limit), at the node limit \(.stats.sia_solves_node_limit), greedy fallback \(.stats.sia_solves_fallback); stopped by the wall clock \(.stats.sia_solves_stopped_by_clock); solve avg \(.stats.sia_solve_ms_avg|round) ms, max \(.stats.sia_solve_ms_max|round) ms, nodes avg \(.stats.sia_solve_nodes_avg*10|round/10), max \(.stats.sia_solve_nodes_max), columns max \(.stats.sia_columns_max), active jobs max \(.stats.sia_active_max)"'
fi
