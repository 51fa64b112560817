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
 * Scheduling: rank 0 hands out the commands in list order, one at a time, to
 * whichever rank asks (itself included: it runs commands between messages), so a
 * rank that finishes early takes the next one. A command's stdout and stderr go
 * to <log>/task<k>.log with --log, else are discarded; a command that fails
 * stops the job: one line "run_tasks[rank r]: task k (line n) failed with exit
 * c: <its last stderr line>: <command>", the running commands of every rank get
 * SIGTERM (so they remove their temporaries: the toolkit's programs never leave
 * a half-written file), and the job exits with the command's exit code.
 */
#include "core/core.h"
#include "core/dist.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct {
    int n;
    char **cmd;
    int *line;
} task_list;

static task_list read_list(const char *path)
{
    if (path_is_folder(path)) die_user("%s is a folder, expected a list of commands", path);
    FILE *fp = fopen(path, "r");
    if (!fp) die_user("cannot read %s: %s", path, strerror(errno));
    task_list t = {0};
    char *buf = NULL;
    size_t cap = 0;
    ssize_t len;
    int ln = 0, cap_t = 0;
    while ((len = getline(&buf, &cap, fp)) >= 0) {
        ln++;
        while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = '\0';
        const char *s = buf + strspn(buf, " \t");
        if (!*s || *s == '#') continue;
        if (strlen(s) != (size_t)(len - (s - buf))) {
            free(buf);
            fclose(fp);
            die_user("%s:%d: a NUL byte in the command", path, ln);
        }
        if (t.n == cap_t) {
            cap_t = cap_t ? 2 * cap_t : 64;
            t.cmd = xrealloc(t.cmd, (size_t)cap_t * sizeof(char *));
            t.line = xrealloc(t.line, (size_t)cap_t * sizeof(int));
        }
        t.cmd[t.n] = xstrdup(s);
        t.line[t.n++] = ln;
    }
    int err = ferror(fp);
    free(buf);
    fclose(fp);
    if (err) die_user("reading %s failed", path);
    if (t.n == 0) die_user("%s holds no command", path);
    return t;
}

/* ---- one command in a child process ------------------------------------------------------- */

static volatile pid_t g_child = 0;
static int g_capture = -1;   /* the running command's output without --log: an unnamed file */

/* SIGTERM from mpirun (another rank failed) or the user: the running command
 * gets it too and removes its temporaries; then die of the signal. */
static void on_signal(int sig)
{
    pid_t c = g_child;
    if (c > 0) {
        kill(c, sig);
        int st;
        while (waitpid(c, &st, 0) < 0 && errno == EINTR) {}
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_signals(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 4; i++) sigaddset(&sa.sa_mask, sigs[i]);
    for (int i = 0; i < 4; i++) {
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue;
        sigaction(sigs[i], &sa, NULL);
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

/* A file without a name for a command's output: O_TMPFILE where the file
 * system has it, else mkstemp and unlink at once. It goes when its last
 * descriptor closes, so no kill (not even SIGKILL from mpirun) leaves it.
 * path: what to name in an error message. */
static int unnamed_file(char *path, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    const char *dir = tmp && *tmp ? tmp : "/tmp";
    snprintf(path, cap, "a temporary file in %s", dir);
    int fd;
#ifdef O_TMPFILE
    fd = open(dir, O_TMPFILE | O_RDWR, 0600);
    if (fd >= 0) return fd;
#endif
    snprintf(path, cap, "%s/run_tasks.%ld.XXXXXX", dir, (long)getpid());
    fd = mkstemp(path);
    if (fd >= 0) unlink(path);
    else snprintf(path, cap, "a temporary file in %s", dir);
    return fd;
}

/* Start task k: its output into the log file (or an unnamed file kept for its last line). */
static pid_t start_task(const farm *f, const task_list *t, int k)
{
    char path[4096];
    int fd;
    if (f->log_dir) {
        snprintf(path, sizeof path, "%s/task%d.log", f->log_dir, k);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    } else {
        fd = unnamed_file(path, sizeof path);
    }
    if (fd < 0) die_user("cannot write %s: %s", path, strerror(errno));
    fflush(NULL);
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigprocmask(SIG_BLOCK, &block, &old);   /* g_child is set before a signal can look at it */
    pid_t pid = fork();
    if (pid < 0) die_user("cannot start task %d: %s", k, strerror(errno));
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        signal(SIGINT, SIG_DFL), signal(SIGTERM, SIG_DFL), signal(SIGHUP, SIG_DFL), signal(SIGQUIT, SIG_DFL);
        drop_launcher_env();
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        close(fd);
        execl("/bin/sh", "sh", "-c", t->cmd[k], (char *)NULL);
        _exit(127);
    }
    g_child = pid;
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (f->log_dir) close(fd);
    else g_capture = fd;
    return pid;
}

/* The last non-empty line of the task's output, for the one-line failure message. */
static void last_line(const farm *f, int k, char *out, size_t cap)
{
    out[0] = '\0';
    FILE *fp;
    if (f->log_dir) {
        char path[4096];
        snprintf(path, sizeof path, "%s/task%d.log", f->log_dir, k);
        fp = fopen(path, "r");
    } else {
        int fd = g_capture >= 0 ? dup(g_capture) : -1;
        fp = fd >= 0 ? fdopen(fd, "r") : NULL;
        if (fp) rewind(fp);
        else if (fd >= 0) close(fd);
    }
    if (!fp) return;
    char line[1024];
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0]) snprintf(out, cap, "%s", line);
    }
    fclose(fp);
}

/* Task k ended with wait status st: nothing if it succeeded, else stop the job. */
static void finish_task(const farm *f, const task_list *t, int k, int st)
{
    int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    char last[1100] = "";
    if (!ok) last_line(f, k, last, sizeof last);
    if (g_capture >= 0) close(g_capture);
    g_capture = -1;
    g_child = 0;
    if (ok) return;
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : EXIT_INTERNAL;
    char how[64];
    if (WIFEXITED(st)) snprintf(how, sizeof how, "exit %d", code);
    else snprintf(how, sizeof how, "signal %d", WTERMSIG(st));
    fprintf(stderr, "%s: task %d (line %d) failed with %s%s%s: %s\n", program_name(), k + 1, t->line[k], how,
            last[0] ? ": " : "", last, t->cmd[k]);
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

int main(int argc, char **argv)
{
    dist_init(&argc, &argv);
    const char *list = NULL, *log_dir = NULL;
    /* the list may be given as the last argument (mpirun -np N run_tasks list.txt) */
    if (argc >= 2 && argv[argc - 1][0] != '-' && strcmp(argv[argc - 2], "--list") && strcmp(argv[argc - 2], "--log"))
        list = argv[--argc];
    const cli_opt opts[] = {
        {"list", OPT_STRING, &list, "the list of commands, one per line (or give it as the last argument)"},
        {"log", OPT_STRING, &log_dir, "folder for each task's output (task<k>.log); default: discarded"},
    };
    run_start(argc, argv);
    cli_parse(argc, argv,
              "Task farm: runs every command of a list (one shell command per line; '#' comments) exactly\n"
              "once, spread over the ranks of an MPI job (mpirun -np N build-mpi/bin/run_tasks list.txt; srun)\n"
              "or one after the other without MPI. Rank 0 hands the commands out in list order to whichever\n"
              "rank is free. A failing command stops the job with one line and its exit code; the commands\n"
              "still running get SIGTERM. make verdict-tasks writes the list of make verdicts' runs.",
              opts, sizeof opts / sizeof *opts);
    if (!list) die_user("no list of commands (run_tasks LIST, or --list LIST)");
    task_list t = read_list(list);
    if (log_dir && dist_rank() == 0) ensure_dir(log_dir);
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
    dist_finalize();
    return 0;
}
