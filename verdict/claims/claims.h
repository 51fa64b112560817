/* What a file of claims writes (verdict/claims/<experiment>.c): the families of
 * one experiment, each one sentence of the paper and the readings that test it,
 * and the alternatives several experiments share. verdict/claims.c collects
 * the files in one list, checks the table (claims_check) and resolves every
 * reading into a claim_rule (verdict.h), which is what the judge reads.
 * docs/verdicts.md, "Adding a claim", says the steps. */
#ifndef VERDICT_CLAIMS_H
#define VERDICT_CLAIMS_H

#include "verdict/verdict.h"

/* A reading's own statistic (and control) under one of its family's alternatives
 * that reads another statistic of the same runs. */
typedef struct {
    const char *alt;     /* the family's alternative, by name */
    const char *stat;    /* the reading's statistic under it */
    const char *control; /* its control (NULL: the family alternative's, else the reading's own) */
} reading_alt;

/* One reading: one statistic judged under one rule. The fields after the rule
 * are the reading's own in place of its family's (NULL: the family's); use them
 * only where the reading really differs. */
typedef struct {
    const char *id;            /* "<experiment>.<what>", unique over the table */
    const char *claim;         /* the claim as tested, one line */
    const char *stat;          /* stats.csv name of the statistic */
    const char *stat_what;     /* what the statistic is, with its unit */
    claim_side side;           /* the claim holds when the statistic is above / below the threshold */
    double threshold;
    rule_kind kind;
    const char *control;       /* stats.csv name of the negative control (NULL: none) */
    int hypothesis;            /* 1: the toolkit's own hypothesis, not the paper's (shown apart, not counted) */
    paper_number paper_value;  /* the paper's own number for this statistic, where it states one */
    reading_alt alt[ALT_MAX];  /* its statistics under the family's statistic alternatives */
    /* the reading's own, in place of the family's: */
    const char *place, *control_what, *depends, *after_data, *after_confirmation, *paper_setting, *paper_scale;
} family_reading;
#define READING_MAX 9          /* readings of one family; the last slot stays empty (the check says so) */

/* A family: the paper's sentence and what its readings share. */
typedef struct {
    const char *experiment;    /* the program whose runs hold the statistics */
    const char *paper;         /* the paper's sentence, quoted */
    const char *place;         /* its place in the paper: "Sec. 2.1, Fig. 4" */
    const char *control_what;  /* the control, and why the rule must reject it */
    const char *depends;       /* the setup the verdicts rest on */
    const char *holm;          /* Holm's correction runs over every reading of the families of this name;
                                  required for a family of several readings (NULL: one reading, its own) */
    const char *after_data;    /* the rules were set or changed after seeing data: what and why (NULL: no) */
    const char *after_confirmation; /* changed after the confirmation run: what and why (NULL: no) */
    const char *paper_setting; /* where the paper's own setting differs from the rules' (NULL: it does not) */
    const char *paper_scale;   /* how the verdicts differed at paper scale (NULL: not seen to) */
    alternative alt[ALT_MAX];  /* the open choices, declared before any run; the last slot stays empty */
    family_reading reading[READING_MAX];
} claim_family;

/* One experiment's file: its families. */
typedef struct {
    const claim_family *family;
    int n;
} claim_file;
#define CLAIM_FILE(families) {(families), (int)(sizeof(families) / sizeof(families)[0])}

/* The first problem of the table files[0..n-1] into why (empty: none); returns the number of
 * problems. Checked: every id unique; one name per experiment (every id, statistic and control
 * is "<experiment>.<what>"); every family non-empty, with
 * an experiment, the paper's sentence and place, a Holm name when it has several readings, its last
 * slots empty; every reading's statistic, rule (kind, side, a finite threshold, a share in (0, 1))
 * and, with a control, the control's description and a control other than the statistic; every
 * alternative with a choice, a name unique in its family, a reason, and flags or a statistic for
 * every reading; one name one set of flags within an experiment; a reading's alternative
 * statistics naming alternatives of its family. */
int claims_check(const claim_file *files, int n, char *why, size_t size);
/* claims_check of the table itself (the list in verdict/claims.c). */
int claims_check_table(char *why, size_t size);
/* The number of readings of files[0..n-1]; with out, each resolved into out[] in table order. */
int claims_resolve(const claim_file *files, int n, claim_rule *out);

/* ---- alternatives several experiments share ---- */
/* The training lr to a Hessian checkpoint (the paper gives none). */
#define ALT_CKPT_LR_1E2                                                                                                \
    {.choice = "training lr to the checkpoint",                                                                        \
     .name = "lr1e-2",                                                                                                 \
     .flags = "--lr 0.01",                                                                                             \
     .why = "the paper gives no learning rate for the training to its checkpoint; 1e-2 is a common peak lr for "      \
            "models this small (the toolkit's 1e-3 is its default)"}
#define ALT_CKPT_LR_3E4                                                                                                \
    {.choice = "training lr to the checkpoint",                                                                        \
     .name = "lr3e-4",                                                                                                 \
     .flags = "--lr 3e-4",                                                                                             \
     .why = "the same open choice, below the default: a peak lr of the order GPT-2-style pre-training uses"}
/* The training length, n steps instead of the default `base`. */
#define ALT_STEPS(n, base)                                                                                             \
    {.choice = "horizon",                                                                                              \
     .name = "steps" #n,                                                                                               \
     .flags = "--steps " #n,                                                                                           \
     .why = "the paper compares at the end of training without a fixed length; " #n " steps instead of " #base        \
            " (longer training can close or open gaps)"}
/* The first lr grid of the optimizer programs, 9 points instead of 5. */
#define ALT_LR_GRID9                                                                                                   \
    {.choice = "lr grid",                                                                                              \
     .name = "lrs9",                                                                                                   \
     .flags = "--lrs 9",                                                                                               \
     .why = "the paper grid-searches without giving the grid; a first grid of 9 points instead of 5 decides which "   \
            "lr wins on a flat valley"}
/* The MLP's activation (the paper does not name it). */
#define ALT_RELU                                                                                                       \
    {.choice = "activation", .name = "relu", .flags = "--act relu",                                                    \
     .why = "the paper does not name the MLP's activation (tanh here)"}

#endif
