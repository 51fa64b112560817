/* tt_readerr — what the checkpoint readers (tt_nanogpt.c, llama_hf.c,
 * tt_gpt2hf.c) share: the error, the first message carried up the call chain
 * as a -1 return so each level frees what it holds and reported once by the
 * caller (die_user); the layer index in a tensor name; the causal-mask buffer. */
#ifndef TT_READERR_H
#define TT_READERR_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/safetensors.h"

typedef struct {
    char msg[700];
} reader_err;

/* Sets e's message; returns -1 (return reader_fail(e, ...) from a reading step). */
static inline int reader_fail(reader_err *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static inline int reader_fail(reader_err *e, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
    va_end(ap);
    return -1;
}

/* "<prefix><i>.<rest>" (i in decimal, without leading zeros): i into *l and the
 * rest into *rest; -1 if name is not of that form. */
static inline int reader_layer_name(const char *name, const char *prefix, int *l, const char **rest)
{
    size_t n = strlen(prefix);
    if (strncmp(name, prefix, n)) return -1;
    const char *p = name + n;
    if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] >= '0' && p[1] <= '9')) return -1;
    long v = 0;
    for (; *p >= '0' && *p <= '9'; p++)
        if (v < 1000000) v = v * 10 + (*p - '0');
    if (*p != '.') return -1;
    *l = (int)v;
    *rest = p + 1;
    return 0;
}

/* x, a GPT's mask buffer: [1, 1, T, T] of ones on and below the diagonal and
 * zeros above; `layout` and `size_key` name the file's kind and its T key. */
static inline int reader_check_mask(const st_tensor *x, long T, const char *layout, const char *size_key,
                                    reader_err *e)
{
    if (!(x->ndim == 4 && x->shape[0] == 1 && x->shape[1] == 1 && (long)x->shape[2] == T && (long)x->shape[3] == T))
        return reader_fail(e, "tensor %.200s: expected %s's causal mask [1, 1, %ld, %ld] (%s %ld)", x->name, layout,
                           T, T, size_key, T);
    for (size_t i = 0; i < x->n; i++)
        if (x->data[i] != (i % (size_t)T <= i / (size_t)T))
            return reader_fail(e, "tensor %.200s: not a causal mask (ones on and below the diagonal, zeros above)",
                               x->name);
    return 0;
}

#endif
