/* partition_check — the Principle-1 checker (paper section "Principle for the
 * Partition Strategy"): "partition parameters into blocks such that each block
 * is associated with the smallest dense sub-block in Hessian".
 *
 * For each tensor t of a model, on the exact Hessian at a training checkpoint,
 * inside the tensor's own diagonal block H_tt, each candidate split — whole,
 * by head (query/key/value), by row (output neuron; token for embed/output;
 * position for pos), by column (input neuron), by entry (Adam's per-coordinate
 * view) — is scored without the diagonal (hessian/hessian.h): its off-diagonal
 * excess e = (s − q)/(1 − q) (0: no better than random blocks of the same
 * sizes, 1: block-diagonal); entries by the diagonal's excess instead. The
 * criterion (principle1_pick): the finest split whose score is >= --level
 * (default 1/2: the blocks keep at least half of the off-diagonal mass random
 * blocks lose). Its pick is set beside the split of the paper's Algorithm 3
 * (Transformers: embed/output by tokens, query/key by heads, value, attn.proj
 * and MLP by output neurons) and Algorithm 2 (non-Transformers: one block per
 * tensor). Controls of the Transformer claim: the same criterion on H_tt with its
 * rows and columns randomly permuted (no split can hold there: it cannot pass), and
 * the share of Algorithm 3's split tensors where the criterion picks the split by
 * input columns, a structured split Principle 1 does not predict, which passes
 * when H_tt is block-diagonal by columns.
 * The old rule is kept beside it: the finest split whose mass ratio with the
 * diagonal, Σ_b ‖H_bb‖² / ‖H_tt‖², is >= --share (with its Monte Carlo random
 * baseline), and both rules swept over their thresholds (sweep.csv).
 *
 * Models: --model tt (the tiny Transformer; the same flags and training as
 * fig6, so the same H), --model mlp (the 1-hidden-layer MLP of mlp/mlp.h on
 * Fashion-MNIST pooled 4x4 or the synthetic set; Adam with the same --steps,
 * --lr, --batch and --checkpoint), or --model both (each into its subfolder
 * tt/ and mlp/; make verdicts runs this, since the MLP claim's control is the
 * Transformer).
 *
 * Outputs in --out (per model, in tt/ and mlp/ with --model both):
 * candidates.csv (tensor × split: mass ratio, random baseline, off-diagonal
 * share, chance, excess, score, on H and on the permuted H), summary.csv (per
 * tensor: its share of ‖H‖², the old rule's split, the criterion's split on H
 * and on the permuted H, Algorithm 3's and Algorithm 2's), sweep.csv, H.npy (unless --save-h 0);
 * and in --out: stats.csv (the claims' statistics for make verdicts), claims.txt.
 */
#include "core/core.h"
#include "core/model.h"
#include "harness/models.h"
#include "harness/seeds.h"
#include "hessian/hessian.h"
#include "verdict/verdict.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXK 8

typedef struct {
    model_cli mc;        /* --model and every kind's flags */
    const char *out;
    int reps, save_h;
    double share, level;
    int nmodels;         /* the models of --model, checked */
    model_ckpt k[MAXK];
    gsl_rng *rng;        /* Monte Carlo baselines of the old statistic */
    gsl_rng *perm_rng;   /* the permutations of the control */
} run;

/* A tensor whose ‖H_tt‖_F is below ZERO_REL ‖H‖_F has no curvature beyond round-off
 * (e.g. the key bias, which softmax ignores exactly). */
#define ZERO_REL 1e-12
/* Thresholds of the sweeps in sweep.csv: SWEEP_N levels from 0.05 to 0.95. */
#define SWEEP_N 19

/* ---- one tensor ----------------------------------------------------------------------------- */

/* The picks of a rule at the run's threshold and at each sweep threshold, on H_tt and on its permutation. */
typedef struct {
    int now, perm;
    int sweep[SWEEP_N], sweep_perm[SWEEP_N];
} picks;

typedef struct {
    int zero;                                /* no curvature: left out of every count */
    double fro2;                             /* ‖H_tt‖² */
    split_candidates c, perm;                /* on H_tt and on its random permutation */
    double rand[SPLIT_CANDIDATES_MAX];       /* Monte Carlo random mean of the old mass ratio, and its sd */
    double rand_sd[SPLIT_CANDIDATES_MAX];
    double rand_perm[SPLIT_CANDIDATES_MAX];
    int alg3;                                /* candidate index of Algorithm 3's split; -1 if none */
    picks crit, old;                         /* the criterion's (at --level) and the old rule's (at --share) */
    double crit_score;                       /* the score with which the criterion's pick held */
} tensor_check;

static double sweep_threshold(int k) { return 0.05 + 0.05 * k; }
static int old_pick(const split_candidates *c, double share) { return finest_above_share(c->n, c->nblocks, c->mass, share); }

static tensor_check check_tensor(run *r, const model *m, const double *H, int t, const partition *alg3, double total)
{
    const tensor_info *ti = &m->tensors[t];
    tensor_check c = {.alg3 = -1};
    size_t n = tensor_size(ti);
    double *Htt = tensor_hessian(H, m->P, m, t);
    double *Hperm = sym_permuted(Htt, n, r->perm_rng);
    c.fro2 = frobenius_sq(n * n, Htt);
    c.zero = !(c.fro2 > ZERO_REL * ZERO_REL * total);
    split_candidates_of(Htt, m, t, &c.c);
    split_candidates_of(Hperm, m, t, &c.perm);
    c.crit.now = principle1_pick(Htt, m, t, &c.c, r->level, &c.crit_score);
    c.crit.perm = principle1_pick(Hperm, m, t, &c.perm, r->level, NULL);
    c.old.now = old_pick(&c.c, r->share);
    c.old.perm = old_pick(&c.perm, r->share);
    for (int k = 0; k < SWEEP_N; k++) {
        double th = sweep_threshold(k);
        c.crit.sweep[k] = principle1_pick(Htt, m, t, &c.c, th, NULL);
        c.crit.sweep_perm[k] = principle1_pick(Hperm, m, t, &c.perm, th, NULL);
        c.old.sweep[k] = old_pick(&c.c, th);
        c.old.sweep_perm[k] = old_pick(&c.perm, th);
    }
    int a3 = partition_split_of(alg3, m, t);
    for (int i = 0; i < c.c.n; i++) {
        if ((int)c.c.split[i] == a3) c.alg3 = i;
        partition *p = tensor_local_partition(m, t, c.c.split[i]);
        double sd;
        mass_ratio_random(Htt, n, p, r->rng, r->reps, &c.rand[i], &c.rand_sd[i]);
        mass_ratio_random(Hperm, n, p, r->rng, r->reps, &c.rand_perm[i], &sd);
        partition_free(p);
    }
    free(Hperm);
    free(Htt);
    return c;
}

static const char *cand_name(const tensor_info *ti, const split_candidates *c, int i, char *buf, size_t len)
{
    if (i < 0) snprintf(buf, len, "-");
    else if (c->nblocks[i] == 1) snprintf(buf, len, "whole");
    else {
        const char *w = split_meaning(ti, c->split[i]);
        size_t n = strlen(w);
        if (n && w[n - 1] == 'y') snprintf(buf, len, "%d %.*sies", c->nblocks[i], (int)n - 1, w);
        else snprintf(buf, len, "%d %ss", c->nblocks[i], w);
    }
    return buf;
}

/* ---- one model ------------------------------------------------------------------------------ */

/* Agreement counts of a rule with Algorithm 3 and Algorithm 2 over the nonzero tensors. */
typedef struct {
    int nz, split_tensors;       /* nonzero tensors; those Algorithm 3 splits */
    int alg3_all, alg3_split;    /* picks equal to Algorithm 3's split: all, among the split ones */
    int alg2;                    /* picks of whole (Algorithm 2's split) */
    int cols_split;              /* picks of the split by input columns, among Algorithm 3's split ones */
} agreement;

typedef enum { RULE_CRITERION, RULE_OLD_SHARE } pick_rule;

/* The agreement of a rule's picks: at the run's threshold (sweep < 0) or at sweep threshold `sweep`. */
static agreement agree_of(const model *m, const tensor_check *tc, pick_rule rule, int sweep, int permuted)
{
    agreement a = {.nz = 0};
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_check *c = &tc[t];
        if (c->zero) continue;
        const split_candidates *sc = permuted ? &c->perm : &c->c;
        const picks *pk = rule == RULE_CRITERION ? &c->crit : &c->old;
        int pick = sweep < 0 ? (permuted ? pk->perm : pk->now) : permuted ? pk->sweep_perm[sweep] : pk->sweep[sweep];
        int split3 = c->alg3 >= 0 && sc->nblocks[c->alg3] > 1;
        a.nz++;
        a.split_tensors += split3;
        a.alg3_all += pick >= 0 && pick == c->alg3;
        a.alg3_split += split3 && pick == c->alg3;
        a.alg2 += pick >= 0 && sc->nblocks[pick] == 1;
        a.cols_split += split3 && pick >= 0 && sc->split[pick] == SPLIT_COLS;
    }
    return a;
}

typedef struct {
    const char *key;             /* the kind: "tt", "mlp" */
    const char *what;            /* "1-layer Transformer", or the model file */
    const char *training;        /* "AdamW, as fig6" */
    long step, total;
    size_t P;
    agreement now, perm, old, old_perm;   /* the criterion at --level, the old rule at --share */
    char disagree[2048], old_disagree[2048];
} model_result;

static void write_sweep(const char *dir, const model *m, const tensor_check *tc)
{
    outfile *f = csv_open_in(dir, "sweep.csv", "rule,threshold,hessian,nonzero_tensors,alg3_split_tensors,alg3_agree_split,"
                                               "alg3_agree_all,alg2_agree");
    for (int rule = 0; rule < 2; rule++)
        for (int k = 0; k < SWEEP_N; k++) {
            for (int permuted = 0; permuted < 2; permuted++) {
                agreement a = agree_of(m, tc, (pick_rule)rule, k, permuted);
                csv_row(f, "%s,%.2f,%s,%d,%d,%d,%d,%d", rule == RULE_CRITERION ? "excess" : "old_share", sweep_threshold(k),
                        permuted ? "permuted" : "H", a.nz, a.split_tensors, a.alg3_split, a.alg3_all, a.alg2);
            }
        }
    csv_close(f);
}

/* The names of a tensor's picks: the criterion's on H and on the permuted H, the old rule's, Algorithm 3's. */
typedef struct {
    char crit[64], perm[64], old[64], alg3[64];
} pick_names;

static pick_names names_of(const tensor_info *ti, const tensor_check *c)
{
    pick_names n;
    cand_name(ti, &c->c, c->crit.now, n.crit, sizeof n.crit);
    cand_name(ti, &c->c, c->crit.perm, n.perm, sizeof n.perm);
    cand_name(ti, &c->c, c->old.now, n.old, sizeof n.old);
    cand_name(ti, &c->c, c->alg3, n.alg3, sizeof n.alg3);
    return n;
}

static void write_candidates(const char *dir, const run *r, const model *m, const tensor_check *tc)
{
    outfile *cand = csv_open_in(dir, "candidates.csv", "tensor,role,split,meaning,blocks,block_size,mass_ratio,"
                                "random_mass_ratio,random_mass_ratio_sd,keeps_share,offdiag_share,chance,excess,score,holds,perm_mass_ratio,"
                                "perm_random_mass_ratio,perm_excess,perm_score");
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        const tensor_check *c = &tc[t];
        const split_candidates *sc = &c->c;
        for (int i = 0; i < sc->n; i++)
            csv_row(cand, "%s,%s,%s,%s,%d,%zu,%.10g,%.10g,%.10g,%d,%.10g,%.10g,%.10g,%.10g,%d,%.10g,%.10g,%.10g,%.10g",
                    ti->name, role_name(ti->role), split_name(sc->split[i]), split_meaning(ti, sc->split[i]),
                    sc->nblocks[i], tensor_size(ti) / sc->nblocks[i], sc->mass[i], c->rand[i], c->rand_sd[i],
                    sc->mass[i] >= r->share,
                    sc->st[i].share, sc->st[i].chance, sc->st[i].excess, sc->hold[i], sc->hold[i] >= r->level,
                    c->perm.mass[i], c->rand_perm[i], c->perm.st[i].excess, c->perm.hold[i]);
    }
    csv_close(cand);
}

static void write_summary(const char *dir, const model *m, const tensor_check *tc, double total)
{
    outfile *sum = csv_open_in(dir, "summary.csv", "tensor,role,rows,cols,size,hessian_share,diag_share,old_split,"
                               "old_blocks,old_mass_ratio,criterion_split,criterion_blocks,criterion_score,"
                               "perm_criterion_split,alg3_split,alg3_blocks,alg3_mass_ratio,alg3_excess,agree_alg3,"
                               "agree_alg2,old_agree_alg3");
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        const tensor_check *c = &tc[t];
        const split_candidates *sc = &c->c;
        int pick = c->crit.now, opick = c->old.now;
        pick_names n = names_of(ti, c);
        const char *zero = "zero-hessian";
        csv_row(sum, "%s,%s,%d,%d,%zu,%.10g,%.10g,%s,%d,%.10g,%s,%d,%.10g,%s,%s,%d,%.10g,%.10g,%s,%s,%s", ti->name,
                role_name(ti->role), ti->rows, ti->cols, tensor_size(ti), total > 0 ? c->fro2 / total : NAN,
                sc->diag_share, n.old, opick >= 0 ? sc->nblocks[opick] : 0, opick >= 0 ? sc->mass[opick] : NAN, n.crit,
                sc->nblocks[pick], c->crit_score, n.perm, n.alg3, c->alg3 >= 0 ? sc->nblocks[c->alg3] : 0,
                c->alg3 >= 0 ? sc->mass[c->alg3] : NAN, c->alg3 >= 0 ? sc->st[c->alg3].excess : NAN,
                c->zero ? zero : pick == c->alg3 ? "yes" : "no", c->zero ? zero : sc->nblocks[pick] == 1 ? "yes" : "no",
                c->zero ? zero : opick == c->alg3 ? "yes" : "no");
    }
    csv_close(sum);
}

/* "tensor (pick vs Algorithm 3); ..." for the nonzero tensors where the criterion (and the old rule) disagree. */
static void list_disagreements(model_result *res, const model *m, const tensor_check *tc)
{
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_check *c = &tc[t];
        if (c->zero) continue;
        pick_names n = names_of(&m->tensors[t], c);
        size_t dl = strlen(res->disagree), ol = strlen(res->old_disagree);
        if (c->crit.now != c->alg3)
            snprintf(res->disagree + dl, sizeof res->disagree - dl, "%s%s (%s vs %s)", dl ? "; " : "",
                     m->tensors[t].name, n.crit, n.alg3);
        if (c->old.now != c->alg3)
            snprintf(res->old_disagree + ol, sizeof res->old_disagree - ol, "%s%s (%s vs %s)", ol ? "; " : "",
                     m->tensors[t].name, n.old, n.alg3);
    }
}

/* The table on stdout (without --quiet). */
static void print_checks(const model_result *res, const model *m, const tensor_check *tc, double total)
{
    printf("%s\n%-20s %-9s %6s %8s  %-18s %-18s %-18s %-18s %s\n", res->what, "tensor", "role", "size", "H share",
           "criterion", "permuted H", "old >= share", "Algorithm 3", "excess (heads/rows/cols), diagonal excess");
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        const tensor_check *c = &tc[t];
        pick_names n = names_of(ti, c);
        printf("%-20s %-9s %6zu %8.2e  %-18s %-18s %-18s %-18s", ti->name, role_name(ti->role), tensor_size(ti),
               total > 0 ? c->fro2 / total : NAN, c->zero ? "(H_tt = 0)" : n.crit, n.perm, n.old, n.alg3);
        for (int i = 0; i < c->c.n; i++)
            if (c->c.split[i] != SPLIT_WHOLE) printf(" %s %.3f", split_name(c->c.split[i]), c->c.hold[i]);
        printf("\n");
    }
}

/* Every tensor checked on H, the model's files written into dir, its agreement counts into res. */
static void analyse(run *r, const model *m, const double *H, const char *dir, model_result *res)
{
    ensure_dir(dir);
    partition *alg3 = partition_alg3(m, 0);
    double total = frobenius_sq(m->P * m->P, H);
    tensor_check *tc = xmalloc((size_t)m->ntensors * sizeof(tensor_check));
    for (int t = 0; t < m->ntensors; t++) tc[t] = check_tensor(r, m, H, t, alg3, total);
    write_candidates(dir, r, m, tc);
    write_summary(dir, m, tc, total);
    list_disagreements(res, m, tc);
    if (!core_quiet) print_checks(res, m, tc, total);
    write_sweep(dir, m, tc);
    size_t shape[2] = {m->P, m->P};
    if (r->save_h) npy_write_in(dir, "H.npy", H, 2, shape);
    res->P = m->P;
    res->now = agree_of(m, tc, RULE_CRITERION, -1, 0);
    res->perm = agree_of(m, tc, RULE_CRITERION, -1, 1);
    res->old = agree_of(m, tc, RULE_OLD_SHARE, -1, 0);
    res->old_perm = agree_of(m, tc, RULE_OLD_SHARE, -1, 1);
    free(tc);
    partition_free(alg3);
}

/* ---- the models ------------------------------------------------------------------------------ */

/* Model i at its checkpoint (its training in dir/train), its H analysed into dir. */
static void run_model(run *r, int i, const char *dir, model_result *res)
{
    model_ckpt *k = &r->k[i];
    char *train_dir = path_join(dir, "train");
    model_ckpt_open(k, train_dir);
    free(train_dir);
    double *H = model_ckpt_hessian(k);
    *res = (model_result){.key = k->kind->name, .what = model_ckpt_what(k), .training = k->kind->training,
                          .step = k->step, .total = k->total};
    analyse(r, k->m, H, dir, res);
    free(H);
    model_ckpt_free(k);
}

static void put_agreement(outfile *f, const char *prefix, const agreement *a)
{
    stats_put_share(f, a->alg3_split, a->split_tensors, "%s.alg3_agree", prefix);
    stats_put_share(f, a->alg3_all, a->nz, "%s.alg3_agree_all", prefix);
    stats_put_share(f, a->alg2, a->nz, "%s.alg2_agree", prefix);
}

static void write_stats(const run *r, const model_result *res, int nres)
{
    outfile *f = stats_open(r->out);
    for (int i = 0; i < nres; i++) {
        char prefix[96];
        snprintf(prefix, sizeof prefix, "partition_check.%s", res[i].key);
        put_agreement(f, prefix, &res[i].now);
        snprintf(prefix, sizeof prefix, "partition_check.control.%s.permuted", res[i].key);
        put_agreement(f, prefix, &res[i].perm);
        /* the control that can pass: the criterion picks the split by input columns */
        stats_put_share(f, res[i].now.cols_split, res[i].now.split_tensors, "partition_check.control.%s.columns_agree",
                        res[i].key);
        snprintf(prefix, sizeof prefix, "partition_check.%s.old_share_rule", res[i].key);
        put_agreement(f, prefix, &res[i].old);
        snprintf(prefix, sizeof prefix, "partition_check.%s.old_share_rule.permuted", res[i].key);
        put_agreement(f, prefix, &res[i].old_perm);
    }
    csv_close(f);
}

static void model_claims(FILE *fp, const run *r, const model_result *m)
{
    const agreement *a = &m->now, *p = &m->perm, *o = &m->old, *op = &m->old_perm;
    fprintf(fp, "%s: Principle 1 (the criterion at level %.2f) recovers Algorithm 3 (%s): %d of the %d tensors "
                "Algorithm 3 splits (%d of %d nonzero tensors in all); permuted H: %d of %d; split by input columns "
                "instead: %d of %d%s%s\n",
            a->split_tensors == 0 ? "INVALID (no tensor with curvature)" : a->alg3_split == a->split_tensors ? "PASS" : "FAIL", r->level, m->what, a->alg3_split, a->split_tensors,
            a->alg3_all, a->nz, p->alg3_split, p->split_tensors, a->cols_split, a->split_tensors,
            m->disagree[0] ? "; disagree (criterion vs Algorithm 3): " : "", m->disagree);
    fprintf(fp, "%s: Principle 1 recovers Algorithm 2, one block per tensor (%s): %d of %d nonzero tensors kept "
                "whole; permuted H: %d of %d\n", a->nz == 0 ? "INVALID (no tensor with curvature)" : a->alg2 == a->nz ? "PASS" : "FAIL", m->what, a->alg2, a->nz,
            p->alg2, p->nz);
    fprintf(fp, "old rule %s: Algorithm 3's split is the finest that keeps >= %.0f%% of the mass (%s; %d of %d "
                "nonzero tensors agree, %d of %d split ones; permuted H: %d of %d and %d of %d)%s%s\n",
            o->nz == 0 ? "INVALID (no tensor with curvature)" : o->alg3_all == o->nz ? "PASS" : "FAIL", 100 * r->share, m->what, o->alg3_all, o->nz, o->alg3_split,
            o->split_tensors, op->alg3_all, op->nz, op->alg3_split, op->split_tensors,
            m->old_disagree[0] ? "; disagree (finest vs Algorithm 3): " : "", m->old_disagree);
    fprintf(fp, "context: %s, P = %zu; H at step %ld of %ld (%s, peak lr %g: --lr)\n", m->what, m->P, m->step, m->total,
            m->training, r->mc.cli.lr);
}

static void write_claims(const run *r, const model_result *res, int nres)
{
    outfile *o = outfile_open_in(r->out, "claims.txt");
    FILE *fp = outfile_fp(o);
    for (int i = 0; i < nres; i++) model_claims(fp, r, &res[i]);
    fprintf(fp, "rule (criterion): each candidate split of a tensor (whole, heads, rows, cols, entries) is scored "
                "inside H_tt: heads/rows/cols by the off-diagonal excess e = (s - q)/(1 - q) (s = share of the "
                "off-diagonal squared mass inside the blocks, q = its exact mean for random blocks of the same sizes), "
                "entries by the diagonal's excess (d - 1/n)/(1 - 1/n), whole by 1; Principle 1 picks the finest split "
                "(most blocks) scoring >= %.2f; the permuted H is H_tt with its rows and columns randomly permuted "
                "(negative control); sweep.csv gives every level\n", r->level);
    fprintf(fp, "old rule (kept for comparison): the finest split whose mass ratio sum_b ||H_bb||_F^2 / "
                "||H_tt||_F^2 (diagonal included) is >= %.2f\n", r->share);
    fprintf(fp, "tensors with ||H_tt||_F <= %.0e ||H||_F (no curvature beyond round-off, e.g. the key bias) are left "
                "out\n", ZERO_REL);
    outfile_commit(o);
}

static void parse_args(run *r, int argc, char **argv)
{
    *r = (run){.out = "results/partition_check", .reps = 10, .share = 0.9, .level = 0.5, .save_h = 1};
    model_cli_init(&r->mc);
    const cli_opt opts[] = {
        {"model", OPT_STRING, &r->mc.model_name, "tt (the tiny Transformer, as fig6), mlp (the 1-hidden-layer MLP), "
                                                 "several comma-separated or both (= tt,mlp: each into its subfolder), "
                                                 "or a Transformer trained elsewhere: a nanoGPT-layout .safetensors, "
                                                 "a Hugging Face GPT-2 or Llama folder"},
        {"level", OPT_DOUBLE, &r->level, "score a split needs to hold (off-diagonal excess; diagonal excess for entries)"},
        {"share", OPT_DOUBLE, &r->share, "old rule: share of a tensor's Hessian mass the chosen split must keep"},
        {"reps", OPT_INT, &r->reps, "random permutations for the old mass-ratio baselines"},
        MODEL_KINDS_OPTS(&r->mc),
        {"save-h", OPT_INT, &r->save_h, "1: write H.npy (P x P)"},
        {"out", OPT_STRING, &r->out, "output folder"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Principle-1 checker: for each tensor, each candidate split (whole, by head, by output neuron /\n"
              "token / position, by input neuron, by entry) scored inside the tensor's diagonal block H_tt\n"
              "without the diagonal: the off-diagonal excess e = (s - q)/(1 - q) of the split (s = share of\n"
              "the off-diagonal squared mass inside its blocks, q = the same for random blocks of its sizes;\n"
              "0 random, 1 block-diagonal), the diagonal's excess for entries. Principle 1 picks the finest\n"
              "split scoring >= --level, set beside Algorithm 3 (Transformers) and Algorithm 2 (one block per\n"
              "tensor); the same on a randomly permuted H_tt (negative control); the old rule (finest split\n"
              "keeping >= --share of the mass, diagonal included) beside it; sweep.csv over both thresholds.\n"
              "H: exact, at --checkpoint of training (tt: AdamW as fig6; mlp: Adam, same --steps/--lr/--batch).\n"
              "The model-size flags (--V, --C, ...) and --order/--successors/--text apply to tt only.",
              opts, sizeof opts / sizeof *opts);
}

/* The range checks, and the models of --model: a kind, several comma-separated
 * or both (= tt,mlp), or a file; each checked (its flags, its file read). */
static void check_args(run *r)
{
    if (!(r->level > 0 && r->level <= 1)) die_user("--level must be in (0, 1] (got %g)", r->level);
    if (!(r->share > 0 && r->share <= 1)) die_user("--share must be in (0, 1] (got %g)", r->share);
    if (r->reps < 2 || r->reps > 10000) die_user("--reps must be in 2..10000 (got %d)", r->reps);
    if (r->save_h != 0 && r->save_h != 1) die_user("--save-h must be 0 or 1 (got %d)", r->save_h);
    const char *name = r->mc.model_name;
    if (!strcmp(name, "both")) name = "tt,mlp";
    char first[64];
    snprintf(first, sizeof first, "%.*s", (int)strcspn(name, ","), name);
    if (!model_kind_named(first)) { /* a file */
        r->nmodels = 1;
        model_ckpt_check(&r->k[0], &r->mc, name);
        return;
    }
    const model_kind *kinds[MAXK];
    r->nmodels = model_kinds_parse(name, kinds, MAXK, "--model");
    for (int i = 0; i < r->nmodels; i++) model_ckpt_check(&r->k[i], &r->mc, kinds[i]->name);
}

int main(int argc, char **argv)
{
    run r;
    parse_args(&r, argc, argv);
    check_args(&r);
    ensure_dir(r.out);
    r.rng = rng_new(seed_for((unsigned long)r.mc.cli.seed, SEED_BASELINES));
    r.perm_rng = rng_new(seed_for((unsigned long)r.mc.cli.seed, SEED_DRAWS));

    model_result res[MAXK];
    for (int i = 0; i < r.nmodels; i++) {
        char *dir = r.nmodels > 1 ? path_join(r.out, r.k[i].kind->name) : xstrdup(r.out);
        run_model(&r, i, dir, &res[i]);
        free(dir);
    }
    write_stats(&r, res, r.nmodels);
    write_claims(&r, res, r.nmodels);
    run_write_info(r.out, (unsigned long)r.mc.cli.seed);

    rng_free(r.rng);
    rng_free(r.perm_rng);
    model_cli_free(&r.mc);
    return 0;
}
