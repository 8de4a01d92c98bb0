/* sia_tables_int.h - the per-application tables of the Sia policies
 * (sia_tables.c): throughput by GPU type, placement and batch size;
 * training progress and gradient statistics by batch size and epoch,
 * read at run time (never shipped).  Errors are values with a message
 * naming the file and the line. */
#ifndef SM_SIM_SIA_TABLES_INT_H
#define SM_SIM_SIA_TABLES_INT_H

#include <stddef.h>

#include "schedmate/sm_base.h"

#define SM__SIA_MAX_TYPES 8    /* GPU types in one cluster */
#define SM__SIA_MAX_CONFIGS 48 /* allocation configurations per type */

/* One measured point: step and synchronisation time at a local batch. */
typedef struct sm__sia_pt {
  double bsz;  /* per-GPU (atomic) batch size */
  double step; /* seconds per optimiser step, synchronisation included */
  double sync; /* seconds of it spent synchronising gradients */
} sm__sia_pt;

/* Points of one placement (exact lookups) or of one (nodes, replicas)
 * pair (interpolation), sorted by batch size, duplicates averaged. */
typedef struct sm__sia_grp {
  char id[24];    /* canonical placement ("44": two nodes of 4), or "" */
  int nodes;      /* nodes used */
  int replicas;   /* GPUs used */
  sm__sia_pt *pt; /* points */
  int n;          /* their count */
} sm__sia_grp;

/* One application on one GPU type. */
typedef struct sm__sia_gtab {
  char suffix[24]; /* table suffix ("aws", "rtx", "dgx-ext", ...) */
  sm__sia_grp *pl; /* placement groups */
  int npl;         /* their count */
  sm__sia_grp *nr; /* (nodes, replicas) groups: placement means and
                      scalability rows */
  int nnr;         /* their count */
  double min_lbsz; /* smallest local batch of the placements */
  double max_lbsz; /* largest */
  double xput1;    /* single-GPU throughput used to project other
                      types: largest batch / largest step time among
                      the one-GPU rows (samples/s) */
  int max_nodes;   /* most nodes any row covers */
} sm__sia_gtab;

/* One validation run of an application at one global batch size. */
typedef struct sm__sia_val {
  double bsz;       /* global batch size */
  int n;            /* rows (epochs) */
  double *progress; /* progress at the end of each epoch */
  double *metric;   /* validation metric */
  double *sqr;      /* gradient squared norm during each epoch */
  double *var;      /* gradient variance during each epoch */
} sm__sia_val;

typedef struct sm__sia_app {
  char name[32];       /* directory name: cifar10, bert, ... */
  sm__sia_val *val;    /* validation runs, sorted by batch size */
  int nval;            /* their count */
  int epochs;          /* epochs to train: the shortest run's rows */
  double *epoch_start; /* progress at the start of epoch e, e = 0 ..
                          epochs (the last entry is the goal) */
  double init_bsz;     /* smallest validated batch (scale 1) */
  double max_bsz;      /* largest validated batch */
  double restore_s;    /* checkpoint-restore delay of a reallocation */
  double penalty_s;    /* the scheduler's estimate of that delay */
  double slowdown;     /* real runs are this much slower than tables */
  sm__sia_gtab *g[SM__SIA_MAX_TYPES]; /* per GPU type of the cluster */
} sm__sia_app;

typedef struct sm__sia_tables sm__sia_tables;

/* Opens the table directory dir (one subdirectory per application) for
 * a cluster whose GPU types read the tables with the given suffixes.
 * Applications are read when first asked for. */
int sm__sia_tables_open(const char *dir, const char *const *suffixes,
                        int ntypes, sm__sia_tables **out, sm_err *err);
void sm__sia_tables_free(sm__sia_tables *t);
/* The application called name, read on first use: validation-<bsz>.csv,
 * and placements-<suffix>.csv and scalability-<suffix>.csv for every
 * type.  Errors name the file and the line. */
int sm__sia_app_get(sm__sia_tables *t, const char *name,
                    const sm__sia_app **out, sm_err *err);
/* Applications read so far. */
int sm__sia_tables_count(const sm__sia_tables *t);
const sm__sia_app *sm__sia_tables_app(const sm__sia_tables *t, int i);
const char *sm__sia_tables_dir(const sm__sia_tables *t);

/* The canonical id of a placement (GPUs per node, in node order): the
 * smallest rotation, as digits.  Returns 0, or -1 when a node holds more
 * than 9 GPUs (no table can name it). */
int sm__sia_placement_id(const int *gpn, int n, char *out, size_t outn);
/* True step and sync time of the application on type t with GPUs per
 * node gpn[0..n) at per-GPU batch bsz: the placement's own points when
 * it was measured, else interpolated between (nodes, replicas) points.
 * Returns 0, or -1 when the tables cannot say. */
int sm__sia_true_step(const sm__sia_app *a, int t, const int *gpn, int n,
                      double bsz, double *step, double *sync);
/* Largest per-GPU batch that fits the placement (memory), as measured. */
double sm__sia_max_local_bsz(const sm__sia_app *a, int t, const int *gpn,
                             int n);
/* Largest per-GPU batch measured on any placement of `replicas` GPUs, or
 * 0 when none was. */
double sm__sia_max_bsz_replicas(const sm__sia_app *a, int t, int replicas);
/* Gradient statistics at global batch bsz during epoch e (interpolated
 * between the validated batch sizes). */
void sm__sia_grad(const sm__sia_app *a, double bsz, int epoch, double *sqr,
                  double *var);

#endif /* SM_SIM_SIA_TABLES_INT_H */
