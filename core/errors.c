/* Errors and checked allocation. */
#include "core.h"
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int core_quiet = 0;

static char prog_name[64] = "toolkit";
static user_error_hook error_hook = NULL;
static exit_hook on_exit_hook = NULL;
static void (*cleanup_hook)(void) = NULL;

void set_exit_hook(exit_hook hook) { on_exit_hook = hook; }
void set_cleanup_hook(void (*hook)(void)) { cleanup_hook = hook; }

/* What the layers above registered to undo before the process ends on an
 * error (output.c: remove the uncommitted temporaries). */
static void run_cleanup(void)
{
    if (cleanup_hook) cleanup_hook();
}

/* The end of every error path, after the message and the temporaries: the
 * distributed layer's hook stops the whole job (MPI_Abort), else _exit. */
static __attribute__((noreturn)) void end_process(int code)
{
    fflush(NULL);
    if (on_exit_hook) on_exit_hook(code);
    _exit(code);
}

void set_program_name(const char *name)
{
    const char *base = strrchr(name, '/');
    snprintf(prog_name, sizeof prog_name, "%s", base ? base + 1 : name);
}

const char *program_name(void) { return prog_name; }

void set_user_error_hook(user_error_hook hook) { error_hook = hook; }

/* One line "prog: message", then the cleanup hook and _exit; the test hook,
 * when set, gets the message instead. */
static __attribute__((noreturn)) void die_with(int code, const char *fmt, va_list ap)
{
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (error_hook) {
        error_hook(msg);
        abort(); /* a hook must not return */
    }
    fprintf(stderr, "%s: %s\n", prog_name, msg);
    /* _exit, not exit: a library's exit handler may wait for threads that a
     * failed allocation left stuck (OpenBLAS's thread pool does) */
    run_cleanup();
    end_process(code);
}

void die_user(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    die_with(EXIT_USER, fmt, ap);
}

void die_diverged(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    die_with(EXIT_DIVERGED, fmt, ap);
}

void die_internal(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: internal error at %s:%d: ", prog_name, file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    run_cleanup();
    end_process(EXIT_INTERNAL);
}

/* Running out of memory is the machine's limit, not a bug: a user error that
 * says how much was asked for (the large allocations are checked before,
 * by memory_check). */
void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) die_user("out of memory allocating %.3f GB (lower the sizes, or raise the memory limit)", bytes / 1e9);
    return p;
}

void *xcalloc(size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size) die_user("allocation of %zu x %zu bytes overflows", count, size);
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) die_user("out of memory allocating %.3f GB (lower the sizes, or raise the memory limit)",
                     (double)count * size / 1e9);
    return p;
}

void *xrealloc(void *p, size_t bytes)
{
    void *q = realloc(p, bytes ? bytes : 1);
    if (!q) die_user("out of memory allocating %.3f GB (lower the sizes, or raise the memory limit)", bytes / 1e9);
    return q;
}

char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xmalloc(n), s, n);
}

size_t checked_mul(size_t count, size_t size, const char *what)
{
    if (size && count > SIZE_MAX / size)
        die_user("%s: size %zu x %zu overflows", what, count, size);
    return count * size;
}
