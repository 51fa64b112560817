/* Tests of the extensions coarse and value_split (harness/coarse_util.h): the whole-model,
 * merged-heads and random-layout partitions on the tiny Transformer (cover, counts,
 * sizes), the loss-spike counter on a hand-built curve, the capped loss share, and the
 * four claims in the claim table with their controls. */
#include "check.h"
#include "core/core.h"
#include "core/model.h"
#include "harness/coarse_util.h"
#include "harness/ttexp.h"
#include "tinytransformer/tt.h"
#include "verdict/verdict.h"
#include <stdlib.h>

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

static model *small_tt(int layers, int bias)
{
    tt_config c = tt_defaults();
    c.layers = layers;
    c.bias = bias;
    return tt_new(&c);
}

static void test_whole(void)
{
    model *m = small_tt(2, 0);
    partition *p = partition_whole(m);
    CHECK(p->nblocks == 1 && p->b[0].start == 0 && p->b[0].n == m->P && p->b[0].stride == 1,
          "one block [0, P): %d blocks, n %zu of P %zu", p->nblocks, p->b[0].n, m->P);
    partition_check_cover(p, m->P, "whole");
    partition_free(p);
    model_free(m);
}

/* Algorithm 3 with query/key whole: each of the 2·layers query/key tensors loses heads − 1 blocks */
static void test_merged_heads(void)
{
    for (int layers = 1; layers <= 2; layers++)
        for (int bias = 0; bias <= 1; bias++) {
            model *m = small_tt(layers, bias);
            partition *a3 = partition_alg3(m, 0), *p = partition_merged_heads(m);
            int heads = tt_defaults().heads, C = tt_defaults().C;
            CHECK(p->nblocks == a3->nblocks - 2 * layers * (heads - 1),
                  "layers %d bias %d: %d blocks, Algorithm 3 has %d", layers, bias, p->nblocks, a3->nblocks);
            partition_check_cover(p, m->P, "merged heads");
            int qk = 0, qk_whole = 0;
            for (int k = 0; k < p->nblocks; k++) {
                if (p->b[k].tensor < 0) continue;
                tensor_role r = m->tensors[p->b[k].tensor].role;
                if (r == ROLE_QUERY || r == ROLE_KEY) qk++, qk_whole += p->b[k].n == (size_t)C * C;
            }
            CHECK(qk == 2 * layers && qk_whole == qk, "layers %d: %d query/key blocks, %d of them whole tensors",
                  layers, qk, qk_whole);
            partition_free(a3);
            partition_free(p);
            model_free(m);
        }
}

/* Algorithm 3's sizes in a random order: covers [0, P) exactly once, contiguous, the same
 * multiset of sizes, seeded (same seed same layout, another seed another) */
static void test_random_layout(void)
{
    model *m = small_tt(2, 0);
    partition *a3 = partition_alg3(m, 0);
    gsl_rng *r1 = rng_new(7), *r2 = rng_new(7), *r3 = rng_new(8);
    partition *p = partition_random_layout(a3, m->P, r1), *q = partition_random_layout(a3, m->P, r2),
              *o = partition_random_layout(a3, m->P, r3);
    CHECK(p->nblocks == a3->nblocks, "%d blocks, Algorithm 3 has %d", p->nblocks, a3->nblocks);
    partition_check_cover(p, m->P, "random layout");
    int contiguous = 1;
    size_t at = 0;
    for (int k = 0; k < p->nblocks; k++) {
        contiguous &= p->b[k].start == at && p->b[k].stride == 1;
        at += p->b[k].n;
    }
    CHECK(contiguous && at == m->P, "blocks laid one after the other from 0 to P (%zu of %zu)", at, m->P);
    size_t *sa = xmalloc(a3->nblocks * sizeof(size_t)), *sp = xmalloc(p->nblocks * sizeof(size_t));
    for (int k = 0; k < a3->nblocks; k++) sa[k] = a3->b[k].n, sp[k] = p->b[k].n;
    qsort(sa, a3->nblocks, sizeof(size_t), cmp_size);
    qsort(sp, p->nblocks, sizeof(size_t), cmp_size);
    CHECK(memcmp(sa, sp, a3->nblocks * sizeof(size_t)) == 0, "the same block sizes as Algorithm 3");
    int same = 1, differs = 0, moved = 0;
    for (int k = 0; k < p->nblocks; k++) {
        same &= p->b[k].n == q->b[k].n;
        differs |= p->b[k].n != o->b[k].n;
        moved |= p->b[k].n != a3->b[k].n;
    }
    CHECK(same, "the same seed gives the same layout");
    CHECK(differs, "another seed gives another layout");
    CHECK(moved, "the layout is not Algorithm 3's order");
    /* a misaligned block: some block boundary falls inside a tensor row of Algorithm 3 */
    int inside = 0;
    for (int k = 1; k < p->nblocks && !inside; k++) {
        int boundary = 0;
        for (int j = 0; j < a3->nblocks; j++) boundary |= a3->b[j].start == p->b[k].start;
        inside |= !boundary;
    }
    CHECK(inside, "some boundary of the random layout is not one of Algorithm 3's");
    free(sa);
    free(sp);
    rng_free(r1);
    rng_free(r2);
    rng_free(r3);
    partition_free(p);
    partition_free(q);
    partition_free(o);
    partition_free(a3);
    model_free(m);
}

static void test_spikes(void)
{
    /* running minimum before each step: -, 2, 1.8, 1, 1, 1, 0.9, 0.9, 0.9, 0.9 */
    const double loss[] = {2.0, 1.8, 1.0, 1.4, 1.6, 0.9, 1.2, 1.36, NAN, 1.5};
    CHECK(count_spikes(loss, 10, 1.5) == 3, "steps 4, 7 and 9 are spikes (got %ld)", count_spikes(loss, 10, 1.5));
    CHECK(count_spikes(loss, 10, 2.0) == 0, "none above 2x (got %ld)", count_spikes(loss, 10, 2.0));
    CHECK(count_spikes(loss, 5, 1.5) == 1, "the first 5 steps hold one (got %ld)", count_spikes(loss, 5, 1.5));
    const double falling[] = {3, 2.5, 2, 1.5, 1.2, 1.1, 1.0};
    CHECK(count_spikes(falling, 7, 1.01) == 0, "a falling curve has none");
    const double lead_nan[] = {NAN, 1.0, 10.0};
    CHECK(count_spikes(lead_nan, 3, 1.5) == 1, "a leading NaN is skipped");
}

static void test_share(void)
{
    CHECK_CLOSE(capped_loss_share(1.5, 1.0, 2.0), 0.5, 1e-15, "half the progress lost");
    CHECK_CLOSE(capped_loss_share(0.5, 1.0, 2.0), -0.5, 1e-15, "better than the reference: negative");
    CHECK_CLOSE(capped_loss_share(3.0, 1.0, 2.0), 1.0, 0, "worse than the start: capped at 1");
    CHECK_CLOSE(capped_loss_share(INFINITY, 1.0, 2.0), 1.0, 0, "diverged: 1");
    CHECK_CLOSE(capped_loss_share(NAN, 1.0, 2.0), 1.0, 0, "NaN loss: 1");
    CHECK(isnan(capped_loss_share(1.0, 2.0, 2.0)), "no progress of the reference: NaN");
    CHECK(isnan(capped_loss_share(1.0, INFINITY, 2.0)), "diverged reference: NaN");
}

/* the five claims are in the table, each with a control, and the rule rejects a control
 * centred on 0 while passing a clear effect */
static void test_claims(void)
{
    const char *ids[] = {"coarse.whole_hurts", "coarse.alg2_hurts", "coarse.whole_unstable", "value_split.whole_better_short",
                         "value_split.neuron_fine_long"};
    for (int i = 0; i < 5; i++) {
        const claim_rule *r = ttexp_claim(ids[i]);
        CHECK(r->control && r->control[0] && strcmp(r->stat, r->control) != 0, "%s has a control", ids[i]);
    }
    const claim_rule *r = ttexp_claim("coarse.whole_hurts");
    double hurt[5] = {0.30, 0.25, 0.41, 0.22, 0.35}, noise[5] = {-0.01, 0.012, -0.004, 0.006, -0.02};
    interval ih = t_interval(hurt, 5, 0.95), in = t_interval(noise, 5, 0.95);
    CHECK(verdict_of(ih, r->side, r->threshold, &in) == VERDICT_PASS, "a clear excess passes against noise");
    CHECK(verdict_of(in, r->side, r->threshold, NULL) != VERDICT_PASS, "noise around 0 does not pass");
    r = ttexp_claim("value_split.neuron_fine_long");
    double onpar[5] = {0.004, -0.003, 0.01, 0.0, 0.002}, worse[5] = {-0.13, -0.2, -0.11, -0.15, -0.09};
    interval io = t_interval(onpar, 5, 0.95), iw = t_interval(worse, 5, 0.95);
    CHECK(verdict_of(io, r->side, r->threshold, &iw) == VERDICT_PASS, "on par passes 'not worse'");
    CHECK(verdict_of(iw, r->side, r->threshold, NULL) == VERDICT_FAIL, "a worse partition fails 'not worse'");
}

int main(void)
{
    test_whole();
    test_merged_heads();
    test_random_layout();
    test_spikes();
    test_share();
    test_claims();
    return check_summary();
}
