/* gn_check.h — the checks of a Transformer's Gauss–Newton mode, shared by
 * test_tt and test_llama (header-only, with check.h): G = Jᵀ S J with J =
 * ∂logits/∂θ by central differences (fixture_gn_by_differences); G differs
 * from H; G symmetric PSD where H is indefinite (so PSD tests something); G =
 * H on the output head when there is one (the logits are linear in it, so the
 * dropped terms vanish there); G the same after a gradient in GN mode; H bit
 * for bit with the mode off again. `what` names the model in the messages. */
#ifndef GN_CHECK_H
#define GN_CHECK_H

#include "check.h"
#include "hessian/hessian.h"
#include "tests/fixtures.h"
#include <stdlib.h>

typedef struct {
    void (*set)(model *m, int on);
    int (*get)(const model *m);
    double (*forward)(model *m, double *logits, double *losses);
    size_t N;                 /* predictions of the batch */
    int V;                    /* classes */
    const char *head;         /* the output head's tensor, or NULL (tied) */
} gn_model;

static void check_gauss_newton(model *m, const gn_model *g, const char *what)
{
    size_t P = m->P;
    hessian_opts o = hessian_defaults();
    double *H = hessian_full(m, &o);
    g->set(m, 1);
    CHECK(g->get(m) == 1, "%s: mode on", what);
    double *G = hessian_full(m, &o);
    double *Gfd = fixture_gn_by_differences(m, g->forward, g->N, g->V);
    CHECK(rel_max_diff(P * P, G, Gfd) < 1e-6, "%s: G vs finite-difference J' S J: %.3g", what,
          rel_max_diff(P * P, G, Gfd));
    CHECK(rel_max_diff(P * P, H, Gfd) > 1e-3, "%s: H must differ from G (%.3g)", what, rel_max_diff(P * P, H, Gfd));
    /* symmetric PSD: asymmetry at round-off, λmin ≥ −1e-12 λmax */
    o.symmetric = 0;
    double *Gfull = hessian_full(m, &o);
    o.symmetric = 1;
    CHECK(hessian_asymmetry(P, Gfull) < 1e-12, "%s: G asymmetry %.3g", what, hessian_asymmetry(P, Gfull));
    spectrum sg = sym_spectrum((int)P, Gfull), sh = sym_spectrum((int)P, H);
    CHECK(sg.lmin >= -1e-12 * sg.lmax, "%s: G PSD, lambda %.3g .. %.3g", what, sg.lmin, sg.lmax);
    CHECK(sh.lmin < -1e-6 * sh.lmax, "%s: H indefinite (lambda_min %.3g), so PSD of G tests something", what,
          sh.lmin);
    if (g->head) {
        int t = model_find_tensor(m, g->head);
        block b = {.start = m->tensors[t].offset, .n = tensor_size(&m->tensors[t]), .stride = 1, .tensor = t};
        double *Hb = block_extract(H, P, &b), *Gb = block_extract(G, P, &b);
        CHECK(rel_max_diff(b.n * b.n, Gb, Hb) < 1e-13, "%s: G = H on %s: %.3g", what, g->head,
              rel_max_diff(b.n * b.n, Gb, Hb));
        free(Hb), free(Gb);
    }
    double *grad = xmalloc(P * sizeof(double));
    m->grad(m, grad);
    double *G2 = hessian_full(m, &o);
    CHECK(memcmp(G2, G, P * P * sizeof(double)) == 0, "%s: G again after a gradient", what);
    g->set(m, 0);
    double *H2 = hessian_full(m, &o);
    CHECK(memcmp(H2, H, P * P * sizeof(double)) == 0, "%s: H bitwise unchanged with the mode off", what);
    free(H), free(G), free(Gfd), free(Gfull), free(grad), free(G2), free(H2);
}

#endif
