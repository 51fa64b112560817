/* The seed streams of a run (seeds.h). */
#include "harness/seeds.h"
#include "core/core.h"

/* Each purpose's tag: four ASCII letters, so that a tag is readable in a debugger. */
static unsigned long stream_tag(seed_stream s)
{
    switch (s) {
    case SEED_INIT: return 0x696e6974UL;      /* "init" */
    case SEED_BATCHES: return 0x62617463UL;   /* "batc" */
    case SEED_BASELINES: return 0x62617365UL; /* "base" */
    case SEED_DRAWS: return 0x64726177UL;     /* "draw" */
    case SEED_DATA: return 0x64617461UL;      /* "data" */
    case SEED_HELD_OUT: return 0x68656c64UL;  /* "held" */
    }
    DIE("unknown seed stream %d", (int)s);
}

unsigned long seed_for(unsigned long base, seed_stream s) { return seed_hash(SEED_RUN, base, stream_tag(s), 0); }

unsigned long seed_for_nth(unsigned long base, seed_stream s, unsigned long k)
{
    return seed_hash(SEED_RUN, base, stream_tag(s), k);
}

