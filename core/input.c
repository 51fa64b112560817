/* Input files: a regular file of a sane size, opened without blocking (core.h). A
 * FIFO given as a data file blocked for ever, /dev/zero read until memory ran
 * out, and a folder gave "Input/output error": every reader opens through here. */
#include "core.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

FILE *input_open(const char *path, const char *what, size_t max_bytes, size_t *size, char *err, size_t nerr)
{
    /* O_NONBLOCK: opening a FIFO without a writer would block before fstat could look */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, nerr, "cannot read %s: %s", what, strerror(errno));
        if (fd >= 0) close(fd);
        return NULL;
    }
    const char *bad = S_ISDIR(st.st_mode) ? "is a folder, expected a file"
                    : !S_ISREG(st.st_mode) ? "is not a regular file (a FIFO, a device or a socket)" : NULL;
    if (!bad && max_bytes && (unsigned long long)st.st_size > max_bytes) {
        snprintf(err, nerr, "%s is %.1f MB, more than the %.1f MB such a file may hold", what, st.st_size / 1048576.0,
                 max_bytes / 1048576.0);
        close(fd);
        return NULL;
    }
    if (bad) {
        snprintf(err, nerr, "%s %s", what, bad);
        close(fd);
        return NULL;
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    FILE *fp = fdopen(fd, "rb");
    if (!fp) {
        snprintf(err, nerr, "cannot read %s: %s", what, strerror(errno));
        close(fd);
        return NULL;
    }
    if (size) *size = (size_t)st.st_size;
    return fp;
}

char *input_read_all(const char *path, const char *what, size_t max_bytes, size_t *len, char *err, size_t nerr)
{
    size_t size;
    FILE *fp = input_open(path, what, max_bytes, &size, err, nerr);
    if (!fp) return NULL;
    /* the size fstat gave, and more while the file grows, up to the cap */
    size_t cap = size + 1, n = 0;
    char *buf = malloc(cap + 1);
    int bad = !buf;
    while (!bad) {
        size_t got = fread(buf + n, 1, cap - n, fp);
        n += got;
        if (got == 0) break;
        if (n == cap) {
            if (max_bytes && n > max_bytes) break;
            char *more = cap < ((size_t)-1) / 4 ? realloc(buf, 2 * cap + 1) : NULL;
            if (!more) { bad = 1; break; }
            buf = more;
            cap *= 2;
        }
    }
    int rerr = ferror(fp) ? (errno ? errno : EIO) : 0;
    fclose(fp);
    if (bad || rerr || (max_bytes && n > max_bytes)) {
        if (bad) snprintf(err, nerr, "%s: out of memory reading it", what);
        else if (rerr) snprintf(err, nerr, "reading %s failed: %s", what, strerror(rerr));
        else snprintf(err, nerr, "%s grew past the %.1f MB such a file may hold", what, max_bytes / 1048576.0);
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}
