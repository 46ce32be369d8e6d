/* OpenSHMEM 1.5 team reductions of long double (MAX, MIN, SUM, PROD) and of float and
 * double _Complex (SUM, PROD); the 1.6 sum scans of those types; the deprecated
 * active-set TYPENAME_OP_to_all forms; the C11 generic selections. The long double
 * values need more than double's 53 bits, so a sum computed in double would differ. */
#include "check.h"
#include <complex.h>

#define N 3

static int me, npes;
static long pSync[SHMEM_REDUCE_SYNC_SIZE];
static long double ld_wrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + N];
static float _Complex cf_wrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + N];
static double _Complex cd_wrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + N];

/* 1 + (i+1) * 2^-60: exact in long double (64-bit significand), not in double. */
static long double tiny(int i) {
    long double t = 1.0L;
    for (int k = 0; k < 60; k++) t /= 2;
    return 1.0L + (i + 1) * t;
}

static long double ld_value(int pe, int j) {
    return j == 0 ? tiny(pe) : (long double)(pe + 1) * (j + 1);
}

static float _Complex cf_value(int pe, int j) {
    return (float)(pe + 1) + (float)(j + 1 - pe) * I;
}

static double _Complex cd_value(int pe, int j) {
    return (double)(j + 2) - (double)(pe + 1) * I;
}

/* Members of `team` (of `size` PEs) reduce and scan; every PE allocates. */
static void check_longdouble(shmem_team_t team, int size) {
    long double *src = shmem_malloc(N * sizeof(long double));
    long double *dst = shmem_malloc(N * sizeof(long double));
    if (team != SHMEM_TEAM_INVALID) {
        int tme = shmem_team_my_pe(team);
        for (int j = 0; j < N; j++) src[j] = ld_value(tme, j);
        long double sum[N], prod[N], mx[N], mn[N], in[N], ex[N];
        for (int j = 0; j < N; j++) {
            sum[j] = 0, prod[j] = 1, mx[j] = ld_value(0, j), mn[j] = ld_value(0, j), ex[j] = 0;
            for (int k = 0; k < size; k++) {
                long double v = ld_value(k, j);
                sum[j] += v, prod[j] *= v;
                if (v > mx[j]) mx[j] = v;
                if (v < mn[j]) mn[j] = v;
                if (k < tme) ex[j] += v;
            }
            in[j] = ex[j] + src[j];
        }
        CHECK(shmem_longdouble_sum_reduce(team, dst, src, N) == 0, "sum rc");
        for (int j = 0; j < N; j++) CHECK(dst[j] == sum[j], "longdouble sum[%d] = %La, want %La", j, dst[j], sum[j]);
        CHECK(shmem_longdouble_prod_reduce(team, dst, src, N) == 0, "prod rc");
        for (int j = 0; j < N; j++) CHECK(dst[j] == prod[j], "longdouble prod[%d] = %La, want %La", j, dst[j], prod[j]);
        CHECK(shmem_longdouble_max_reduce(team, dst, src, N) == 0, "max rc");
        for (int j = 0; j < N; j++) CHECK(dst[j] == mx[j], "longdouble max[%d]", j);
        CHECK(shmem_longdouble_min_reduce(team, dst, src, N) == 0, "min rc");
        for (int j = 0; j < N; j++) CHECK(dst[j] == mn[j], "longdouble min[%d]", j);
        CHECK(shmem_sum_reduce(team, dst, src, N) == 0 && dst[0] == sum[0], "generic longdouble sum");
        CHECK(shmem_max_reduce(team, dst, src, N) == 0 && dst[1] == mx[1], "generic longdouble max");
        CHECK(shmem_longdouble_sum_inscan(team, dst, src, N) == 0, "inscan rc");
        for (int j = 0; j < N; j++) CHECK(dst[j] == in[j], "longdouble inscan[%d] = %La, want %La", j, dst[j], in[j]);
        CHECK(shmem_longdouble_sum_exscan(team, dst, src, N) == 0, "exscan rc");
        for (int j = 0; j < N; j++) CHECK(dst[j] == ex[j], "longdouble exscan[%d] = %La, want %La", j, dst[j], ex[j]);
        CHECK(shmem_sum_inscan(team, dst, src, N) == 0 && dst[0] == in[0], "generic longdouble inscan");
        /* in place */
        CHECK(shmem_longdouble_sum_reduce(team, src, src, N) == 0 && src[0] == sum[0], "in-place sum");
    }
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
}

static void check_complex(shmem_team_t team, int size) {
    float _Complex *fs = shmem_malloc(N * sizeof(float _Complex));
    float _Complex *fd = shmem_malloc(N * sizeof(float _Complex));
    double _Complex *ds = shmem_malloc(N * sizeof(double _Complex));
    double _Complex *dd = shmem_malloc(N * sizeof(double _Complex));
    if (team != SHMEM_TEAM_INVALID) {
        int tme = shmem_team_my_pe(team);
        for (int j = 0; j < N; j++) fs[j] = cf_value(tme, j), ds[j] = cd_value(tme, j);
        float _Complex fsum[N], fprod[N], fex[N];
        double _Complex dsum[N], dprod[N], din[N];
        for (int j = 0; j < N; j++) {
            fsum[j] = 0, fprod[j] = 1, fex[j] = 0, dsum[j] = 0, dprod[j] = 1, din[j] = 0;
            for (int k = 0; k < size; k++) {
                fsum[j] += cf_value(k, j), fprod[j] *= cf_value(k, j);
                dsum[j] += cd_value(k, j), dprod[j] *= cd_value(k, j);
                if (k < tme) fex[j] += cf_value(k, j);
                if (k <= tme) din[j] += cd_value(k, j);
            }
        }
        CHECK(shmem_complexf_sum_reduce(team, fd, fs, N) == 0, "complexf sum rc");
        for (int j = 0; j < N; j++) CHECK(fd[j] == fsum[j], "complexf sum[%d] = %g%+gi", j, crealf(fd[j]), cimagf(fd[j]));
        CHECK(shmem_complexf_prod_reduce(team, fd, fs, N) == 0, "complexf prod rc");
        for (int j = 0; j < N; j++) CHECK(fd[j] == fprod[j], "complexf prod[%d] = %g%+gi", j, crealf(fd[j]), cimagf(fd[j]));
        CHECK(shmem_complexd_sum_reduce(team, dd, ds, N) == 0, "complexd sum rc");
        for (int j = 0; j < N; j++) CHECK(dd[j] == dsum[j], "complexd sum[%d]", j);
        CHECK(shmem_complexd_prod_reduce(team, dd, ds, N) == 0, "complexd prod rc");
        for (int j = 0; j < N; j++) CHECK(dd[j] == dprod[j], "complexd prod[%d] = %g%+gi", j, creal(dd[j]), cimag(dd[j]));
        CHECK(shmem_sum_reduce(team, fd, fs, N) == 0 && fd[1] == fsum[1], "generic complexf sum");
        CHECK(shmem_prod_reduce(team, dd, ds, N) == 0 && dd[2] == dprod[2], "generic complexd prod");
        CHECK(shmem_complexf_sum_exscan(team, fd, fs, N) == 0, "complexf exscan rc");
        for (int j = 0; j < N; j++) CHECK(fd[j] == fex[j], "complexf exscan[%d]", j);
        CHECK(shmem_complexd_sum_inscan(team, dd, ds, N) == 0, "complexd inscan rc");
        for (int j = 0; j < N; j++) CHECK(dd[j] == din[j], "complexd inscan[%d]", j);
        CHECK(shmem_sum_exscan(team, fd, fs, N) == 0 && fd[0] == fex[0], "generic complexf exscan");
    }
    shmem_barrier_all();
    shmem_free(dd);
    shmem_free(ds);
    shmem_free(fd);
    shmem_free(fs);
}

/* The deprecated active-set forms over the whole world. */
static void check_to_all(void) {
    static long double ls[N], ld[N];
    static float _Complex fs[N], fd[N];
    static double _Complex ds[N], dd[N];
    for (int j = 0; j < N; j++) ls[j] = ld_value(me, j), fs[j] = cf_value(me, j), ds[j] = cd_value(me, j);
    long double lsum = 0, lprod = 1, lmax = ld_value(0, 0), lmin = ld_value(0, 0);
    float _Complex fsum = 0, fprod = 1;
    double _Complex dsum = 0, dprod = 1;
    for (int k = 0; k < npes; k++) {
        long double v = ld_value(k, 0);
        lsum += v, lprod *= v;
        if (v > lmax) lmax = v;
        if (v < lmin) lmin = v;
        fsum += cf_value(k, 0), fprod *= cf_value(k, 0);
        dsum += cd_value(k, 0), dprod *= cd_value(k, 0);
    }
    shmem_barrier_all();
    shmem_longdouble_sum_to_all(ld, ls, N, 0, 0, npes, ld_wrk, pSync);
    CHECK(ld[0] == lsum, "longdouble_sum_to_all %La want %La", ld[0], lsum);
    shmem_longdouble_prod_to_all(ld, ls, N, 0, 0, npes, ld_wrk, pSync);
    CHECK(ld[0] == lprod, "longdouble_prod_to_all");
    shmem_longdouble_max_to_all(ld, ls, N, 0, 0, npes, ld_wrk, pSync);
    CHECK(ld[0] == lmax, "longdouble_max_to_all");
    shmem_longdouble_min_to_all(ld, ls, N, 0, 0, npes, ld_wrk, pSync);
    CHECK(ld[0] == lmin, "longdouble_min_to_all");
    shmem_complexf_sum_to_all(fd, fs, N, 0, 0, npes, cf_wrk, pSync);
    CHECK(fd[0] == fsum, "complexf_sum_to_all");
    shmem_complexf_prod_to_all(fd, fs, N, 0, 0, npes, cf_wrk, pSync);
    CHECK(fd[0] == fprod, "complexf_prod_to_all");
    shmem_complexd_sum_to_all(dd, ds, N, 0, 0, npes, cd_wrk, pSync);
    CHECK(dd[0] == dsum, "complexd_sum_to_all");
    shmem_complexd_prod_to_all(dd, ds, N, 0, 0, npes, cd_wrk, pSync);
    CHECK(dd[0] == dprod, "complexd_prod_to_all");
    shmem_barrier_all();
}

int main(void) {
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) pSync[i] = SHMEM_SYNC_VALUE;
    shmem_init();
    me = shmem_my_pe(), npes = shmem_n_pes();
    check_longdouble(SHMEM_TEAM_WORLD, npes);
    check_complex(SHMEM_TEAM_WORLD, npes);
    /* The even PEs as a team of their own. */
    shmem_team_t evens;
    int nevens = (npes + 1) / 2;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, nevens, NULL, 0, &evens) == 0, "split");
    check_longdouble(evens, nevens);
    check_complex(evens, nevens);
    if (evens != SHMEM_TEAM_INVALID) shmem_team_destroy(evens);
    check_to_all();
    shmem_finalize();
    return 0;
}
