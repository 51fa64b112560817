/* data — the programs' data pipelines (data.c): the token source of every
 * Transformer program (a Markov chain, text, nanoGPT's token files) and the
 * MLP's image data set. */
#ifndef HARNESS_DATA_H
#define HARNESS_DATA_H

#include "core/core.h"
#include "mlp/mlp.h"
#include "tinytransformer/tt.h"

/* The token source of every Transformer program (--data, --text, --vocab-size):
 * the order-`order` Markov source over V symbols with `successors` likely next
 * tokens, seeded with data_seed; or text (tinytransformer/tt.h): a text file, a
 * folder of text files, or a folder holding nanoGPT's train.bin and val.bin.
 * The default text is Debian's fortunes package (TT_TEXT_DEFAULT, ~2.5 MB of
 * English prose, verse and quotations; BSD licence, docs/real_text.md): its
 * files in name order; the offensive subset (package fortunes-off, a subfolder
 * off/) is never read. Text's default vocabulary is the 31 most frequent bytes
 * and "other" (TT_TEXT_VOCAB), so that the model stays close to the Markov
 * chain's size; --vocab-size 256 keeps every byte. The model's V is the
 * source's vocabulary (tt_data_vocab). */
#define TT_TEXT_DEFAULT "/usr/share/games/fortunes"
#define TT_TEXT_VOCAB 32
typedef struct {
    const char *data;  /* "markov" or "text"; NULL: text when `text` is set, else markov */
    const char *text;  /* NULL: TT_TEXT_DEFAULT */
    int vocab;         /* text: vocabulary size (0: TT_TEXT_VOCAB); token files: theirs (required) */
} tt_data_opts;
#define TT_DATA_OPTS(o)                                                                                          \
    {"data", OPT_STRING, &(o).data, "token source: markov (a sparse random Markov chain) or text (char-level)"}, \
    {"text", OPT_STRING, &(o).text, "--data text: a text file, a folder of text files, or a folder with nanoGPT's " \
                                    "train.bin and val.bin (default: " TT_TEXT_DEFAULT ")"},                     \
    {"vocab-size", OPT_INT, &(o).vocab, "--data text: vocabulary size, the most frequent bytes + 'other' (0: 32; " \
                                        "256: every byte); nanoGPT's .bin files: their vocabulary, required"}
/* 1 for text (user error on a --data other than markov or text, or --text with markov). */
int token_source_is_text(const tt_data_opts *o);
tt_data *token_source(const tt_data_opts *o, int V, int T, int order, int successors, unsigned long data_seed);
/* "markov" or "text <path>" (what run.txt and the claims' context lines say). */
const char *token_source_name(const tt_data_opts *o);
/* <dir>/vocab.csv for text and token files (id, byte, char, count); nothing for Markov. */
void token_source_write_vocab(const tt_data *d, const char *dir);
/* The batch a probe runs on (tt_probe, llama_probe): --tokens, a (B, T+1) .npy
 * of token ids, or --batch sequences drawn with --data-seed from the held-out
 * (--held-out 1) or training part of the token source (an order-2 Markov chain
 * over V symbols, or text whose vocabulary must be V: `model` names the model in
 * that error). */
typedef struct {
    const char *tokens;
    tt_data_opts data;
    int batch, held_out;
    long data_seed;
} probe_batch;
#define PROBE_BATCH_DEFAULTS {NULL, {NULL, NULL, 0}, 8, 1, 1}
#define PROBE_BATCH_OPTS(o)                                                                                      \
    {"tokens", OPT_STRING, &(o).tokens, "the batch: a (B, T+1) .npy of token ids (else drawn from --data)"},   \
    TT_DATA_OPTS((o).data),                                                                                      \
    {"batch", OPT_INT, &(o).batch, "sequences drawn from --data"},                                               \
    {"held-out", OPT_INT, &(o).held_out, "1: from the held-out part, 0: the training part"},                     \
    {"data-seed", OPT_LONG, &(o).data_seed, "the draw's seed (and the Markov chain's)"}
/* User error on a flag out of range (before any output). */
void probe_batch_check(const probe_batch *o);
/* The tokens (B, T+1); *B the sequences; *d the source (NULL for a file), for vocab.csv. */
int *probe_tokens(const probe_batch *o, int V, int T, const char *model, int *B, tt_data **d);
/* A probe's loss.csv (loss, P, batch) and tokens.npy (B, T+1) in out. */
void probe_write(const char *out, double loss, size_t P, const int *tok, int B, int T);

/*
 * dataset_load's train and test splits of `name`, pooled k×k, the features that
 * are constant over the training set dropped, standardised per feature when asked. */
typedef struct {
    dataset *train, *test;
    int dropped;             /* constant features dropped */
} mlp_data;
void mlp_data_load(mlp_data *d, const char *name, const char *dir, int pool, int standardize, unsigned long seed);
void mlp_data_free(mlp_data *d);
/* The first n test images into X (n, dim) and y (n); user error naming `what` if there are fewer. */
void mlp_data_head(const mlp_data *d, int n, const char *what, double *X, int *y);

#endif
