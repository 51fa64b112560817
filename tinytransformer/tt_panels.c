/* Panels of directions over the worker threads: the model's hvp, hess_cols
 * and hess_cols_lower. A job is k directions — the rows of V, or the unit
 * vectors e_{j0}..e_{j0+k-1} when V is NULL — handed out kp at a time
 * (tt_run_subpanel, tt_rpass.c). Each worker owns a workspace and writes only
 * its own rows of out, so results do not depend on the threads.
 */
#include "tt_impl.h"
#include <cblas.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define KP_MAX 32        /* directions per sub-panel */
#define ROWS_TARGET 1024 /* chunk columns bc·T·kp aimed at (keeps the workspace cache-sized) */

typedef struct {
    model *m;
    const double *V;   /* (k,P), or NULL for unit directions */
    double *out;       /* (k,P) */
    size_t j0;
    int k;
    int stop;          /* R{∇θ} wanted for tensors >= stop only (hess_cols_lower: tensor(j0); else 0) */
    int next;          /* next direction to hand out */
    pthread_mutex_t lock;
} panel_job;

typedef struct {
    panel_job *job;
    rwork *w;
} worker_arg;

static int tensor_of(const model *m, size_t j)
{
    int t = 0;
    while (t + 1 < m->ntensors && m->tensors[t + 1].offset <= j) t++;
    return t;
}

void tt_free_work(tt_impl *im)
{
    for (int i = 0; i < im->nwork; i++) tt_rwork_free(im->work[i]);
    free(im->work);
    im->work = NULL;
    im->nwork = 0;
}

/* Workspaces for n workers with sub-panels of kp directions. */
static void ensure_work(model *m, int n, int kp)
{
    tt_impl *im = m->impl;
    int bc = im->bc_set ? im->bc_set : ROWS_TARGET / (im->c.T * tt_padded(kp));
    if (bc < 1) bc = 1;
    if (bc > im->B) bc = im->B;
    if (im->nwork >= n && tt_rwork_kp(im->work[0]) == kp && tt_rwork_bc(im->work[0]) == bc) return;
    tt_free_work(im);
    im->work = xmalloc((size_t)n * sizeof(rwork *));
    for (int i = 0; i < n; i++) im->work[i] = tt_rwork_new(m, kp, bc);
    im->nwork = n;
}

static void *panel_worker(void *arg)
{
    worker_arg *a = arg;
    panel_job *J = a->job;
    size_t P = J->m->P;
    int kp = tt_rwork_kp(a->w);
    for (;;) {
        pthread_mutex_lock(&J->lock);
        int p0 = J->next;
        J->next += kp;
        pthread_mutex_unlock(&J->lock);
        if (p0 >= J->k) break;
        int kk = J->k - p0 < kp ? J->k - p0 : kp;
        tt_run_subpanel(J->m, a->w, J->V ? J->V + (size_t)p0 * P : NULL, J->j0 + p0, kk, J->stop, J->out + (size_t)p0 * P);
    }
    return NULL;
}

static int thread_count(const tt_impl *im)
{
    int n = im->threads ? im->threads : toolkit_threads();
    return n < 1 ? 1 : n > 64 ? 64 : n;
}

static void run_panels(model *m, const double *V, double *out, size_t j0, int k, int lower)
{
    tt_impl *im = m->impl;
    if (k < 1) return;
    int kp = im->kp_max ? im->kp_max : KP_MAX;
    kp = k < kp ? k : kp;
    int nsub = (k + kp - 1) / kp, nt = thread_count(im);
    nt = nt < nsub ? nt : nsub;
    /* one BLAS thread per worker: the R-pass dgemms are small, and BLAS's own
     * threads would only spin (the base pass's dgemms are small too) */
    int saved = openblas_get_num_threads();
    openblas_set_num_threads(1);
    tt_base_pass(m);
    ensure_work(m, nt, kp);
    panel_job J = {.m = m, .V = V, .out = out, .j0 = j0, .k = k, .stop = lower ? tensor_of(m, j0) : 0, .next = 0};
    pthread_mutex_init(&J.lock, NULL);
    worker_arg args[64];
    for (int i = 0; i < nt; i++) args[i] = (worker_arg){&J, im->work[i]};
    pthread_t tid[64];
    for (int i = 1; i < nt; i++)
        if (pthread_create(&tid[i], NULL, panel_worker, &args[i])) DIE("cannot start a worker thread");
    panel_worker(&args[0]);
    for (int i = 1; i < nt; i++) pthread_join(tid[i], NULL);
    openblas_set_num_threads(saved);
    pthread_mutex_destroy(&J.lock);
}

void tt_hvp_fn(model *m, const double *V, double *HV, int k) { run_panels(m, V, HV, 0, k, 0); }

void tt_hess_cols_fn(model *m, size_t j0, int k, double *out)
{
    if (j0 + (size_t)k > m->P) DIE("hess_cols %zu..%zu beyond P = %zu", j0, j0 + k, m->P);
    run_panels(m, NULL, out, j0, k, 0);
}

/* model.hess_cols_lower: unit directions in tensor t perturb only what follows
 * t, and their R-backward stops once it has produced the rows of tensors >=
 * tensor(j0): about half the work of hess_cols. */
void tt_hess_cols_lower_fn(model *m, size_t j0, int k, double *out)
{
    tt_impl_of(m);
    if (j0 + (size_t)k > m->P) DIE("hess_cols_lower %zu..%zu beyond P = %zu", j0, j0 + k, m->P);
    run_panels(m, NULL, out, j0, k, 1);
}
