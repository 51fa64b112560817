/* mlp — a 1-hidden-layer MLP as a `model` (core/model.h), with forward,
 * backward and R-operator (exact Hessian-vector products) batched over
 * samples and directions with BLAS-3; and the image data it trains on
 * (Fashion-MNIST IDX, CIFAR-10/100 binary, a seeded synthetic set).
 *
 * The network (paper Fig. 2; Collobert 2004):
 *   Z1 = X~ W1ᵀ          X~ = [X, 1] (N, in+1) when biases are on, else X (N, in)
 *   A  = σ(Z1)           σ = relu | tanh | gelu | linear, elementwise (N, width)
 *   Z2 = A W2ᵀ + b2      (N, classes)
 *   L  = mean_n CE(softmax(Z2_n), y_n)   or   ½ mean_n ‖Z2_n − onehot(y_n)‖² (squared)
 *
 * Parameters, in buffer order (so each hidden neuron is one contiguous run):
 *   "fc1"      (width × (in+1)): row i = neuron i's incoming weights then its bias
 *              (width × in without biases); role ROLE_MLP_FC
 *   "fc2"      (classes × width); role ROLE_MLP_PROJ
 *   "fc2.bias" (classes × 1) when biases are on; role ROLE_BIAS
 *
 * The model has the symmetric fast path model.hess_cols_lower (half the W1–W1
 * work of hess_cols).
 *
 * Second derivatives: ReLU's σ'' is 0 almost everywhere (and σ'(0) = 0), so its
 * Hessian has no σ'' term; GELU is the exact erf form z·Φ(z) (PyTorch's default),
 * σ'' = φ(z)(2 − z²); tanh σ'' = −2 tanh(z)(1 − tanh²(z)).
 */
#ifndef MLP_H
#define MLP_H

#include "core/core.h"
#include "core/model.h"

typedef enum { ACT_RELU, ACT_TANH, ACT_GELU, ACT_LINEAR, ACT_COUNT } mlp_act;
typedef enum { LOSS_XENT, LOSS_SQUARED, LOSS_COUNT } mlp_loss;
const char *act_name(mlp_act a);        /* "relu", "tanh", "gelu", "linear" */
mlp_act act_parse(const char *name);    /* user error on an unknown name */
const char *loss_kind_name(mlp_loss l); /* "xent", "squared" */

typedef struct {
    int in, width, classes;
    mlp_act act;
    int bias;          /* 1: biases in both layers */
    mlp_loss loss;
    unsigned long seed; /* initialisation */
} mlp_config;

/* A new model (params initialised from cfg->seed, as tt_new does), no batch
 * yet; user error on bad sizes. */
model *mlp_new(const mlp_config *cfg);
/* Reinitialises params like PyTorch's nn.Linear default: every weight and bias
 * ~ U(−1/√fan_in, 1/√fan_in), fan_in = in for fc1, width for fc2, drawn from seed. */
void mlp_init_params(model *m, unsigned long seed);
/* The batch the loss is averaged over: X (N, in) row-major, labels y (N) in
 * 0..classes-1. Copied (X~ with its ones column is built here). */
void mlp_set_batch(model *m, const double *X, const int *y, int N);
const mlp_config *mlp_get_config(const model *m);
/* Fraction of the batch whose arg-max logit equals the label, at params. */
double mlp_accuracy(model *m);
/* Worker threads for hess_cols and hess_cols_lower (0 = toolkit_threads()). They
 * take fixed chunks of columns with single-threaded BLAS, so H does not depend
 * on their number. */
void mlp_set_threads(model *m, int n);
/* dgemm flops issued by this model since creation (2·M·N·K per call), for benchmarks. */
double mlp_flops(const model *m);

/* Naive reference kernels (per-sample loops, no BLAS) for the tests. */
double mlp_loss_naive(model *m);
double mlp_grad_naive(model *m, double *g);                /* g (P) */
void mlp_hvp_naive(model *m, const double *v, double *hv); /* one direction, v and hv (P) */

/* ---- data ---------------------------------------------------------------------
 * Images as float64 rows (n, dim) with dim = channels·rows·cols, channel-major
 * (CIFAR's own order); labels 0..classes-1. Readers check everything and stop
 * with one clear user error (all memory freed first): wrong magic, truncated
 * file, label out of range, dimension or count mismatch. */
typedef struct {
    int n, classes;
    int channels, rows, cols;
    int dim;            /* channels·rows·cols */
    double *x;          /* (n, dim) */
    int *y;             /* (n) */
} dataset;

void dataset_free(dataset *d);
/* IDX pair (images magic 0x00000803, labels 0x00000801), gzip or plain (zlib
 * reads both); pixels scaled to [0,1]. User error if a label is >= classes. */
dataset *idx_load(const char *images, const char *labels, int classes);
/* One CIFAR binary file: records of 1 label byte (CIFAR-10) or coarse+fine label
 * bytes (CIFAR-100, the fine label is used) then 3072 pixel bytes (3×32×32). */
dataset *cifar_load(const char *path, int cifar100);
/* Append b to a (same dims and classes, else user error); frees b. */
void dataset_append(dataset *a, dataset *b);
/* A seeded synthetic set of 1-channel rows×cols "images": class means ~ N(0, 1) per
 * pixel drawn from `seed`, samples = mean + N(0, noise²) drawn from stream (seed, stream),
 * so train (stream 0) and test (stream 1) share the classes. Labels uniform. */
dataset *dataset_synthetic(int n, int rows, int cols, int classes, double noise, unsigned long seed, int stream);
/* The same with `channels` channels (channel-major, as CIFAR); dataset_synthetic is
 * this with one channel (same draws). */
dataset *dataset_synthetic_channels(int n, int channels, int rows, int cols, int classes, double noise,
                                    unsigned long seed, int stream);
/* The named synthetic sets with CIFAR's layout, for when the real sets are absent
 * (mlp_steps): 3×32×32 images, 10 or 100 classes, per-pixel noise 4 (the class
 * means are N(0, 1) per pixel), 5,000 training and 1,000 test images. */
#define SYNTHETIC_CIFAR_TRAIN 5000
#define SYNTHETIC_CIFAR_TEST 1000
#define SYNTHETIC_CIFAR_NOISE 1.5
/* User error unless a and b have the same image shape and classes (names for the message). */
void dataset_check_same(const dataset *a, const dataset *b, const char *what_a, const char *what_b);

/* Named sets: "fashion-mnist" (dir holds {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz];
 * default /usr/share/datasets/fashion-mnist), "cifar10" (data_batch_1..5.bin,
 * test_batch.bin), "cifar100" (train.bin, test.bin), "synthetic" (dir unused),
 * "synthetic-cifar10" and "synthetic-cifar100" (dir unused; above).
 * train: 1 for the training split, 0 for the test split. */
dataset *dataset_load(const char *name, const char *dir, int train, unsigned long seed);
const char *dataset_default_dir(const char *name);

/* k×k average pooling per channel (rows and cols must be divisible by k). */
void dataset_pool(dataset *d, int k);
/* Per-feature standardisation with train's mean and std (std floored at 1e-3 of
 * the largest std so constant pixels stay 0), applied to train and to test (may be NULL). */
void dataset_standardize(dataset *train, dataset *test);
/* Drops the features that are constant over train (zero variance; e.g. always-black
 * corner pixels), from train and from test (may be NULL); returns how many. They
 * carry no signal and make every neuron's Hessian block singular. Afterwards
 * the images are 1×dim (rows = 1, cols = dim, channels = 1). */
int dataset_drop_constant(dataset *train, dataset *test);
/* Rows idx[0..n-1] of d into X (n, dim) and y (n). */
void dataset_gather(const dataset *d, const int *idx, int n, double *X, int *y);

#endif
