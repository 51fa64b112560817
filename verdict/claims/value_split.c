/* Claims on value_split (App. D, the partition of value).
 * d = min(1, (L_whole - L_neuron)/(L_0 - L_neuron)): value as one block against value by output
 * neuron, each at its own searched lr, as a share of neuron's progress (negative: whole is better). */
#include "verdict/claims/claims.h"

#define PLACE \
    "App. D.6 (More Discussions on the Partition Strategies of Value)"
#define PAPER_SETTING \
    "the paper: GPT-2 runs of tens of thousands of steps; here 100 and 400 steps"
#define SHORT50 \
    {.choice = "short run length", \
     .name = "short50", \
     .flags = "--short 50", \
     .why = "'small number of total training steps' is not given: 50 steps instead of 100"}
#define LONG1000 \
    {.choice = "long run length", \
     .name = "long1000", \
     .flags = "--steps 1000", \
     .why = "'large number of total training steps': 1,000 steps instead of 400"}

static const claim_family FAMILIES[] = {
    {.experiment = "value_split",
     .paper = "we find that strategy (II) works better when the number of total training steps is small",
     .place = PLACE,
     .control_what = "value by neuron with another batch order in whole's place, at neuron's lr: the same partition, "
                     "so a rule that passes it reads batch noise",
     .depends = "quick: 100 steps (the paper's short runs: 10k steps of Llama); 1-layer model, weight decay 0.1",
     .paper_setting = PAPER_SETTING,
     .paper_scale = "seeds 1-3, before the seed streams were hashed: FAIL at paper scale (300 steps) against "
                    "INCONCLUSIVE at quick scale",
     .alt = {SHORT50, LONG1000},
     .reading = {{.id = "value_split.whole_better_short",
                   .claim = "on short runs Adam-mini with value as one block beats value by output neuron by more "
                            "than 2% of neuron's progress",
                   .stat = "value_split.short.whole_excess",
                   .stat_what = "(L_whole - L_neuron)/(L_0 - L_neuron) on short runs, held-out, each at its best "
                                "searched lr (capped at 1)",
                   .side = CLAIM_BELOW,
                   .threshold = -0.02,
                   .kind = RULE_INTERVAL,
                   .control = "value_split.control.short.other_batches_excess"}}},
    {.experiment = "value_split",
     .paper = "we find that strategy (I) works well when the number of total training steps is large",
     .place = PLACE,
     .control_what = "Adam-mini with one block for the whole model in neuron's place (its own lr search): a "
                     "partition known to be worse, which a 'not worse' rule must catch",
     .depends = "quick: 400 steps (the paper's long runs: 50k+ steps of GPT-2); 1-layer model, weight decay 0.1",
     .paper_setting = PAPER_SETTING,
     .paper_scale = "seeds 1-3, before the seed streams were hashed: PASS at paper scale (3,000 steps) against "
                    "INCONCLUSIVE at quick scale",
     .alt = {SHORT50, LONG1000},
     .reading = {{.id = "value_split.neuron_fine_long",
                   .claim = "on long runs value by output neuron is not worse than value as one block by more than "
                            "2% of neuron's progress",
                   .stat = "value_split.long.whole_excess",
                   .stat_what = "(L_whole - L_neuron)/(L_0 - L_neuron) on long runs, held-out, each at its best "
                                "searched lr (capped at 1)",
                   .side = CLAIM_ABOVE,
                   .threshold = -0.02,
                   .kind = RULE_INTERVAL,
                   .control = "value_split.control.long.whole_over_one_block"}}},
};
const claim_file claims_value_split = CLAIM_FILE(FAMILIES);
