/* value_split — Adam-mini with value split by output neuron (the paper's strategy I, its
 * default) against value as one block (strategy II), on short and on long runs. The paper
 * (App. "More Discussions on the Partition Strategies of Value"): "we find that strategy (I)
 * works well when the number of total training steps is large ... On the other hand, we find
 * that strategy (II) works better when the number of total training steps is small."
 *
 * The paper's 1-layer Transformer (V 8, C 16, 4 heads, M 32, T 8, biases), batch 64, weight
 * decay 0.1, Algorithm 3 elsewhere (partition_alg3(m, 0) vs partition_alg3(m, 1)). Each
 * partition and length gets its own learning-rate search. Compared on the held-out batch as
 * d = min(1, (L_whole − L_neuron)/(L_0 − L_neuron)), the excess of whole over neuron as a share
 * of neuron's progress (negative: whole is better). Claims: d_short < −0.02 (whole better on
 * short runs) and d_long > −0.02 (neuron not worse on long runs). Controls: on the short runs,
 * neuron with another batch order in whole's place (batch noise only); on the long runs,
 * Adam-mini with one block for the whole model in neuron's place (a partition that is worse,
 * which the "not worse" rule must catch). docs/value_split.md.
 */
#include "core/core.h"
#include "core/model.h"
#include "harness/coarse_util.h"
#include "harness/lr_grid.h"
#include "harness/ttexp.h"
#include "optim/optim.h"
#include "verdict/verdict.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { V_NEURON, V_WHOLE, V_ONE, NPART };
static const char *NAMES[NPART] = {"neuron", "whole", "one_block"};
enum { SHORT, LONG, NLEN };
static const char *LEN_NAMES[NLEN] = {"short", "long"};

/* Searched: neuron and whole at both lengths; one block at the long length (the control). */
static const int SEARCHED[NLEN][NPART] = {{1, 1, 0}, {1, 1, 1}};

typedef struct {
    ttexp_args a;
    long short_steps;
} split_args;

typedef struct {
    split_args x;
    ttexp e;
    ttexp_schedule sc[NLEN];
    partition *parts[NPART];
    char labels[NLEN][NPART][40];       /* the searches keep a pointer to their label */
    ttexp_search grids[NLEN][NPART];
    const ttexp_record *best[NLEN][NPART]; /* each search's best run; NULL: not searched or none finished */
    ttexp_job other;                    /* the short control: neuron with another batch order */
    int at_bound, nsearch;
    double L0;                          /* the held-out loss at the start */
} study;

/* The claims' statistics d = (L_whole - L_neuron)/(L_0 - L_neuron) (capped) and their controls. */
typedef struct {
    double d[NLEN], control[NLEN];
} split_stats;

static split_args parse_args(int argc, char **argv)
{
    split_args x = {.a = TTEXP_ARGS("results/value_split")};
    const cli_opt opts[] = {
        TTEXP_OPTS(x.a, "quick (short 100 and long 400 steps, 5-point first grids) or paper (300 and 3000, 7)",
                   "points of each learning-rate search's first grid, 2..50 (0: from --scale)"),
        {"short", OPT_LONG, &x.short_steps, "steps of the short runs, 20..--steps-1 (0: from --scale); --steps: the long runs"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Adam-mini with value split by output neuron (partition strategy I, the default) against value as\n"
              "one block (strategy II), Algorithm 3 elsewhere, on the paper's 1-layer Transformer (V 8, C 16,\n"
              "4 heads, M 32, T 8, biases, batch 64), weight decay 0.1, beta (0.9, 0.999), 5% warmup then cosine\n"
              "to 10%, on short runs (--short) and long runs (--steps), each partition and length with its own\n"
              "learning-rate search (log grid, first [1e-3, 1e-1], extended at its edges; lowest training loss\n"
              "over the last 10% wins). Statistic: d = (L_whole - L_neuron)/(L_0 - L_neuron) on 512 held-out\n"
              "sequences (capped at 1). Claims: d_short < -0.02, d_long > -0.02; controls: neuron with another\n"
              "batch order (short), one block for the whole model in neuron's place (long). docs/value_split.md.",
              opts, sizeof opts / sizeof *opts);
    ttexp_args_finish(&x.a, 400, 3000, 5, 7, 50);
    if (x.short_steps == 0) x.short_steps = x.a.paper ? 300 : 100;
    if (x.short_steps < 20 || x.short_steps >= x.a.steps)
        die_user("--short must be in 20..%ld (below --steps; got %ld)", x.a.steps - 1, x.short_steps);
    return x;
}

static void study_open(study *st, const split_args *x)
{
    st->x = *x;
    st->sc[LONG] = ttexp_begin(&st->e, ttexp_default_setup(&x->a), &x->a);
    st->sc[SHORT] = ttexp_schedule_of(x->short_steps);
    st->parts[V_NEURON] = partition_alg3(st->e.m, 0);
    st->parts[V_WHOLE] = partition_alg3(st->e.m, 1);
    st->parts[V_ONE] = partition_whole(st->e.m);
}

/* Every searched partition and length on its own lr grid (grid.csv). */
static void search_all(study *st)
{
    outfile *f = ttexp_grid_open(st->x.a.out);
    for (int l = 0; l < NLEN; l++)
        for (int p = 0; p < NPART; p++) {
            if (!SEARCHED[l][p]) continue;
            char *label = st->labels[l][p];
            snprintf(label, sizeof st->labels[l][p], "%s_%s", NAMES[p], LEN_NAMES[l]);
            ttexp_method mt = ttexp_method_of(label, OPTIM_ADAM_MINI, st->parts[p], 0);
            mt.cfg.weight_decay = 0.1;
            ttexp_search_run(&st->grids[l][p], label, st->e.s, &st->sc[l], &mt, lr_range_of(LR_ADAM_MINI),
                             st->x.a.grid, NULL, NULL, st->x.a.threads);
            ttexp_write_search(f, &st->grids[l][p]);
            st->at_bound += ttexp_search_at_bound(&st->grids[l][p]);
            st->nsearch++;
        }
    csv_close(f);
    for (int l = 0; l < NLEN; l++)
        if (st->grids[l][V_NEURON].best < 0)
            die_diverged("value by neuron (the reference) diverged at every learning rate of its %s grid", LEN_NAMES[l]);
}

/* The short control: neuron at its best lr with another batch order. */
static void run_control(study *st)
{
    st->other = (ttexp_job){.method = ttexp_search_best(&st->grids[SHORT][V_NEURON])->method};
    st->other.method.batch_offset = 1;
    ttexp_record_alloc(&st->other.rec, &st->sc[SHORT], st->e.m->P, 0);
    ttexp_run_jobs(st->e.s, &st->sc[SHORT], &st->other, 1, 1, "neuron, other batches");
}

static double final_or_inf(const ttexp_record *r) { return r ? r->final_eval : INFINITY; }

static split_stats judge(study *st)
{
    for (int l = 0; l < NLEN; l++)
        for (int p = 0; p < NPART; p++)
            if (SEARCHED[l][p] && st->grids[l][p].best >= 0) st->best[l][p] = &ttexp_search_best(&st->grids[l][p])->rec;
    const ttexp_record *(*best)[NPART] = st->best;
    st->L0 = best[LONG][V_NEURON]->eval_loss[0];
    split_stats r;
    for (int l = 0; l < NLEN; l++)
        r.d[l] = capped_loss_share(final_or_inf(best[l][V_WHOLE]), best[l][V_NEURON]->final_eval, st->L0);
    r.control[SHORT] = capped_loss_share(st->other.rec.final_eval, best[SHORT][V_NEURON]->final_eval, st->L0);
    r.control[LONG] = capped_loss_share(final_or_inf(best[LONG][V_WHOLE]),
                                        best[LONG][V_ONE] ? best[LONG][V_ONE]->final_eval : NAN, st->L0);
    return r;
}

/* runs.csv (every search's best run and the control) and eval_<length>.csv. */
static void write_runs(const study *st, const split_stats *r)
{
    const ttexp_record *const(*best)[NPART] = st->best;
    outfile *f = csv_open_in(st->x.a.out, "runs.csv", "length,steps,partition,lr,final_eval,excess_over_neuron,"
                                                      "diverged,spikes,blocks");
    for (int l = 0; l < NLEN; l++)
        for (int p = 0; p < NPART; p++) {
            if (!SEARCHED[l][p]) continue;
            const ttexp_record *b = best[l][p];
            double lr = b ? ttexp_search_value(&st->grids[l][p]) : NAN;
            csv_row(f, "%s,%ld,%s,%.6g,%.10g,%.10g,%d,%ld,%d", LEN_NAMES[l], st->sc[l].steps, NAMES[p], lr,
                    final_or_inf(b), capped_loss_share(final_or_inf(b), best[l][V_NEURON]->final_eval, st->L0),
                    !b || b->steps_done < st->sc[l].steps,
                    b ? count_spikes(b->train_loss, b->steps_done, COARSE_SPIKE_FACTOR) : 0L, st->parts[p]->nblocks);
        }
    const ttexp_job *o = &st->other;
    csv_row(f, "short,%ld,neuron_other_batches,%.6g,%.10g,%.10g,%d,%ld,%d", st->sc[SHORT].steps, o->method.lr,
            o->rec.final_eval, r->control[SHORT], o->rec.steps_done < st->sc[SHORT].steps,
            count_spikes(o->rec.train_loss, o->rec.steps_done, COARSE_SPIKE_FACTOR), st->parts[V_NEURON]->nblocks);
    csv_close(f);
    for (int l = 0; l < NLEN; l++) {
        const ttexp_record *recs[NPART];
        const char *cols[NPART];
        int n = 0;
        for (int p = 0; p < NPART; p++)
            if (best[l][p]) cols[n] = NAMES[p], recs[n++] = best[l][p];
        char name[32];
        snprintf(name, sizeof name, "eval_%s.csv", LEN_NAMES[l]);
        char *path = path_join(st->x.a.out, name);
        ttexp_write_curves(path, cols, recs, n, &st->sc[l], 1);
        free(path);
    }
}

static void write_stats(const study *st, const split_stats *r)
{
    outfile *f = stats_open(st->x.a.out);
    stats_put(f, "value_split.short.whole_excess", r->d[SHORT]);
    stats_put(f, "value_split.control.short.other_batches_excess", r->control[SHORT]);
    stats_put(f, "value_split.long.whole_excess", r->d[LONG]);
    stats_put(f, "value_split.control.long.whole_over_one_block", r->control[LONG]);
    stats_put(f, "value_split.flip", r->d[SHORT] - r->d[LONG]);
    for (int l = 0; l < NLEN; l++)
        for (int p = 0; p < NPART; p++)
            if (SEARCHED[l][p])
                stats_putf(f, st->best[l][p] ? ttexp_search_value(&st->grids[l][p]) : NAN, "value_split.lr.%s.%s",
                           LEN_NAMES[l], NAMES[p]);
    stats_put(f, "value_split.grids_at_bound", st->at_bound);
    csv_close(f);
}

static void write_claims(study *st, const split_stats *r)
{
    outfile *f = outfile_open_in(st->x.a.out, "claims.txt");
    FILE *c = outfile_fp(f);
    fprintf(c, "value_split: Adam-mini, value by output neuron vs one block, 1-layer Transformer, P = %zu, short %ld and "
               "long %ld steps, seed %ld; held-out loss at the start %.4f, entropy floor %.4f\n", st->e.m->P,
            st->sc[SHORT].steps, st->sc[LONG].steps, st->x.a.seed, st->L0, ttexp_optimal_loss(&st->e));
    fprintf(c, "learning-rate searches (%d of %d not interior):\n", st->at_bound, st->nsearch);
    for (int l = 0; l < NLEN; l++)
        for (int p = 0; p < NPART; p++)
            if (SEARCHED[l][p]) ttexp_print_search(c, &st->grids[l][p]);
    for (int l = 0; l < NLEN; l++)
        fprintf(c, "%s (%ld steps): held-out neuron %.4f, whole %.4f; d = (L_whole - L_neuron)/(L_0 - L_neuron) = "
                   "%+.4f\n", LEN_NAMES[l], st->sc[l].steps, st->best[l][V_NEURON]->final_eval,
                final_or_inf(st->best[l][V_WHOLE]), r->d[l]);
    fprintf(c, "controls: short, neuron with another batch order %+.4f; long, whole over one block %+.4f\n",
            r->control[SHORT], r->control[LONG]);
    ttexp_print_claim(c, "value_split.whole_better_short", r->d[SHORT], r->control[SHORT]);
    ttexp_print_claim(c, "value_split.neuron_fine_long", r->d[LONG], r->control[LONG]);
    outfile_commit_echo(f);
}

static void study_close(study *st)
{
    ttexp_record_free(&st->other.rec);
    for (int l = 0; l < NLEN; l++)
        for (int p = 0; p < NPART; p++)
            if (SEARCHED[l][p]) ttexp_search_free(&st->grids[l][p]);
    for (int p = 0; p < NPART; p++) partition_free(st->parts[p]);
    ttexp_close(&st->e);
}

int main(int argc, char **argv)
{
    split_args x = parse_args(argc, argv);
    study *st = xcalloc(1, sizeof *st);
    study_open(st, &x);
    search_all(st);
    run_control(st);
    split_stats r = judge(st);
    write_runs(st, &r);
    ttexp_write_reference(&st->e, x.a.out);
    write_stats(st, &r);
    write_claims(st, &r);
    run_write_info(x.a.out, (unsigned long)x.a.seed);
    study_close(st);
    free(st);
    return 0;
}
