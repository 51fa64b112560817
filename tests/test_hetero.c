/* Tests of the extensions' measurements (harness/groups.c, experiments/hetero_util.c, vspread_util.c): groups and
 * random groups; block spectra on blocks with prescribed eigenvalues; the
 * spread of h_b and its split by type; block_heterogeneity, its random
 * baseline and control on made Hessians (heterogeneous by block, by coordinate
 * only, homogeneous), with the claims' rules deciding; the spread of v̂ on
 * gradients built to be row-constant, rank-one and random through AdamW; the
 * additive fit; Adam-mini's lr ratio. */
#include "check.h"
#include "core/core.h"
#include "core/model.h"
#include "experiments/hetero_util.h"
#include "experiments/vspread_util.h"
#include "harness/groups.h"
#include "optim/optim.h"
#include "quad/quad.h"
#include "verdict/verdict.h"
#include <stdlib.h>

/* ---- groups ------------------------------------------------------------------------------------- */

/* rows and columns of a 3×4 matrix */
static partition *rows_of(int rows, int cols)
{
    partition *p = partition_new();
    for (int r = 0; r < rows; r++) partition_add(p, (size_t)r * cols, (size_t)cols, 1, 0, "row");
    return p;
}

static partition *cols_of(int rows, int cols)
{
    partition *p = partition_new();
    for (int c = 0; c < cols; c++) partition_add(p, (size_t)c, (size_t)rows, (size_t)cols, 0, "col");
    return p;
}

static void test_groups(void)
{
    partition *pc = cols_of(3, 4);
    index_groups *g = groups_of_partition(pc);
    CHECK(g->ngroups == 4 && group_size(g, 2) == 3, "%d groups", g->ngroups);
    CHECK(g->idx[g->off[2]] == 2 && g->idx[g->off[2] + 1] == 6 && g->idx[g->off[2] + 2] == 10,
          "column 2 is 2, 6, 10 (got %zu %zu %zu)", g->idx[6], g->idx[7], g->idx[8]);
    gsl_rng *rng = rng_new(5);
    index_groups *s = groups_shuffled(g, rng);
    int seen[12] = {0}, moved = 0;
    for (int k = 0; k < 4; k++) CHECK(group_size(s, k) == 3, "shuffled group %d keeps its size", k);
    for (size_t i = 0; i < 12; i++) seen[s->idx[i]]++, moved += s->idx[i] != g->idx[i];
    int once = 1;
    for (int i = 0; i < 12; i++) once &= seen[i] == 1;
    CHECK(once, "a shuffle is a permutation of the members");
    CHECK(moved > 0, "a shuffle moves members");
    groups_free(s);
    groups_free(g);
    partition_free(pc);
    rng_free(rng);

    double H[16];
    for (int i = 0; i < 16; i++) H[i] = 10 * (i / 4) + i % 4;
    size_t idx[2] = {3, 1};
    double *A = index_submatrix(H, 4, idx, 2);
    CHECK(A[0] == 33 && A[1] == 31 && A[2] == 13 && A[3] == 11, "H[{3,1},{3,1}] = %g %g %g %g", A[0], A[1], A[2], A[3]);
    free(A);
}

/* ---- block spectra ---------------------------------------------------------------------------- */

/* H (P×P) with the diagonal block of group k = Q diag(lam[k]) Qᵀ (Q Haar) at g's indices, 0 elsewhere. */
static double *made_hessian(size_t P, const index_groups *g, double *const *lam, gsl_rng *rng)
{
    double *H = xcalloc(P * P, sizeof(double));
    for (int k = 0; k < g->ngroups; k++) {
        int n = (int)group_size(g, k);
        double *Q = xmalloc((size_t)n * n * sizeof(double)), *B = xmalloc((size_t)n * n * sizeof(double));
        haar_orthogonal(Q, rng, n);
        sym_from_eig(B, Q, lam[k], n);
        const size_t *idx = g->idx + g->off[k];
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) H[idx[a] * P + idx[b]] = B[a * n + b];
        free(Q);
        free(B);
    }
    return H;
}

static void test_block_spectra(void)
{
    /* four blocks, the second strided (every other index of 6..15), the third with no curvature */
    partition *p = partition_new();
    partition_add(p, 0, 3, 1, 0, "a");
    partition_add(p, 6, 5, 2, 0, "b");
    partition_add(p, 3, 2, 1, 0, "zero");
    partition_add(p, 7, 4, 2, 0, "d");
    size_t P = 16;   /* index 5 and 15 in no block */
    index_groups *g = groups_of_partition(p);
    double l0[] = {1, 2, 3}, l1[] = {-7, 0.1, 0.2, 0.3, 0.4}, l2[] = {0, 0}, l3[] = {1e-3, 2e-3, 5e-3, 1e-2};
    double *lam[] = {l0, l1, l2, l3};
    gsl_rng *rng = rng_new(3);
    double *H = made_hessian(P, g, lam, rng);
    H[5 * P + 5] = 1e6;   /* outside every block: must not count */
    double h[4], w[14];
    group_log_absmax(h, w, H, P, g, 1e-12);
    CHECK_CLOSE(h[0], log10(3), 1e-12, "h of {1,2,3}");
    CHECK_CLOSE(h[1], log10(7), 1e-12, "h of a block whose largest |lambda| is negative");
    CHECK(isnan(h[2]), "a block without curvature is left out (got %g)", h[2]);
    CHECK_CLOSE(h[3], -2, 1e-12, "h of {1e-3 .. 1e-2}");
    CHECK_CLOSE(w[3], -7, 1e-12, "the second block's eigenvalues, ascending");
    CHECK_CLOSE(w[13], 1e-2, 1e-12, "the last block's largest eigenvalue");

    /* scale-free: cH shifts every h by log10 c, so the spread does not move */
    spread_stats s1 = spread_of(h, NULL, 4);
    for (size_t i = 0; i < P * P; i++) H[i] *= 1e3;
    double hs[4];
    group_log_absmax(hs, NULL, H, P, g, 1e-12);
    spread_stats s2 = spread_of(hs, NULL, 4);
    CHECK_CLOSE(hs[0], h[0] + 3, 1e-12, "h of 1000 H");
    CHECK_CLOSE(s2.sd, s1.sd, 1e-12, "sd of h is scale-free");
    CHECK(s1.n == 3, "three blocks with curvature (got %d)", s1.n);
    free(H);
    groups_free(g);
    partition_free(p);
    rng_free(rng);
}

static void test_spread_of(void)
{
    double x[] = {0, 1, 2, 3, NAN};
    int type[] = {0, 0, 1, 1, 1};
    spread_stats s = spread_of(x, type, 5);
    CHECK(s.n == 4, "the NaN is left out (n %d)", s.n);
    CHECK_CLOSE(s.mean, 1.5, 1e-15, "mean");
    CHECK_CLOSE(s.sd, sqrt(5.0 / 3), 1e-15, "sd with divisor n - 1");
    CHECK_CLOSE(s.iqr, 1.5, 1e-15, "iqr by numpy's quantiles");
    CHECK_CLOSE(s.eta2, 0.8, 1e-15, "eta2: type means 0.5 and 2.5 explain 4 of 5");
    double y[] = {1, 3, 1, 3};
    int ty[] = {0, 0, 1, 1};
    CHECK_CLOSE(spread_of(y, ty, 4).eta2, 0, 1e-15, "eta2 = 0 when the types have equal means");
    int tz[] = {0, 1, 0, 1};
    CHECK_CLOSE(spread_of(y, tz, 4).eta2, 1, 1e-15, "eta2 = 1 when the types are constant");
    CHECK(isnan(spread_of(y, NULL, 4).eta2), "no types: eta2 NaN");
    double one[] = {2};
    CHECK(isnan(spread_of(one, NULL, 1).sd), "sd of one value is NaN");
}

/* ---- block_heterogeneity and the claims' rules on made Hessians ------------------------------------ */

enum { NB = 40, BS = 8 };

/* A model of NB blocks of BS: kind 0 homogeneous (every block's eigenvalues
 * ~ U(0.5, 1)); kind 1 heterogeneous by block (block k scaled by 10^u_k, u_k ~
 * U(-3, 0)); kind 2 heterogeneous by coordinate only (diagonal H, entry i
 * 10^u_i, u_i ~ U(-3, 0): no block is special). Returns the claim-2
 * statistic log2(S / S_rand) and its control's log2(S_control / S_rand) and
 * claim 1's S and S_rand. */
typedef struct { double e, ce, sd, rand_sd; } made_result;
static made_result made_model(int kind, unsigned long seed)
{
    size_t P = NB * BS;
    gsl_rng *rng = rng_new(seed);
    partition *p = partition_new();
    for (int k = 0; k < NB; k++) partition_add(p, (size_t)k * BS, BS, 1, 0, "b");
    index_groups *g = groups_of_partition(p);
    double *lam[NB], *H;
    for (int k = 0; k < NB; k++) {
        lam[k] = xmalloc(BS * sizeof(double));
        double scale = kind == 1 ? pow(10, rng_uniform_in(rng, -3, 0)) : 1;
        for (int i = 0; i < BS; i++)
            lam[k][i] = kind == 2 ? pow(10, rng_uniform_in(rng, -3, 0)) : scale * rng_uniform_in(rng, 0.5, 1);
    }
    if (kind == 2) {
        H = xcalloc(P * P, sizeof(double));
        for (size_t i = 0; i < P; i++) H[i * P + i] = lam[i / BS][i % BS];
    } else {
        H = made_hessian(P, g, lam, rng);
    }
    double h[NB], hc[NB];
    hetero_stats st = block_heterogeneity(h, NULL, hc, H, P, g, NULL, 20, rng, 1e-12);
    made_result r = {log2(st.real.sd / st.rand_sd), log2(st.control_sd / st.rand_sd), st.real.sd, st.rand_sd};
    for (int k = 0; k < NB; k++) free(lam[k]);
    free(H);
    groups_free(g);
    partition_free(p);
    rng_free(rng);
    return r;
}

static void test_heterogeneity_rules(void)
{
    enum { SEEDS = 5 };
    double beyond[SEEDS], cbeyond[SEEDS], coord[SEEDS], ccoord[SEEDS], d[SEEDS], cd[SEEDS];
    for (int s = 0; s < SEEDS; s++) {
        made_result hom = made_model(0, 100 + s), het = made_model(1, 200 + s), crd = made_model(2, 300 + s);
        beyond[s] = het.e - hom.e;       /* claim 2: heterogeneous by block against homogeneous */
        cbeyond[s] = het.ce - hom.ce;    /* its control */
        coord[s] = crd.e - hom.e;        /* claim 2 on heterogeneity by coordinate only */
        ccoord[s] = crd.ce - hom.ce;
        d[s] = crd.sd - hom.sd;          /* claim 1 on heterogeneity by coordinate only */
        cd[s] = crd.rand_sd - hom.rand_sd;
        CHECK(het.e > 1, "blocks scaled over 3 decades: S at least twice S_rand (log2 %g)", het.e);
    }
    interval ib = t_interval(beyond, SEEDS, 0.95), icb = t_interval(cbeyond, SEEDS, 0.95);
    /* the rule alone passes; with its control it is NO POWER unless the control is a decided FAIL, which a
     * null centred on the threshold (a random partition: 0) rarely is over 5 seeds */
    CHECK(verdict_of(ib, CLAIM_ABOVE, 0, NULL) == VERDICT_PASS, "claim 2 passes on blocks made heterogeneous "
          "(mean %g, control mean %g)", ib.mean, icb.mean);
    CHECK(verdict_of(ib, CLAIM_ABOVE, 0, &icb) == (verdict_of(icb, CLAIM_ABOVE, 0, NULL) == VERDICT_FAIL ?
          VERDICT_PASS : VERDICT_NO_POWER), "with its control: PASS only beside a decided FAIL");
    CHECK(verdict_of(icb, CLAIM_ABOVE, 0, NULL) != VERDICT_PASS, "claim 2's control (a random partition) fails its "
          "rule (interval %g..%g)", icb.lo, icb.hi);
    interval ic = t_interval(coord, SEEDS, 0.95), icc = t_interval(ccoord, SEEDS, 0.95);
    CHECK(verdict_of(ic, CLAIM_ABOVE, 0, &icc) != VERDICT_PASS, "claim 2 does not pass heterogeneity that is in the "
          "coordinates, not the blocks (interval %g..%g)", ic.lo, ic.hi);
    /* claim 1 (raw S) passes there, and its control shows why it cannot be trusted alone */
    interval id = t_interval(d, SEEDS, 0.95), icd = t_interval(cd, SEEDS, 0.95);
    CHECK(verdict_of(id, CLAIM_ABOVE, 0, &icd) == VERDICT_NO_POWER, "claim 1 on heterogeneity by coordinate only: "
          "its random-partition control passes too (%s; S diff %g, control %g)",
          verdict_name(verdict_of(id, CLAIM_ABOVE, 0, &icd)), id.mean, icd.mean);
}

/* ---- the spread of v̂ --------------------------------------------------------------------------- */

enum { R = 12, C = 10 };

/* x = log10(√v̂ + ε) after `steps` AdamW steps on gradients g_ij = e_i (row_const), e_i z_j (rank one) or
 * iid N(0, 1) (random), fresh e, z each step. */
typedef enum { G_ROW_CONST, G_RANK_ONE, G_RANDOM } grad_kind;
static void vhat_of(double *vhat, grad_kind kind, int steps, unsigned long seed)
{
    size_t P = R * C;
    optim_config cfg = optim_defaults(OPTIM_ADAMW);
    optimizer *o = optim_new(OPTIM_ADAMW, &cfg, P, NULL, NULL);
    double *w = xcalloc(P, sizeof(double)), *g = xmalloc(P * sizeof(double)), e[R], z[C];
    gsl_rng *rng = rng_new(seed);
    for (int t = 0; t < steps; t++) {
        for (int i = 0; i < R; i++) e[i] = rng_gaussian(rng, 1);
        for (int j = 0; j < C; j++) z[j] = rng_gaussian(rng, 1);
        for (int i = 0; i < R; i++)
            for (int j = 0; j < C; j++)
                g[i * C + j] = kind == G_ROW_CONST ? e[i] : kind == G_RANK_ONE ? e[i] * z[j] : rng_gaussian(rng, 1);
        optim_step(o, w, g, 1e-3);
    }
    optim_vhat(o, vhat);
    optim_free(o);
    free(w);
    free(g);
    rng_free(rng);
}

static void log_denominator(double *x, const double *vhat, size_t P, double eps)
{
    for (size_t i = 0; i < P; i++) x[i] = log10(sqrt(vhat[i]) + eps);
}

static void test_vhat_spread(void)
{
    size_t P = R * C;
    double vhat[R * C], x[R * C], r[R * C];
    partition *pr = rows_of(R, C), *pc = cols_of(R, C);
    index_groups *gr = groups_of_partition(pr), *gc = groups_of_partition(pc);

    /* row-constant gradients: v̂ is constant along each row, so the spread within rows is exactly 0 */
    vhat_of(vhat, G_ROW_CONST, 3, 1);
    log_denominator(x, vhat, P, 1e-8);
    group_spread rows = group_spread_of(x, gr), cols = group_spread_of(x, gc);
    CHECK(rows.within_sd == 0, "row-constant gradients: within-row sd %g", rows.within_sd);
    CHECK(cols.within_sd > 0.05 && rows.total_sd > 0.05, "... but not within columns (%g) or overall (%g)",
          cols.within_sd, rows.total_sd);
    CHECK(rows.within_df == (size_t)R * (C - 1) && rows.total_df == P - 1, "degrees of freedom %zu, %zu",
          rows.within_df, rows.total_df);
    group_lr_log2_ratio(r, vhat, gr, 1e-8);
    double worst = 0;
    for (size_t i = 0; i < P; i++) worst = fmax(worst, fabs(r[i]));
    CHECK(worst < 1e-12, "row-constant v-hat: Adam-mini's lr per row is Adam's (|log2 ratio| <= %g)", worst);

    /* rank one after one step: x = log10|e_i| + log10|z_j| exactly (ε = 0): additive, and the within-row
     * spread is the sd of the column effect */
    vhat_of(vhat, G_RANK_ONE, 1, 2);
    log_denominator(x, vhat, P, 0);
    CHECK_CLOSE(additive_r2(x, R, C), 1, 1e-12, "rank-one v-hat is additive in log");
    double b[C];
    for (int j = 0; j < C; j++) b[j] = x[j] - x[0];   /* row 0 minus its first entry: the column effects */
    CHECK_CLOSE(group_spread_of(x, gr).within_sd, spread_of(b, NULL, C).sd, 1e-12,
                "within-row sd of a rank-one v-hat = sd of the column effects");

    /* scale-free: v̂ → c v̂ shifts x (ε = 0), the spreads do not move */
    double x2[R * C];
    for (size_t i = 0; i < P; i++) x2[i] = log10(sqrt(1e6 * vhat[i]));
    CHECK_CLOSE(group_spread_of(x2, gc).within_sd, group_spread_of(x, gc).within_sd, 1e-12, "spread of c v-hat");

    /* Adam-mini's ratio on a known group: v = 1 and 4, ε = 0: mean 2.5 */
    double v2[2] = {1, 4}, r2[2];
    partition *p2 = partition_new();
    partition_add(p2, 0, 2, 1, 0, "pair");
    index_groups *g2 = groups_of_partition(p2);
    group_lr_log2_ratio(r2, v2, g2, 0);
    CHECK_CLOSE(r2[0], log2(sqrt(2.5)), 1e-15, "ratio of the small v");
    CHECK_CLOSE(r2[1], log2(sqrt(2.5) / 2), 1e-15, "ratio of the large v");

    double consts[6] = {2, 2, 2, 2, 2, 2};
    CHECK(isnan(additive_r2(consts, 2, 3)), "additive R2 of a constant is NaN");
    groups_free(g2);
    partition_free(p2);
    groups_free(gr);
    groups_free(gc);
    partition_free(pr);
    partition_free(pc);
}

/* The rules of the row claims over 5 made seeds: row-structured v̂ passes, random v̂ and random groups fail. */
static void test_vhat_rules(void)
{
    enum { SEEDS = 5 };
    size_t P = R * C;
    partition *pr = rows_of(R, C), *pc = cols_of(R, C);
    index_groups *gr = groups_of_partition(pr), *gc = groups_of_partition(pc);
    double rows_rand[SEEDS], rows_cols_rand[SEEDS], rows_struct[SEEDS], ctrl[SEEDS];
    for (int s = 0; s < SEEDS; s++) {
        double vhat[R * C], x[R * C];
        gsl_rng *rng = rng_new(40 + s);
        /* random gradients: no row is special */
        vhat_of(vhat, G_RANDOM, 50, 10 + s);
        log_denominator(x, vhat, P, 1e-8);
        group_spread a = group_spread_of(x, gr), c = group_spread_of(x, gc);
        rows_rand[s] = log2(a.within_sd / a.total_sd);
        rows_cols_rand[s] = log2(a.within_sd / c.within_sd);
        /* rank-one gradients whose row factor varies more than the column factor: rows homogeneous */
        vhat_of(vhat, G_RANK_ONE, 50, 20 + s);
        for (int i = 0; i < R; i++)
            for (int j = 0; j < C; j++) vhat[i * C + j] *= pow(10, 2.0 * i / R);
        log_denominator(x, vhat, P, 1e-8);
        a = group_spread_of(x, gr);
        rows_struct[s] = log2(a.within_sd / a.total_sd);
        /* the control: random groups of the row sizes on the same v̂ */
        index_groups *sh = groups_shuffled(gr, rng);
        group_spread rg = group_spread_of(x, sh);
        ctrl[s] = log2(rg.within_sd / rg.total_sd);
        groups_free(sh);
        rng_free(rng);
    }
    interval is = t_interval(rows_struct, SEEDS, 0.95), ic = t_interval(ctrl, SEEDS, 0.95);
    CHECK(verdict_of(is, CLAIM_BELOW, 0, NULL) == VERDICT_PASS, "rows of a row-structured v-hat pass (mean %g, "
          "control %g)", is.mean, ic.mean);
    CHECK(verdict_of(is, CLAIM_BELOW, 0, &ic) == (verdict_of(ic, CLAIM_BELOW, 0, NULL) == VERDICT_FAIL ?
          VERDICT_PASS : VERDICT_NO_POWER), "with its control: PASS only beside a decided FAIL");
    CHECK(verdict_of(ic, CLAIM_BELOW, 0, NULL) != VERDICT_PASS, "random groups on it fail the rule (%g..%g)", ic.lo,
          ic.hi);
    interval ir = t_interval(rows_rand, SEEDS, 0.95), irc = t_interval(rows_cols_rand, SEEDS, 0.95);
    CHECK(verdict_of(ir, CLAIM_BELOW, 0, NULL) != VERDICT_PASS, "rows of a random v-hat fail (%g..%g)", ir.lo, ir.hi);
    CHECK(verdict_of(irc, CLAIM_BELOW, 0, NULL) != VERDICT_PASS, "rows vs columns of a random v-hat fail (%g..%g)",
          irc.lo, irc.hi);
    groups_free(gr);
    groups_free(gc);
    partition_free(pr);
    partition_free(pc);
}

int main(void)
{
    test_groups();
    test_block_spectra();
    test_spread_of();
    test_heterogeneity_rules();
    test_vhat_spread();
    test_vhat_rules();
    return check_summary();
}
