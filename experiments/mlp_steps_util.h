/* mlp_steps_util — the softmax factor of Collobert's argument (mlp_steps_util.c). */
#ifndef MLP_STEPS_UTIL_H
#define MLP_STEPS_UTIL_H

#include "core/model.h"

/* The paper (App. "More Discussions", after Collobert 2004) puts the factor
 * p(1 − p) in front of the Hessian entries between two hidden neurons and argues
 * that they shrink as it does. For C classes the factor is the softmax Hessian
 * diag(p) − ppᵀ, whose trace is Σ_c p_c(1 − p_c) (2p(1 − p) for C = 2).
 *
 * The softmax probabilities of m's outputs for the n rows of X (n, in) into p
 * (n, classes): for a squared-loss MLP the softmax of its outputs (its Hessian
 * has no such factor). m needs biases; its batch is left at the last row. */
void mlp_softmax_probs(model *m, const double *X, const int *y, int n, double *p);
typedef struct {
    double mean;        /* mean over samples and classes of p_c(1 − p_c): tr(diag p − ppᵀ)/C */
    double true_class;  /* mean over samples of p_y(1 − p_y), y the label (Collobert's binary p) */
} softmax_pq;
softmax_pq softmax_pq_of(const double *p /* (n, classes) */, const int *y, int n, int classes);
/* The least-squares slope of log y on log x over n points; NAN if any value is
 * not > 0 or the x are all equal. */
double loglog_slope(const double *x, const double *y, int n);

#endif
