/* hetero_util — what hetero measures (hetero_util.c): block heterogeneity of a
 * Hessian (paper Sec. 2.1 and App. "Preliminary results in
 * [zhang2024transformers]": "the Hessian of different parameter blocks have
 * dramatically different eigenvalue distributions"): one number per block,
 * h_b = log10 |λ|max(H_bb), the largest curvature its one learning rate must
 * respect, and their spread over the blocks. Scale-free: H → cH shifts every
 * h_b by log10 c. */
#ifndef HETERO_UTIL_H
#define HETERO_UTIL_H

#include "harness/groups.h"

/* H[idx, idx] (n×n, malloc'ed) for any index set, H (P×P) row-major. */
double *index_submatrix(const double *H, size_t P, const size_t *idx, size_t n);
/* The eigenvalues of group k's diagonal block of H, ascending, into w (group_size values). */
void group_eigvals(double *w, const double *H, size_t P, const index_groups *g, int k);
/* h[k] = log10 |λ|max of group k's diagonal block, for every group; NAN for a
 * group with no curvature beyond round-off: ‖H_kk‖_F <= zero_rel · (Σ_k ‖H_kk‖_F²)^½.
 * eig: NULL, or room for every group's eigenvalues (off[ngroups]; group k's ascending at off[k]). */
void group_log_absmax(double *h, double *eig, const double *H, size_t P, const index_groups *g, double zero_rel);
/* The heterogeneity of the blocks g of H, with its random baseline and
 * control: h[k] as group_log_absmax (eig as there), real = spread_of(h, type).
 * The kept blocks (h finite) laid on random permutations of their members
 * (groups_shuffled, types by position): rand_sd and rand_eta2 the means over
 * `reps` draws; one more draw is the control partition: control_sd, and
 * control_h[k] its h at block k's position (NAN where h[k] is). Same sizes,
 * same counts, same H: only which parameters form a block is lost. */
typedef struct {
    spread_stats real;
    int kept, zero;          /* blocks with curvature / without */
    double rand_sd, rand_eta2, control_sd;
} hetero_stats;
hetero_stats block_heterogeneity(double *h, double *eig, double *control_h, const double *H, size_t P,
                                 const index_groups *g, const int *type, int reps, gsl_rng *rng, double zero_rel);

#endif
