/* safetensors — the tensor file format of Hugging Face's safetensors library
 * (the field's standard for model weights), read and written in C.
 *
 * Layout: an 8-byte little-endian unsigned header length N; N bytes of JSON (an
 * object: each tensor name maps to {"dtype", "shape", "data_offsets": [begin,
 * end]}, and an optional "__metadata__" maps strings to strings), padded with
 * spaces; then the data, each tensor's bytes little-endian and C-order at
 * [begin, end) of the data region. The header is parsed with Debian's libcjson.
 *
 * Reading is strict, as the reference implementation is: a header larger than
 * the file or than 100 MB, JSON that is not such an object, anything after it
 * but blanks, a NUL or a \u0000 escape (a name cut short), a duplicate name (found
 * by sorting), a field twice in an entry, a metadata key twice, a shape whose
 * size disagrees with its byte range, ranges that overlap, leave holes or do
 * not end at the end of the file are user errors naming the file (one line,
 * exit 2); so is a path that is not a regular file (input_open). Dtypes F64,
 * F32, F16 and BF16 are read into float64; any other (integers, bool, F8) is a
 * user error naming it. Sizes are checked against the file's length before
 * anything is allocated.
 *
 * Writing: tensors in the order given, as F64 or F32 (values rounded to
 * nearest), the header padded to a multiple of 8 bytes; atomic (outfile). The
 * same tensors and metadata always give the same bytes.
 */
#ifndef SAFETENSORS_H
#define SAFETENSORS_H

#include <stddef.h>

typedef enum { ST_F64, ST_F32, ST_F16, ST_BF16 } st_dtype;
#define ST_MAX_DIMS 8

typedef struct {
    char *name;
    st_dtype dtype;           /* as stored */
    int ndim;
    size_t shape[ST_MAX_DIMS];
    size_t n;                 /* elements: the product of shape (1 for ndim 0) */
    double *data;             /* (n) the values as float64 */
} st_tensor;

typedef struct {
    int ntensors;
    st_tensor *t;             /* in the order of their data (ascending offsets) */
    int nmeta;
    char **meta_key, **meta_val;
} st_file;

/* The file at path; user error on anything malformed or unsupported. */
st_file *st_read(const char *path);
/* The same from the bytes of a file in memory; `what` names it in errors. */
st_file *st_parse(const unsigned char *buf, size_t len, const char *what);
const st_tensor *st_find(const st_file *f, const char *name);
/* The metadata value of key, or NULL. */
const char *st_meta(const st_file *f, const char *key);
void st_free(st_file *f);
const char *st_dtype_name(st_dtype d);

/* A tensor to write: name, shape and n = product of shape values. */
typedef struct {
    const char *name;
    int ndim;
    size_t shape[ST_MAX_DIMS];
    const double *data;
} st_out;
/* Writes the tensors (in this order) and the metadata pairs (keys and values
 * NULL-free strings; nmeta may be 0) to path, data as dtype (ST_F64 or ST_F32). */
void st_write(const char *path, const st_out *t, int n, const char *const *meta_key, const char *const *meta_val,
              int nmeta, st_dtype dtype);

#endif
