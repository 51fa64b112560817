/* Panels of directions over the worker threads: the model's hvp,
 * hvp_tensors, hess_cols and hess_cols_lower. A job is k directions: the
 * unit vectors e_{j0}..e_{j0+k-1} (Hessian columns), handed out kp at a time
 * as sub-panels (tt_run_subpanel, tt_rpass.c), or the dense rows of V, handed
 * out one at a time (tt_run_direction, tt_rpass1.c). Each worker owns a
 * workspace and writes only its own rows of out, so results do not depend on
 * the threads; a dense direction's result does not depend on its panel either.
 */
#include "tt_impl.h"
#include <cblas.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define KP_MAX 32        /* directions per sub-panel */
#define ROWS_TARGET 1024 /* chunk columns bc·T·kp aimed at (keeps the workspace cache-sized) */
#define TOKENS1 1024     /* tokens per chunk aimed at in the one-direction pass */

typedef struct {
    model *m;
    const double *V;   /* (k,P), or NULL for unit directions */
    double *out;       /* (k,P) */
    size_t j0;
    int k;
    int stop;          /* unit directions: R{∇θ} wanted for tensors >= stop only (hess_cols_lower: tensor(j0); else 0) */
    const int *t0, *t1; /* dense directions: direction d lives on tensors t0[d]..t1[d], only their rows wanted (NULL: all) */
    int next;          /* next direction to hand out */
    pthread_mutex_t lock;
} panel_job;

typedef struct {
    panel_job *job;
    rwork *w;          /* unit directions */
    rwork1 *w1;        /* dense directions */
} worker_arg;

static int tensor_of(const model *m, size_t j)
{
    int t = 0;
    while (t + 1 < m->ntensors && m->tensors[t + 1].offset <= j) t++;
    return t;
}

/* The workspaces of unit directions (panels 1) or of dense ones (0) freed. */
static void free_work(tt_impl *im, int panels)
{
    if (panels) {
        for (int i = 0; i < im->nwork; i++) tt_rwork_free(im->work[i]);
        free(im->work);
        im->work = NULL, im->nwork = 0;
    } else {
        for (int i = 0; i < im->nwork1; i++) tt_rwork1_free(im->work1[i]);
        free(im->work1);
        im->work1 = NULL, im->nwork1 = 0;
    }
}

void tt_free_work(tt_impl *im) { free_work(im, 1), free_work(im, 0); }

/* Workspaces for n workers with sub-panels of kp directions. */
static void ensure_work(model *m, int n, int kp)
{
    tt_impl *im = m->impl;
    int bc = im->bc_set ? im->bc_set : ROWS_TARGET / (im->c.T * tt_padded(kp));
    if (bc < 1) bc = 1;
    if (bc > im->B) bc = im->B;
    if (im->nwork >= n && tt_rwork_kp(im->work[0]) == kp && tt_rwork_bc(im->work[0]) == bc) return;
    free_work(im, 1);
    im->work = xmalloc((size_t)n * sizeof(rwork *));
    for (int i = 0; i < n; i++) im->work[i] = tt_rwork_new(m, kp, bc);
    im->nwork = n;
}

/* Workspaces for n workers of one direction, over chunks of about TOKENS1
 * tokens (the chunks depend on T and B only, so the sums over them do too). */
static void ensure_work1(model *m, int n)
{
    tt_impl *im = m->impl;
    int bc = im->bc_set ? im->bc_set : TOKENS1 / im->c.T;
    if (bc < 1) bc = 1;
    if (bc > im->B) bc = im->B;
    if (im->nwork1 >= n && tt_rwork1_bc(im->work1[0]) == bc) return;
    free_work(im, 0);
    memory_check("tinytransformer: R workspaces", n * tt_rwork1_bytes(&im->c, bc));
    im->work1 = xmalloc((size_t)n * sizeof(rwork1 *));
    for (int i = 0; i < n; i++) im->work1[i] = tt_rwork1_new(m, bc);
    im->nwork1 = n;
}

static void *panel_worker(void *arg)
{
    worker_arg *a = arg;
    panel_job *J = a->job;
    size_t P = J->m->P;
    int kp = J->V ? 1 : tt_rwork_kp(a->w);
    for (;;) {
        pthread_mutex_lock(&J->lock);
        int p0 = J->next;
        J->next += kp;
        pthread_mutex_unlock(&J->lock);
        if (p0 >= J->k) break;
        if (J->V) {
            int t0 = J->t0 ? J->t0[p0] : 0, t1 = J->t1 ? J->t1[p0] : J->m->ntensors - 1;
            tt_run_direction(J->m, a->w1, J->V + (size_t)p0 * P, J->out + (size_t)p0 * P, t0, t1);
        } else {
            int kk = J->k - p0 < kp ? J->k - p0 : kp;
            tt_run_subpanel(J->m, a->w, J->j0 + p0, kk, J->stop, J->out + (size_t)p0 * P);
        }
    }
    return NULL;
}

static int thread_count(const tt_impl *im)
{
    int n = im->threads ? im->threads : toolkit_threads();
    return n < 1 ? 1 : n > 64 ? 64 : n;
}

/* Base forward + backward, then the k directions of the job over the workers. */
static void run_panels(model *m, panel_job *J)
{
    tt_impl *im = m->impl;
    int k = J->k;
    if (k < 1) return;
    int kp = im->kp_max ? im->kp_max : KP_MAX;
    kp = J->V ? 1 : k < kp ? k : kp;
    int nsub = (k + kp - 1) / kp, nt = thread_count(im);
    nt = nt < nsub ? nt : nsub;
    /* one BLAS thread per worker: the R-pass dgemms are small, and BLAS's own
     * threads would only spin (the base pass's dgemms are small too) */
    int saved = openblas_get_num_threads();
    openblas_set_num_threads(1);
    tt_base_pass(m);
    if (J->V) {
        tt_base_fm(m);
        ensure_work1(m, nt);
    } else {
        ensure_work(m, nt, kp);
    }
    pthread_mutex_init(&J->lock, NULL);
    worker_arg args[64];
    for (int i = 0; i < nt; i++) args[i] = (worker_arg){J, J->V ? NULL : im->work[i], J->V ? im->work1[i] : NULL};
    pthread_t tid[64];
    for (int i = 1; i < nt; i++)
        if (pthread_create(&tid[i], NULL, panel_worker, &args[i])) DIE("cannot start a worker thread");
    panel_worker(&args[0]);
    for (int i = 1; i < nt; i++) pthread_join(tid[i], NULL);
    openblas_set_num_threads(saved);
    pthread_mutex_destroy(&J->lock);
}

void tt_hvp_fn(model *m, const double *V, double *HV, int k) { run_panels(m, &(panel_job){.m = m, .V = V, .out = HV, .k = k}); }

void tt_hvp_tensors_fn(model *m, const double *V, double *HV, int k, const int *t0, const int *t1)
{
    for (int d = 0; d < k; d++)
        if (t0[d] < 0 || t0[d] > t1[d] || t1[d] >= m->ntensors) DIE("hvp_tensors: tensors %d..%d", t0[d], t1[d]);
    run_panels(m, &(panel_job){.m = m, .V = V, .out = HV, .k = k, .t0 = t0, .t1 = t1});
}

void tt_hess_cols_fn(model *m, size_t j0, int k, double *out)
{
    if (j0 + (size_t)k > m->P) DIE("hess_cols %zu..%zu beyond P = %zu", j0, j0 + k, m->P);
    run_panels(m, &(panel_job){.m = m, .out = out, .j0 = j0, .k = k});
}

/* model.hess_cols_lower: unit directions in tensor t perturb only what follows
 * t, and their R-backward stops once it has produced the rows of tensors >=
 * tensor(j0): about half the work of hess_cols. */
void tt_hess_cols_lower_fn(model *m, size_t j0, int k, double *out)
{
    tt_impl_of(m);
    if (j0 + (size_t)k > m->P) DIE("hess_cols_lower %zu..%zu beyond P = %zu", j0, j0 + k, m->P);
    run_panels(m, &(panel_job){.m = m, .out = out, .j0 = j0, .k = k, .stop = tensor_of(m, j0)});
}
