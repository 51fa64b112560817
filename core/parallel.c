/* The toolkit's one loop over worker threads (core.h, "threads"): items handed
 * out one at a time from a counter under a lock, the caller's own thread the
 * first worker. Which worker runs an item is left to the scheduler; what an
 * item computes is not, so results depend on the items alone. */
#include "core.h"
#include <pthread.h>
#include <stdlib.h>

int toolkit_workers(int asked)
{
    int n = asked > 0 ? asked : toolkit_threads();
    return n > 64 ? 64 : n;
}

typedef struct {
    parallel_fn fn;
    void *ctx;
    int n, next, done;
    progress *prog;
    long prog_done0;
    pthread_mutex_t lock;
} loop;

typedef struct {
    loop *l;
    int worker;
} worker_arg;

static void *worker(void *arg)
{
    worker_arg *a = arg;
    loop *l = a->l;
    for (;;) {
        pthread_mutex_lock(&l->lock);
        int i = l->next < l->n ? l->next++ : -1;
        pthread_mutex_unlock(&l->lock);
        if (i < 0) return NULL;
        l->fn(l->ctx, i, a->worker);
        if (l->prog) {
            pthread_mutex_lock(&l->lock);
            progress_update(l->prog, l->prog_done0 + ++l->done);
            pthread_mutex_unlock(&l->lock);
        }
    }
}

int parallel_workers(int n, int threads)
{
    if (n < 1) return 0;
    return threads < 1 ? 1 : threads < n ? threads : n;
}

void parallel_for(int n, int threads, parallel_fn fn, void *ctx, progress *prog, long prog_done0)
{
    int nt = parallel_workers(n, threads);
    if (nt == 0) return;
    loop l = {.fn = fn, .ctx = ctx, .n = n, .prog = prog, .prog_done0 = prog_done0};
    pthread_mutex_init(&l.lock, NULL);
    worker_arg *args = xmalloc((size_t)nt * sizeof *args);
    pthread_t *tid = xmalloc((size_t)nt * sizeof *tid);
    for (int t = 0; t < nt; t++) args[t] = (worker_arg){&l, t};
    int started = 1;
    for (; started < nt; started++)
        if (pthread_create(&tid[started], NULL, worker, &args[started])) DIE("cannot start a worker thread");
    worker(&args[0]);
    for (int t = 1; t < started; t++) pthread_join(tid[t], NULL);
    pthread_mutex_destroy(&l.lock);
    free(tid);
    free(args);
}
