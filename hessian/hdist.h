/* hdist — the Hessian analyses spread over the ranks of core/dist.h (an MPI
 * job under `make MPI=1`, else one rank, where every call is the one-process
 * path).
 *
 * Streamed block analysis: rank r of N streams the panels r, r + N, r + 2N, ...
 * (hstream_run_strided: interleaved panels balance columns of unequal cost)
 * with its own copy of the model; then rank r > 0 packs its stream
 * (hstream_pack) and sends it to rank 0, which merges the packed streams in
 * rank order 1, 2, ..., N-1 into its own. With full panels every result is bitwise what one process computes
 * (stream.h: the stream's sums are chains in row order, whatever the split); with
 * lower panels everything but the row masses (round-off, ~1e-16 relative).
 *
 * Full spectrum (ScaLAPACK, hscal.c): the whole H in a 2D block-cyclic
 * distribution over an nprow × npcol process grid, filled panel by panel
 * (every rank computes distinct columns, pdgemr2d moves them into the grid),
 * its eigenvalues by pdsyevr (or pdsyevd), and H written to one .npy with
 * MPI-IO. Without MPI: hessian_full and LAPACK (dsyevr / dsyevd), the same API.
 */
#ifndef HDIST_H
#define HDIST_H

#include "hessian/stream.h"

/* Run this rank's panels of H's columns into s, then reduce to rank 0: on rank 0
 * s holds every row when this returns; on the other ranks s is spent (free it). */
void hstream_run_dist(hstream *s, model *m, const hessian_opts *o);
/* Only the reduction (each rank fed its own rows already). */
void hstream_reduce(hstream *s);
/* The exact eigenvalues of every diagonal block H_bb of p (covering 0..P−1) by
 * the streamed analysis (hstream_run_dist over the ranks): on rank 0 a
 * malloc'ed array, block b's ascending at off[b] (off: nblocks + 1); NULL on
 * the other ranks. */
double *exact_block_eigs(model *m, const partition *p, const hessian_opts *o, size_t *off);

/* ---- the full H over a process grid (hscal.c) ---- */
typedef enum { EIG_EVR, EIG_EVD } eig_method;
typedef struct {
    int nprow, npcol;   /* the grid: nprow × npcol = ranks, nprow <= npcol, as square as it divides */
    int nb;             /* block-cyclic block size (64) */
    eig_method method;  /* EIG_EVR (default): pdsyevr, eigenvalues only; EIG_EVD: pdsyevd (computes vectors too) */
    int il, iu;         /* 1-based eigenvalue index range for EIG_EVR; 0, 0: all */
} hfull_opts;
hfull_opts hfull_defaults(void);
/* The grid dist_size() ranks make (nprow the largest divisor <= √size). */
void hfull_grid(int size, int *nprow, int *npcol);
/* Bytes each rank holds: its share of H (P²/ranks, rounded up to blocks), one
 * panel, and the eigensolver's work space (estimated). */
double hfull_bytes_per_rank(size_t P, int panel, const hfull_opts *f, int ranks);

/* Eigenvalues of H (ascending) into w (length P; il..iu: iu-il+1 of them) on
 * rank 0 — every rank must call it; returns how many. H's columns come from
 * full panels (hess_cols / hvp), so H is the engine's full (not mirrored) H;
 * npy_path (on rank 0's file system, shared by the ranks) non-NULL: H is
 * written there as a (P, P) .npy first, atomically. */
int hessian_eigs_dist(model *m, const hessian_opts *o, const hfull_opts *f, const char *npy_path, double *w);

#endif
