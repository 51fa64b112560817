/* Claims on table1_memory (the paper's Table 1): the share of Adam's v that Adam-mini removes. */
#include "verdict/claims/claims.h"

static const claim_family FAMILIES[] = {
    {.experiment = "table1_memory",
     .paper = "Adam-mini can cut down more than 99.9% of v in Adam",
     .place = "Abstract; Sec. 2.4, Table 1",
     .control_what = "the same share of v removed for the paper's own tiny Transformer (V 8, C 16, 4 heads, M 32, T "
                     "8) under Algorithm 3: a real model where the arithmetic does not reach 99.9%, so the rule can "
                     "tell models apart",
     .depends = "exact counts from the published shapes; seeds do not enter",
     .after_data = "the tiny-Transformer control replaced one block per parameter (0 by construction) after a review",
     .alt = {{.choice = "counting",
              .name = "bias_as_blocks",
              .stat = "table1_memory.bias_as_blocks.min_v_removed_pct",
              .control = "table1_memory.control.bias_as_blocks.tiny_v_removed_pct",
              .why = "Algorithm 3 gives bias vectors no rule of their own; one block per bias vector instead of the "
                     "official code's plain Adam on them (one v per entry)"}},
     .reading = {{.id = "table1_memory.v_removed",
                   .claim = "at least 99.9% of Adam's v is removed in each of the five models",
                   .stat = "table1_memory.min_v_removed_pct",
                   .stat_what = "smallest share of Adam's v that Adam-mini removes over the five models, %",
                   .side = CLAIM_ABOVE,
                   .threshold = 99.9,
                   .kind = RULE_EXACT,
                   .control = "table1_memory.control.tiny_v_removed_pct"}}},
};
const claim_file claims_table1_memory = CLAIM_FILE(FAMILIES);
