/* Per-run statistics files and the table of claims judged on them. */
#include "harness.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

outfile *stats_open(const char *dir) { return csv_open_in(dir, "stats.csv", "name,value"); }

void stats_put(outfile *f, const char *name, double value)
{
    if (isnan(value)) csv_row(f, "%s,nan", name);
    else if (isinf(value)) csv_row(f, "%s,%sinf", name, value < 0 ? "-" : "");
    else csv_row(f, "%s,%.17g", name, value);
}

int stats_get(const char *path, const char *name, double *value)
{
    FILE *fp = fopen(path, "r");
    if (!fp) return 0;
    char line[512];
    size_t n = strlen(name);
    int found = 0;
    while (!found && fgets(line, sizeof line, fp))
        if (strncmp(line, name, n) == 0 && line[n] == ',') {
            char *end;
            double v = strtod(line + n + 1, &end);
            if (end != line + n + 1 && (*end == '\n' || *end == '\0' || *end == '\r')) {
                *value = v;
                found = 1;
            }
        }
    fclose(fp);
    return found;
}

/* ---- the claims ------------------------------------------------------------------------------
 * One table, fixed before the runs: each claim's statistic, threshold, side,
 * kind of test and negative control. Every change after seeing data is listed
 * in docs/verdicts.md with its reason. Sections follow the README's order. */
static const claim_rule RULES[] = {
    /* ---- random quadratics (fig4, fig3) ---- */

    /* ---- the MLP's Hessian (fig2) ---- */

    /* ---- the Transformer's Hessian blocks (fig6, table_kappa, partition_check) ---- */

    /* ---- optimizer memory (table1_memory) ---- */
    {.id = "table1.v_removed",
     .experiment = "table1_memory",
     .paper = "Adam-mini can cut down more than 99.9% of v in Adam",
     .place = "Abstract; Table 1",
     .claim = "at least 99.9% of Adam's v is removed in each of the five models",
     .stat = "table1_memory.min_v_removed_pct",
     .stat_what = "smallest share of Adam's v that Adam-mini removes over the five models, %",
     .side = CLAIM_ABOVE,
     .threshold = 99.9,
     .kind = RULE_INTERVAL,
     .control = "table1_memory.control.min_v_removed_pct",
     .control_what = "the same count for a partition of one block per parameter (Adam's own v): nothing is removed, "
                     "so the rule must reject it",
     .depends = "exact counts from the published shapes; seeds do not enter"},

    /* ---- optimizers on the tiny Transformer (train_compare, exp2_blockwise_gd, leave_out,
     *      ablation_vstat, trajectory) ---- */
};

int claim_rules(const claim_rule **out)
{
    *out = RULES;
    return (int)(sizeof RULES / sizeof *RULES);
}
