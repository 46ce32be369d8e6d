// The C++ overloads cover what the C11 generics cover: long double and std::complex
// reductions and scans, int32_t/int64_t bitwise atomics, int8_t..int64_t bitwise
// reductions, and shmem_sync(team) beside the deprecated active-set shmem_sync.
#include <shmem.h>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define CHECK(cond, what)                                                                  \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            std::fprintf(stderr, "PE %d: line %d: %s failed: %s\n", shmem_my_pe(), __LINE__, #cond, what); \
            shmem_global_exit(1);                                                          \
        }                                                                                  \
    } while (0)

static long pSync[SHMEM_BARRIER_SYNC_SIZE];

int main() {
    for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++) pSync[i] = SHMEM_SYNC_VALUE;
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes(), next = (me + 1) % npes;
    long double *ls = static_cast<long double *>(shmem_malloc(sizeof(long double)));
    long double *ld = static_cast<long double *>(shmem_malloc(sizeof(long double)));
    std::complex<float> *cs = static_cast<std::complex<float> *>(shmem_malloc(sizeof(std::complex<float>)));
    std::complex<float> *cd = static_cast<std::complex<float> *>(shmem_malloc(sizeof(std::complex<float>)));
    std::complex<double> *zs = static_cast<std::complex<double> *>(shmem_malloc(sizeof(std::complex<double>)));
    std::complex<double> *zd = static_cast<std::complex<double> *>(shmem_malloc(sizeof(std::complex<double>)));
    *ls = me + 1.5L;
    *cs = std::complex<float>(float(me), 1.0f);
    *zs = std::complex<double>(1.0, double(me));
    shmem_barrier_all();
    long double lsum = 0, lmax = 0;
    std::complex<float> csum(0, 0);
    std::complex<double> zprod(1, 0);
    for (int k = 0; k < npes; k++) {
        lsum += k + 1.5L;
        lmax = k + 1.5L;
        csum += std::complex<float>(float(k), 1.0f);
        zprod *= std::complex<double>(1.0, double(k));
    }
    CHECK(shmem_sum_reduce(SHMEM_TEAM_WORLD, ld, ls, 1) == 0 && *ld == lsum, "long double sum");
    CHECK(shmem_max_reduce(SHMEM_TEAM_WORLD, ld, ls, 1) == 0 && *ld == lmax, "long double max");
    CHECK(shmem_sum_reduce(SHMEM_TEAM_WORLD, cd, cs, 1) == 0 && *cd == csum, "complex<float> sum");
    CHECK(shmem_prod_reduce(SHMEM_TEAM_WORLD, zd, zs, 1) == 0 && std::abs(*zd - zprod) == 0, "complex<double> prod");
    CHECK(shmem_sum_inscan(SHMEM_TEAM_WORLD, zd, zs, 1) == 0 && zd->imag() == me * (me + 1) / 2.0, "complex<double> inscan");
    CHECK(shmem_longdouble_sum_exscan(SHMEM_TEAM_WORLD, ld, ls, 1) == 0 && *ld == me * (me + 2) / 2.0L, "long double exscan");
    shmem_barrier_all();

    int32_t *a = static_cast<int32_t *>(shmem_calloc(1, sizeof(int32_t)));
    int64_t *b = static_cast<int64_t *>(shmem_calloc(1, sizeof(int64_t)));
    shmem_atomic_or(a, int32_t(1) << me % 31, next);
    shmem_atomic_xor(SHMEM_CTX_DEFAULT, b, int64_t(-1), next);
    shmem_barrier_all();
    int prev = (me + npes - 1) % npes;
    CHECK(*a == int32_t(1) << prev % 31 && *b == -1, "int32_t/int64_t bitwise atomics");
    CHECK(shmem_atomic_fetch_and(a, int32_t(0), me) == int32_t(1) << prev % 31, "fetch_and");
    int8_t *s8 = static_cast<int8_t *>(shmem_malloc(1));
    int8_t *d8 = static_cast<int8_t *>(shmem_malloc(1));
    *s8 = int8_t(1 << me % 7);
    int8_t want = 0;
    for (int k = 0; k < npes; k++) want = int8_t(want | (1 << k % 7));
    shmem_barrier_all();
    CHECK(shmem_or_reduce(SHMEM_TEAM_WORLD, d8, s8, 1) == 0 && *d8 == want, "int8_t or_reduce");
    CHECK(shmem_sync(SHMEM_TEAM_WORLD) == 0, "shmem_sync(team)");
    shmem_sync(0, 0, npes, pSync);
    shmem_barrier_all();
    shmem_free(d8);
    shmem_free(s8);
    shmem_free(b);
    shmem_free(a);
    shmem_free(zd);
    shmem_free(zs);
    shmem_free(cd);
    shmem_free(cs);
    shmem_free(ld);
    shmem_free(ls);
    shmem_finalize();
    return 0;
}
