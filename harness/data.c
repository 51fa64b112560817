/* The programs' data pipelines (data.h): the token source of every Transformer
 * program and the MLP's image data set. */
#include "harness/data.h"
#include "core/core.h"
#include "harness/seeds.h"
#include "mlp/mlp.h"
#include "tinytransformer/tt.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int token_source_is_text(const tt_data_opts *o)
{
    if (!o->data) return o->text != NULL;
    if (strcmp(o->data, "text") == 0) return 1;
    if (strcmp(o->data, "markov") != 0) die_user("--data must be markov or text (got '%s')", o->data);
    if (o->text) die_user("--text goes with --data text (got --data markov)");
    return 0;
}

/* A folder holding nanoGPT's token files. */
static int is_token_folder(const char *path)
{
    char *bin = path_join(path, "train.bin");
    FILE *fp = path_is_folder(path) ? fopen(bin, "rb") : NULL;
    free(bin);
    if (fp) fclose(fp);
    return fp != NULL;
}

tt_data *token_source(const tt_data_opts *o, int V, int T, int order, int successors, unsigned long data_seed)
{
    if (!token_source_is_text(o)) return tt_data_markov(V, order, successors, seed_for(data_seed, SEED_DATA));
    const char *path = o->text ? o->text : TT_TEXT_DEFAULT;
    if (o->vocab < 0) die_user("--vocab-size must be >= 0 (got %d)", o->vocab);
    if (is_token_folder(path)) {
        if (o->vocab == 0) die_user("--vocab-size is needed with nanoGPT's token files (%s/train.bin)", path);
        char *train = path_join(path, "train.bin"), *val = path_join(path, "val.bin");
        tt_data *d = tt_data_token_files(train, val, o->vocab, T);
        free(train);
        free(val);
        return d;
    }
    if (!o->text && !path_is_folder(path))
        die_user("the default text %s is missing: install Debian's fortunes package (make deps) or give --text",
                 path);
    return tt_data_text(path, o->vocab ? o->vocab : TT_TEXT_VOCAB, T);
}

const char *token_source_name(const tt_data_opts *o)
{
    static char name[1100];
    if (!token_source_is_text(o)) return "markov";
    snprintf(name, sizeof name, "text %s", o->text ? o->text : TT_TEXT_DEFAULT);
    return name;
}

/* A symbol as one CSV field: printable ASCII as itself (but comma, quote and
 * space named), the rest as escapes or 0xNN. */
static void symbol_text(char *out, size_t n, int sym)
{
    if (sym == TT_SYMBOL_OTHER) snprintf(out, n, "other");
    else if (sym == TT_SYMBOL_TOKEN || sym < 0) snprintf(out, n, "token");
    else if (sym == ' ') snprintf(out, n, "space");
    else if (sym == ',') snprintf(out, n, "comma");
    else if (sym == '"') snprintf(out, n, "quote");
    else if (sym == '\n') snprintf(out, n, "\\n");
    else if (sym == '\t') snprintf(out, n, "\\t");
    else if (sym > 32 && sym < 127) snprintf(out, n, "%c", sym);
    else snprintf(out, n, "0x%02x", sym);
}

void token_source_write_vocab(const tt_data *d, const char *dir)
{
    if (tt_data_transitions(d)) return;
    outfile *f = csv_open_in(dir, "vocab.csv", "id,byte,char,count");
    for (int i = 0; i < tt_data_vocab(d); i++) {
        int sym = tt_data_symbol(d, i);
        char text[16];
        symbol_text(text, sizeof text, sym);
        csv_row(f, "%d,%d,%s,%zu", i, sym >= 0 ? sym : -1, text, tt_data_count(d, i));
    }
    csv_close(f);
}

/* The tokens of a (B, T+1) .npy of whole numbers in 0..65535 (the model checks its range). */
static int *read_tokens(const char *path, int T, int *B)
{
    int nd;
    size_t shape[4];
    double *x = npy_read(path, &nd, shape);
    if (nd != 2 || shape[1] != (size_t)T + 1 || shape[0] < 1 || shape[0] > 65536) {
        free(x);
        die_user("%s: expected a (B, %d) array of token ids, 1 <= B <= 65536", path, T + 1);
    }
    size_t n = shape[0] * shape[1];
    int *tok = xmalloc(n * sizeof(int));
    for (size_t i = 0; i < n; i++) {
        if (!(x[i] >= 0 && x[i] <= 65535) || x[i] != (double)(int)x[i]) {
            double v = x[i];
            free(x), free(tok);
            die_user("%s: entry %zu (%g) is not a token id", path, i, v);
        }
        tok[i] = (int)x[i];
    }
    free(x);
    *B = (int)shape[0];
    return tok;
}

void probe_batch_check(const probe_batch *o)
{
    if (o->batch < 1 || o->batch > 65536) die_user("--batch must be in 1..65536 (got %d)", o->batch);
    if (o->held_out != 0 && o->held_out != 1) die_user("--held-out must be 0 or 1 (got %d)", o->held_out);
    if (o->data_seed < 0) die_user("--data-seed must be >= 0 (got %ld)", o->data_seed);
}

int *probe_tokens(const probe_batch *o, int V, int T, const char *model, int *B, tt_data **d)
{
    *d = NULL;
    if (o->tokens) return read_tokens(o->tokens, T, B);
    tt_data_opts data = o->data;
    if (token_source_is_text(&data) && data.vocab == 0) data.vocab = V;
    *d = token_source(&data, V, T, 2, 2, (unsigned long)o->data_seed);
    tt_data_check_vocab_size(model, V, *d);
    int *tok = xmalloc((size_t)o->batch * (T + 1) * sizeof(int));
    gsl_rng *r = rng_new((unsigned long)o->data_seed);
    if (o->held_out) tt_data_held_out_batch(*d, r, o->batch, T, tok);
    else tt_data_batch(*d, r, o->batch, T, tok);
    rng_free(r);
    *B = o->batch;
    return tok;
}

void probe_write(const char *out, double loss, size_t P, const int *tok, int B, int T)
{
    outfile *f = csv_open_in(out, "loss.csv", "quantity,value");
    csv_row(f, "loss,%.17g", loss);
    csv_row(f, "P,%zu", P);
    csv_row(f, "batch,%d", B);
    csv_close(f);
    size_t n = (size_t)B * (T + 1), shape[2] = {(size_t)B, (size_t)T + 1};
    double *tk = xmalloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++) tk[i] = tok[i];
    npy_write_in(out, "tokens.npy", tk, 2, shape);
    free(tk);
}

/* ---- the MLP's data ------------------------------------------------------------------------- */

void mlp_data_load(mlp_data *d, const char *name, const char *dir, int pool, int standardize, unsigned long seed)
{
    d->train = dataset_load(name, dir, 1, seed);
    d->test = dataset_load(name, dir, 0, seed);
    dataset_check_same(d->train, d->test, "the training set", "the test set");
    dataset_pool(d->train, pool);
    dataset_pool(d->test, pool);
    d->dropped = dataset_drop_constant(d->train, d->test);
    if (d->train->dim < 1) die_user("every input feature is constant over the training set");
    if (standardize) dataset_standardize(d->train, d->test);
}

void mlp_data_free(mlp_data *d)
{
    dataset_free(d->train);
    dataset_free(d->test);
    d->train = d->test = NULL;
}

void mlp_data_head(const mlp_data *d, int n, const char *what, double *X, int *y)
{
    if (n > d->test->n) die_user("%s: %d images asked, but the test set has %d", what, n, d->test->n);
    int *idx = xmalloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++) idx[i] = i;
    dataset_gather(d->test, idx, n, X, y);
    free(idx);
}
