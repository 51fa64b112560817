/* fuzz_common.h — shared by the libFuzzer targets in tests/fuzz/.
 *
 * A reader's user error (die_user: a rejected input) must return normally, so
 * the user-error hook longjmps back into the target (the pattern of
 * tests/check.h's EXPECT_USER_ERROR). An internal error (DIE: exit 1), any
 * other exit, a sanitizer report, a leak, a timeout or an allocation above
 * libFuzzer's -malloc_limit_mb is a crash.
 *
 * Readers that take a path get the input through a file in a private
 * temporary folder (on /dev/shm when writable), rewritten for every input and
 * removed at exit. */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include "core/core.h"
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static jmp_buf fuzz_jmp;
static char fuzz_dir[64];

static void fuzz_hook(const char *msg)
{
    (void)msg;
    longjmp(fuzz_jmp, 1);
}

static void fuzz_cleanup(void)
{
    if (!fuzz_dir[0]) return;
    if (remove_tree(fuzz_dir) != 0) fprintf(stderr, "fuzz: could not remove %s\n", fuzz_dir);
}

/* The private folder (created once). */
static const char *fuzz_tmpdir(void)
{
    if (!fuzz_dir[0]) {
        /* tmpfs when there is one: rewriting a file on a disk mounted with
         * "discard" costs milliseconds per input */
        const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(fuzz_dir, sizeof fuzz_dir, "%s/fuzz.XXXXXX", base);
        if (!mkdtemp(fuzz_dir)) {
            perror("mkdtemp");
            abort();
        }
        atexit(fuzz_cleanup);
    }
    return fuzz_dir;
}

/* "<tmpdir>/<name>" in a static buffer per call site's own array. */
static void fuzz_path(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", fuzz_tmpdir(), name);
}

static void fuzz_write(const char *path, const uint8_t *data, size_t size)
{
    FILE *fp = fopen(path, "wb");
    if (!fp || fwrite(data, 1, size, fp) != size || fclose(fp) != 0) {
        perror(path);
        abort();
    }
}

/* Runs STATEMENT; a user error inside it returns here. */
#define FUZZ_TRY(statement)                       \
    do {                                          \
        set_user_error_hook(fuzz_hook);           \
        if (setjmp(fuzz_jmp) == 0) { statement; } \
        set_user_error_hook(NULL);                \
    } while (0)

#endif
