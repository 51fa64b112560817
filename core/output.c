/* Output files written atomically (temporary name, rename on success), folders,
 * CSV and .npy. */
#include "core.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct outfile {
    char *path, *tmp;
    FILE *fp;
    outfile *next;  /* registry of uncommitted files */
};

static outfile *open_files = NULL;

/* The output folders this process locked (ensure_dir): "<dir>/.lock", held
 * open for the process's lifetime. An exclusive holder removes its lock file
 * when it ends (a process forked from it does not: owner). */
typedef struct {
    char *path;      /* "<dir>/.lock" */
    char *dir;       /* the folder as ensure_dir was given it (its journal: "<dir>/.files") */
    dev_t dev;       /* the folder */
    ino_t ino;
    pid_t owner;
    int exclusive;
} folder_lock;
static folder_lock *locks = NULL;
static int nlocks = 0;
static int lock_mode = 1; /* 1 exclusive, 0 shared (output_shared_folder), -1 none (output_rank_follows) */

static const char JOURNAL[] = ".files"; /* a folder's journal of committed files (journal_add) */

/* Signals that remove the temporaries before the process dies of them. */
static const int CLEANUP_SIGNALS[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
#define NCLEANUP ((int)(sizeof CLEANUP_SIGNALS / sizeof *CLEANUP_SIGNALS))

/* Remove every uncommitted temporary: at exit and on a fatal signal. The
 * registry is only changed with those signals blocked (registry_lock), so the
 * handler always walks a consistent list; it calls nothing but unlink. */
static void remove_temporaries(void)
{
    for (outfile *f = open_files; f; f = f->next) unlink(f->tmp);
    pid_t me = getpid();
    for (int i = 0; i < nlocks; i++)
        if (locks[i].exclusive && locks[i].owner == me) unlink(locks[i].path);
}

void outfile_remove_temporaries(void) { remove_temporaries(); }

/* A child process that writes one of the temporaries (heatmap's gnuplot): a
 * signal that ends this process ends it first (kill and waitpid are
 * async-signal-safe), so it cannot write the temporary again afterwards. */
static volatile pid_t watched_child = 0;

void output_watch_child(int pid) { watched_child = (pid_t)pid; }

static void on_signal(int sig)
{
    int saved = errno;
    pid_t child = watched_child;
    if (child > 0) {
        kill(child, SIGKILL);
        while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {}
    }
    remove_temporaries(); /* unlink is async-signal-safe */
    /* Die of the same signal (the caller sees the usual status): default
     * action, then re-raise; sig is blocked while the handler runs, so it is
     * delivered as soon as the handler returns. */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
    errno = saved;
}

static void registry_lock(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (int i = 0; i < NCLEANUP; i++) sigaddset(&set, CLEANUP_SIGNALS[i]);
    sigprocmask(SIG_BLOCK, &set, old);
}

static void registry_unlock(const sigset_t *old) { sigprocmask(SIG_SETMASK, old, NULL); }

/* SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE (a reader of our output gone): remove the
 * temporaries (and lock files), then die of the signal. A signal the parent set to be
 * ignored (nohup's SIGHUP, a background job's SIGINT) stays ignored. SIGXFSZ is
 * ignored, so exceeding a file-size
 * limit (ulimit -f) makes the write fail with EFBIG: a one-line user error
 * "... File too large" instead of a core dump that leaves the temporary. */
static void install_cleanup_once(void)
{
    static int installed = 0;
    if (installed) return;
    installed = 1;
    atexit(remove_temporaries);
    set_cleanup_hook(remove_temporaries);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < NCLEANUP; i++) sigaddset(&sa.sa_mask, CLEANUP_SIGNALS[i]);
    for (int i = 0; i < NCLEANUP; i++) {
        if (sigaction(CLEANUP_SIGNALS[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(CLEANUP_SIGNALS[i], &sa, NULL);
    }
    struct sigaction ign;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigemptyset(&ign.sa_mask);
    sigaction(SIGXFSZ, &ign, NULL);
}

static void unregister(outfile *f)
{
    sigset_t old;
    registry_lock(&old);
    for (outfile **p = &open_files; *p; p = &(*p)->next)
        if (*p == f) { *p = f->next; break; }
    registry_unlock(&old);
}

/* ---- the files this process committed (run.txt lists them; see clear_previous_run) ---- */
static char **committed = NULL;
static size_t ncommitted = 0, committed_cap = 0;
static int keep_previous = 0;

static void note_committed(const char *path)
{
    sigset_t old;
    registry_lock(&old);
    for (size_t i = 0; i < ncommitted; i++)
        if (strcmp(committed[i], path) == 0) { registry_unlock(&old); return; }
    if (ncommitted == committed_cap) {
        committed_cap = committed_cap ? 2 * committed_cap : 64;
        committed = xrealloc(committed, committed_cap * sizeof *committed);
    }
    committed[ncommitted++] = xstrdup(path);
    registry_unlock(&old);
}

static int was_committed(const char *path)
{
    for (size_t i = 0; i < ncommitted; i++)
        if (strcmp(committed[i], path) == 0) return 1;
    return 0;
}

void output_list_committed(FILE *fp, const char *dir)
{
    size_t n = strlen(dir);
    for (size_t i = 0; i < ncommitted; i++)
        if (strncmp(committed[i], dir, n) == 0 && committed[i][n] == '/' && strcmp(committed[i] + n + 1, "run.txt"))
            fprintf(fp, "file: %s\n", committed[i] + n + 1);
}

void output_keep_previous(void) { keep_previous = 1; }

/* A name from a run.txt's or the journal's "file:" line is removed only when it
 * stays inside the folder (relative, without "..") and is not the folder's lock
 * or journal, which a list never names (item 4 of issue 27: a run.txt naming
 * ".lock" removed the lock a running process held). */
static int removable_name(const char *name)
{
    if (!name[0] || name[0] == '/') return 0;
    for (const char *s = name; (s = strstr(s, "..")) != NULL; s += 2)
        if ((s == name || s[-1] == '/') && (s[2] == '/' || s[2] == '\0')) return 0;
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    return strcmp(base, ".lock") != 0 && strcmp(base, JOURNAL) != 0;
}

/* Removes <name> (a relative path without "..") under the folder dfd refers to
 * when it is a regular file reached without following any symbolic link: each
 * folder on the way is opened with O_NOFOLLOW, the file itself is looked at
 * with AT_SYMLINK_NOFOLLOW; a link anywhere on the way leaves everything as it
 * is (a link out of the folder must not delete what it points at). */
static void unlink_inside(int dfd, const char *name)
{
    char *copy = xstrdup(name), *save = NULL, *comp = strtok_r(copy, "/", &save);
    int fd = dup(dfd);
    while (comp && fd >= 0) {
        char *next = strtok_r(NULL, "/", &save);
        if (!next) {
            struct stat st;
            if (fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) unlinkat(fd, comp, 0);
            break;
        }
        int sub = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        close(fd);
        fd = sub;
        comp = next;
    }
    if (fd >= 0) close(fd);
    free(copy);
}

/* ---- the journal: "<dir>/.files", the files committed into a folder so far ----------------
 * run.txt lists a run's files when the run ends; a run killed before (SIGKILL, a
 * power cut) would leave its files beside the next run's. So a process that holds
 * a folder's lock exclusively and clears it appends "file: <name>" to the folder's
 * journal, and fsyncs it, before each rename into the folder; the next run's
 * clearing removes what the journal lists as well, and run_write_info removes the
 * journal once run.txt lists the same files. */

/* The folder of this process's journalled locks that holds path (the innermost), or NULL;
 * *rel: path relative to it. */
static const folder_lock *journal_folder(const char *path, const char **rel)
{
    const folder_lock *best = NULL;
    size_t best_n = 0;
    for (int i = 0; i < nlocks; i++) {
        const folder_lock *l = &locks[i];
        size_t n = strlen(l->dir);
        if (!l->exclusive || l->owner != getpid() || keep_previous) continue;
        if (strncmp(path, l->dir, n) == 0 && path[n] == '/' && (!best || n > best_n)) best = l, best_n = n;
    }
    if (best) {
        *rel = path + best_n;
        while (**rel == '/') (*rel)++;
    }
    return best;
}

static void journal_add(const char *path)
{
    const char *rel;
    const folder_lock *l = journal_folder(path, &rel);
    if (!l || !removable_name(rel)) return;
    char *jpath = path_join(l->dir, JOURNAL);
    int fd = open(jpath, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    size_t len = strlen(rel) + 8;
    char *line = xmalloc(len);
    int n = snprintf(line, len, "file: %s\n", rel);
    int e = fd < 0 ? errno : write(fd, line, (size_t)n) != n ? (errno ? errno : EIO) : fsync(fd) != 0 ? errno : 0;
    if (fd >= 0) close(fd);
    free(line);
    if (e) die_user("cannot write the folder's journal %s: %s", jpath, strerror(e));
    free(jpath);
}

void output_journal_done(const char *dir)
{
    size_t n = strlen(dir);
    for (int i = 0; i < nlocks; i++) {
        const folder_lock *l = &locks[i];
        if (!l->exclusive || l->owner != getpid() || keep_previous) continue;
        if (strncmp(l->dir, dir, n) == 0 && (l->dir[n] == '\0' || l->dir[n] == '/')) {
            char *jpath = path_join(l->dir, JOURNAL);
            unlink(jpath);
            free(jpath);
        }
    }
}

/* Removes the files a list in the folder names ("file: " lines of run.txt or the
 * journal; other lines are skipped), but those this process committed; then the
 * list itself. A run.txt is the toolkit's only when its first line is "command: ". */
static void remove_listed(int dfd, const char *dir, const char *list, int need_command)
{
    int rfd = openat(dfd, list, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    FILE *fp = rfd >= 0 ? fdopen(rfd, "r") : NULL;
    if (!fp) {
        if (rfd >= 0) close(rfd);
        return;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int first = 1, ours = !need_command;
    while ((len = getline(&line, &cap, fp)) >= 0) {
        if (first && need_command) ours = strncmp(line, "command: ", 9) == 0;
        first = 0;
        if (!ours) break;
        if (strncmp(line, "file: ", 6) != 0 || (size_t)len != strlen(line)) continue; /* a NUL: not a name */
        line[strcspn(line, "\n")] = '\0';
        if (!removable_name(line + 6)) continue;
        char *path = path_join(dir, line + 6);
        if (!was_committed(path)) unlink_inside(dfd, line + 6);
        free(path);
    }
    free(line);
    fclose(fp);
    char *path = path_join(dir, list);
    if (ours && !was_committed(path)) unlink_inside(dfd, list);
    free(path);
}

/* "<name>.tmp.<pid>": the pid, or 0 when the name is not a temporary's. */
static long temporary_pid(const char *name)
{
    const char *t = strstr(name, ".tmp.");
    for (const char *u; t && (u = strstr(t + 5, ".tmp.")); t = u) {}
    if (!t || t == name || !t[5] || strspn(t + 5, "0123456789") != strlen(t + 5) || strlen(t + 5) > 9) return 0;
    return strtol(t + 5, NULL, 10);
}

/* The temporaries ("<name>.tmp.<pid>", regular files) of processes that no longer
 * run: a run killed by SIGKILL could not remove its own. */
static void remove_dead_temporaries(int dfd)
{
    int fd = dup(dfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        long pid = temporary_pid(e->d_name);
        struct stat st;
        if (pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) unlinkat(dfd, e->d_name, 0);
    }
    closedir(d);
}

/* A folder this process has just locked: the temporaries of dead processes go;
 * then, unless this program adds to a folder (output_keep_previous), the files of
 * the previous run — those its run.txt lists (a finished run) and those its
 * journal lists (a run killed before its run.txt) — and the two lists, so an
 * interrupted re-run leaves only its own files and no run.txt, never a mix of two
 * runs under the old run.txt. Only regular files inside the folder go, never
 * through a symbolic link (unlink_inside), never the lock or the journal by a
 * list. Under MPI only rank 0 locks and clears (dist_init: output_rank_follows). */
static void clear_previous_run(const char *dir)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return;
    remove_dead_temporaries(dfd);
    if (!keep_previous) {
        remove_listed(dfd, dir, "run.txt", 1);
        remove_listed(dfd, dir, JOURNAL, 0);
    }
    close(dfd);
}

/* ---- locks: one run per folder ------------------------------------------------------------ */

void output_shared_folder(void) { if (lock_mode > 0) lock_mode = 0; }
void output_rank_follows(void)
{
    keep_previous = 1;
    lock_mode = -1;
}

/* The process id a lock file holds (written by its holder right after it took
 * the lock: a few tries while it is still empty); 0 if none. */
static long lock_holder(int fd)
{
    for (int tries = 0; tries < 50; tries++) {
        char buf[32] = "";
        ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
        long pid = n > 0 ? strtol(buf, NULL, 10) : 0;
        if (pid > 0) return pid;
        usleep(2000);
    }
    return 0;
}

/* Takes "<dir>/.lock" (flock, exclusive unless output_shared_folder) for the
 * process's lifetime, or stops with "folder X is in use by process PID" when
 * another run holds it. The descriptor is close-on-exec; the lock goes with the
 * process, whatever ends it. A lock file whose holder removed it as this
 * process took it (holders remove theirs at exit) is taken again afresh. */
static int lock_folder(const char *dir, const struct stat *dst)
{
    if (lock_mode < 0) return 0;
    for (int i = 0; i < nlocks; i++)
        if (locks[i].dev == dst->st_dev && locks[i].ino == dst->st_ino) return 0; /* locked already */
    char *path = path_join(dir, ".lock");
    int fd;
    for (;;) {
        fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0) {
            int e = errno;
            free(path);
            die_user("cannot create the lock file %s/.lock: %s", dir, strerror(e));
        }
        if (flock(fd, (lock_mode ? LOCK_EX : LOCK_SH) | LOCK_NB) != 0) {
            int e = errno;
            long pid = e == EWOULDBLOCK ? lock_holder(fd) : 0;
            close(fd);
            free(path);
            if (e != EWOULDBLOCK) die_user("cannot lock %s/.lock: %s", dir, strerror(e));
            if (pid > 0) die_user("folder %s is in use by process %ld (another run writes into it)", dir, pid);
            die_user("folder %s is in use by another process (another run writes into it)", dir);
        }
        struct stat a, b;
        if (fstat(fd, &a) == 0 && lstat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino) break;
        close(fd); /* removed by its holder meanwhile: take the new one */
    }
    char pid[24];
    int n = snprintf(pid, sizeof pid, "%-20ld\n", (long)getpid());
    if (pwrite(fd, pid, (size_t)n, 0) != n) { /* the pid is for the message of another run only */ }
    sigset_t old;
    registry_lock(&old);
    locks = xrealloc(locks, (size_t)(nlocks + 1) * sizeof *locks);
    size_t dn = strlen(dir);
    while (dn > 1 && dir[dn - 1] == '/') dn--;
    char *d = xmalloc(dn + 1);
    memcpy(d, dir, dn);
    d[dn] = '\0';
    locks[nlocks++] = (folder_lock){path, d, dst->st_dev, dst->st_ino, getpid(), lock_mode > 0};
    registry_unlock(&old);
    return 1;
}

static void free_outfile(outfile *f)
{
    free(f->path);
    free(f->tmp);
    free(f);
}

outfile *outfile_open(const char *path)
{
    install_cleanup_once();
    outfile *f = xcalloc(1, sizeof *f);
    f->path = xstrdup(path);
    size_t n = strlen(path) + 32;
    f->tmp = xmalloc(n);
    snprintf(f->tmp, n, "%s.tmp.%ld", path, (long)getpid());
    for (outfile *o = open_files; o; o = o->next)
        if (strcmp(o->tmp, f->tmp) == 0) DIE("%s opened twice", path);
    /* created and registered with the cleanup signals blocked: a signal
     * between the two would leave the new temporary behind. A new file only
     * (O_EXCL), never through a link (O_NOFOLLOW): a link planted under the
     * temporary's name would send the data elsewhere. A file already there
     * under this pid's name is a dead process's (or planted): it goes first
     * (unlink removes a link, not what it points at). */
    sigset_t old;
    registry_lock(&old);
    int fd = -1;
    for (int tries = 0; tries < 2 && fd < 0; tries++) {
        fd = open(f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd < 0 && errno == EEXIST && tries == 0) unlink(f->tmp);
        else if (fd < 0) break;
    }
    f->fp = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f->fp) {
        int e = errno;
        if (fd >= 0) close(fd), unlink(f->tmp);
        registry_unlock(&old);
        char why[512];
        if (e == EEXIST) snprintf(why, sizeof why, "%s exists and cannot be removed", f->tmp);
        else snprintf(why, sizeof why, "%s", strerror(e));
        free_outfile(f);
        die_user("cannot write %s: %s", path, why);
    }
    f->next = open_files;
    open_files = f;
    registry_unlock(&old);
    return f;
}

FILE *outfile_fp(outfile *f) { return f->fp; }
const char *outfile_tmp_path(const outfile *f) { return f->tmp; }

void outfile_commit(outfile *f)
{
    /* The first failure's errno names the cause (EFBIG "File too large", ENOSPC). */
    int e = 0, bad = 0;
    if (fflush(f->fp) != 0) { bad = 1; e = errno; }
    if (ferror(f->fp)) { bad = 1; if (!e) e = errno; }
    if (fclose(f->fp) != 0) { bad = 1; if (!e) e = errno; }
    f->fp = NULL;
    if (bad) die_user("writing %s failed: %s", f->path, strerror(e ? e : EIO));
    journal_add(f->path);
    if (rename(f->tmp, f->path) != 0) die_user("cannot rename onto %s: %s", f->path, strerror(errno));
    unregister(f);
    note_committed(f->path);
    free_outfile(f);
}

void outfile_discard(outfile *f)
{
    if (f->fp) fclose(f->fp);
    unlink(f->tmp);
    unregister(f);
    free_outfile(f);
}

/* "X is not a folder", or what is wrong with the name: a symbolic link whose
 * target is missing, a loop of links, a part of the path that is a file. */
static void die_not_folder(const char *path)
{
    struct stat st, lst;
    if (stat(path, &st) == 0) die_user("%s is not a folder", path);
    int e = errno;
    if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && e == ENOENT)
        die_user("%s is a symbolic link to something that does not exist", path);
    die_user("%s is not a folder: %s", path, strerror(e));
}

void ensure_dir(const char *path)
{
    if (!path[0]) die_user("empty folder name (an output folder must not be empty)");
    char *p = xstrdup(path);
    for (char *s = p + 1; ; s++) {
        char c = *s;
        if (c == '/' || c == '\0') {
            *s = '\0';
            if (mkdir(p, 0777) != 0 && errno != EEXIST) {
                int e = errno;
                free(p);
                die_user("cannot create folder %s: %s", path, strerror(e));
            }
            *s = c;
        }
        if (c == '\0') break;
    }
    free(p);
    install_cleanup_once();
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) die_not_folder(path);
    if (access(path, W_OK | X_OK) != 0) die_user("folder %s is not writable", path);
    if (lock_folder(path, &st)) clear_previous_run(path);
}

/* Removes dir and everything in it, without following symbolic links (for
 * temporary folders: tests and benchmarks; no shell). 0 on success. */
static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)ftw;
    return flag == FTW_DP ? rmdir(path) : unlink(path);
}

int remove_tree(const char *dir)
{
    return nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

char *path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = xmalloc(n);
    snprintf(s, n, "%s/%s", dir, name);
    return s;
}

outfile *outfile_open_in(const char *dir, const char *name)
{
    char *path = path_join(dir, name);
    outfile *f = outfile_open(path);
    free(path);
    return f;
}

outfile *csv_open(const char *path, const char *header)
{
    outfile *f = outfile_open(path);
    fprintf(f->fp, "%s\n", header);
    return f;
}

outfile *csv_open_in(const char *dir, const char *name, const char *header)
{
    outfile *f = outfile_open_in(dir, name);
    fprintf(f->fp, "%s\n", header);
    return f;
}

void csv_row(outfile *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(f->fp, fmt, ap);
    va_end(ap);
    fputc('\n', f->fp);
}

/* ---- .npy format 1.0 ---------------------------------------------------------
 * magic "\x93NUMPY", version 1 0, uint16 little-endian header length, then an
 * ASCII dict padded with spaces and '\n' so the data starts on a 64-byte boundary. */
static const char NPY_MAGIC[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

outfile *npy_open(const char *path, int ndim, const size_t *shape)
{
    if (ndim < 1 || ndim > 4) DIE("npy: ndim %d not in 1..4", ndim);
    char dict[256];
    int len = snprintf(dict, sizeof dict, "{'descr': '<f8', 'fortran_order': False, 'shape': (");
    /* numpy's tuple repr: "(3,)" for one dimension, "(2, 3)" for more */
    for (int i = 0; i < ndim; i++)
        len += snprintf(dict + len, sizeof dict - len, "%s%zu", i ? ", " : "", shape[i]);
    if (ndim == 1) len += snprintf(dict + len, sizeof dict - len, ",");
    len += snprintf(dict + len, sizeof dict - len, "), }");
    int total = 10 + len + 1;               /* + final '\n' */
    int pad = (64 - total % 64) % 64;
    uint16_t hlen = (uint16_t)(len + pad + 1);
    outfile *f = outfile_open(path);
    fwrite(NPY_MAGIC, 1, 6, f->fp);
    fputc(1, f->fp);
    fputc(0, f->fp);
    fputc(hlen & 0xff, f->fp);
    fputc(hlen >> 8, f->fp);
    fwrite(dict, 1, len, f->fp);
    for (int i = 0; i < pad; i++) fputc(' ', f->fp);
    fputc('\n', f->fp);
    return f;
}

void npy_write_chunk(outfile *f, const double *data, size_t count)
{
    if (fwrite(data, sizeof(double), count, f->fp) != count)
        die_user("writing %s failed: %s", f->path, strerror(errno));
}

void npy_write(const char *path, const double *data, int ndim, const size_t *shape)
{
    size_t count = 1;
    for (int i = 0; i < ndim; i++) count *= shape[i];
    outfile *f = npy_open(path, ndim, shape);
    npy_write_chunk(f, data, count);
    outfile_commit(f);
}

void npy_write_in(const char *dir, const char *name, const double *data, int ndim, const size_t *shape)
{
    char *path = path_join(dir, name);
    npy_write(path, data, ndim, shape);
    free(path);
}

/* The header dict, parsed as the Python literal numpy writes (and reads with
 * ast.literal_eval): exactly the keys 'descr', 'fortran_order' and 'shape',
 * each once, in any order, with their values; quotes ' or "; a trailing comma
 * allowed; only whitespace after the closing brace. Returns an error text (in
 * msg when it needs numbers) or NULL, and fills ndim/shape/count. */
static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') s++;
    return s;
}

/* A quoted string without escapes into out (at most cap-1 chars); NULL if malformed. */
static const char *npy_string(const char *s, char *out, size_t cap)
{
    char q = *s;
    if (q != '\'' && q != '"') return NULL;
    const char *e = strchr(s + 1, q);
    if (!e || (size_t)(e - s - 1) >= cap || memchr(s + 1, '\\', (size_t)(e - s - 1))) return NULL;
    memcpy(out, s + 1, (size_t)(e - s - 1));
    out[e - s - 1] = '\0';
    return e + 1;
}

static const char *npy_parse_header(const char *dict, int *ndim, size_t shape[4], size_t *count, char *msg,
                                    size_t mlen)
{
    int have_descr = 0, have_order = 0, have_shape = 0;
    const char *s = skip_ws(dict);
    if (*s++ != '{') return ".npy header is not a dict";
    for (;;) {
        s = skip_ws(s);
        if (*s == '}') break;
        char key[32], val[32];
        s = npy_string(s, key, sizeof key);
        if (!s) return ".npy header: expected a quoted key";
        s = skip_ws(s);
        if (*s++ != ':') return ".npy header: expected ':' after a key";
        s = skip_ws(s);
        if (strcmp(key, "descr") == 0) {
            if (have_descr++) return ".npy header: 'descr' given twice";
            s = npy_string(s, val, sizeof val);
            if (!s || strcmp(val, "<f8") != 0) return "expected float64 little-endian data ('descr': '<f8')";
        } else if (strcmp(key, "fortran_order") == 0) {
            if (have_order++) return ".npy header: 'fortran_order' given twice";
            if (strncmp(s, "False", 5) == 0) s += 5;
            else if (strncmp(s, "True", 4) == 0) return "expected C order (fortran_order False)";
            else return ".npy header: fortran_order is not True or False";
        } else if (strcmp(key, "shape") == 0) {
            if (have_shape++) return ".npy header: 'shape' given twice";
            if (*s++ != '(') return ".npy header: shape is not a tuple";
            *count = 1;
            *ndim = 0;
            int comma = 0;
            for (;;) {
                s = skip_ws(s);
                if (*s == ')') break;
                if (*s < '0' || *s > '9') return "bad shape in .npy header";
                char *end;
                errno = 0;
                unsigned long long v = strtoull(s, &end, 10);
                if (errno) return "bad shape in .npy header";
                if (*ndim == 4) return "more than 4 dimensions";
                if (v > SIZE_MAX || (v && *count > SIZE_MAX / sizeof(double) / v)) return "shape too large";
                shape[(*ndim)++] = (size_t)v;
                *count *= (size_t)v;
                s = skip_ws(end);
                comma = *s == ',';
                if (comma) s++;
                else if (*s != ')') return "bad shape in .npy header";
            }
            s++;
            if (*ndim == 0) return "scalar .npy arrays are not supported";
            if (*ndim == 1 && !comma) return ".npy header: shape is not a tuple (one dimension needs '(n,)')";
        } else {
            snprintf(msg, mlen, ".npy header: unknown key '%s' (format 1.0 has descr, fortran_order, shape)", key);
            return msg;
        }
        s = skip_ws(s);
        if (*s == ',') s++;
        else if (*s != '}') return ".npy header: expected ',' or '}' after a value";
    }
    if (*skip_ws(s + 1) != '\0') return ".npy header: text after the closing '}'";
    if (!have_descr) return ".npy header has no descr";
    if (!have_order) return ".npy header has no fortran_order";
    if (!have_shape) return ".npy header has no shape";
    return NULL;
}

/* 1 if path names a folder (callers report "X is a folder, expected a file"). */
int path_is_folder(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

double *npy_read(const char *path, int *ndim, size_t shape[4])
{
    if (path_is_folder(path)) die_user("%s is a folder, expected a file", path);
    FILE *fp = fopen(path, "rb");
    if (!fp) die_user("cannot read %s: %s", path, strerror(errno));
    unsigned char pre[10];
    char dict[65536], msg[256];
    const char *err = NULL;
    size_t count = 0, hlen = 0;
    if (fread(pre, 1, 10, fp) != 10 || memcmp(pre, NPY_MAGIC, 6) != 0) {
        err = "not a .npy file (bad magic)";
    } else if (pre[6] != 1 || pre[7] != 0) {
        err = "unsupported .npy version (expected 1.0)";
    } else {
        hlen = pre[8] | (size_t)pre[9] << 8;
        if (fread(dict, 1, hlen, fp) != hlen) err = "truncated .npy header";
        else if (memchr(dict, '\0', hlen)) err = ".npy header holds a NUL byte";
        else {
            dict[hlen] = '\0';
            err = npy_parse_header(dict, ndim, shape, &count, msg, sizeof msg);
        }
    }
    /* The data must be exactly count values: checked against the file's length
     * before anything is allocated (a header may claim 10^12 values). */
    struct stat st;
    size_t want = count * sizeof(double); /* no overflow: checked by the parser */
    int regular = fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode);
    if (!err && regular) {
        size_t have = (size_t)st.st_size > 10 + hlen ? (size_t)st.st_size - 10 - hlen : 0;
        if (have != want) {
            snprintf(msg, sizeof msg, "%s: the header's shape needs %zu data bytes but the file holds %zu%s", 
                     have < want ? "truncated data" : "trailing bytes", want, have,
                     have < want ? "" : " (more data than the shape)");
            err = msg;
        }
    }
    if (err) {
        fclose(fp);
        die_user("%s: %s", path, err);
    }
    /* A regular file has exactly count values (checked above). Anything else
     * (a pipe): read in chunks, starting at 1 MiB and doubling, and stop when
     * the data ends, so a lying header costs no more memory than the data. */
    size_t cap = regular || count < (1u << 17) ? count : (1u << 17), got = 0;
    double *data = xmalloc(cap * sizeof(double));
    for (;;) {
        if (got == cap && cap < count) {
            cap = count - cap < cap ? count : 2 * cap;
            data = xrealloc(data, cap * sizeof(double));
        }
        size_t r = fread(data + got, sizeof(double), cap - got, fp);
        got += r;
        if (got == count || r == 0) break;
    }
    int extra = got == count && fgetc(fp) != EOF;
    fclose(fp);
    if (got != count || extra) {
        free(data);
        if (extra) die_user("%s: trailing bytes: more data than the header's shape (%zu values)", path, count);
        die_user("%s: truncated data (%zu of %zu values)", path, got, count);
    }
    return data;
}

void echo_file(const char *path)
{
    if (core_quiet) return;
    FILE *rd = fopen(path, "r");
    for (int ch; rd && (ch = fgetc(rd)) != EOF;) fputc(ch, stderr);
    if (rd) fclose(rd);
}

void outfile_commit_echo(outfile *f)
{
    char *path = xstrdup(f->path);
    outfile_commit(f);
    echo_file(path);
    free(path);
}
