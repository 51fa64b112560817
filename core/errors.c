/* Errors and checked allocation. */
#include "core.h"
#include <gsl/gsl_randist.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char prog_name[64] = "toolkit";
static user_error_hook error_hook = NULL;
static exit_hook on_exit_hook = NULL;

void set_exit_hook(exit_hook hook) { on_exit_hook = hook; }

/* The end of every error path, after the message and the temporaries: the
 * distributed layer's hook stops the whole job (MPI_Abort), else _exit. */
static __attribute__((noreturn)) void end_process(int code)
{
    fflush(NULL);
    if (on_exit_hook) on_exit_hook(code);
    _exit(code);
}

void set_program_name(const char *name)
{
    const char *base = strrchr(name, '/');
    snprintf(prog_name, sizeof prog_name, "%s", base ? base + 1 : name);
}

const char *program_name(void) { return prog_name; }

void set_user_error_hook(user_error_hook hook) { error_hook = hook; }

/* One line "prog: message", then exit (the atexit handler in output.c removes
 * uncommitted files); the test hook, when set, gets the message instead. */
static __attribute__((noreturn)) void die_with(int code, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (error_hook) {
        error_hook(msg);
        abort(); /* a hook must not return */
    }
    fprintf(stderr, "%s: %s\n", prog_name, msg);
    /* _exit, not exit: a library's exit handler may wait for threads that a
     * failed allocation left stuck (OpenBLAS's thread pool does) */
    outfile_remove_temporaries();
    end_process(code);
}

void die_user(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    die_with(EXIT_USER, fmt, ap);
}

void die_diverged(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    die_with(EXIT_DIVERGED, fmt, ap);
}

void die_internal(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: internal error at %s:%d: ", prog_name, file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    outfile_remove_temporaries();
    end_process(EXIT_INTERNAL);
}

/* Running out of memory is the machine's limit, not a bug: a user error that
 * says how much was asked for (the large allocations are checked before,
 * by memory_check). */
void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) die_user("out of memory allocating %.3f GB (lower the sizes, or raise the memory limit)", bytes / 1e9);
    return p;
}

void *xcalloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size) die_user("allocation of %zu x %zu bytes overflows", count, size);
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) die_user("out of memory allocating %.3f GB (lower the sizes, or raise the memory limit)",
                     (double)count * size / 1e9);
    return p;
}

void *xrealloc(void *p, size_t bytes)
{
    void *q = realloc(p, bytes ? bytes : 1);
    if (!q) die_user("out of memory allocating %.3f GB (lower the sizes, or raise the memory limit)", bytes / 1e9);
    return q;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

size_t checked_mul(size_t count, size_t size, const char *what)
{
    if (size && count > SIZE_MAX / size)
        die_user("%s: size %zu x %zu overflows", what, count, size);
    return count * size;
}

/* GSL's mt19937 state (gsl/rng/mt.c): 624 words, each holding 32 bits, and
 * the index of the next word to use. rng_seed checks the size before use. */
typedef struct {
    unsigned long mt[624];
    int mti;
} mt19937_state;

/* splitmix64 (Steele, Lea, Flood 2014): a bijective 64-bit mixer. */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void rng_seed(gsl_rng *r, unsigned long seed)
{
    if (r->type != gsl_rng_mt19937 || gsl_rng_size(r) != sizeof(mt19937_state))
        DIE("rng_seed: not GSL's mt19937 state layout");
    gsl_rng_set(r, seed);
    if (seed >= 1 && seed <= 0xffffffffUL) return;
    /* 0 and seeds past 32 bits: XOR every word with a mix of the whole seed, and
     * restart the tempering at a fresh block (mti = 624). The state differs from
     * every GSL-seeded one but for a 2^-19937-order coincidence; the top bit of
     * word 0 is set so that the state is never all zero. */
    mt19937_state *st = gsl_rng_state(r);
    uint64_t x = (uint64_t)seed ^ 0x6a09e667f3bcc908ULL;
    for (int i = 0; i < 624; i++) st->mt[i] = (st->mt[i] ^ splitmix64(&x)) & 0xffffffffUL;
    st->mt[0] |= 0x80000000UL;
    st->mti = 624;
}

gsl_rng *rng_new(unsigned long seed)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    if (!r) DIE("gsl_rng_alloc failed");
    rng_seed(r, seed);
    return r;
}

void rng_free(gsl_rng *r) { gsl_rng_free(r); }

double rng_gaussian(gsl_rng *r, double sigma) { return gsl_ran_gaussian_ziggurat(r, sigma); }
double rng_uniform_in(gsl_rng *r, double a, double b) { return a + (b - a) * gsl_rng_uniform(r); }
unsigned long rng_int(gsl_rng *r, unsigned long n) { return gsl_rng_uniform_int(r, n); }
