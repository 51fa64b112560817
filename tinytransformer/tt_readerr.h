/* tt_readerr — the error of a checkpoint reader (tt_nanogpt.c, llama_hf.c,
 * tt_gpt2hf.c): the first message, carried up the call chain as a -1 return so
 * each level frees what it holds, and reported once by the caller (die_user). */
#ifndef TT_READERR_H
#define TT_READERR_H

#include <stdarg.h>
#include <stdio.h>

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

#endif
