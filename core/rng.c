/* Random numbers: one GSL mt19937 stream per purpose of a run, each seeded
 * from a hash of (seed, purpose, index), so that no two runs or purposes share
 * a sequence. */
#include "core.h"
#include <limits.h>
#include <gsl/gsl_randist.h>
#include <stdint.h>

/* GSL's mt19937 state (gsl/rng/mt.c): 624 words, each holding 32 bits, and
 * the index of the next word to use. rng_seed checks the size before use. */
typedef struct {
    unsigned long mt[624];
    int mti;
} mt19937_state;

uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* Each word enters through a bijective mix of the running hash xor the word,
 * so (seed, tag, index) -> hash is injective in each argument with the others
 * fixed, and distinct triples collide only by a 2^-64-order chance. The
 * domain enters with the seed: the first step mixes seed ^ domain. */
uint64_t seed_hash(uint64_t domain, uint64_t seed, uint64_t tag, uint64_t index)
{
    uint64_t h = 0, words[3] = {seed ^ domain, tag, index};
    for (int i = 0; i < 3; i++) {
        uint64_t x = h ^ words[i];
        h = splitmix64(&x);
    }
    return h;
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
/* GSL's draw for n within one draw's range (the same numbers as ever); beyond it (a
 * text of more than 2^32 tokens) two 32-bit draws as one 64-bit number, rejected
 * above the last whole multiple of n, where GSL's own would abort the program. */
unsigned long rng_int(gsl_rng *r, unsigned long n)
{
    unsigned long range = gsl_rng_max(r) - gsl_rng_min(r);
    if (n == 0) DIE("rng_int: n = 0");
    if (n - 1 <= range) return gsl_rng_uniform_int(r, n);
    if (range != 0xffffffffUL) DIE("rng_int: n = %lu beyond a generator of range %lu", n, range);
    const unsigned long long limit = ULLONG_MAX - ULLONG_MAX % n;
    unsigned long long x;
    do x = (unsigned long long)(gsl_rng_get(r) - gsl_rng_min(r)) << 32 | (gsl_rng_get(r) - gsl_rng_min(r));
    while (x >= limit);
    return (unsigned long)(x % n);
}
