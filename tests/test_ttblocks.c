/* Tests of the per-tensor block analysis: candidate splits of a tensor and
 * their mass ratios on hand-made Hessians, the "finest split above a share"
 * rule, Principle 1's criterion (hessian/blocks.c) on hand-made tensors and
 * on their random permutations (its control), Algorithm 3's split recovered
 * from its partition, the Fig. 6 blocks, the checkpoint Hessian of
 * harness/tt_ckpt.c (file round trip, determinism, against an independent
 * in-memory run; in steps at several checkpoints), and the key-head null
 * direction that makes κ of key heads infinite. */
#include "check.h"
#include "core/core.h"
#include "core/model.h"
#include "harness/data.h"
#include "harness/tt_ckpt.h"
#include "harness/tt_train.h"
#include "hessian/hessian.h"
#include "tinytransformer/tt.h"
#include <stdlib.h>
#include <unistd.h>

static char tmpdir[256];

/* A model with only a tensor table: a query (4×3, 2 heads) then a bias (5). */
static model fake_model(tensor_info *t)
{
    memset(t, 0, 2 * sizeof *t);
    snprintf(t[0].name, sizeof t[0].name, "q");
    t[0].role = ROLE_QUERY, t[0].offset = 0, t[0].rows = 4, t[0].cols = 3, t[0].heads = 2, t[0].layer = 0;
    snprintf(t[1].name, sizeof t[1].name, "b");
    t[1].role = ROLE_BIAS, t[1].offset = 12, t[1].rows = 5, t[1].cols = 1, t[1].heads = 1, t[1].layer = 0;
    model m = {.kind = "fake", .P = 17, .ntensors = 2, .tensors = t};
    return m;
}

static void test_mass_on_block_diagonal(void)
{
    tensor_info ti[2];
    model m = fake_model(ti);
    /* H (17×17): ones on the two head blocks of q (entries 0-5 and 6-11), and
     * large cross terms q–b and b–b that must not enter H_qq's ratios. */
    double H[17 * 17];
    for (int i = 0; i < 17; i++)
        for (int j = 0; j < 17; j++) H[i * 17 + j] = (i < 12 && j < 12) ? (i / 6 == j / 6) : 7.0;
    double *Hqq = tensor_hessian(H, 17, &m, 0);
    CHECK(Hqq[0] == 1 && Hqq[5] == 1 && Hqq[6] == 0 && Hqq[11 * 12 + 11] == 1, "H_qq extracted");
    /* by hand: heads keep all 72 ones; rows (4 blocks of 3) keep 4·9 = 36; columns
     * (3 blocks of 4 entries, 2 per head) keep 3·(2·2 + 2·2) = 24; entries keep the 12 diagonal ones */
    const double want[SPLIT_COUNT] = {[SPLIT_WHOLE] = 1, [SPLIT_HEADS] = 1, [SPLIT_ROWS] = 0.5,
                                      [SPLIT_COLS] = 24.0 / 72, [SPLIT_ENTRIES] = 12.0 / 72};
    split_kind s[SPLIT_CANDIDATES_MAX];
    int n = tensor_splits(&m, 0, s);
    CHECK(n == 5 && s[0] == SPLIT_WHOLE && s[1] == SPLIT_HEADS && s[2] == SPLIT_ROWS && s[3] == SPLIT_COLS &&
              s[4] == SPLIT_ENTRIES, "query candidates: whole, heads, rows, cols, entries (got %d)", n);
    for (int i = 0; i < n; i++) {
        partition *p = tensor_local_partition(&m, 0, s[i]);
        CHECK(p->nblocks == split_nblocks(&ti[0], s[i]), "%s: %d blocks", split_name(s[i]), p->nblocks);
        char what[64];
        snprintf(what, sizeof what, "mass ratio by %s", split_name(s[i]));
        CHECK_CLOSE(mass_ratio(Hqq, 12, p), want[s[i]], 1e-15, what);
        partition_free(p);
    }
    /* the bias: local blocks start at 0 although the tensor starts at 12 */
    n = tensor_splits(&m, 1, s);
    CHECK(n == 2 && s[0] == SPLIT_WHOLE && s[1] == SPLIT_ENTRIES, "vector candidates: whole, entries (got %d)", n);
    partition *p = tensor_local_partition(&m, 1, SPLIT_ENTRIES);
    CHECK(p->nblocks == 5 && p->b[0].start == 0 && p->b[4].start == 4, "local blocks of the bias");
    double *Hbb = tensor_hessian(H, 17, &m, 1);
    CHECK_CLOSE(mass_ratio(Hbb, 5, p), 5.0 / 25, 1e-15, "bias entries keep the diagonal (constant block)");
    partition_free(p);
    free(Hqq);
    free(Hbb);

    CHECK(strcmp(split_meaning(&ti[0], SPLIT_ROWS), "output neuron") == 0, "query rows are output neurons");
    CHECK(strcmp(split_meaning(&ti[0], SPLIT_COLS), "input neuron") == 0, "columns are input neurons");
    ti[0].role = ROLE_EMBED;
    CHECK(strcmp(split_meaning(&ti[0], SPLIT_ROWS), "token") == 0, "embed rows are tokens");
    n = tensor_splits(&m, 0, s);
    CHECK(n == 4 && s[1] == SPLIT_ROWS, "embed: no head split (got %d)", n);
    ti[0].role = ROLE_KEY, ti[0].heads = 4;
    n = tensor_splits(&m, 0, s);
    CHECK(n == 4 && s[1] == SPLIT_ROWS, "as many heads as rows: heads = rows, not listed twice (got %d)", n);
}

static void test_finest_rule(void)
{
    /* whole, heads (4), rows (16), cols (16), entries (256) */
    int nb[5] = {1, 4, 16, 16, 256};
    double mass[5] = {1, 0.97, 0.49, 0.21, 0.1};
    CHECK(finest_above_share(5, nb, mass, 0.9) == 1, "heads: the most blocks above 0.9");
    CHECK(finest_above_share(5, nb, mass, 0.4) == 2, "rows above 0.4");
    CHECK(finest_above_share(5, nb, mass, 0.05) == 4, "entries above 0.05");
    CHECK(finest_above_share(5, nb, mass, 0.98) == 0, "only whole above 0.98");
    double tie[5] = {1, 0.97, 0.91, 0.93, 0.1};
    CHECK(finest_above_share(5, nb, tie, 0.9) == 3, "rows and cols tie at 16 blocks: the larger ratio (cols)");
    double same[5] = {1, 0.97, 0.93, 0.93, 0.1};
    CHECK(finest_above_share(5, nb, same, 0.9) == 2, "exact tie: the earlier candidate");
    double none[2] = {0.5, NAN};
    CHECK(finest_above_share(2, nb, none, 0.9) == -1, "none above the share; NAN never counts");
}

static void test_alg3_splits(void)
{
    tt_config c = tt_defaults();
    model *m = tt_new(&c);
    partition *a3 = partition_alg3(m, 0), *a3v = partition_alg3(m, 1), *cols = partition_uniform(m, SPLIT_COLS);
    int ok = 1, okv = 1, okc = 1;
    for (int t = 0; t < m->ntensors; t++) {
        tensor_role r = m->tensors[t].role;
        int want = r == ROLE_QUERY || r == ROLE_KEY ? SPLIT_HEADS
                   : r == ROLE_EMBED || r == ROLE_OUTPUT || r == ROLE_VALUE || r == ROLE_ATTN_PROJ ||
                           r == ROLE_MLP_FC || r == ROLE_MLP_PROJ
                       ? SPLIT_ROWS
                       : SPLIT_WHOLE;
        ok &= partition_split_of(a3, m, t) == want;
        okv &= partition_split_of(a3v, m, t) == (r == ROLE_VALUE ? SPLIT_WHOLE : want);
        int got = partition_split_of(cols, m, t);
        /* a vector's columns are the whole vector */
        okc &= got == (m->tensors[t].cols == 1 ? SPLIT_WHOLE : SPLIT_COLS);
    }
    CHECK(ok, "Algorithm 3's split recovered for every tensor");
    CHECK(okv, "Algorithm 3 with value whole");
    CHECK(okc, "a by-column partition is recognised");
    partition *odd = partition_new();
    int q = model_find_tensor(m, "h0.attn.query");
    partition_add(odd, m->tensors[q].offset, 100, 1, q, "first 100");
    partition_add(odd, m->tensors[q].offset + 100, 156, 1, q, "rest");
    CHECK(partition_split_of(odd, m, q) == -1, "an uneven split is none of the candidates");
    partition_free(odd);
    partition_free(a3), partition_free(a3v), partition_free(cols);
    model_free(m);
}

/* A query tensor of 16×8 weights with 4 heads (head h = rows 4h..4h+3): a tensor
 * large enough that a random permutation leaves no split holding by chance. */
static model big_query(tensor_info *t)
{
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "q");
    t->role = ROLE_QUERY, t->offset = 0, t->rows = 16, t->cols = 8, t->heads = 4, t->layer = 0;
    model m = {.kind = "fake", .P = 128, .ntensors = 1, .tensors = t};
    return m;
}

/* H_tt (128×128): N(0, 1) entries inside the groups of `outer` consecutive
 * entries (32: heads, 8: rows, 1: the diagonal only; 0: everywhere), N(0, a²)
 * inside the groups of `inner` (a finer grouping; 0: none), zero elsewhere;
 * `diag` added on the diagonal. */
static double *grouped(int outer, int inner, double a, double diag, gsl_rng *r)
{
    double *A = xcalloc(128 * 128, sizeof(double));
    for (int i = 0; i < 128; i++)
        for (int j = i; j < 128; j++) {
            double sd = inner && i / inner == j / inner ? a : outer == 0 || i / outer == j / outer ? 1 : 0;
            if (sd > 0) A[i * 128 + j] = A[j * 128 + i] = rng_gaussian(r, sd);
        }
    for (int i = 0; i < 128; i++) A[i * 128 + i] += diag;
    return A;
}

static int index_of(const split_candidates *c, split_kind s)
{
    for (int i = 0; i < c->n; i++) if (c->split[i] == s) return i;
    return -1;
}

static void test_principle1_criterion(void)
{
    tensor_info ti;
    model m = big_query(&ti);
    gsl_rng *r = rng_new(17);
    split_candidates c;
    /* rows inside heads: 4 rows of 8 in a head of 32 have a chance share of
     * 224/992 of the head's pairs; rows 2.13x the size of the rest of the head
     * give s ≈ 0.57, so e ≈ 0.55 over all of H_tt but ≈ 0.44 inside the heads */
    struct {
        int outer, inner;
        double a, diag;
        split_kind want;
        const char *what;
    } cases[] = {
        {32, 0, 0, 0, SPLIT_HEADS, "dense head blocks: heads"},
        {8, 0, 0, 0, SPLIT_ROWS, "dense row blocks (inside the heads): rows, through heads"},
        {32, 8, 10, 0, SPLIT_ROWS, "strong row blocks inside dense heads: rows"},
        {32, 8, 2.13, 0, SPLIT_HEADS, "rows that hold over H_tt only by what they inherit from the heads: heads"},
        {0, 0, 0, 0, SPLIT_WHOLE, "dense everywhere: whole"},
        {1, 0, 0, 1, SPLIT_ENTRIES, "diagonal: entries"},
        {32, 0, 0, 30, SPLIT_ENTRIES, "head blocks under a dominant diagonal: entries, through heads"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        double *A = grouped(cases[k].outer, cases[k].inner, cases[k].a, cases[k].diag, r);
        split_candidates_of(A, &m, 0, &c);
        double score;
        int pick = principle1_pick(A, &m, 0, &c, 0.5, &score);
        CHECK(c.split[pick] == cases[k].want && score >= 0.5, "%s (got %s, score %.3f)", cases[k].what,
              split_name(c.split[pick]), score);
        if (k == 3) {
            int rows = index_of(&c, SPLIT_ROWS);
            CHECK(c.hold[rows] >= 0.5, "... while the rows' excess over all of H_tt is %.3f", c.hold[rows]);
        }
        /* the control: the same matrix randomly permuted keeps no block split */
        double *Ap = sym_permuted(A, 128, r);
        split_candidates cp;
        split_candidates_of(Ap, &m, 0, &cp);
        int pp = principle1_pick(Ap, &m, 0, &cp, 0.5, NULL);
        CHECK(cp.split[pp] == SPLIT_WHOLE || cp.split[pp] == SPLIT_ENTRIES,
              "%s, permuted: no block split holds (got %s)", cases[k].what, split_name(cp.split[pp]));
        if (cases[k].want == SPLIT_HEADS || cases[k].want == SPLIT_ROWS)
            CHECK(cp.split[pp] != cases[k].want, "%s: the control does not recover it", cases[k].what);
        free(A), free(Ap);
    }
    /* partition_check's columns control can pass: an H_tt block-diagonal by input columns (entries (i, j) and
     * (k, j) of the 16 x 8 query couple, nothing else) gives the split by columns, not Algorithm 3's heads */
    {
        double *A = xcalloc(128 * 128, sizeof(double));
        for (int a = 0; a < 128; a++)
            for (int b = a; b < 128; b++)
                if (a % 8 == b % 8) A[a * 128 + b] = A[b * 128 + a] = rng_gaussian(r, 1);
        split_candidates_of(A, &m, 0, &c);
        double score;
        int pick = principle1_pick(A, &m, 0, &c, 0.5, &score);
        CHECK(c.split[pick] == SPLIT_COLS && score >= 0.5, "dense column blocks: cols (got %s, score %.3f)",
              split_name(c.split[pick]), score);
        free(A);
    }
    /* the scores over all of H_tt: dense head blocks give heads e = 1, whole 1, and the diagonal's excess */
    double *A = grouped(32, 0, 0, 0, r);
    split_candidates_of(A, &m, 0, &c);
    CHECK(c.n == 5 && c.hold[0] == 1 && c.hold[1] == 1 && c.split[1] == SPLIT_HEADS, "whole and heads score 1");
    CHECK_CLOSE(c.hold[4], (c.diag_share - 1.0 / 128) / (1 - 1.0 / 128), 1e-15, "entries score the diagonal excess");
    CHECK_CLOSE(c.mass[1], 1, 1e-15, "the old mass ratio of heads is 1");
    CHECK(principle1_pick(A, &m, 0, &c, 1.0, NULL) == 1, "at level 1 only exact splits hold: heads");
    free(A);
    rng_free(r);
}

static void test_fig6_blocks(void)
{
    tt_config cfg = tt_defaults();
    model *m = tt_new(&cfg);
    static const tensor_role roles[FIG6_NBLOCKS] = {ROLE_QUERY,    ROLE_KEY,      ROLE_VALUE, ROLE_ATTN_PROJ,
                                                    ROLE_MLP_FC,   ROLE_MLP_PROJ, ROLE_EMBED, ROLE_OUTPUT};
    int ok = 1;
    for (int k = 0; k < FIG6_NBLOCKS; k++) {
        int t = fig6_tensor(m, 0, k);
        ok &= m->tensors[t].role == roles[k] && m->tensors[t].cols > 1;
        ok &= FIG6_BLOCKS[k].claimed == (k < 2 ? SPLIT_HEADS : SPLIT_ROWS);
    }
    CHECK(ok, "the eight Fig. 6 blocks: their weight tensors and claimed splits");
    model_free(m);
}

static tt_ckpt_setup tiny_setup(double frac)
{
    tt_ckpt_setup s = tt_ckpt_defaults();
    s.cfg = (tt_config){.V = 4, .C = 8, .heads = 2, .M = 8, .layers = 1, .T = 4, .bias = 1, .seed = 3};
    s.train.steps = 20;
    s.train.batch = 8;
    s.train.lr = 1e-2;
    s.train.fracs[0] = frac;
    s.train.seed = 5;
    s.hess_batch = 6;
    s.panel = 16;
    return s;
}

static void test_checkpoint_hessian(void)
{
    tt_ckpt_setup s = tiny_setup(0.5);
    char *d1 = path_join(tmpdir, "ck1"), *d2 = path_join(tmpdir, "ck2"), *d3 = path_join(tmpdir, "ref");
    tt_ckpt a, b;
    tt_ckpt_hessian(&s, d1, &a);
    tt_ckpt_hessian(&s, d2, &b);
    size_t P = a.m->P;
    CHECK(a.step == 10 && P == tt_param_count(&s.cfg), "checkpoint at step %ld of 20", a.step);
    CHECK(memcmp(a.H, b.H, P * P * sizeof(double)) == 0 && memcmp(a.vhat, b.vhat, P * sizeof(double)) == 0,
          "the same setup gives the same H and v-hat, bit for bit");
    CHECK(a.loss < a.loss0, "loss on the Hessian batch fell from %.4f to %.4f", a.loss0, a.loss);

    /* an independent run: train in memory for the same steps, keep the step-10 files */
    tt_data *d = token_source(&s.data, s.cfg.V, s.cfg.T, s.order, s.successors, s.data_seed);
    model *m = tt_new(&s.cfg);
    tt_train_opts o = s.train;
    o.nfracs = 2, o.fracs[0] = 0.5, o.fracs[1] = 1.0;
    tt_train(m, d, &o, d3);
    char *pw = path_join(d3, "step000010_params.npy"), *pv = path_join(d3, "step000010_vhat.npy");
    int nd;
    size_t sh[4];
    double *w10 = npy_read(pw, &nd, sh), *v10 = npy_read(pv, &nd, sh);
    CHECK(memcmp(w10, a.m->params, P * sizeof(double)) == 0, "checkpoint parameters = the step-10 parameters");
    CHECK(memcmp(v10, a.vhat, P * sizeof(double)) == 0, "checkpoint v-hat = the step-10 v-hat");
    CHECK(memcmp(m->params, a.m->params, P * sizeof(double)) != 0, "the final parameters differ from step 10");
    /* H at those parameters on the same batch by the generic hvp path */
    memcpy(m->params, w10, P * sizeof(double));
    tt_set_batch(m, a.tokens, s.hess_batch);
    hessian_opts ho = hessian_defaults();
    ho.use_hess_cols = 0;
    ho.panel = 7;
    double *H = hessian_full(m, &ho);
    double diff = 0;
    for (size_t i = 0; i < P * P; i++) diff = fmax(diff, fabs(H[i] - a.H[i]));
    CHECK(diff <= 1e-12 * max_abs(P * P, H), "checkpoint H = hvp-path H: max diff %.2e of max %.2e", diff,
          max_abs(P * P, H));
    /* the Hessian batch is drawn from its own seed, the same whatever the training */
    tt_ckpt_setup s2 = s;
    s2.train.steps = 30;
    char *d4 = path_join(tmpdir, "ck4");
    tt_ckpt c;
    tt_ckpt_hessian(&s2, d4, &c);
    CHECK(memcmp(c.tokens, a.tokens, (size_t)s.hess_batch * (s.cfg.T + 1) * sizeof(int)) == 0 && c.step == 15,
          "same Hessian batch for another training length; checkpoint step %ld", c.step);

    s2 = s, s2.hess_batch = 0;
    EXPECT_USER_ERROR(tt_ckpt_check(&s2), "Hessian batch");
    s2 = s, s2.panel = 0;
    EXPECT_USER_ERROR(tt_ckpt_check(&s2), "panel");
    s2 = s, s2.train.fracs[0] = 0;
    EXPECT_USER_ERROR(tt_ckpt_check(&s2), "checkpoint fraction");
    s2 = s, s2.cfg.heads = 3;
    EXPECT_USER_ERROR(tt_ckpt_check(&s2), "divide C");
    s2 = s, s2.train.lr = -1;
    EXPECT_USER_ERROR(tt_ckpt_check(&s2), "learning rate");

    free(H), free(w10), free(v10), free(pw), free(pv);
    free(d1), free(d2), free(d3), free(d4);
    tt_data_free(d);
    model_free(m);
    tt_ckpt_free(&a), tt_ckpt_free(&b), tt_ckpt_free(&c);
}

/* tt_ckpt in steps (block_structure): one training with several checkpoints
 * gives, at each, the H of tt_ckpt_hessian at that checkpoint alone, bit for
 * bit; H before training is the H at initialisation. */
static void test_checkpoint_steps(void)
{
    tt_ckpt_setup s = tiny_setup(0.1);
    s.train.nfracs = 2, s.train.fracs[0] = 0.1, s.train.fracs[1] = 0.5;
    char *d = path_join(tmpdir, "steps"), *d1 = path_join(tmpdir, "one");
    tt_ckpt c, one;
    tt_ckpt_start(&s, &c);
    size_t P = c.m->P;
    tt_ckpt_take_hessian(&s, &c);
    double *H0 = xmalloc(P * P * sizeof(double));
    memcpy(H0, c.H, P * P * sizeof(double));
    CHECK(c.loss == c.loss0, "at initialisation the loss is loss0");
    tt_ckpt_train(&s, d, &c);
    int same = 1;
    for (int k = 0; k < 2; k++) {
        tt_ckpt_load(&s, d, checkpoint_step(s.train.fracs[k], s.train.steps), &c);
        tt_ckpt_take_hessian(&s, &c);
        tt_ckpt_setup s1 = tiny_setup(s.train.fracs[k]);
        tt_ckpt_hessian(&s1, d1, &one);
        same &= c.step == one.step && memcmp(c.H, one.H, P * P * sizeof(double)) == 0 &&
                memcmp(c.vhat, one.vhat, P * sizeof(double)) == 0 && c.loss == one.loss;
        tt_ckpt_free(&one);
    }
    CHECK(same, "steps 2 and 10 of one run = tt_ckpt_hessian at each, bit for bit");
    /* H at initialisation: a fresh model of the same seed on the same batch */
    model *m = tt_new(&s.cfg);
    tt_set_batch(m, c.tokens, s.hess_batch);
    hessian_opts ho = hessian_defaults();
    ho.panel = s.panel;
    double *H = hessian_full(m, &ho);
    CHECK(memcmp(H, H0, P * P * sizeof(double)) == 0, "H before training = H of the initial model");
    tt_ckpt_setup s2 = s;
    s2.train.nfracs = 0;
    EXPECT_USER_ERROR(tt_ckpt_check(&s2), "checkpoint fractions");
    s2 = s, s2.train.fracs[1] = 1.5;
    EXPECT_USER_ERROR(tt_ckpt_check(&s2), "checkpoint fraction");
    free(H), free(H0), free(d), free(d1);
    model_free(m);
    tt_ckpt_free(&c);
}

/* The LayerNorm output x = g ⊙ x̂ + b has the fixed component (1/g)·x = Σ b/g
 * (x̂ sums to 0), so ΔW_k = u (1/g)ᵀ shifts every key by the same vector, which
 * softmax ignores: the loss is flat along it, H δ = 0 outside ln_1.weight (on
 * which δ itself depends). This is why κ of a key head is infinite. */
static void test_key_null_direction(void)
{
    tt_config cfg = {.V = 5, .C = 8, .heads = 2, .M = 8, .layers = 1, .T = 5, .bias = 1, .seed = 2};
    model *m = tt_new(&cfg);
    gsl_rng *r = rng_new(11);
    for (size_t i = 0; i < m->P; i++) m->params[i] += rng_gaussian(r, 0.3);
    int tok[4 * 6];
    for (int i = 0; i < 24; i++) tok[i] = (int)rng_int(r, 5);
    tt_set_batch(m, tok, 4);
    int k = model_find_tensor(m, "h0.attn.key"), g = model_find_tensor(m, "h0.ln_1.weight");
    double *v = xcalloc(m->P, sizeof(double)), *hv = xmalloc(m->P * sizeof(double));
    double u[8] = {0.3, -1, 0.5, 2, 0, 0, 0, 0};   /* head 0 only */
    for (int a = 0; a < 8; a++)
        for (int c = 0; c < 8; c++) v[m->tensors[k].offset + a * 8 + c] = u[a] / m->params[m->tensors[g].offset + c];
    m->hvp(m, v, hv, 1);
    double inside = 0, outside = 0;
    for (size_t i = 0; i < m->P; i++) {
        int in_g = i >= m->tensors[g].offset && i < m->tensors[g].offset + 8;
        if (in_g) inside = fmax(inside, fabs(hv[i]));
        else outside = fmax(outside, fabs(hv[i]));
    }
    /* a generic direction in the key head for scale */
    double *w = xcalloc(m->P, sizeof(double)), *hw = xmalloc(m->P * sizeof(double));
    for (int i = 0; i < 32; i++) w[m->tensors[k].offset + i] = rng_gaussian(r, 1);
    m->hvp(m, w, hw, 1);
    double scale = max_abs(m->P, hw);
    CHECK(outside <= 1e-12 * scale && inside > 1e-6 * scale,
          "H (u (1/g)^T) = 0 outside ln_1.weight: %.2e (generic %.2e; inside ln_1.weight %.2e)", outside, scale, inside);
    free(v), free(hv), free(w), free(hw);
    rng_free(r);
    model_free(m);
}

int main(void)
{
    core_quiet = 1;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_ttblocks.%d", (int)getpid());
    ensure_dir(tmpdir);
    test_mass_on_block_diagonal();
    test_finest_rule();
    test_alg3_splits();
    test_principle1_criterion();
    test_fig6_blocks();
    test_checkpoint_hessian();
    test_checkpoint_steps();
    test_key_null_direction();
    if (remove_tree(tmpdir) != 0) printf("# could not remove %s\n", tmpdir);
    return check_summary();
}
