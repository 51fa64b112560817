/* partition_check — the Principle-1 checker (paper section "Principle for the
 * Partition Strategy"): "partition parameters into blocks such that each block
 * is associated with the smallest dense sub-block in Hessian".
 *
 * For each tensor t of a model, on the exact Hessian at a training checkpoint:
 * the mass ratio Σ_b ‖H_bb‖_F² / ‖H_tt‖_F² inside the tensor's own diagonal
 * block H_tt for each candidate split — whole, by head (query/key/value), by
 * row (output neuron; token for embed/output; position for pos), by column
 * (input neuron), by entry (Adam's per-coordinate view) — with the ratio of
 * random blocks of the same sizes, and the finest split that keeps at least
 * --share of the mass. "Finest" = the most blocks (ties: the larger mass
 * ratio); whole always keeps 100%, so there is always an answer. Printed and
 * written next to the split the paper's Algorithm 3 uses for the tensor's role.
 *
 * Models: --model tt (the tiny Transformer; the same flags and training as
 * fig6, so the same H) or --model mlp (the 1-hidden-layer MLP of mlp/mlp.h on
 * Fashion-MNIST pooled 4x4 or the synthetic set; Adam with the same --steps,
 * --lr, --batch and --checkpoint).
 *
 * Outputs in --out: candidates.csv (tensor × split), summary.csv (per tensor:
 * its share of ‖H‖², the finest split above the share, Algorithm 3's split and
 * its mass ratio), H.npy, claims.txt.
 */
#include "harness/harness.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    ckpt_cli cli;
    const char *model_name, *out, *mlp_data, *mlp_act;
    int mlp_width, mlp_pool, mlp_eval_n, reps;
    double share;
    /* state */
    model *m;          /* at the checkpoint */
    double *H;
    long step, total;
    tt_ckpt tt;        /* --model tt */
    mlp_ckpt mlp;      /* --model mlp */
    gsl_rng *rng;      /* random baselines */
} run;

/* ---- the check ---------------------------------------------------------------------------- */

typedef struct {
    int n;                                  /* candidates */
    split_kind split[SPLIT_CANDIDATES_MAX];
    int nblocks[SPLIT_CANDIDATES_MAX];
    double mass[SPLIT_CANDIDATES_MAX], rand[SPLIT_CANDIDATES_MAX];
    int finest, alg3;                       /* indices into the candidates; alg3 -1 if not a candidate */
    double fro2;                            /* ‖H_tt‖² */
} tensor_check;

/* A tensor whose ‖H_tt‖_F is below ZERO_REL ‖H‖_F has no curvature beyond round-off
 * (e.g. the key bias, which softmax ignores exactly). */
#define ZERO_REL 1e-12

static tensor_check check_tensor(run *r, int t, const partition *alg3, double total, outfile *cand)
{
    const model *m = r->m;
    const tensor_info *ti = &m->tensors[t];
    tensor_check c = {.finest = -1, .alg3 = -1};
    double *Htt = tensor_hessian(r->H, m->P, m, t);
    size_t n = tensor_size(ti);
    c.fro2 = frobenius_sq(n * n, Htt);
    if (c.fro2 <= ZERO_REL * ZERO_REL * total) c.fro2 = 0;
    c.n = tensor_splits(m, t, c.split);
    int a3 = partition_split_of(alg3, m, t);
    for (int i = 0; i < c.n; i++) {
        partition *p = tensor_local_partition(m, t, c.split[i]);
        c.nblocks[i] = p->nblocks;
        double sd;
        c.mass[i] = c.fro2 > 0 ? mass_ratio(Htt, n, p) : NAN;
        if (c.fro2 > 0) mass_ratio_random(Htt, n, p, r->rng, r->reps, &c.rand[i], &sd);
        else c.rand[i] = sd = NAN;
        if ((int)c.split[i] == a3) c.alg3 = i;
        partition_free(p);
        csv_row(cand, "%s,%s,%s,%s,%d,%zu,%.10g,%.10g,%.10g,%d", ti->name, role_name(ti->role), split_name(c.split[i]),
                split_meaning(ti, c.split[i]), c.nblocks[i], n / c.nblocks[i], c.mass[i], c.rand[i], sd,
                c.mass[i] >= r->share);
    }
    if (c.fro2 > 0) c.finest = finest_above_share(c.n, c.nblocks, c.mass, r->share);
    free(Htt);
    return c;
}

static const char *cand_name(const tensor_info *ti, const tensor_check *c, int i, char *buf, size_t len)
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

int main(int argc, char **argv)
{
    run r = {0};
    ckpt_cli_init(&r.cli);
    r.model_name = "tt";
    r.out = "results/partition_check";
    r.mlp_data = "fashion-mnist";
    r.mlp_act = "tanh";
    r.mlp_width = 8;
    r.mlp_pool = 4;
    r.mlp_eval_n = 1000;
    r.reps = 10;
    r.share = 0.9;
    const cli_opt opts[] = {
        {"model", OPT_STRING, &r.model_name, "tt (the tiny Transformer, as fig6) or mlp (the 1-hidden-layer MLP)"},
        {"share", OPT_DOUBLE, &r.share, "share of a tensor's Hessian mass the chosen split must keep"},
        {"reps", OPT_INT, &r.reps, "random permutations for the mass-ratio baselines"},
        CKPT_CLI_OPTS(&r.cli),
        {"mlp-data", OPT_STRING, &r.mlp_data, "--model mlp: fashion-mnist or synthetic"},
        {"mlp-width", OPT_INT, &r.mlp_width, "--model mlp: hidden neurons"},
        {"mlp-pool", OPT_INT, &r.mlp_pool, "--model mlp: k x k average pooling of the images"},
        {"mlp-act", OPT_STRING, &r.mlp_act, "--model mlp: relu, tanh, gelu or linear"},
        {"mlp-eval-n", OPT_INT, &r.mlp_eval_n, "--model mlp: test images the Hessian is taken on"},
        {"out", OPT_STRING, &r.out, "output folder"},
    };
    cli_parse(argc, argv,
              "Principle-1 checker: for each tensor, the Hessian mass ratio sum_b ||H_bb||^2 / ||H_tt||^2 of\n"
              "each candidate split (whole, by head, by output neuron / token / position, by input neuron,\n"
              "by entry) inside the tensor's diagonal block, the finest split keeping >= --share of it\n"
              "(finest = most blocks), and the split of the paper's Algorithm 3 for the tensor's role.\n"
              "H: exact, at --checkpoint of training (tt: AdamW as fig6; mlp: Adam, same --steps/--lr/--batch).\n"
              "The model-size flags (--V, --C, ...) and --order/--successors/--text apply to tt only.",
              opts, sizeof opts / sizeof *opts);
    int is_tt = strcmp(r.model_name, "tt") == 0;
    if (!is_tt && strcmp(r.model_name, "mlp") != 0) die_user("--model must be tt or mlp (got '%s')", r.model_name);
    if (!(r.share > 0 && r.share <= 1)) die_user("--share must be in (0, 1] (got %g)", r.share);
    if (r.reps < 2 || r.reps > 10000) die_user("--reps must be in 2..10000 (got %d)", r.reps);
    tt_ckpt_setup setup = ckpt_cli_setup(&r.cli);
    mlp_ckpt_setup ms = {r.mlp_data, r.mlp_act, r.mlp_width, r.mlp_pool, r.mlp_eval_n, r.cli.batch, r.cli.steps,
                         r.cli.lr, r.cli.frac, (unsigned long)r.cli.seed, (unsigned long)r.cli.data_seed};
    if (!is_tt) {
        if (strcmp(r.mlp_data, "fashion-mnist") != 0 && strcmp(r.mlp_data, "synthetic") != 0)
            die_user("--mlp-data must be fashion-mnist or synthetic (got '%s')", r.mlp_data);
        if (r.mlp_width < 1 || r.mlp_width > 4096) die_user("--mlp-width must be in 1..4096 (got %d)", r.mlp_width);
        if (r.mlp_pool < 1 || r.mlp_pool > 8) die_user("--mlp-pool must be in 1..8 (got %d)", r.mlp_pool);
        if (r.mlp_eval_n < 1) die_user("--mlp-eval-n must be >= 1 (got %d)", r.mlp_eval_n);
        act_parse(r.mlp_act);
    }
    ensure_dir(r.out);

    if (is_tt) {
        char *train_dir = path_join(r.out, "train");
        tt_ckpt_hessian(&setup, train_dir, &r.tt);
        free(train_dir);
        r.m = r.tt.m;
        r.H = r.tt.H;
        r.step = r.tt.step;
        r.total = setup.train.steps;
    } else {
        mlp_ckpt_hessian(&ms, &r.mlp);
        r.m = r.mlp.m;
        r.H = r.mlp.H;
        r.step = r.mlp.step;
        r.total = r.mlp.total;
    }
    r.rng = rng_new(seed_for((unsigned long)r.cli.seed, SEED_BASELINES));
    const model *m = r.m;
    partition *alg3 = partition_alg3(m, 0);
    double total = frobenius_sq(m->P * m->P, r.H);

    outfile *cand = csv_open_in(r.out, "candidates.csv", "tensor,role,split,meaning,blocks,block_size,mass_ratio,random_mass_ratio,"
                                   "random_mass_ratio_sd,keeps_share");
    outfile *sum = csv_open_in(r.out, "summary.csv", "tensor,role,rows,cols,size,hessian_share,finest_split,finest_meaning,finest_blocks,"
                                  "finest_mass_ratio,alg3_split,alg3_meaning,alg3_blocks,alg3_mass_ratio,agree");
    tensor_check *checks = xmalloc((size_t)m->ntensors * sizeof(tensor_check));
    int nz = 0, keep_ok = 0, agree = 0;
    char disagree[2048] = "", below[2048] = "";
    if (!core_quiet)
        printf("%-22s %-9s %6s %8s  %-22s %-22s %s\n", "tensor", "role", "size", "H share", "finest >= share",
               "Algorithm 3", "mass ratios (whole/heads/rows/cols/entries)");
    for (int t = 0; t < m->ntensors; t++) {
        const tensor_info *ti = &m->tensors[t];
        tensor_check *c = &checks[t];
        *c = check_tensor(&r, t, alg3, total, cand);
        char fbuf[64], abuf[64];
        cand_name(ti, c, c->finest, fbuf, sizeof fbuf);
        cand_name(ti, c, c->alg3, abuf, sizeof abuf);
        int zero = !(c->fro2 > 0), same = c->finest >= 0 && c->finest == c->alg3;
        double amass = c->alg3 >= 0 ? c->mass[c->alg3] : NAN;
        if (!zero) {
            nz++;
            agree += same;
            keep_ok += amass >= r.share;
            size_t dl = strlen(disagree), bl = strlen(below);
            if (!same) snprintf(disagree + dl, sizeof disagree - dl, "%s%s (%s vs %s)", dl ? "; " : "", ti->name, fbuf, abuf);
            if (!(amass >= r.share)) snprintf(below + bl, sizeof below - bl, "%s%s %.3f", bl ? "; " : "", ti->name, amass);
        }
        csv_row(sum, "%s,%s,%d,%d,%zu,%.10g,%s,%s,%d,%.10g,%s,%s,%d,%.10g,%s", ti->name, role_name(ti->role), ti->rows,
                ti->cols, tensor_size(ti), total > 0 ? c->fro2 / total : NAN,
                c->finest >= 0 ? split_name(c->split[c->finest]) : "none",
                c->finest >= 0 ? split_meaning(ti, c->split[c->finest]) : "none",
                c->finest >= 0 ? c->nblocks[c->finest] : 0, c->finest >= 0 ? c->mass[c->finest] : NAN,
                c->alg3 >= 0 ? split_name(c->split[c->alg3]) : "none",
                c->alg3 >= 0 ? split_meaning(ti, c->split[c->alg3]) : "none", c->alg3 >= 0 ? c->nblocks[c->alg3] : 0,
                amass, zero ? "zero-hessian" : same ? "yes" : "no");
        if (!core_quiet) {
            printf("%-22s %-9s %6zu %8.2e  %-22s %-22s", ti->name, role_name(ti->role), tensor_size(ti),
                   total > 0 ? c->fro2 / total : NAN, zero ? "(H_tt = 0)" : fbuf, abuf);
            for (int i = 0; i < c->n; i++) printf(" %s %.3f", split_name(c->split[i]), c->mass[i]);
            printf("\n");
        }
    }
    csv_close(cand);
    csv_close(sum);

    size_t shape[2] = {m->P, m->P};
    npy_write_in(r.out, "H.npy", r.H, 2, shape);

    outfile *o = outfile_open_in(r.out, "claims.txt");
    FILE *fp = outfile_fp(o);
    const char *what = is_tt ? "1-layer Transformer" : "1-hidden-layer MLP";
    fprintf(fp, "%s: Algorithm 3's blocks keep >= %.0f%% of each tensor's Hessian mass (%s; %d of %d tensors with "
                "nonzero H_tt)%s%s\n",
            keep_ok == nz ? "PASS" : "FAIL", 100 * r.share, what, keep_ok, nz, keep_ok == nz ? "" : "; below: ",
            below);
    fprintf(fp, "%s: Algorithm 3's split is the finest that keeps >= %.0f%% (Principle 1 recovers Algorithm 3) (%s; "
                "%d of %d tensors agree)%s%s\n",
            agree == nz ? "PASS" : "FAIL", 100 * r.share, what, agree, nz, agree == nz ? "" : "; disagree (finest vs "
            "Algorithm 3): ", disagree);
    fprintf(fp, "rule: mass ratio of a split = sum_b ||H_bb||_F^2 / ||H_tt||_F^2 inside the tensor's diagonal block; "
                "candidates whole, heads (query/key/value), rows, cols, entries; finest = most blocks among those with "
                "ratio >= %.2f (ties: larger ratio); tensors with ||H_tt||_F <= %.0e ||H||_F (no curvature beyond round-off, e.g. the key bias) are left out\n",
            r.share, ZERO_REL);
    fprintf(fp, "context: P = %zu; H at step %ld of %ld (%s)\n", m->P, r.step, r.total,
            is_tt ? "AdamW, as fig6" : "Adam, cosine");
    outfile_commit(o);
    run_write_info(r.out, (unsigned long)r.cli.seed);

    free(checks);
    partition_free(alg3);
    rng_free(r.rng);
    if (is_tt) {
        tt_ckpt_free(&r.tt);
    } else {
        mlp_ckpt_free(&r.mlp);
    }
    return 0;
}
