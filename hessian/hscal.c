/* The full H over a process grid and its spectrum (hdist.h): ScaLAPACK under
 * -DTK_MPI, LAPACK on one process otherwise.
 *
 * Layout. H is symmetric and the engine gives a panel of columns j0..j0+k-1 as
 * k rows of length P (row-major): read column-major, that is the P × k block of
 * columns j0.. itself. So the ranks fill H in rounds: in round t, rank q
 * computes the panel at column (t·N + q)·k (N ranks, k = panel width), all
 * panels of the round together form a P × N·k matrix distributed over a 1 × N
 * grid (block size P × k: rank q owns its own panel), and pdgemr2d copies it into
 * columns t·N·k.. of H, distributed 2D block-cyclic (nb × nb blocks) over the
 * nprow × npcol grid. Each rank computes distinct columns: no R-pass is repeated.
 *
 * ScaLAPACK reads the lower triangle of the column-major H, i.e. H[j][i] for i >= j
 * in the engine's row-major terms: the upper triangle LAPACK's sym_eigvals reads. */
#include "hdist.h"
#include "core/dist.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef TK_MPI
#include <mpi.h>
#endif

hfull_opts hfull_defaults(void)
{
    hfull_opts f = {.nb = 64, .method = EIG_EVR};
    return f;
}

void hfull_grid(int size, int *nprow, int *npcol)
{
    int r = (int)floor(sqrt((double)size));
    while (r > 1 && size % r) r--;
    *nprow = r < 1 ? 1 : r;
    *npcol = size / *nprow;
}

/* Rows (or columns) of an n-long dimension that process p of np owns in blocks
 * of nb, block 0 on process 0 (ScaLAPACK's numroc). */
static size_t local_count(size_t n, size_t nb, int p, int np)
{
    size_t nblocks = n / nb, mine = nblocks / (size_t)np * nb, extra = nblocks % (size_t)np;
    if ((size_t)p < extra) mine += nb;
    else if ((size_t)p == extra) mine += n % nb;
    return mine;
}

double hfull_bytes_per_rank(size_t P, int panel, const hfull_opts *f, int ranks)
{
    int pr, pc;
    hfull_grid(ranks, &pr, &pc);
    size_t nb = f->nb > 0 ? (size_t)f->nb : 64;
    double loc = (double)local_count(P, nb, 0, pr) * (double)local_count(P, nb, 0, pc);
    double b = 8.0 * loc;                              /* H's share */
    if (f->method == EIG_EVD) b += 8.0 * loc;          /* the eigenvectors Z */
    b += 8.0 * (double)P * (panel > 0 ? panel : 128);  /* one panel */
    b += 8.0 * (double)P * 7 + 8.0 * (double)nb * (double)P * 3;   /* eigensolver work (tridiagonal, panels) */
    return b;
}

#ifdef TK_MPI

/* BLACS and ScaLAPACK (Debian's libscalapack-openmpi). */
void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
void Cblacs_set(int ctxt, int what, int *val);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb, const int *irsrc,
               const int *icsrc, const int *ictxt, const int *lld, int *info);
void Cpdgemr2d(int m, int n, double *a, int ia, int ja, int *desca, double *b, int ib, int jb, int *descb, int gctxt);
void pdsyevr_(const char *jobz, const char *range, const char *uplo, const int *n, double *a, const int *ia,
              const int *ja, const int *desca, const double *vl, const double *vu, const int *il, const int *iu,
              int *m, int *nz, double *w, double *z, const int *iz, const int *jz, const int *descz, double *work,
              const int *lwork, int *iwork, const int *liwork, int *info);
void pdsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *ia, const int *ja,
              const int *desca, double *w, double *z, const int *iz, const int *jz, const int *descz, double *work,
              const int *lwork, int *iwork, const int *liwork, int *info);

/* BLACS's sums and maxima over a grid (dgsum2d, dgamx2d: pdsyevd's divide and
 * conquer uses them) go by default through MPI_Allreduce or a tree that adds
 * the partial sums in the order they arrive (BI_TreeComb receives from any
 * node): with 3, 5, 6 ranks two runs of one command gave different spectra
 * (n_negative 322..324). BLACS_SET's TOPSREPEAT makes every combine a tree
 * with a fixed order: the same bytes every run. */
enum { BLACS_SET_TOPSREPEAT = 15 };
static void repeatable_combines(int ctxt)
{
    int yes = 1;
    Cblacs_set(ctxt, BLACS_SET_TOPSREPEAT, &yes);
}

static void desc(int *d, int m, int n, int mb, int nb, int ctxt, int lld)
{
    int zero = 0, info;
    descinit_(d, &m, &n, &mb, &nb, &zero, &zero, &ctxt, &lld, &info);
    if (info) DIE("descinit failed (info %d)", info);
}

/* Rank 0 opens the .npy under its temporary name (header written, temporary
 * registered for removal) and reserves the file's whole length at once
 * (posix_fallocate: a full disk or a file-size limit is one line from rank 0
 * before any rank writes); every rank writes its blocks through an MPI darray
 * view; every MPI-IO call's result is gathered (dist_fail_together) and rank 0
 * renames the temporary onto the final name only when every rank succeeded
 * and the file has its full length: never a truncated H.npy under its name. */
static void write_npy_mpiio(const char *path, size_t P, const double *Hloc, int mloc, int nloc, int nb, int nprow,
                            int npcol, int myrow, int mycol)
{
    char tmp[4096] = "";
    long long hl = 0;
    outfile *f = NULL;
    if (dist_rank() == 0) {
        size_t shape[2] = {P, P};
        f = npy_open(path, 2, shape);
        if (fflush(outfile_fp(f)) != 0) die_user("writing %s failed: %s", path, strerror(errno));
        hl = ftell(outfile_fp(f));
        int e = posix_fallocate(fileno(outfile_fp(f)), 0, (off_t)(hl + 8.0 * (double)P * (double)P));
        if (e) die_user("writing %s failed: %s (%.3f GB)", path, strerror(e), (hl + 8.0 * P * P) / 1e9);
        if (strlen(outfile_tmp_path(f)) >= sizeof tmp) die_user("%s: path too long", path);
        snprintf(tmp, sizeof tmp, "%s", outfile_tmp_path(f));
    }
    dist_bcast(tmp, sizeof tmp);
    dist_bcast(&hl, sizeof hl);
    int gs[2] = {(int)P, (int)P}, dd[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC}, da[2] = {nb, nb},
        ps[2] = {nprow, npcol};
    MPI_Datatype file_type, col;
    MPI_Type_create_darray(nprow * npcol, myrow * npcol + mycol, 2, gs, dd, da, ps, MPI_ORDER_FORTRAN, MPI_DOUBLE,
                           &file_type);
    MPI_Type_commit(&file_type);
    MPI_Type_contiguous(mloc > 0 ? mloc : 1, MPI_DOUBLE, &col);
    MPI_Type_commit(&col);
    MPI_File fh;
    char why[MPI_MAX_ERROR_STRING] = "";
    int len = 0, rc = MPI_File_open(MPI_COMM_WORLD, tmp, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    if (rc != MPI_SUCCESS) MPI_Error_string(rc, why, &len);
    dist_fail_together(rc != MPI_SUCCESS, "MPI-IO cannot open %s on every rank (a file system every rank sees?)%s%s",
                       tmp, why[0] ? ": " : "", why);
    rc = MPI_File_set_view(fh, (MPI_Offset)hl, MPI_DOUBLE, file_type, "native", MPI_INFO_NULL);
    if (rc == MPI_SUCCESS) rc = MPI_File_write_all(fh, Hloc, mloc > 0 ? nloc : 0, col, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS) rc = MPI_File_sync(fh);
    MPI_Offset size = 0;
    if (rc == MPI_SUCCESS) rc = MPI_File_get_size(fh, &size);
    int rc_close = MPI_File_close(&fh);
    if (rc == MPI_SUCCESS) rc = rc_close;
    if (rc == MPI_SUCCESS && size < (MPI_Offset)hl + (MPI_Offset)(8 * P * P)) rc = MPI_ERR_IO;
    MPI_Type_free(&file_type);
    MPI_Type_free(&col);
    dist_fail_together(rc != MPI_SUCCESS, "writing %s with MPI-IO failed on a rank (a full disk or a file-size limit?)",
                       path);
    if (f) outfile_commit(f);
}

int hessian_eigs_dist(model *m, const hessian_opts *o, const hfull_opts *fo, const char *npy_path, double *w)
{
    hessian_opts ho = o ? *o : hessian_defaults();
    hfull_opts f = fo ? *fo : hfull_defaults();
    int size = dist_size(), rank = dist_rank(), k = ho.panel > 0 ? ho.panel : 128, nb = f.nb > 0 ? f.nb : 64;
    if (m->P > 2147483647u / 2) die_user("full spectrum: P = %zu is beyond ScaLAPACK's 32-bit indices", m->P);
    int P = (int)m->P, nprow = f.nprow, npcol = f.npcol;
    if (nprow < 1 || npcol < 1) hfull_grid(size, &nprow, &npcol);
    if (nprow * npcol != size) die_user("process grid %d x %d does not match %d ranks", nprow, npcol, size);
    char what[128];
    snprintf(what, sizeof what, "full spectrum: rank %d's share of H over a %d x %d grid", rank, nprow, npcol);
    memory_check(what, hfull_bytes_per_rank(m->P, k, &f, size));

    int row_ctxt, grid_ctxt, myrow, mycol, pr, pc;
    Cblacs_get(0, 0, &row_ctxt);
    Cblacs_gridinit(&row_ctxt, "Row", 1, size);
    Cblacs_get(0, 0, &grid_ctxt);
    Cblacs_gridinit(&grid_ctxt, "Row", nprow, npcol);
    Cblacs_gridinfo(grid_ctxt, &pr, &pc, &myrow, &mycol);
    repeatable_combines(row_ctxt);
    repeatable_combines(grid_ctxt);
    int mloc = (int)local_count((size_t)P, (size_t)nb, myrow, nprow);
    int nloc = (int)local_count((size_t)P, (size_t)nb, mycol, npcol);
    int dH[9];
    desc(dH, P, P, nb, nb, grid_ctxt, mloc > 1 ? mloc : 1);
    double *Hloc = xcalloc((size_t)(mloc > 1 ? mloc : 1) * (size_t)(nloc > 1 ? nloc : 1), sizeof(double));
    double *panel = huge_alloc((size_t)k * (size_t)P, "full spectrum panel");

    /* fill H round by round: rank q's panel is block q of a P × size·k matrix on the 1 × size grid */
    size_t round_cols = (size_t)size * (size_t)k;
    progress pg;
    progress_start(&pg, ho.label ? ho.label : "full H", P);
    for (size_t c0 = 0; c0 < (size_t)P; c0 += round_cols) {
        int ncols = (int)((size_t)P - c0 < round_cols ? (size_t)P - c0 : round_cols);
        size_t mine0 = c0 + (size_t)rank * k;
        int kq = mine0 < (size_t)P ? (int)((size_t)P - mine0 < (size_t)k ? (size_t)P - mine0 : (size_t)k) : 0;
        if (kq > 0) hessian_cols(m, mine0, mine0 + kq, &ho, panel);
        int dA[9];
        desc(dA, P, ncols, P, k, row_ctxt, P);
        Cpdgemr2d(P, ncols, panel, 1, 1, dA, Hloc, 1, (int)c0 + 1, dH, row_ctxt);
        progress_update(&pg, (long)(c0 + ncols));
    }
    progress_end(&pg);
    free(panel);
    if (npy_path) write_npy_mpiio(npy_path, m->P, Hloc, mloc, nloc, nb, nprow, npcol, myrow, mycol);

    int one = 1, found = 0, nz = 0, info = 0, lwork = -1, liwork = -1, iwq;
    double wq;
    double *Z = NULL;
    if (f.method == EIG_EVD) {
        Z = xcalloc((size_t)(mloc > 1 ? mloc : 1) * (size_t)(nloc > 1 ? nloc : 1), sizeof(double));
        pdsyevd_("V", "L", &P, Hloc, &one, &one, dH, w, Z, &one, &one, dH, &wq, &lwork, &iwq, &liwork, &info);
    } else {
        const char *range = f.il > 0 ? "I" : "A";
        double vl = 0, vu = 0;
        pdsyevr_("N", range, "L", &P, Hloc, &one, &one, dH, &vl, &vu, &f.il, &f.iu, &found, &nz, w, Hloc, &one, &one,
                 dH, &wq, &lwork, &iwq, &liwork, &info);
    }
    if (info) DIE("ScaLAPACK workspace query failed (info %d)", info);
    lwork = (int)wq + 1;
    liwork = iwq > 1 ? iwq : 1;
    double *work = xmalloc((size_t)lwork * sizeof(double));
    int *iwork = xmalloc((size_t)liwork * sizeof(int));
    if (f.method == EIG_EVD) {
        pdsyevd_("V", "L", &P, Hloc, &one, &one, dH, w, Z, &one, &one, dH, work, &lwork, iwork, &liwork, &info);
        found = P;
    } else {
        const char *range = f.il > 0 ? "I" : "A";
        double vl = 0, vu = 0;
        pdsyevr_("N", range, "L", &P, Hloc, &one, &one, dH, &vl, &vu, &f.il, &f.iu, &found, &nz, w, Hloc, &one, &one,
                 dH, work, &lwork, iwork, &liwork, &info);
    }
    if (info) DIE("ScaLAPACK eigensolver failed (info %d)", info);
    free(work);
    free(iwork);
    free(Z);
    free(Hloc);
    Cblacs_gridexit(grid_ctxt);
    Cblacs_gridexit(row_ctxt);
    return found;
}

#else /* one process: hessian_full and LAPACK */

int hessian_eigs_dist(model *m, const hessian_opts *o, const hfull_opts *fo, const char *npy_path, double *w)
{
    hessian_opts ho = o ? *o : hessian_defaults();
    hfull_opts f = fo ? *fo : hfull_defaults();
    ho.symmetric = 0;   /* the same H the ranks assemble: every column computed */
    double *H = hessian_full(m, &ho);
    size_t P = m->P;
    if (npy_path) {
        size_t shape[2] = {P, P};
        npy_write(npy_path, H, 2, shape);
    }
    int n = (int)P, found;
    if (f.method == EIG_EVR && f.il > 0) found = sym_eigvals_range(n, H, f.il, f.iu, w);
    else {
        sym_eigvals(n, H, w);
        found = n;
    }
    free(H);
    return found;
}

#endif
