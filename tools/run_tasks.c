/* run_tasks — a task farm: runs every command of a list exactly once, spread
 * over the ranks of an MPI job (mpirun -np N build-mpi/bin/run_tasks list.txt,
 * or srun), or one after the other on one process.
 *
 * The list: one shell command per line (run by /bin/sh -c); blank lines and
 * lines starting with '#' are skipped. `make verdict-tasks` writes the list of
 * make verdicts' per-seed runs (mk/mpi.mk). Each command must be deterministic
 * and write its own files (the toolkit's programs are, with one BLAS thread),
 * so the results are byte-identical to running the list in one process.
 *
 * Several lists (run_tasks A B, or --list) are one list, in order; tasks are
 * numbered from 1 over all of them, as their logs are.
 *
 * Scheduling: rank 0 hands out the commands in list order, one at a time, to
 * whichever rank asks (itself included: it runs commands between messages), so a
 * rank that finishes early takes the next one. A command's stdout and stderr go
 * to <log>/task<k>.log with --log (written as every output is: a temporary
 * renamed when the task ends; the logs of an earlier run go first), else are
 * discarded (only the last line is kept, for the message); a command that fails
 * stops the job: one line "run_tasks[rank r]: task k (line n) failed with exit
 * c: <its last stderr line>: <command>", the running commands of every rank get
 * SIGTERM (so they remove their temporaries: the toolkit's programs never leave
 * a half-written file), and the job exits with the command's exit code; a
 * command killed by a signal: "killed by signal N", exit 4 (EXIT_TASK_KILLED);
 * its log not written (a full disk): that error named, exit 2.
 *
 * Each command runs in a process group of its own under a small supervisor (a
 * fork of run_tasks): the supervisor copies the command's output into its log
 * (and so sees a write fail), forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT to
 * the whole group (the shell does not always exec the command: the signal
 * must reach the command itself), and gets SIGTERM when its run_tasks dies,
 * even of SIGKILL (PR_SET_PDEATHSIG); when the command's shell ends, what is
 * left of its group (a command's background child) gets SIGTERM: no command
 * outlives its task.
 */
#include "core/core.h"
#include "core/dist.h"
#include "core/model.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* A command killed by a signal (its own, or the shell's exit status 128+N). */
enum { EXIT_TASK_KILLED = 4 };

extern char **environ;

typedef struct {
    int n, cap, nfiles;
    char **cmd;
    int *line;
    int *file;          /* index into files */
    const char **files;
} task_list;

/* Appends the commands of one list file: one per line, blank lines and '#'
 * comments skipped; a NUL byte anywhere in a line is an error (a line that
 * starts with one would otherwise read as blank). */
static void read_list(task_list *t, int fi)
{
    const char *path = t->files[fi];
    if (path_is_folder(path)) die_user("%s is a folder, expected a list of commands", path);
    FILE *fp = fopen(path, "r");
    if (!fp) die_user("cannot read %s: %s", path, strerror(errno));
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    int ln = 0, before = t->n;
    errno = 0;
    while ((len = getline(&buf, &cap, fp)) >= 0) {
        ln++;
        if (memchr(buf, '\0', (size_t)len)) {
            free(buf);
            fclose(fp);
            die_user("%s:%d: a NUL byte in the line", path, ln);
        }
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = '\0';
        const char *s = buf + strspn(buf, " \t");
        if (!*s || *s == '#') continue;
        if (t->n == t->cap) {
            t->cap = t->cap ? 2 * t->cap : 64;
            t->cmd = xrealloc(t->cmd, (size_t)t->cap * sizeof(char *));
            t->line = xrealloc(t->line, (size_t)t->cap * sizeof(int));
            t->file = xrealloc(t->file, (size_t)t->cap * sizeof(int));
        }
        t->cmd[t->n] = xstrdup(s);
        t->file[t->n] = fi;
        t->line[t->n++] = ln;
        errno = 0;
    }
    int err = ferror(fp) ? errno : errno == ENOMEM ? ENOMEM : 0;
    free(buf);
    fclose(fp);
    if (err) die_user("reading %s failed: %s", path, strerror(err));
    if (t->n == before) die_user("%s holds no command", path);
}

static task_list read_lists(const char **files, int nfiles)
{
    task_list t = {0, 0, nfiles, NULL, NULL, NULL, files};
    for (int i = 0; i < nfiles; i++) read_list(&t, i);
    return t;
}

/* "line n", or "line n of FILE" when there are several lists. */
static void task_where(const task_list *t, int k, char *out, size_t cap)
{
    if (t->nfiles > 1) snprintf(out, cap, "line %d of %s", t->line[k], t->files[t->file[k]]);
    else snprintf(out, cap, "line %d", t->line[k]);
}

/* ---- one command in a child process ------------------------------------------------------- */

static volatile pid_t g_child = 0;  /* the running task's supervisor = its process group */
static outfile *g_log = NULL;  /* the running task's log (--log): a temporary until the task ends */
static int g_status = -1;    /* the supervisor's report (task_report) */

/* What the supervisor tells run_tasks when the command has ended (one write, below
 * PIPE_BUF): the errno of a failed log write, and the output's last non-empty line. */
typedef struct {
    int werr;
    char last[1024];
} task_report;

/* SIGTERM from mpirun (another rank failed) or the user: the running command's
 * whole process group gets it too and removes its temporaries; then die of the
 * signal. */
static void on_signal(int sig)
{
    pid_t c = g_child;
    if (c > 0) {
        kill(-c, sig);
        int st;
        while (waitpid(c, &st, 0) < 0 && errno == EINTR) {}
    }
    outfile_remove_temporaries(); /* the running task's log: unlink only */
    signal(sig, SIG_DFL);
    raise(sig);
}

static const int FORWARDED[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

static void install_signals(void)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 4; i++) sigaddset(&sa.sa_mask, FORWARDED[i]);
    for (int i = 0; i < 4; i++) {
        if (sigaction(FORWARDED[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(FORWARDED[i], &sa, NULL);
    }
}

typedef struct {
    const char *log_dir;
    int quiet;
} farm;

/* The launcher's variables (OpenMPI's OMPI_*, PMIx, PMI, ORTE, OPAL): a command
 * must not take itself for a rank of this job. An MPI-built program among the
 * commands then starts as a one-rank job of its own (MPI singleton). */
static void drop_launcher_env(void)
{
    static const char *prefixes[] = {"OMPI_", "PMIX_", "PMI_", "ORTE_", "OPAL_"};
    for (;;) {
        int removed = 0;
        for (char **e = environ; *e && !removed; e++)
            for (int i = 0; i < 5; i++)
                if (!strncmp(*e, prefixes[i], strlen(prefixes[i]))) {
                    char name[256];
                    size_t n = strcspn(*e, "=");
                    snprintf(name, sizeof name, "%.*s", (int)(n < 255 ? n : 255), *e);
                    unsetenv(name);
                    removed = 1;
                    break;
                }
        if (!removed) return;
    }
}

/* The supervisor's signal handler: the signal goes to the whole group (the
 * shell and the command), not again to the supervisor, which then waits for
 * the shell and ends as it ended. */
static void forward_to_group(int sig)
{
    signal(sig, SIG_IGN);
    kill(-getpgrp(), sig);
}

/* write() all of buf; 0 or the errno. */
static int write_all(int fd, const char *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? errno : EIO;
        buf += w, n -= (size_t)w;
    }
    return 0;
}

/* The output's last bytes (tail, *len of them, at most sizeof tail) after out[0..n). */
static void keep_tail(char *tail, size_t cap, size_t *len, const char *out, size_t n)
{
    if (n >= cap) {
        memcpy(tail, out + n - cap, cap);
        *len = cap;
        return;
    }
    size_t keep = *len + n > cap ? cap - n : *len; /* the old bytes that stay */
    memmove(tail, tail + *len - keep, keep);
    memcpy(tail + keep, out, n);
    *len = keep + n;
}

/* The last non-empty line of tail[0..n) into r->last (a line longer than it: its end). */
static void last_line(task_report *r, const char *tail, size_t n)
{
    while (n > 0 && (tail[n - 1] == '\n' || tail[n - 1] == '\r')) n--;
    size_t b = n;
    while (b > 0 && tail[b - 1] != '\n') b--;
    if (n - b >= sizeof r->last) b = n - (sizeof r->last - 1);
    memcpy(r->last, tail + b, n - b);
    r->last[n - b] = '\0';
}

/* The supervisor (a child of run_tasks, leader of the task's process group):
 * runs `sh -c cmd` with its output into a pipe, copies the pipe into outfd (-1:
 * discarded), reports the errno of the first failed copy and the output's last
 * line on status_fd (after a failed copy the group gets SIGTERM: its output is
 * lost anyway), sends SIGTERM to what is left of the group when the shell has
 * ended (a background child), and ends as the shell ended. Only
 * async-signal-safe calls and _exit: this is a fork of an MPI process. */
static __attribute__((noreturn)) void supervise(const char *cmd, int outfd, int status_fd, pid_t parent)
{
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(EXIT_TASK_KILLED); /* run_tasks died before the line above */
    int p[2];
    if (pipe(p) != 0) _exit(127);
    pid_t sh = fork();
    if (sh < 0) _exit(127);
    if (sh == 0) {
        for (int i = 0; i < 4; i++) signal(FORWARDED[i], SIG_DFL);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        dup2(p[1], STDOUT_FILENO);
        dup2(p[1], STDERR_FILENO);
        close(p[0]), close(p[1]), close(status_fd);
        if (outfd >= 0) close(outfd);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_to_group;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 4; i++) sigaction(FORWARDED[i], &sa, NULL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* copy until the pipe ends, or the shell has ended and the pipe is drained
     * (a command's background child may hold the pipe open) */
    static char buf[65536], tail[1024];
    static task_report rep;
    size_t tlen = 0;
    int st = 0, shell_done = 0;
    for (;;) {
        struct pollfd pf = {p[0], POLLIN, 0};
        int r = poll(&pf, 1, shell_done ? 0 : 200);
        if (r > 0) {
            ssize_t n = read(p[0], buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            keep_tail(tail, sizeof tail, &tlen, buf, (size_t)n);
            if (outfd >= 0 && !rep.werr && (rep.werr = write_all(outfd, buf, (size_t)n)) != 0) {
                signal(SIGTERM, SIG_IGN);
                kill(-getpgrp(), SIGTERM);
            }
            continue;
        }
        if (r < 0 && errno == EINTR) continue;
        if (shell_done) break;
        if (waitpid(sh, &st, WNOHANG) == sh) shell_done = 1;
    }
    if (!shell_done)
        while (waitpid(sh, &st, 0) < 0 && errno == EINTR) {}
    signal(SIGTERM, SIG_IGN); /* the command's background children end with it */
    kill(-getpgrp(), SIGTERM);
    last_line(&rep, tail, tlen);
    if (write(status_fd, &rep, sizeof rep) != (ssize_t)sizeof rep) {}
    if (WIFSIGNALED(st)) {
        signal(WTERMSIG(st), SIG_DFL);
        raise(WTERMSIG(st));
    }
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : EXIT_TASK_KILLED);
}

/* The log of task k (numbered from 1, as in the messages). */
static void log_path(const farm *f, int k, char *path, size_t cap)
{
    snprintf(path, cap, "%s/task%d.log", f->log_dir, k + 1);
}

/* Start task k under its supervisor: output into the log's temporary (or discarded). */
static pid_t start_task(const farm *f, const task_list *t, int k)
{
    int fd = -1;
    if (f->log_dir) {
        char path[4096];
        log_path(f, k, path, sizeof path);
        g_log = outfile_open(path);
        fd = fileno(outfile_fp(g_log));
    }
    int st[2];
    if (pipe2(st, O_CLOEXEC) != 0) die_user("cannot start task %d: %s", k + 1, strerror(errno));
    fflush(NULL);
    sigset_t block, old;
    sigemptyset(&block);
    for (int i = 0; i < 4; i++) sigaddset(&block, FORWARDED[i]);
    sigprocmask(SIG_BLOCK, &block, &old);   /* g_child is set before a signal can look at it */
    pid_t parent = getpid(), pid = fork();
    if (pid < 0) die_user("cannot start task %d: %s", k + 1, strerror(errno));
    if (pid == 0) {
        setpgid(0, 0);
        close(st[0]);
        drop_launcher_env();
        supervise(t->cmd[k], fd, st[1], parent);
    }
    setpgid(pid, pid); /* either side may come first */
    g_child = pid;
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(st[1]);
    g_status = st[0];
    return pid;
}

/* Task k ended with wait status st (its supervisor's): nothing if it
 * succeeded, else stop the job with one line. */
static void finish_task(const farm *f, const task_list *t, int k, int st)
{
    /* a supervisor killed (SIGKILL cannot be forwarded): what is left of its
     * group gets SIGTERM here */
    if (WIFSIGNALED(st) && g_child > 0) kill(-g_child, SIGTERM);
    task_report rep = {0, ""};
    if (g_status >= 0) {
        if (read(g_status, &rep, sizeof rep) != (ssize_t)sizeof rep) rep = (task_report){0, ""};
        close(g_status);
        g_status = -1;
    }
    int werr = rep.werr;
    if (g_log && werr) outfile_discard(g_log); /* a log cut short is no log */
    else if (g_log) outfile_commit(g_log);    /* kept whatever the task's end: a failure's log is read */
    g_log = NULL;
    g_child = 0;
    int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0 && !werr;
    if (ok) return;
    const char *last = rep.last;
    char where[4200];
    task_where(t, k, where, sizeof where);
    if (werr) {
        char path[4096] = "its output";
        if (f->log_dir) log_path(f, k, path, sizeof path);
        fprintf(stderr, "%s: task %d (%s): writing %s failed: %s: %s\n", program_name(), k + 1, where, path,
                strerror(werr), t->cmd[k]);
        dist_abort(EXIT_USER);
    }
    /* the shell reports a command killed by signal N as exit status 128 + N */
    int sig = WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st) > 128 && WEXITSTATUS(st) <= 128 + 64 ? WEXITSTATUS(st) - 128 : 0;
    int code = sig ? EXIT_TASK_KILLED : WEXITSTATUS(st);
    char how[64];
    if (sig) snprintf(how, sizeof how, "killed by signal %d (%s)", sig, strsignal(sig));
    else snprintf(how, sizeof how, "failed with exit %d", code);
    fprintf(stderr, "%s: task %d (%s) %s%s%s: %s\n", program_name(), k + 1, where, how, last[0] ? ": " : "", last,
            t->cmd[k]);
    dist_abort(code);
}

static void run_blocking(const farm *f, const task_list *t, int k)
{
    pid_t pid = start_task(f, t, k);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) DIE("waitpid failed");
    finish_task(f, t, k, st);
}

/* ---- scheduling ----------------------------------------------------------------------------- */

enum { TAG_ASK = 1, TAG_TASK = 2 };

/* Rank 0: answer the other ranks' requests and run tasks itself in between. */
static int dispatcher(const farm *f, const task_list *t)
{
    int next = 0, workers = dist_size() - 1, done = 0, own = -1;
    pid_t pid = 0;
    progress pr;
    progress_start(&pr, "run_tasks", t->n);
    while (workers > 0 || next < t->n || own >= 0) {
        int busy = 0, from, msg[2];
        while (dist_poll_ints(TAG_ASK, &from, msg)) {
            busy = 1;
            if (msg[0] >= 0) progress_update(&pr, ++done);
            int give[2] = {next < t->n ? next++ : -1, 0};
            if (give[0] < 0) workers--;
            dist_send_ints(from, TAG_TASK, give);
        }
        if (own >= 0) {
            int st;
            pid_t r = waitpid(pid, &st, WNOHANG);
            if (r == pid) {
                finish_task(f, t, own, st);
                own = -1;
                progress_update(&pr, ++done);
                busy = 1;
            }
        }
        if (own < 0 && next < t->n) {
            own = next++;
            pid = start_task(f, t, own);
            busy = 1;
        }
        if (!busy) usleep(2000);
    }
    progress_end(&pr);
    return done;
}

static void worker(const farm *f, const task_list *t)
{
    int msg[2] = {-1, 0};
    for (;;) {
        dist_send_ints(0, TAG_ASK, msg);
        int give[2];
        dist_recv_ints(0, TAG_TASK, give);
        if (give[0] < 0) return;
        run_blocking(f, t, give[0]);
        msg[0] = give[0];
    }
}

/* The logs of an earlier run into the log folder (task<k>.log, regular files; a link
 * is not followed): a shorter list must not leave the longer one's logs beside its own. */
static void remove_old_logs(const char *dir)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0) close(dfd);
        return;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        const char *digits = e->d_name + 4;
        size_t nd = strspn(digits, "0123456789");
        struct stat st;
        if (strncmp(e->d_name, "task", 4) || nd == 0 || strcmp(digits + nd, ".log")) continue;
        if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) unlinkat(dfd, e->d_name, 0);
    }
    closedir(d);
}

/* The list files: every argument that is neither an option nor an option's
 * value, and the value of every --list (given any number of times). They are
 * taken out of argv, which keeps the rest for cli_parse. */
static int take_lists(int *argc, char **argv, const char **files)
{
    int n = 0, out = 1, i = 1;
    for (; i < *argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) { i++; break; }
        if (!strcmp(a, "--list") && i + 1 < *argc) { files[n++] = argv[++i]; continue; }
        if (!strncmp(a, "--list=", 7)) { files[n++] = a + 7; continue; }
        if (!strcmp(a, "--log") && i + 1 < *argc) { argv[out++] = argv[i++]; argv[out++] = argv[i]; continue; }
        if (a[0] != '-' || !a[1]) { files[n++] = a; continue; }
        argv[out++] = argv[i];
    }
    for (; i < *argc; i++) files[n++] = argv[i];
    *argc = out;
    argv[out] = NULL;
    return n;
}

int main(int argc, char **argv)
{
    dist_init(&argc, &argv);
    const char *list = NULL, *log_dir = NULL;
    const char **files = xmalloc((size_t)(argc + 1) * sizeof *files);
    int nfiles = take_lists(&argc, argv, files);
    const cli_opt opts[] = {
        {"list", OPT_STRING, &list, "a list of commands, one per line (or give the lists as arguments; several are one list, in order)"},
        {"log", OPT_STRING, &log_dir, "folder for each task's output (task<k>.log, k from 1 as in the messages); default: discarded"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Task farm: runs every command of a list (one shell command per line; '#' comments) exactly\n"
              "once, spread over the ranks of an MPI job (mpirun -np N build-mpi/bin/run_tasks list.txt; srun)\n"
              "or one after the other without MPI. Rank 0 hands the commands out in list order to whichever\n"
              "rank is free. A failing command stops the job with one line and its exit code; the commands\n"
              "still running get SIGTERM (each runs in a process group of its own: the whole group gets it).\n"
              "Exit codes: 0 all tasks succeeded; a failing task's own code; 4 a task killed by a signal;\n"
              "2 a bad list, or a task's log that could not be written (a full disk). make verdict-tasks\n"
              "writes the list of make verdicts' runs.",
              opts, sizeof opts / sizeof *opts);
    if (list) files[nfiles++] = list; /* an abbreviated --li LIST */
    if (!nfiles) die_user("no list of commands (run_tasks LIST..., or --list LIST)");
    task_list t = read_lists(files, nfiles);
    if (log_dir && dist_rank() == 0) {
        ensure_dir(log_dir);
        remove_old_logs(log_dir);
    }
    dist_barrier();
    dist_own_work();
    install_signals();
    farm f = {log_dir, core_quiet};
    double t0 = wall_seconds();
    if (dist_size() == 1) {
        progress pr;
        progress_start(&pr, "run_tasks", t.n);
        for (int k = 0; k < t.n; k++) {
            run_blocking(&f, &t, k);
            progress_update(&pr, k + 1);
        }
        progress_end(&pr);
    } else if (dist_rank() == 0) {
        dispatcher(&f, &t);
    } else {
        worker(&f, &t);
    }
    dist_barrier();
    if (dist_rank() == 0 && !core_quiet)
        fprintf(stderr, "run_tasks: %d tasks on %d rank%s in %.1f s\n", t.n, dist_size(), dist_size() > 1 ? "s" : "",
                wall_seconds() - t0);
    for (int k = 0; k < t.n; k++) free(t.cmd[k]);
    free(t.cmd);
    free(t.line);
    free(t.file);
    free(files);
    dist_finalize();
    return 0;
}
