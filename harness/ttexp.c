/* The tiny-Transformer training harness of the optimizer experiments
 * (train_compare, exp2_blockwise_gd, leave_out, ablation_vstat, trajectory):
 * see ttexp.h. */
#include "harness/ttexp.h"
#include "core/core.h"
#include "core/model.h"
#include "harness/data.h"
#include "harness/lr_grid.h"
#include "harness/seeds.h"
#include "hessian/hessian.h"
#include "optim/optim.h"
#include "tinytransformer/llama.h"
#include "tinytransformer/tt.h"
#include "verdict/verdict.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

void openblas_set_num_threads(int);

static llama_config llama_config_of_setup(const ttexp_setup *s)
{
    const tt_config *c = &s->cfg;
    return llama_cli_config(&s->llama_flags, c->V, c->C, c->layers, c->heads, c->M, c->T, c->seed);
}

model *ttexp_model_new(const ttexp_setup *s)
{
    if (!s->llama) return tt_new(&s->cfg);
    llama_config c = llama_config_of_setup(s);
    return llama_new(&c);
}

size_t ttexp_param_count(const ttexp_setup *s)
{
    if (!s->llama) return tt_param_count(&s->cfg);
    llama_config c = llama_config_of_setup(s);
    return llama_param_count(&c);
}

void ttexp_open(ttexp *e, const ttexp_setup *s)
{
    memset(e, 0, sizeof *e);
    e->setup = *s;
    e->s = s = &e->setup;
    e->data = token_source(&s->data, s->cfg.V, s->cfg.T, s->order, s->successors, s->data_seed);
    if (tt_data_vocab(e->data) != s->cfg.V)
        DIE("token source has %d symbols, the setup V = %d", tt_data_vocab(e->data), s->cfg.V);
    e->m = ttexp_model_new(s);
    e->params0 = xmalloc(e->m->P * sizeof(double));
    memcpy(e->params0, e->m->params, e->m->P * sizeof(double));
    if (s->train_set < 0) die_user("training set must have >= 0 sequences (got %d)", s->train_set);
    int ntok = s->train_set > 0 ? s->train_set : s->B;
    e->tokens = xmalloc((size_t)ntok * (s->cfg.T + 1) * sizeof(int));
    e->eval_tokens = xmalloc((size_t)s->eval_B * (s->cfg.T + 1) * sizeof(int));
    gsl_rng *r = rng_new(seed_for(s->data_seed, SEED_HELD_OUT));
    tt_data_held_out_batch(e->data, r, s->eval_B, s->cfg.T, e->eval_tokens);
    rng_free(r);
    e->eval_m = ttexp_model_new(s);
    e->eval_m->set_tokens(e->eval_m, e->eval_tokens, s->eval_B);
    e->batch_rng = rng_new(seed_for(s->seed, SEED_BATCHES));
    if (s->train_set > 0) tt_data_batch(e->data, e->batch_rng, s->train_set, s->cfg.T, e->tokens);
}

void ttexp_close(ttexp *e)
{
    tt_data_free(e->data);
    model_free(e->m);
    model_free(e->eval_m);
    free(e->params0);
    free(e->tokens);
    free(e->eval_tokens);
    rng_free(e->batch_rng);
}

/* Mean next-token loss on the held-out batch at the trainer's current parameters. */
double ttexp_eval_loss(ttexp *e)
{
    memcpy(e->eval_m->params, e->m->params, e->m->P * sizeof(double));
    return e->eval_m->loss(e->eval_m);
}

/* The best achievable mean loss on the Markov source: the entropy of the next
 * token given everything before it, averaged over positions t = 0..T-1. The
 * first `order` tokens are uniform (entropy log V while the target is one of
 * them); after that the loss is the row entropy H(c) averaged over the
 * distribution p_t of the context c (the last `order` tokens), which starts
 * uniform and moves as p'(c') = Σ p(c)·P(c, x), c' = c shifted by x. NAN for text. */
double ttexp_optimal_loss(const ttexp *e)
{
    const double *P = tt_data_transitions(e->data);
    if (!P) return NAN;
    int V = tt_data_vocab(e->data), k = tt_data_order(e->data), T = e->s->cfg.T;
    size_t C = 1;
    for (int i = 0; i < k; i++) C *= (size_t)V;
    double *p = xmalloc(C * sizeof(double)), *q = xmalloc(C * sizeof(double)), *h = xmalloc(C * sizeof(double));
    for (size_t c = 0; c < C; c++) {
        p[c] = 1.0 / C;
        h[c] = 0;
        for (int x = 0; x < V; x++)
            if (P[c * V + x] > 0) h[c] -= P[c * V + x] * log(P[c * V + x]);
    }
    double loss = 0;
    for (int t = 0; t < T; t++) {
        if (t + 1 < k) { /* the target is still one of the uniform first tokens */
            loss += log(V) / T;
            continue;
        }
        for (size_t c = 0; c < C; c++) loss += p[c] * h[c] / T;
        memset(q, 0, C * sizeof(double));
        for (size_t c = 0; c < C; c++)
            for (int x = 0; x < V; x++) q[(c % (C / V)) * V + x] += p[c] * P[c * V + x];
        memcpy(p, q, C * sizeof(double));
    }
    free(p);
    free(q);
    free(h);
    return loss;
}

/* ---- one training run ---------------------------------------------------------------- */

/* A method with the optimizer's default configuration (optim_defaults). */
ttexp_method ttexp_method_of(const char *label, optim_kind kind, const partition *blocks, double lr)
{
    return (ttexp_method){.label = label, .kind = kind, .cfg = optim_defaults(kind), .blocks = blocks, .lr = lr};
}

int ttexp_nevals(const ttexp_schedule *sc) { return (int)(sc->steps / sc->eval_every) + 1; }

typedef struct {
    ttexp *e;
    const ttexp_schedule *sc;
    ttexp_record *rec;
} ttexp_hook_ctx;

static void ttexp_set_batch(void *ctx, long step)
{
    ttexp_hook_ctx *h = ctx;
    (void)step;
    tt_data_batch(h->e->data, h->e->batch_rng, h->e->s->B, h->e->s->cfg.T, h->e->tokens);
    h->e->m->set_tokens(h->e->m, h->e->tokens, h->e->s->B);
}

static void ttexp_record_point(ttexp_hook_ctx *h, int k)
{
    model *m = h->e->m;
    if (h->rec->snapshots) memcpy(h->rec->snapshots + (size_t)k * m->P, m->params, m->P * sizeof(double));
    if (h->rec->eval_loss) h->rec->eval_loss[k] = ttexp_eval_loss(h->e);
}

static void ttexp_after_step(void *ctx, long step, double loss, double lr)
{
    ttexp_hook_ctx *h = ctx;
    (void)lr;
    if (h->rec->train_loss) h->rec->train_loss[step] = loss;
    if ((step + 1) % h->sc->eval_every == 0) ttexp_record_point(h, (int)((step + 1) / h->sc->eval_every));
}

/* Train from params0 with method mt; fills rec. A diverged run (non-finite loss)
 * stops; its remaining entries are NAN and final_eval is +inf. */
void ttexp_train(ttexp *e, const ttexp_method *mt, const ttexp_schedule *sc, ttexp_record *rec)
{
    model *m = e->m;
    if (sc->steps < 1 || sc->eval_every < 1 || sc->steps % sc->eval_every) DIE("eval_every must divide steps");
    memcpy(m->params, e->params0, m->P * sizeof(double));
    rng_seed(e->batch_rng, seed_for_nth(e->s->seed, SEED_BATCHES, mt->batch_offset));
    int nev = ttexp_nevals(sc);
    if (rec->train_loss) for (long s = 0; s < sc->steps; s++) rec->train_loss[s] = NAN;
    if (rec->eval_loss) for (int k = 0; k < nev; k++) rec->eval_loss[k] = NAN;
    ttexp_hook_ctx h = {.e = e, .sc = sc, .rec = rec};
    ttexp_record_point(&h, 0);
    int full = e->s->train_set > 0;
    if (full) m->set_tokens(m, e->tokens, e->s->train_set); /* every step: the whole set */
    optimizer *o = optim_new(mt->kind, &mt->cfg, m->P, mt->blocks, m);
    train_config tc = {.steps = sc->steps, .lr = mt->lr, .schedule = SCHED_WARMUP_COSINE, .warmup = sc->warmup,
                       .final_frac = 0.1};
    train_hooks hooks = {.set_batch = full ? NULL : ttexp_set_batch, .after_step = ttexp_after_step, .ctx = &h};
    int diverged = 0;
    rec->steps_done = train_run(m, o, &tc, &hooks, &diverged);
    optim_free(o);
    if (rec->final_params) memcpy(rec->final_params, m->params, m->P * sizeof(double));
    double final = ttexp_eval_loss(e);
    rec->final_eval = diverged || !isfinite(final) ? INFINITY : final;
    rec->final_train = NAN;
    if (full) {
        double train = m->loss(m);
        rec->final_train = diverged || !isfinite(train) ? INFINITY : train;
    }
    rec->score = INFINITY;
    if (!diverged && rec->train_loss) {
        long from = sc->steps - (sc->steps + 9) / 10;
        double sum = 0;
        for (long t = from; t < sc->steps; t++) sum += rec->train_loss[t];
        rec->score = sum / (double)(sc->steps - from);
        if (!isfinite(rec->score)) rec->score = INFINITY;
    }
}

/* ---- many runs on threads ----------------------------------------------------------------- */

typedef struct {
    const ttexp_setup *s;
    const ttexp_schedule *sc;
    ttexp_job *jobs;
    ttexp *e;                 /* (workers) each worker's model and data, opened at its first job */
    int *opened;
} ttexp_pool;

static void ttexp_item(void *arg, int j, int w)
{
    ttexp_pool *p = arg;
    if (!p->opened[w]) {
        ttexp_open(&p->e[w], p->s);
        p->opened[w] = 1;
    }
    ttexp_train(&p->e[w], &p->jobs[j].method, p->sc, &p->jobs[j].rec);
}

/* Runs every job (each from the setup's params0) on `threads` threads. */
void ttexp_run_jobs(const ttexp_setup *s, const ttexp_schedule *sc, ttexp_job *jobs, int njobs, int threads,
                    const char *label)
{
    progress prog;
    progress_start(&prog, label, njobs);
    int nw = parallel_workers(njobs, threads);
    ttexp_pool pool = {.s = s, .sc = sc, .jobs = jobs, .e = xcalloc((size_t)nw, sizeof(ttexp)),
                       .opened = xcalloc((size_t)nw, sizeof(int))};
    openblas_set_num_threads(1);
    parallel_for(njobs, nw, ttexp_item, &pool, &prog, 0);
    for (int w = 0; w < nw; w++)
        if (pool.opened[w]) ttexp_close(&pool.e[w]);
    free(pool.e);
    free(pool.opened);
    progress_end(&prog);
}

/* Allocates what a record keeps: train and eval curves, and parameter
 * snapshots when `snapshots` is set. */
void ttexp_record_alloc(ttexp_record *r, const ttexp_schedule *sc, size_t P, int snapshots)
{
    r->train_loss = xmalloc(sc->steps * sizeof(double));
    r->eval_loss = xmalloc(ttexp_nevals(sc) * sizeof(double));
    r->snapshots = snapshots ? xmalloc(checked_mul(ttexp_nevals(sc) * P, sizeof(double), "snapshots")) : NULL;
    r->final_params = xmalloc(P * sizeof(double));
}

void ttexp_record_free(ttexp_record *r)
{
    free(r->train_loss);
    free(r->eval_loss);
    free(r->snapshots);
    free(r->final_params);
}

void ttexp_jobs_free(ttexp_job *jobs, int n)
{
    for (int j = 0; jobs && j < n; j++) {
        ttexp_record_free(&jobs[j].rec);
        free(jobs[j].owned);
    }
    free(jobs);
}

/* ---- learning-rate searches ----------------------------------------------------------------- */

static void set_lr(ttexp_method *mt, double x, double **owned, void *ctx)
{
    (void)owned;
    (void)ctx;
    mt->lr = x;
}

void ttexp_search_run(ttexp_search *r, const char *label, const ttexp_setup *s, const ttexp_schedule *sc,
                      const ttexp_method *base, const lr_range *range, int points, ttexp_setter set, void *ctx,
                      int threads)
{
    memset(r, 0, sizeof *r);
    r->label = label;
    lr_grid_init(&r->g, range->lo, range->hi, points, range->lo_bound, range->hi_bound);
    if (!set) set = set_lr;
    size_t P = ttexp_param_count(s);
    ttexp_job *all = xcalloc(LR_GRID_MAX, sizeof *all); /* in the order evaluated */
    double xs[LR_GRID_MAX], at[LR_GRID_MAX];                /* proposed; the value of all[i] */
    int n = 0;
    for (int k, round = 0; (k = lr_grid_next(&r->g, xs)) > 0; round++) {
        for (int i = 0; i < k; i++) {
            ttexp_job *j = &all[n + i];
            j->method = *base;
            set(&j->method, xs[i], &j->owned, ctx);
            ttexp_record_alloc(&j->rec, sc, P, 0);
            at[n + i] = xs[i];
        }
        int quiet = core_quiet;
        core_quiet |= round > 0; /* one progress line per search */
        ttexp_run_jobs(s, sc, all + n, k, threads, label);
        core_quiet = quiet;
        for (int i = 0; i < k; i++) lr_grid_add(&r->g, xs[i], all[n + i].rec.score);
        n += k;
    }
    r->jobs = xcalloc(n, sizeof *r->jobs); /* in the grid's ascending order */
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (r->g.lr[k] != at[i]) k++;
        r->jobs[k] = all[i];
    }
    free(all);
    r->best = lr_grid_best(&r->g);
    r->status = lr_grid_status(&r->g);
}

void ttexp_search_free(ttexp_search *r)
{
    ttexp_jobs_free(r->jobs, r->g.n);
    r->jobs = NULL;
}

const ttexp_job *ttexp_search_best(const ttexp_search *r)
{
    if (r->best < 0) DIE("search %s: no run finished", r->label);
    return &r->jobs[r->best];
}

double ttexp_search_value(const ttexp_search *r)
{
    if (r->best < 0) DIE("search %s: no run finished", r->label);
    return r->g.lr[r->best];
}

int ttexp_search_at_bound(const ttexp_search *r) { return r->status != GRID_INTERIOR; }

/* Blockwise GD's learning rates from the exact Hessian at initialisation, on
 * the first hess_B held-out sequences: η_b = 1 / max(|λ|max(H_bb), λ_med), the
 * quadratic's 1/L per dense block (paper Fig. 3), floored at the median over
 * blocks λ_med so that a block that is flat at initialisation (query and key,
 * LayerNorm) does not get a step its later curvature cannot take. Returns λ_med. */
double ttexp_block_lr_from_hessian(ttexp *e, const partition *p, int hess_B, double *lr_b)
{
    model *m = e->m;
    memcpy(m->params, e->params0, m->P * sizeof(double));
    m->set_tokens(m, e->eval_tokens, hess_B < e->s->eval_B ? hess_B : e->s->eval_B);
    hessian_opts ho = hessian_defaults();
    ho.label = "hessian at init";
    double *H = hessian_full(m, &ho), *lam = xmalloc(p->nblocks * sizeof(double));
    for (int b = 0; b < p->nblocks; b++) {
        double *Hb = block_extract(H, m->P, &p->b[b]);
        lam[b] = sym_spectrum((int)p->b[b].n, Hb).absmax;
        free(Hb);
    }
    memcpy(lr_b, lam, p->nblocks * sizeof(double));
    double med = quantile(lam, p->nblocks, 0.5);
    for (int b = 0; b < p->nblocks; b++) lr_b[b] = 1 / fmax(lam[b], med);
    free(lam);
    free(H);
    return med;
}

/* grid.csv: every evaluated point of every search (see ttexp.h). */
outfile *ttexp_grid_open(const char *out) { return csv_open_in(out, "grid.csv", TTEXP_GRID_HEADER); }

void ttexp_write_search(outfile *f, const ttexp_search *r)
{
    const lr_grid *g = &r->g;
    for (int i = 0; i < g->n; i++) {
        const ttexp_record *rec = &r->jobs[i].rec;
        int extended = i < g->extended_lo || i >= g->n - g->extended_hi;
        csv_row(f, "%s,%.6g,%.10g,%.10g,%ld,%d,%d,%s", r->label, g->lr[i], rec->score, rec->final_eval, rec->steps_done,
                i == r->best, extended, grid_status_name(r->status));
    }
}

void ttexp_print_search(FILE *f, const ttexp_search *r)
{
    const lr_grid *g = &r->g;
    if (r->best < 0) {
        fprintf(f, "  %-34s every run diverged (%d points down to %.3g; NONE FINITE)\n", r->label, g->n, g->lr[0]);
        return;
    }
    fprintf(f, "  %-34s best %-10.4g %s, %d points in [%.3g, %.3g] (planned [%.3g, %.3g], bounds [%.3g, %.3g])\n",
            r->label, g->lr[r->best], grid_status_name(r->status), g->n, g->lr[0], g->lr[g->n - 1], g->plan_lo,
            g->plan_hi, g->lo_bound, g->hi_bound);
}

/* Curves of several runs side by side: "step,<col_0>,…" with the held-out loss
 * (eval = 1, one row per evaluation point) or the training loss (one row per step). */
void ttexp_write_curves(const char *path, const char *const *cols, const ttexp_record *const *recs, int n,
                               const ttexp_schedule *sc, int eval)
{
    char header[1024] = "step";
    for (int k = 0; k < n; k++) {
        size_t len = strlen(header);
        snprintf(header + len, sizeof header - len, ",%s", cols[k]);
    }
    outfile *f = csv_open(path, header);
    long rows = eval ? ttexp_nevals(sc) : sc->steps;
    for (long i = 0; i < rows; i++) {
        fprintf(outfile_fp(f), "%ld", eval ? i * sc->eval_every : i);
        for (int k = 0; k < n; k++)
            fprintf(outfile_fp(f), ",%.10g", eval ? recs[k]->eval_loss[i] : recs[k]->train_loss[i]);
        fputc('\n', outfile_fp(f));
    }
    csv_close(f);
}

/* Paired comparison of two parameter vectors on the held-out batch: the mean
 * over its B·T positions of loss_a − loss_b, and its standard error sd/√n. */
void ttexp_paired_diff(ttexp *e, const double *wa, const double *wb, double *mean, double *se)
{
    model *m = e->eval_m;
    int n = e->s->eval_B * e->s->cfg.T;
    double *la = xmalloc(n * sizeof(double)), *lb = xmalloc(n * sizeof(double));
    memcpy(m->params, wa, m->P * sizeof(double));
    m->token_losses(m, la);
    memcpy(m->params, wb, m->P * sizeof(double));
    m->token_losses(m, lb);
    double s1 = 0, s2 = 0;
    for (int i = 0; i < n; i++) {
        double d = la[i] - lb[i];
        s1 += d;
        s2 += d * d;
    }
    *mean = s1 / n;
    *se = sqrt(fmax(s2 / n - *mean * *mean, 0) / (n - 1));
    free(la);
    free(lb);
}

/* (L(w_x) − L(w_ref)) / (L(w_0) − L(w_ref)) on the held-out batch (see ttexp.h). */
double ttexp_excess_share(ttexp *e, const ttexp_record *x, const ttexp_record *ref, double *se)
{
    if (se) *se = NAN;
    if (!isfinite(ref->final_eval)) return NAN;
    model *m = e->eval_m;
    memcpy(m->params, e->params0, m->P * sizeof(double));
    double progress = m->loss(m) - ref->final_eval, d, d_se;
    if (!(progress > 0)) return NAN;
    if (!isfinite(x->final_eval)) return INFINITY;
    ttexp_paired_diff(e, x->final_params, ref->final_params, &d, &d_se);
    if (se) *se = d_se / progress;
    return d / progress;
}

int ttexp_diverged(const ttexp_record *r, const ttexp_schedule *sc)
{
    return r->steps_done < sc->steps || !isfinite(r->final_eval);
}

double ttexp_margin(double loser, double winner)
{
    if (isnan(loser) || isnan(winner)) return NAN;
    if (winner == INFINITY) return -INFINITY;
    return loser - winner;  /* +inf for a diverged loser */
}

/* The same on the training set: (F_x − F_ref)/(F_0 − F_ref), F_0 the set's loss at params0
 * (the loss before the first step, the same for every run). */
double ttexp_train_excess_share(ttexp *e, const ttexp_record *x, const ttexp_record *ref)
{
    if (e->s->train_set <= 0) DIE("ttexp_train_excess_share: no training set");
    double f0 = ref->train_loss[0], progress = f0 - ref->final_train;
    if (!isfinite(ref->final_train) || !(progress > 0)) return NAN;
    if (!isfinite(x->final_train)) return INFINITY;
    return (x->final_train - ref->final_train) / progress;
}

double ttexp_normalised_distance(const double *x, const double *a, const double *w0, size_t P)
{
    double xa = 0, xw = 0, aw = 0;
    for (size_t i = 0; i < P; i++) {
        xa += (x[i] - a[i]) * (x[i] - a[i]);
        xw += (x[i] - w0[i]) * (x[i] - w0[i]);
        aw += (a[i] - w0[i]) * (a[i] - w0[i]);
    }
    return xw + aw > 0 ? sqrt(xa / (xw + aw)) : NAN;
}

const claim_rule *ttexp_claim(const char *id)
{
    const claim_rule *rules;
    int n = claim_rules(&rules);
    for (int i = 0; i < n; i++)
        if (strcmp(rules[i].id, id) == 0) return &rules[i];
    DIE("no claim '%s' in the claim table", id);
}

static const char *claim_side_of(const claim_rule *r, double v)
{
    if (!isfinite(v)) return "not finite";
    int claimed = r->side == CLAIM_ABOVE ? v > r->threshold : v < r->threshold;
    return claimed ? "on the claim's side" : "not on the claim's side";
}

void ttexp_print_claim(FILE *f, const char *id, double value, double control)
{
    const claim_rule *r = ttexp_claim(id);
    const char *side = r->side == CLAIM_ABOVE ? "above" : "below";
    fprintf(f, "%s: %s\n  claim: %s %s %g; this seed %.4g (%s); control %.4g (%s, must be rejected over seeds)\n", r->id,
            r->claim, r->stat, side, r->threshold, value, claim_side_of(r, value), control,
            claim_side_of(r, control));
}

/* <out>/reference.csv: the initial held-out loss, the entropy floor and P (the
 * plots draw losses above the floor). */
void ttexp_write_reference(ttexp *e, const char *out)
{
    memcpy(e->m->params, e->params0, e->m->P * sizeof(double));
    char *path = path_join(out, "reference.csv");
    outfile *f = csv_open(path, "quantity,value");
    csv_row(f, "initial_eval_loss,%.10g", ttexp_eval_loss(e));
    csv_row(f, "optimal_loss,%.10g", ttexp_optimal_loss(e));
    csv_row(f, "P,%zu", e->m->P);
    csv_close(f);
    free(path);
}

void ttexp_args_finish(ttexp_args *a, long quick_steps, long paper_steps, int quick_grid, int paper_grid, int max_grid)
{
    a->paper = scale_parse(a->scale);
    if (a->steps == 0) a->steps = a->paper ? paper_steps : quick_steps;
    if (a->grid == 0) a->grid = a->paper ? paper_grid : quick_grid;
    if (a->steps < 20) die_user("--steps must be >= 20 (got %ld)", a->steps);
    if (a->grid < 2 || a->grid > max_grid) die_user("--lrs must be in 2..%d (got %d)", max_grid, a->grid);
    if (a->seed < 0 || a->data_seed < 0) die_user("seeds must be >= 0");
    if (a->threads < 1 || a->threads > 64) die_user("--threads must be in 1..64 (got %d)", a->threads);
    blas_memory_guard(a->threads, "--threads 1"); /* the training runs call BLAS at once */
    if (a->held_out < 16 || a->held_out > 65536) die_user("--held-out must be in 16..65536 (got %d)", a->held_out);
    if (strcmp(a->model, "tt") != 0 && strcmp(a->model, "llama") != 0)
        die_user("--model must be tt or llama (got '%s')", a->model);
    llama_cli_refuse_unused(&a->llama, strcmp(a->model, "llama") == 0);
}

ttexp_setup ttexp_default_setup(const ttexp_args *a)
{
    ttexp_setup s = {.cfg = tt_defaults(), .B = 64, .eval_B = a->held_out, .order = 2, .successors = 2,
                     .seed = (unsigned long)a->seed, .data_seed = (unsigned long)a->data_seed, .data = a->data,
                     .llama = strcmp(a->model, "llama") == 0, .llama_flags = a->llama};
    s.cfg.seed = seed_for(s.seed, SEED_INIT);
    if (token_source_is_text(&s.data)) { /* the model's vocabulary is the text's */
        tt_data *d = token_source(&s.data, s.cfg.V, s.cfg.T, s.order, s.successors, s.data_seed);
        s.cfg.V = tt_data_vocab(d);
        tt_data_free(d);
    }
    return s;
}

ttexp_setup ttexp_layered_setup(const ttexp_args *a, int *layers)
{
    if (*layers == 0) *layers = a->paper ? 4 : 2;
    if (*layers < 1 || *layers > 12) die_user("--layers must be in 1..12 (got %d)", *layers);
    ttexp_setup s = ttexp_default_setup(a);
    s.cfg.layers = *layers;
    s.cfg.bias = 0;
    return s;
}

ttexp_schedule ttexp_schedule_of(long steps)
{
    int every = 1;
    for (int k = 20; k > 1; k--)
        if (steps % k == 0) {
            every = (int)(steps / k);
            break;
        }
    return (ttexp_schedule){.steps = steps, .warmup = steps / 20, .eval_every = every};
}

ttexp_schedule ttexp_begin(ttexp *e, ttexp_setup s, const ttexp_args *a)
{
    if (s.llama) { /* its sizes, before any output */
        llama_config c = llama_config_of_setup(&s);
        llama_check_config(&c);
    }
    ensure_dir(a->out);
    ttexp_open(e, &s);
    token_source_write_vocab(e->data, a->out);
    return ttexp_schedule_of(a->steps);
}
