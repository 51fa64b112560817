/* mlp_steps — the MLP's Hessian "after one step" and the softmax factor p(1 − p)
 * (paper Fig. 2(a) and App. "More Discussions", after Collobert 2004).
 *
 * The paper restates Collobert's argument: the Hessian entries between two
 * hidden neurons i ≠ j carry the factor p(x)(1 − p(x)), which "will quickly
 * shrink to zero", pushing H to a block-diagonal structure with one block per
 * neuron, which "can happen just after 1 training step". For C classes the
 * factor is the softmax Hessian diag(p) − ppᵀ: the entry between the weights of
 * neurons i and j is mean_n (v_iᵀ A_n v_j) σ'_i σ'_j x xᵀ, v_i the column of W2.
 *
 * Setup (fig2's, on CIFAR's layout): a 1-hidden-layer MLP (8 tanh neurons,
 * biases), Adam lr 1e-4, cosine decay to 0, batch 128 (drawn with replacement),
 * the paper's 7,900 steps ("20 epochs" of CIFAR-100); 3×32×32 images pooled 4×4
 * (quick; P = 2,444 at 100 classes) or 2×2 (paper; P = 7,052), constant
 * features dropped, standardised. Data: the synthetic sets with CIFAR's layout
 * (mlp/mlp.h, synthetic-cifar10/100), or the real CIFAR-10/100 binaries with
 * --data cifar. For each class count (100: the paper's CIFAR-100; 10) two
 * twins train from the same initialisation on the same batches: softmax
 * cross-entropy, and the squared loss ½‖z − onehot(y)‖², whose Hessian has no
 * softmax factor (its output Hessian is the identity) — a control. At
 * initialisation the same weights with ReLU give the other control (σ'' = 0:
 * no term of H's hidden layer escapes the factor).
 *
 * At each checkpoint (default steps 0, 1, 2, 5, 10, 20, 50, ... on a 1-2-5
 * grid, and the last) on a fixed evaluation batch (the first --eval-n test
 * images): the exact H; the softmax probabilities p of the outputs
 * (mlp_steps_util.h: mlp_softmax_probs) and p(1 − p) = the mean over samples and
 * classes of p_c(1 − p_c) (= tr(diag p − ppᵀ)/C; also the true class's
 * p_y(1 − p_y)); for the hidden-neuron blocks inside fc1–fc1 (where Collobert's
 * formula lives) and for the neuron blocks of the whole H: the off-diagonal
 * share s, chance q, excess e = (s − q)/(1 − q) (hessian.h), the off-block mass
 * relative to random blocks 1 − e = ε/ε_rand, the plain mass ratio
 * Σ_b‖H_bb‖²/‖H_SS‖² (diagonal included), e on a random permutation (control).
 *
 * Outputs in --out: steps.csv (set × loss × checkpoint), init.csv (e at step 0
 * for both activations and losses), train.csv, model.csv, stats.csv (the
 * claims' statistics, verdict/claims.c; docs/mlp_steps.md), claims.txt.
 */
#include "core/core.h"
#include "core/model.h"
#include "experiments/mlp_steps_util.h"
#include "harness/data.h"
#include "harness/seeds.h"
#include "hessian/hessian.h"
#include "mlp/mlp.h"
#include "optim/optim.h"
#include "quad/quad.h"
#include "verdict/verdict.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LEVEL 0.5        /* the excess that counts as block-diagonal (fig2's threshold) */
#define RHO_MIN 0.5      /* the Spearman rho that counts as "falls with p(1 - p)" */
#define APPEAR_STEP 10   /* "within the first steps": by this step */
#define PQ_RATIO_MAX 0.5 /* "shrinks": p(1 - p) at least halved by the end of training */
#define FACTOR_MIN 0.1   /* the softmax factor's push: a tenth of random blocks' off-block mass */
#define MAX_SETS 2
#define NLOSS 2
static const mlp_loss LOSSES[NLOSS] = {LOSS_XENT, LOSS_SQUARED};

/* The statistics of H on the model's current batch. */
typedef struct {
    offdiag_stats hidden, whole;   /* hidden-neuron blocks inside fc1–fc1; neuron blocks of all of H */
    double hidden_perm, whole_perm; /* e with the same blocks on a random permutation (calibration) */
    double hidden_cols;            /* e of fc1 split by input neurons (columns): the control, which can pass */
    double block_min;              /* the smallest excess of one hidden neuron's block */
} h_stats;

/* One trained twin (a class count and a loss) and its statistics per checkpoint. */
typedef struct {
    int classes;
    mlp_loss loss;
    size_t P;
    double acc0, acc_end;
    double pq[LIST_MAX], pq_true[LIST_MAX];
    h_stats h[LIST_MAX];
    double offblock[LIST_MAX];      /* 1 − e of the hidden blocks: ε/ε_rand */
    double offblock_mass[LIST_MAX]; /* O − I of the hidden blocks (absolute) */
} twin;

typedef struct {
    /* options */
    const char *scale, *data, *cifar10_dir, *cifar100_dir, *act, *out;
    int pool, width, batch, eval_n, panel;
    long steps, seed, data_seed;
    double lr;
    int_list sets, at_opt;
    /* state */
    int nat;
    long at[LIST_MAX];
    mlp_data d;
    model *m;
    gsl_rng *batch_rng, *perm_rng;
    double *Xb, *Xe, *probs;
    int *yb, *ye;
    twin *cur;
    int next;                        /* the next checkpoint of cur */
    twin twins[MAX_SETS][NLOSS];
    double relu_init[MAX_SETS][NLOSS]; /* hidden e at initialisation of the ReLU twins (control) */
    outfile *steps_csv, *train_csv, *model_csv, *init_csv;
    double hess_seconds;
} run;

/* ---- the Hessian and its block statistics --------------------------------------------------------- */

static h_stats analyse_h(run *r, model *m)
{
    size_t P = m->P;
    hessian_opts o = hessian_defaults();
    o.panel = r->panel;
    o.label = "Hessian";
    double t0 = wall_seconds();
    double *H = hessian_full(m, &o);
    r->hess_seconds += wall_seconds() - t0;
    partition *neurons = partition_alg3(m, 0), *hidden = partition_new();
    partition_add_tensor(hidden, m, 0, SPLIT_ROWS);
    h_stats st;
    st.hidden = offdiag_structure(H, P, hidden);
    st.whole = offdiag_structure(H, P, neurons);
    st.hidden_perm = offdiag_structure_random(H, P, hidden, r->perm_rng).excess;
    st.whole_perm = offdiag_structure_random(H, P, neurons, r->perm_rng).excess;
    partition *cols = partition_new();
    partition_add_tensor(cols, m, 0, SPLIT_COLS);
    st.hidden_cols = offdiag_structure(H, P, cols).excess;
    partition_free(cols);
    double *eb = xmalloc((size_t)hidden->nblocks * sizeof(double));
    offdiag_block_excess(H, P, hidden, eb);
    st.block_min = eb[0];
    for (int b = 1; b < hidden->nblocks; b++) st.block_min = fmin(st.block_min, eb[b]);
    free(eb);
    free(H);
    partition_free(neurons);
    partition_free(hidden);
    return st;
}

static void checkpoint(run *r, long step)
{
    twin *t = r->cur;
    int k = r->next++;
    model *m = r->m;
    mlp_softmax_probs(m, r->Xe, r->ye, r->eval_n, r->probs);
    softmax_pq pq = softmax_pq_of(r->probs, r->ye, r->eval_n, t->classes);
    mlp_set_batch(m, r->Xe, r->ye, r->eval_n);
    double loss = m->loss(m), acc = mlp_accuracy(m);
    if (k == 0) t->acc0 = acc;
    t->acc_end = acc;
    h_stats st = analyse_h(r, m);
    const offdiag_stats *hs = &st.hidden, *ws = &st.whole;
    t->pq[k] = pq.mean;   /* first: pq_rel of the first checkpoint is 1 */
    t->pq_true[k] = pq.true_class;
    t->h[k] = st;
    t->offblock[k] = 1 - hs->excess;
    t->offblock_mass[k] = hs->offdiag - hs->inblock;
    csv_row(r->steps_csv, "%d,%s,%ld,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,%.10g,"
            "%.10g,%.10g,%.10g,%.10g,%.10g,%.10g",
            t->classes, loss_kind_name(t->loss), step, loss, acc, pq.mean, pq.mean / t->pq[0], pq.true_class,
            hs->share, hs->chance, hs->excess, t->offblock[k], st.hidden_perm, offdiag_mass_ratio(hs), st.block_min,
            t->offblock_mass[k], hs->diag + hs->offdiag, ws->share, ws->chance, ws->excess, st.whole_perm,
            offdiag_mass_ratio(ws));
    if (!core_quiet)
        fprintf(stderr, "mlp_steps: %d classes, %s, step %ld: loss %.4f acc %.3f p(1-p) %.4g; hidden excess %.3f "
                        "(permuted %.3f), whole %.3f\n", t->classes, loss_kind_name(t->loss), step, loss, acc,
                pq.mean, hs->excess, st.hidden_perm, ws->excess);
}

/* ---- training ----------------------------------------------------------------------------------- */

/* Before step s: batch images drawn uniformly with replacement. */
static void set_batch(void *ctx, long s)
{
    (void)s;
    run *r = ctx;
    int *idx = xmalloc((size_t)r->batch * sizeof(int));
    for (int i = 0; i < r->batch; i++) idx[i] = (int)rng_int(r->batch_rng, (unsigned long)r->d.train->n);
    dataset_gather(r->d.train, idx, r->batch, r->Xb, r->yb);
    mlp_set_batch(r->m, r->Xb, r->yb, r->batch);
    free(idx);
}

static void after_step(void *ctx, long s, double loss, double lr)
{
    run *r = ctx;
    csv_row(r->train_csv, "%d,%s,%ld,%.6g,%.10g", r->cur->classes, loss_kind_name(r->cur->loss), s, lr, loss);
    if (r->next < r->nat && r->at[r->next] == s + 1) checkpoint(r, s + 1);
}

/* The run's MLP on the loaded set: its initialisation, activation act, loss. */
static model *new_mlp(const run *r, mlp_act act, mlp_loss loss)
{
    const dataset *tr = r->d.train;
    mlp_config cfg = {.in = tr->dim, .width = r->width, .classes = tr->classes, .act = act, .bias = 1, .loss = loss,
                      .seed = seed_for((unsigned long)r->seed, SEED_INIT)};
    return mlp_new(&cfg);
}

/* Trains the twin of `loss` from the run's initialisation on the run's batches. */
static void train_twin(run *r, twin *t, mlp_loss loss)
{
    t->classes = r->d.train->classes;
    t->loss = loss;
    r->m = new_mlp(r, act_parse(r->act), loss);
    t->P = r->m->P;
    r->batch_rng = rng_new(seed_for((unsigned long)r->seed, SEED_BATCHES));
    r->cur = t;
    r->next = 0;
    optim_config oc = optim_defaults(OPTIM_ADAM);
    optim_check_config(&oc, r->lr);
    optimizer *opt = optim_new(OPTIM_ADAM, &oc, r->m->P, NULL, r->m);
    if (r->at[0] == 0) checkpoint(r, 0);
    train_config tc = {.steps = r->steps, .lr = r->lr, .schedule = SCHED_COSINE};
    train_hooks hooks = {.set_batch = set_batch, .after_step = after_step, .ctx = r};
    int diverged = 0;
    long ran = train_run(r->m, opt, &tc, &hooks, &diverged);
    if (diverged)
        die_diverged("%d classes, %s loss: training diverged at step %ld (non-finite loss or gradient); lower --lr",
                     t->classes, loss_kind_name(loss), ran);
    if (r->next != r->nat) DIE("%d of %d checkpoints done", r->next, r->nat);
    csv_row(r->model_csv, "%d,%s,%d,%d,%s,%zu", t->classes, loss_kind_name(loss), r->d.train->dim, r->width, r->act,
            r->m->P);
    optim_free(opt);
    rng_free(r->batch_rng);
    model_free(r->m);
    r->m = NULL;
}

/* The control of the softmax-factor claim: the same initial weights with ReLU
 * (σ'' = 0: fc1–fc1 of H is all Gauss–Newton, every entry carries the softmax
 * factor, so its size cannot favour the blocks), H of both losses at step 0. */
static void relu_init(run *r, int s)
{
    for (int l = 0; l < NLOSS; l++) {
        model *m = new_mlp(r, ACT_RELU, LOSSES[l]);
        mlp_set_batch(m, r->Xe, r->ye, r->eval_n);
        h_stats st = analyse_h(r, m);
        r->relu_init[s][l] = st.hidden.excess;
        csv_row(r->init_csv, "%d,relu,%s,%.10g,%.10g", r->d.train->classes, loss_kind_name(LOSSES[l]),
                st.hidden.excess, st.whole.excess);
        model_free(m);
    }
    for (int l = 0; l < NLOSS; l++) {
        const twin *t = &r->twins[s][l];
        csv_row(r->init_csv, "%d,%s,%s,%.10g,%.10g", t->classes, r->act, loss_kind_name(t->loss),
                r->at[0] == 0 ? t->h[0].hidden.excess : NAN, r->at[0] == 0 ? t->h[0].whole.excess : NAN);
    }
}

static void run_set(run *r, int s)
{
    int classes = r->sets.v[s];
    char name[32];
    const char *dir = NULL;
    if (strcmp(r->data, "synthetic") == 0) {
        snprintf(name, sizeof name, "synthetic-cifar%d", classes);
    } else {
        snprintf(name, sizeof name, "cifar%d", classes);
        dir = classes == 10 ? r->cifar10_dir : r->cifar100_dir;
        if (!dir) die_user("--data cifar needs --cifar%d-dir (the folder of the CIFAR-%d binary files)", classes, classes);
    }
    mlp_data_load(&r->d, name, dir, r->pool, 1, seed_for((unsigned long)r->data_seed, SEED_DATA));
    if (r->eval_n > r->d.test->n) die_user("--eval-n %d is more than the %d test images", r->eval_n, r->d.test->n);
    if (r->d.train->classes != classes) DIE("%s has %d classes", name, r->d.train->classes);
    int dim = r->d.train->dim;
    r->Xb = xmalloc((size_t)r->batch * dim * sizeof(double));
    r->yb = xmalloc((size_t)r->batch * sizeof(int));
    r->Xe = xmalloc((size_t)r->eval_n * dim * sizeof(double));
    r->ye = xmalloc((size_t)r->eval_n * sizeof(int));
    r->probs = xmalloc((size_t)r->eval_n * classes * sizeof(double));
    mlp_data_head(&r->d, r->eval_n, "--eval-n", r->Xe, r->ye);
    if (!core_quiet)
        fprintf(stderr, "mlp_steps: %s, %d train / %d test images, %d inputs; %ld steps\n", name, r->d.train->n,
                r->d.test->n, dim, r->steps);
    for (int l = 0; l < NLOSS; l++) train_twin(r, &r->twins[s][l], LOSSES[l]);
    relu_init(r, s);
    free(r->Xb), free(r->yb), free(r->Xe), free(r->ye), free(r->probs);
    mlp_data_free(&r->d);
}

/* ---- claims ------------------------------------------------------------------------------------ */

static int step_index(const run *r, long step)
{
    for (int k = 0; k < r->nat; k++) if (r->at[k] == step) return k;
    return -1;
}

/* The claims' statistics of one class count (docs/mlp_steps.md); NAN where a
 * checkpoint they need (0, 1, APPEAR_STEP) is not among --at-steps. */
typedef struct {
    double e0, e1, e1_perm;             /* hidden e at steps 0 and 1; step 1 on the permutation */
    double e1_cols;                     /* step 1, fc1 split by input neurons (the control) */
    double margin, margin_perm;         /* "appears": min(e_10 − LEVEL, LEVEL − e_0) */
    double pq_ratio, pq_ratio_sq;       /* p(1−p) at the last checkpoint over step 0: cross-entropy, squared twin */
    double rho, rho_sq;                 /* Spearman(1 − e, p(1−p)); the squared twin's 1 − e on the same p(1−p) */
    double factor, factor_relu;         /* e(cross-entropy) − e(squared) at step 0: the activation's, ReLU's */
    /* references */
    double rho_sq_own, rho_shuffled, rho_plain, rho_true, slope, slope_sq, slope_abs;
} set_stats;

static set_stats stats_of(const run *r, int s)
{
    const twin *x = &r->twins[s][0], *q = &r->twins[s][1];
    int n = r->nat, k0 = step_index(r, 0), k1 = step_index(r, 1), ka = step_index(r, APPEAR_STEP);
    double plain[LIST_MAX], shuffled[LIST_MAX];
    for (int k = 0; k < n; k++) plain[k] = 1 - offdiag_mass_ratio(&x->h[k].hidden);
    /* the reference: the checkpoint order shuffled (seeded), no association left */
    gsl_rng *g = rng_new(seed_for_nth((unsigned long)r->seed, SEED_BASELINES, (unsigned long)s));
    int perm[LIST_MAX];
    for (int k = 0; k < n; k++) perm[k] = k;
    for (int k = n - 1; k > 0; k--) {
        int j = (int)rng_int(g, (unsigned long)k + 1), t = perm[k];
        perm[k] = perm[j], perm[j] = t;
    }
    rng_free(g);
    for (int k = 0; k < n; k++) shuffled[k] = x->offblock[perm[k]];

    set_stats st;
    st.e0 = k0 < 0 ? NAN : x->h[k0].hidden.excess;
    st.e1 = k1 < 0 ? NAN : x->h[k1].hidden.excess;
    st.e1_perm = k1 < 0 ? NAN : x->h[k1].hidden_perm;
    st.e1_cols = k1 < 0 ? NAN : x->h[k1].hidden_cols;
    st.margin = k0 < 0 || ka < 0 ? NAN : fmin(x->h[ka].hidden.excess - LEVEL, LEVEL - x->h[k0].hidden.excess);
    st.margin_perm = k0 < 0 || ka < 0 ? NAN : fmin(x->h[ka].hidden_perm - LEVEL, LEVEL - x->h[k0].hidden_perm);
    st.pq_ratio = k0 < 0 ? NAN : x->pq[n - 1] / x->pq[k0];
    st.pq_ratio_sq = k0 < 0 ? NAN : q->pq[n - 1] / q->pq[k0];
    st.rho = spearman(x->offblock, x->pq, n);
    st.rho_sq = spearman(q->offblock, x->pq, n);
    st.factor = k0 < 0 ? NAN : x->h[k0].hidden.excess - q->h[k0].hidden.excess;
    st.factor_relu = r->relu_init[s][0] - r->relu_init[s][1];
    st.rho_sq_own = spearman(q->offblock, q->pq, n);
    st.rho_shuffled = spearman(shuffled, x->pq, n);
    st.rho_plain = spearman(plain, x->pq, n);
    st.rho_true = spearman(x->offblock, x->pq_true, n);
    st.slope = loglog_slope(x->pq, x->offblock, n);
    st.slope_sq = loglog_slope(x->pq, q->offblock, n);
    st.slope_abs = loglog_slope(x->pq, x->offblock_mass, n);
    return st;
}

static void put_stats(const run *r, outfile *f, int s, const set_stats *st)
{
    char name[128];
    int c = r->sets.v[s];
#define PUT(fmt, v) (snprintf(name, sizeof name, fmt, c), stats_put(f, name, v))
    PUT("mlp_steps.c%d.step1.hidden_excess", st->e1);
    PUT("mlp_steps.control.c%d.step1.hidden_excess", st->e1_perm);
    PUT("mlp_steps.cols.c%d.step1.hidden_excess", st->e1_cols);
    PUT("mlp_steps.c%d.appear_margin", st->margin);
    PUT("mlp_steps.control.c%d.appear_margin", st->margin_perm);
    PUT("mlp_steps.c%d.pq_ratio", st->pq_ratio);
    PUT("mlp_steps.control.c%d.squared.pq_ratio", st->pq_ratio_sq);
    PUT("mlp_steps.c%d.rho_offblock_pq", st->rho);
    PUT("mlp_steps.control.c%d.squared.rho_offblock_pq", st->rho_sq);
    PUT("mlp_steps.c%d.softmax_factor_excess", st->factor);
    PUT("mlp_steps.control.c%d.relu.softmax_factor_excess", st->factor_relu);
    PUT("mlp_steps.c%d.step0.hidden_excess", st->e0);
    PUT("mlp_steps.c%d.squared.rho_offblock_own_pq", st->rho_sq_own);
    PUT("mlp_steps.c%d.shuffled.rho_offblock_pq", st->rho_shuffled);
    PUT("mlp_steps.c%d.rho_plain_offblock_pq", st->rho_plain);
    PUT("mlp_steps.c%d.rho_offblock_pq_true", st->rho_true);
    PUT("mlp_steps.c%d.slope_offblock_pq", st->slope);
    PUT("mlp_steps.c%d.squared.slope_offblock_pq", st->slope_sq);
    PUT("mlp_steps.c%d.slope_abs_offblock_pq", st->slope_abs);
#undef PUT
    for (int l = 0; l < NLOSS; l++) {
        const twin *t = &r->twins[s][l];
        for (int k = 0; k < r->nat; k++) {
#define PUTK(what, v) (snprintf(name, sizeof name, "mlp_steps.c%d.%s.step%ld.%s", c, loss_kind_name(t->loss), \
                                r->at[k], what), stats_put(f, name, v))
            PUTK("hidden_excess", t->h[k].hidden.excess);
            PUTK("whole_excess", t->h[k].whole.excess);
            PUTK("pq", t->pq[k]);
#undef PUTK
        }
    }
}

/* The line's one-seed reading; N/A when a checkpoint the statistic needs is missing. */
static const char *pass(double stat, int ok) { return isnan(stat) ? "N/A" : ok ? "PASS" : "FAIL"; }

static void put_claims(const run *r, FILE *fp, int s, const set_stats *st)
{
    const twin *x = &r->twins[s][0], *q = &r->twins[s][1];
    fprintf(fp, "== %d classes (P = %zu; evaluation accuracy %.3f at step %ld, %.3f at step %ld)\n", x->classes, x->P,
            x->acc0, r->at[0], x->acc_end, r->at[r->nat - 1]);
    fprintf(fp, "%s: block-diagonal by hidden neuron after 1 training step (Fig. 2(a), after Collobert): e at step 1 = "
                "%.3f (>= %.2f; permuted %.3f; at step 0 %.3f)\n", pass(st->e1, st->e1 >= LEVEL), st->e1, LEVEL, st->e1_perm,
            st->e0);
    fprintf(fp, "%s: the structure appears within the first %d steps (absent at step 0, present at step %d): "
                "min(e_%d - %.2f, %.2f - e_0) = %.3f (> 0; permuted %.3f)\n", pass(st->margin, st->margin > 0), APPEAR_STEP,
            APPEAR_STEP, APPEAR_STEP, LEVEL, LEVEL, st->margin, st->margin_perm);
    fprintf(fp, "%s: p(1-p) shrinks during training (at least halved by step %ld): p(1-p) at the end over step 0 = "
                "%.4f (<= %.1f; squared twin, whose outputs' softmax cannot saturate: %.4f)\n",
            pass(st->pq_ratio, st->pq_ratio <= PQ_RATIO_MAX), r->at[r->nat - 1], st->pq_ratio, PQ_RATIO_MAX, st->pq_ratio_sq);
    fprintf(fp, "%s: the hidden neurons' off-block mass falls with p(1-p): Spearman rho over the %d checkpoints "
                "between 1 - e and p(1-p) = %.3f (>= %.1f); control, the squared twin's 1 - e (no p(1-p) in its H) "
                "against the same p(1-p): %.3f\n", pass(st->rho, st->rho >= RHO_MIN), r->nat, st->rho, RHO_MIN, st->rho_sq);
    fprintf(fp, "%s: the softmax factor makes H block-diagonal: e(cross-entropy) - e(squared) at step 0 (the same "
                "weights) = %.3f (>= %.2f); control, the same with ReLU (sigma'' = 0, all of fc1-fc1 carries the "
                "factor): %.3f\n", pass(st->factor, st->factor >= FACTOR_MIN), st->factor, FACTOR_MIN, st->factor_relu);
    fprintf(fp, "  references: rho of the squared twin against its own p(1-p) %.3f; checkpoint order shuffled %.3f; "
                "with the plain off-block mass 1 - sum_b ||H_bb||^2/||H_SS||^2 %.3f; with the true class's "
                "p_y(1 - p_y) %.3f; log-log slope of 1 - e on p(1-p) %.3g (squared twin %.3g), of the absolute "
                "off-block mass %.3g\n", st->rho_sq_own, st->rho_shuffled, st->rho_plain, st->rho_true, st->slope,
            st->slope_sq, st->slope_abs);
    fprintf(fp, "  per step (cross-entropy e / p(1-p); squared twin e):");
    for (int k = 0; k < r->nat; k++)
        fprintf(fp, "%s %ld: %.3f / %.4g; %.3f", k ? ";" : "", r->at[k], x->h[k].hidden.excess, x->pq[k],
                q->h[k].hidden.excess);
    fputc('\n', fp);
}

static void write_results(const run *r)
{
    outfile *f = stats_open(r->out);
    outfile *o = outfile_open_in(r->out, "claims.txt");
    FILE *fp = outfile_fp(o);
    for (int s = 0; s < r->sets.n; s++) {
        set_stats st = stats_of(r, s);
        put_stats(r, f, s, &st);
        put_claims(r, fp, s, &st);
    }
    fprintf(fp, "e = (s - q)/(1 - q): the off-diagonal excess of the hidden-neuron blocks inside fc1-fc1 (s the share "
                "of the off-diagonal squared mass inside them, q its exact mean for random blocks; 0 random, 1 "
                "block-diagonal); 1 - e = the off-block mass over its mean for random blocks; p(1-p) = the mean over "
                "the evaluation batch and the classes of p_c(1 - p_c), p the softmax of the outputs; the claims over "
                "seeds: verdict/claims.c, docs/mlp_steps.md\n");
    csv_close(f);
    outfile_commit(o);
}

/* ---- main -------------------------------------------------------------------------------------- */

/* The checkpoints: --at-steps, else 0, the 1-2-5 grid below --steps, and --steps. */
static void plan_steps(run *r)
{
    if (r->at_opt.n == 0) {
        r->nat = 0;
        r->at[r->nat++] = 0;
        for (long dec = 1; dec < r->steps; dec *= 10)
            for (int i = 0; i < 3; i++) {
                long s = dec * (i == 0 ? 1 : i == 1 ? 2 : 5);
                if (s < r->steps && r->nat < LIST_MAX - 1) r->at[r->nat++] = s;
            }
        r->at[r->nat++] = r->steps;
        return;
    }
    r->nat = r->at_opt.n;
    for (int k = 0; k < r->nat; k++) {
        r->at[k] = r->at_opt.v[k];
        if (r->at[k] < 0 || r->at[k] > r->steps)
            die_user("--at-steps: step %ld is outside 0..%ld (--steps)", r->at[k], r->steps);
        if (k && r->at[k] <= r->at[k - 1]) die_user("--at-steps must increase (got %ld after %ld)", r->at[k], r->at[k - 1]);
    }
    if (r->nat < 3) die_user("--at-steps: at least 3 checkpoints (a rank correlation over them; got %d)", r->nat);
}

static void check_options(run *r)
{
    int paper = scale_parse(r->scale);
    if (r->pool < 0) r->pool = paper ? 2 : 4;
    if (r->eval_n < 0) r->eval_n = paper ? 1000 : 500;
    if (strcmp(r->data, "synthetic") != 0 && strcmp(r->data, "cifar") != 0)
        die_user("--data must be synthetic or cifar (got '%s')", r->data);
    if (r->pool < 1 || r->pool > 32) die_user("--pool must be in 1..32 (got %d)", r->pool);
    if (r->width < 1 || r->width > 4096) die_user("--width must be in 1..4096 (got %d)", r->width);
    act_parse(r->act);
    if (r->batch < 1) die_user("--batch must be >= 1 (got %d)", r->batch);
    if (r->steps < 1 || r->steps > 100000000) die_user("--steps must be in 1..1e8 (got %ld)", r->steps);
    if (!(r->lr > 0) || !isfinite(r->lr)) die_user("--lr must be > 0 (got %g)", r->lr);
    if (r->eval_n < 1) die_user("--eval-n must be >= 1 (got %d)", r->eval_n);
    if (r->panel < 1) die_user("--panel must be >= 1 (got %d)", r->panel);
    if (r->seed < 0) die_user("--seed must be >= 0 (got %ld)", r->seed);
    if (r->data_seed < 0) die_user("--data-seed must be >= 0 (got %ld)", r->data_seed);
    if (r->sets.n < 1 || r->sets.n > MAX_SETS) die_user("--sets must list 1 or 2 class counts (got %d)", r->sets.n);
    for (int s = 0; s < r->sets.n; s++) {
        if (r->sets.v[s] != 10 && r->sets.v[s] != 100) die_user("--sets: class counts are 10 or 100 (got %d)", r->sets.v[s]);
        if (s && r->sets.v[s] == r->sets.v[0]) die_user("--sets: %d is listed twice", r->sets.v[s]);
    }
    plan_steps(r);
}

static void parse_args(run *r, int argc, char **argv)
{
    *r = (run){.scale = "quick", .data = "synthetic", .act = "tanh", .out = "results/mlp_steps", .pool = -1, .width = 8,
               .batch = 128, .steps = 7900, .eval_n = -1, .panel = 128, .lr = 1e-4, .seed = 1, .data_seed = 1,
               .sets = {2, {100, 10}}};
    const cli_opt opts[] = {
        {"scale", OPT_STRING, &r->scale, "quick (images pooled 4x4, H on 500 images) or paper (2x2, H on 1,000)"},
        {"data", OPT_STRING, &r->data, "synthetic (CIFAR's layout, mlp/mlp.h) or cifar (the real binaries)"},
        {"cifar10-dir", OPT_STRING, &r->cifar10_dir, "--data cifar: folder of CIFAR-10's data_batch_*.bin, test_batch.bin"},
        {"cifar100-dir", OPT_STRING, &r->cifar100_dir, "--data cifar: folder of CIFAR-100's train.bin, test.bin"},
        {"sets", OPT_INT_LIST, &r->sets, "class counts to run, 100 (CIFAR-100's) and/or 10"},
        {"pool", OPT_INT, &r->pool, "k x k average pooling of the 32x32 images (default: 4 quick, 2 paper)"},
        {"width", OPT_INT, &r->width, "hidden neurons (the paper: 8)"},
        {"act", OPT_STRING, &r->act, "activation: relu, tanh, gelu or linear (the paper does not say; the control "
                                    "of the softmax-factor claim is always relu)"},
        {"lr", OPT_DOUBLE, &r->lr, "Adam learning rate, cosine decay to 0 (the paper: 1e-4)"},
        {"batch", OPT_INT, &r->batch, "images per step, drawn with replacement (the paper: 128)"},
        {"steps", OPT_LONG, &r->steps, "training steps (the paper: 20 epochs of CIFAR-100, 'about 7900')"},
        {"at-steps", OPT_INT_LIST, &r->at_opt, "checkpoints, increasing (default: 0, 1, 2, 5, 10, 20, 50, ... and --steps)"},
        {"eval-n", OPT_INT, &r->eval_n, "evaluation batch, the first test images: H and p on it (default: 500 quick, "
                                       "1,000 paper)"},
        {"panel", OPT_INT, &r->panel, "Hessian columns per panel"},
        {"seed", OPT_LONG, &r->seed, "the run's seed: initialisation, batches, permutations"},
        {"data-seed", OPT_LONG, &r->data_seed, "the data's seed (--data synthetic)"},
        {"out", OPT_STRING, &r->out, "output folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "The MLP's Hessian through training against the softmax factor p(1-p) of Collobert's argument\n"
              "(paper Fig. 2(a) and App. 'More Discussions'): fig2's MLP (8 tanh neurons, Adam lr 1e-4 cosine,\n"
              "batch 128, the paper's 7,900 steps) on CIFAR's layout (synthetic, or the real sets with --data\n"
              "cifar), with 100 and 10 classes, each trained twice from one initialisation and batch order:\n"
              "softmax cross-entropy and the squared loss (no p(1-p) in its Hessian: a control); and at\n"
              "initialisation the same weights with ReLU (another control). At each checkpoint (steps 0, 1, 2,\n"
              "5, 10, ...): the hidden-neuron blocks' off-diagonal excess e (0 random, 1 block-diagonal), the\n"
              "off-block mass 1 - e, and the mean p(1-p) over the evaluation batch and the classes.",
              opts, sizeof opts / sizeof *opts);
    check_options(r);
}

int main(int argc, char **argv)
{
    run r;
    parse_args(&r, argc, argv);
    ensure_dir(r.out);
    r.perm_rng = rng_new(seed_for((unsigned long)r.seed, SEED_DRAWS));
    r.steps_csv = csv_open_in(r.out, "steps.csv", "classes,loss,step,eval_loss,eval_acc,pq_mean,pq_rel,pq_true,"
                              "hidden_share,hidden_chance,hidden_excess,hidden_offblock,hidden_perm_excess,"
                              "hidden_mass_ratio,hidden_block_excess_min,hidden_offblock_mass,hidden_total_mass,"
                              "whole_share,whole_chance,whole_excess,whole_perm_excess,whole_mass_ratio");
    r.train_csv = csv_open_in(r.out, "train.csv", "classes,loss,step,lr,batch_loss");
    r.model_csv = csv_open_in(r.out, "model.csv", "classes,loss,in,width,act,P");
    r.init_csv = csv_open_in(r.out, "init.csv", "classes,act,loss,hidden_excess,whole_excess");
    for (int s = 0; s < r.sets.n; s++) run_set(&r, s);
    csv_close(r.steps_csv);
    csv_close(r.train_csv);
    csv_close(r.model_csv);
    csv_close(r.init_csv);
    write_results(&r);
    run_note("hessian seconds: %.3f", r.hess_seconds);
    run_write_info(r.out, (unsigned long)r.seed);
    rng_free(r.perm_rng);
    return 0;
}
