/* model.h — the one interface every model offers to the Hessian engine and the
 * optimizers, and the partitions of its parameters into blocks.
 *
 * A model is P parameters in one flat float64 buffer, described by a table of
 * named tensors (name, role, rows, cols, heads). Weights are stored (out, in)
 * row-major, so one output neuron is one contiguous row. The engine and the
 * optimizers never know which model they run on: they see only this struct.
 */
#ifndef MODEL_H
#define MODEL_H

#include <stddef.h>

/* What a tensor is; partitions (paper Algorithms 2 and 3) are built from roles,
 * never from name substrings. */
typedef enum {
    ROLE_EMBED,      /* token embedding (V×C): rows are tokens */
    ROLE_POS,        /* learned positions (T×C) */
    ROLE_QUERY,      /* (C×C), rows grouped by head */
    ROLE_KEY,
    ROLE_VALUE,
    ROLE_ATTN_PROJ,  /* (C×C) */
    ROLE_MLP_FC,     /* first MLP layer (M×C); for the 1-hidden-layer MLP the hidden layer
                        (with biases on, its last column holds each neuron's bias: mlp/mlp.h) */
    ROLE_MLP_PROJ,   /* second MLP layer (C×M); for the MLP the classifier (classes×width) */
    ROLE_NORM,       /* LayerNorm gain */
    ROLE_OUTPUT,     /* output head (V×C): rows are tokens */
    ROLE_BIAS,       /* any bias vector (rows = n, cols = 1), LayerNorm biases included */
    ROLE_MATRIX,     /* a plain matrix with no further meaning (quadratics, tests) */
    ROLE_COUNT
} tensor_role;

const char *role_name(tensor_role role);

typedef struct {
    char name[48];   /* e.g. "h0.attn.query", "fc1" */
    tensor_role role;
    size_t offset;   /* first entry in the flat parameter buffer */
    int rows, cols;  /* (out, in), row-major; a vector is rows = n, cols = 1 */
    int heads;       /* attention heads for query/key/value, else 1 */
    int layer;       /* Transformer block index, -1 outside blocks */
} tensor_info;

static inline size_t tensor_size(const tensor_info *t) { return (size_t)t->rows * t->cols; }

typedef struct model model;
struct model {
    const char *kind;            /* "mlp", "tinytransformer", ... */
    size_t P;                    /* number of parameters */
    int ntensors;
    tensor_info *tensors;        /* in buffer order, covering 0..P-1 exactly once */
    double *params;              /* the flat parameter buffer, length P */

    /* Sequence models (the Transformers): context length T, vocabulary V and
     * the batch, B sequences of T+1 token ids in 0..V-1 (inputs 0..T-1,
     * targets 1..T; copied; user error on a token outside the vocabulary).
     * T = V = 0 and set_tokens NULL for the others. What a training loop or a
     * checkpoint needs to feed any Transformer. token_losses: the loss at each
     * of the batch's B·T predictions into losses (B·T), returning their mean
     * (paired comparisons of two parameter vectors on one batch). */
    int T, V;
    void (*set_tokens)(model *m, const int *tokens, int B);
    double (*token_losses)(model *m, double *losses);

    /* Mean loss over the model's current batch at params. */
    double (*loss)(model *m);
    /* Loss and its gradient g (length P) at params. */
    double (*grad)(model *m, double *g);
    /* Exact Hessian-vector products (R-operator, Pearlmutter 1994) on a panel
     * of k directions: V and HV are k×P row-major — direction d is the
     * contiguous vector V[d*P .. d*P+P-1]. */
    void (*hvp)(model *m, const double *V, double *HV, int k);
    /* Optional: hvp restricted to tensors, for directions that live on a few
     * tensors (the blocks of a partition). Row d of V (k×P) is zero outside
     * tensors t0[d]..t1[d] (indices into the tensor table, t0[d] <= t1[d]), and
     * only row d of HV on those tensors is wanted: it must agree with hvp there
     * to round-off; the rest of HV is left unspecified. The model may skip the
     * work no wanted entry needs (the R-forward below t0's layer, the
     * R-backward below it, the weight-gradient products of tensors outside
     * t0..t1); it may also serve the whole panel as restricted to
     * min t0 .. max t1. NULL: the engine calls hvp. */
    void (*hvp_tensors)(model *m, const double *V, double *HV, int k, const int *t0, const int *t1);
    /* Optional fast path: columns j0..j0+k-1 of H, written as k×P row-major
     * (by symmetry these are rows j0.. of H). NULL: the engine calls hvp on
     * unit vectors. Must agree with hvp to round-off. */
    void (*hess_cols)(model *m, size_t j0, int k, double *out);
    /* Optional symmetric fast path for the full H: like hess_cols, but only the
     * entries at indices >= j0 need be exact (the engine mirrors the rest from
     * earlier panels). NULL: the engine uses hess_cols. */
    void (*hess_cols_lower)(model *m, size_t j0, int k, double *out);
    void (*destroy)(model *m);   /* frees impl, tensors and params */
    void *impl;
};

static inline void model_free(model *m) { if (m) m->destroy(m); }
/* Appends a tensor of rows × cols at offset m->P to m's table (grown as
 * needed) and advances m->P; returns its index. heads = 1 except for
 * query/key/value; layer = -1 outside Transformer blocks. */
int model_add_tensor(model *m, const char *name, tensor_role role, int rows, int cols, int heads, int layer);
/* Index of the tensor named `name`, or -1. */
int model_find_tensor(const model *m, const char *name);
/* Internal check: tensors are in order, disjoint and cover 0..P-1 (DIE otherwise). */
void model_check_tensors(const model *m);

/* ---- partitions ------------------------------------------------------------------
 * A block is a strided set of parameter indices: start, start+stride, ...,
 * (n entries). Rows and heads are contiguous (stride 1); an input neuron of a
 * row-major matrix is a column (stride = cols). */
typedef struct {
    size_t start, n, stride;
    int tensor;        /* index into the model's tensor table */
    char name[96];     /* e.g. "h0.attn.query[head 2]" */
} block;

typedef struct {
    int nblocks, cap;
    block *b;
} partition;

/* How to split one tensor. */
typedef enum {
    SPLIT_WHOLE,       /* one block */
    SPLIT_ROWS,        /* one block per output neuron (row); by token for embed/output */
    SPLIT_COLS,        /* one block per input neuron (column) */
    SPLIT_HEADS,       /* one block per head: `heads` runs of rows */
    SPLIT_ENTRIES,     /* one block per entry (Adam's per-coordinate view) */
    SPLIT_COUNT
} split_kind;
const char *split_name(split_kind s);

partition *partition_new(void);
void partition_free(partition *p);
void partition_add(partition *p, size_t start, size_t n, size_t stride, int tensor, const char *name);
/* Append the blocks of tensor t split by s. */
void partition_add_tensor(partition *p, const model *m, int t, split_kind s);
/* Paper Algorithm 2: one block per tensor (the "default partition"). */
partition *partition_alg2(const model *m);
/* Paper Algorithm 3 (Transformers): embed/output by tokens (rows); query/key by
 * heads; value (by rows, or whole if value_whole), attn_proj, mlp_fc, mlp_proj by
 * output neurons; norm, pos and biases one block per tensor. */
partition *partition_alg3(const model *m, int value_whole);
/* Same split for every tensor. */
partition *partition_uniform(const model *m, split_kind s);
/* A partition file: one block per line "name start n [stride]"; '#' comments.
 * User error if unreadable, malformed, or not covering 0..P-1 exactly once. */
partition *partition_read(const char *path, const model *m);
/* The same blocks without the cover check (some parameters in no block, or in
 * two): for analyses of chosen blocks only. User error if unreadable,
 * malformed or empty. */
partition *partition_read_blocks(const char *path, const model *m);
/* User error (naming `what`) unless every index 0..P-1 is in exactly one block. */
void partition_check_cover(const partition *p, size_t P, const char *what);
/* Gather / scatter the entries of block b between a flat vector and dense storage. */
void block_gather(const block *b, const double *x, double *out);
size_t partition_max_block(const partition *p);

/* ---- candidate splits of one tensor (Principle 1; partition.c) --------------------
 * For any model. A tensor's candidate splits: whole; by head (query/key/value with heads > 1); by
 * row (output neuron; token for embed/output; position for pos); by column (input
 * neuron; matrices only); by entry (Adam's per-coordinate view). Their mass ratios
 * are taken inside the tensor's diagonal block H_tt, so the blocks are given
 * relative to the tensor's first parameter. */
#define SPLIT_CANDIDATES_MAX SPLIT_COUNT
/* The applicable splits of tensor t, coarse to fine by kind; returns how many. */
int tensor_splits(const model *m, int t, split_kind *out /* (SPLIT_CANDIDATES_MAX) */);
/* What one block of split s of tensor t is: "tensor", "head", "output neuron",
 * "token", "position", "input neuron", "entry". */
const char *split_meaning(const tensor_info *ti, split_kind s);
/* The blocks of tensor t split by s, indices relative to the tensor's first entry. */
partition *tensor_local_partition(const model *m, int t, split_kind s);
/* Number of blocks split s makes of tensor t. */
int split_nblocks(const tensor_info *ti, split_kind s);
/* The split whose blocks of tensor t are exactly p's blocks of t; -1 if none is. */
int partition_split_of(const partition *p, const model *m, int t);
/* "Finest" = the most blocks: the index of the candidate with the most blocks
 * among those whose mass ratio is >= share (ties: the larger mass ratio, then
 * the earlier candidate); -1 if none reaches share. */
int finest_above_share(int n, const int *nblocks, const double *mass, double share);

#endif
