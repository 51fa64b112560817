/* The exact null directions of a diagonal Hessian block of the tiny
 * Transformer, from the model's invariances (tt.h, tt_null_directions). Each is
 * a direction δ of the block's parameters along which the loss of every batch
 * is constant to second order inside the block (H_bb δ = 0 and G_bb δ = 0):
 *
 *  - key rows (any layer): δW_k[row r] = 1/g, g the gain of the LayerNorm the
 *    keys read. That LayerNorm's output is x = g ⊙ x̂ + b with Σ_c x̂_c = 0, so
 *    (1/g)·x = Σ_c b_c/g_c is the same for every token: the key of every token
 *    moves by the same vector, which the softmax over keys ignores;
 *  - query rows of layer 0: δW_q[row r] = w with w·x_i = 0 for the LayerNorm
 *    output x_i of every token at positions 1..T−1. In layer 0 that output
 *    depends only on (token, position), and the centred embeddings
 *    wte[v] + wpe[t] of V tokens at T−1 positions span at most V + T − 2
 *    dimensions, so x_i spans at most V + T − 1 and such w exist when
 *    V + T − 1 < C (the paper's model: 8 + 8 − 1 = 15 < 16, one w). The
 *    scores of those positions do not move; position 0 attends only to itself,
 *    whose softmax is 1 whatever its score;
 *  - rows reading a LayerNorm output (query, key, value, mlp.fc_1) of a model
 *    without biases: δW[row r] = 1/g, since then (1/g)·x = 0 for every token
 *    (with biases it is Σ b_c/g_c ≠ 0: a bias shift, not a null direction);
 *  - token and position embedding rows, attn.proj's and mlp.proj's biases:
 *    δ = 1 (every channel), a uniform shift of the residual stream, which every
 *    LayerNorm reading it (ln_1, ln_2, ln_f) removes by centring (not token
 *    rows of a tied model, whose output head reads them too);
 *  - the key bias: its block of H is zero (it adds q_i·b_k to every score of
 *    row i), so every direction is null.
 * The list is what we derived, not a proof that nothing else is null: callers
 * should look for further null eigenvalues numerically.
 */
#include "tt_kernels.h"
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Orthonormal basis of {w ∈ R^C : X w = 0} for X (R×C) into out (rows of C);
 * returns its dimension. Rank tolerance max(R, C)·ε·σmax (numpy's matrix_rank). */
static int null_space_rows(int R, int C, const double *X, double *out)
{
    if (R == 0) {
        memset(out, 0, (size_t)C * C * sizeof(double));
        for (int c = 0; c < C; c++) out[(size_t)c * C + c] = 1;
        return C;
    }
    int ns = R < C ? R : C;
    double *A = xmalloc((size_t)R * C * sizeof(double)), *s = xmalloc((size_t)ns * sizeof(double));
    double *U = xmalloc((size_t)R * R * sizeof(double)), *VT = xmalloc((size_t)C * C * sizeof(double));
    memcpy(A, X, (size_t)R * C * sizeof(double));
    int info = LAPACKE_dgesdd(LAPACK_ROW_MAJOR, 'A', R, C, A, C, s, U, R, VT, C);
    if (info != 0) DIE("LAPACKE_dgesdd failed (info %d)", info);
    double tol = (R > C ? R : C) * 2.220446049250313e-16 * s[0];
    int rank = 0;
    while (rank < ns && s[rank] > tol) rank++;
    memcpy(out, VT + (size_t)rank * C, (size_t)(C - rank) * C * sizeof(double));
    free(A), free(s), free(U), free(VT);
    return C - rank;
}

/* The LayerNorm outputs of layer 0's ln_1 for every token at positions 1..T−1,
 * into X ((V·(T−1))×C); returns the row count. */
static int ln1_outputs_after_first(const model *m, double *X)
{
    const tt_config *c = tt_config_of(m);
    int C = c->C, R = c->V * (c->T - 1);
    if (R == 0) return 0;
    const double *wte = m->params + m->tensors[model_find_tensor(m, "wte")].offset;
    const double *wpe = m->params + m->tensors[model_find_tensor(m, "wpe")].offset;
    int tg = model_find_tensor(m, "h0.ln_1.weight"), tb = model_find_tensor(m, "h0.ln_1.bias");
    const double *g = m->params + m->tensors[tg].offset, *b = tb >= 0 ? m->params + m->tensors[tb].offset : NULL;
    double *h = xmalloc((size_t)R * C * sizeof(double)), *xh = xmalloc((size_t)R * C * sizeof(double));
    double *rstd = xmalloc((size_t)R * sizeof(double));
    for (int v = 0; v < c->V; v++)
        for (int t = 1; t < c->T; t++)
            for (int k = 0; k < C; k++)
                h[((size_t)v * (c->T - 1) + t - 1) * C + k] = wte[(size_t)v * C + k] + wpe[(size_t)t * C + k];
    tt_layernorm_forward(X, xh, rstd, h, g, b, R, C);
    free(h), free(xh), free(rstd);
    return R;
}

/* Appends, for each row of the block, the direction with `w` (length cols) in
 * that row and zeros elsewhere; returns the new count. */
static int add_per_row(double *out, int k, size_t n, int rows, int cols, const double *w)
{
    for (int r = 0; r < rows; r++, k++) {
        double *v = out + (size_t)k * n;
        memset(v, 0, n * sizeof(double));
        memcpy(v + (size_t)r * cols, w, (size_t)cols * sizeof(double));
    }
    return k;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

int tt_null_directions(const model *m, const block *b, double *out)
{
    const tt_config *c = tt_config_of(m);
    const tensor_info *ti = &m->tensors[b->tensor];
    size_t n = b->n;
    int cols = ti->cols;
    /* whole rows only: contiguous, from a row start, a whole number of rows */
    if (b->stride != 1 || (b->start - ti->offset) % cols != 0 || n % cols != 0) return 0;
    int rows = (int)(n / cols), k = 0;
    char name[64];
    if (ti->role == ROLE_BIAS && ends_with(ti->name, "attn.key.bias")) {
        memset(out, 0, n * n * sizeof(double));
        for (size_t i = 0; i < n; i++) out[i * n + i] = 1;
        return (int)n;
    }
    if (ti->role == ROLE_BIAS && (ends_with(ti->name, "attn.proj.bias") || ends_with(ti->name, "mlp.proj.bias"))) {
        if (n != tensor_size(ti)) return 0; /* the shift needs every channel */
        for (size_t i = 0; i < n; i++) out[i] = 1;
        return 1;
    }
    /* tied: the head reads wte too, and lm_head·(x̂ shift) is no invariance */
    if ((ti->role == ROLE_EMBED && !c->tied) || ti->role == ROLE_POS) {
        double *one = xmalloc((size_t)cols * sizeof(double));
        for (int i = 0; i < cols; i++) one[i] = 1;
        k = add_per_row(out, k, n, rows, cols, one);
        free(one);
        return k;
    }
    int reads_ln = ti->role == ROLE_QUERY || ti->role == ROLE_KEY || ti->role == ROLE_VALUE || ti->role == ROLE_MLP_FC;
    if (!reads_ln) return 0;
    snprintf(name, sizeof name, "h%d.%s", ti->layer, ti->role == ROLE_MLP_FC ? "ln_2.weight" : "ln_1.weight");
    const double *g = m->params + m->tensors[model_find_tensor(m, name)].offset;
    double *inv = xmalloc((size_t)cols * sizeof(double));
    for (int i = 0; i < cols; i++) inv[i] = g[i] != 0 ? 1 / g[i] : 0;
    if (ti->role == ROLE_KEY || !c->bias) k = add_per_row(out, k, n, rows, cols, inv);
    free(inv);
    if (ti->role == ROLE_QUERY && ti->layer == 0) {
        double *X = xmalloc((size_t)c->V * c->T * cols * sizeof(double)), *W = xmalloc((size_t)cols * cols * sizeof(double));
        int nw = null_space_rows(ln1_outputs_after_first(m, X), cols, X, W);
        for (int j = 0; j < nw; j++) k = add_per_row(out, k, n, rows, cols, W + (size_t)j * cols);
        free(X), free(W);
    }
    return k;
}
