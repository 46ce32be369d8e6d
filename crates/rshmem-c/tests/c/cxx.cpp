// shmem.h from C++: extern "C" linkage, the typed names, and the C++ overloads that
// stand in for the C11 generics.
#include <shmem.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(cond, what)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            std::fprintf(stderr, "PE %d: %s:%d: %s failed: %s\n", shmem_my_pe(), __FILE__, __LINE__, \
                         #cond, what);                                                             \
            shmem_global_exit(1);                                                                  \
        }                                                                                          \
    } while (0)

static int global_value;

int main() {
    shmem_init();
    const int me = shmem_my_pe(), n = shmem_n_pes(), next = (me + 1) % n, prev = (me + n - 1) % n;
    double *d = static_cast<double *>(shmem_malloc(8 * sizeof(double)));
    long *l = static_cast<long *>(shmem_calloc(8, sizeof(long)));
    std::vector<double> src(8);
    for (int i = 0; i < 8; i++) src[i] = me + i * 0.5;
    shmem_put(d, src.data(), 8, next);            // overload: double
    shmem_p(l, static_cast<long>(me * 3), next);  // overload: long
    shmem_p(SHMEM_CTX_DEFAULT, l + 1, 7L, next);  // ctx overload
    shmem_int_p(&global_value, me + 40, next);    // typed name, global
    shmem_barrier_all();
    for (int i = 0; i < 8; i++) CHECK(d[i] == prev + i * 0.5, "put of doubles");
    CHECK(l[0] == prev * 3 && l[1] == 7, "p of longs");
    CHECK(global_value == prev + 40, "p to a global");
    CHECK(shmem_g(l, next) == me * 3, "g overload");
    std::vector<long> back(2);
    shmem_get(back.data(), l, 2, next);
    CHECK(back[0] == me * 3, "get overload");
    shmem_barrier_all();
    shmem_p(l + 2, 1L, next);
    shmem_wait_until(l + 2, SHMEM_CMP_EQ, 1L);  // extern "C" long form
    // Atomic overloads: every PE adds to PE 0's l[3].
    shmem_barrier_all();
    shmem_atomic_add(l + 3, 2L, 0);
    shmem_atomic_inc(SHMEM_CTX_DEFAULT, l + 3, 0);
    long before = shmem_atomic_fetch_add(l + 3, 0L, 0);
    CHECK(before >= 3, "fetch_add overload");
    unsigned int *bits = static_cast<unsigned int *>(shmem_calloc(1, sizeof(unsigned int)));
    shmem_atomic_or(bits, 1u << me, 0);
    shmem_barrier_all();
    if (me == 0) CHECK(l[3] == 3L * n && *bits == (1u << n) - 1, "atomic totals");
    CHECK(shmem_atomic_fetch(l + 3, 0) == 3L * n, "atomic_fetch overload");
    shmem_barrier_all();
    shmem_free(bits);
    int *flag = static_cast<int *>(shmem_calloc(1, sizeof(int)));
    shmem_barrier_all();
    shmem_int_p(flag, 9, next);
    shmem_wait_until(flag, SHMEM_CMP_EQ, 9);  // overload: int
    CHECK(shmem_test(flag, SHMEM_CMP_EQ, 9) == 1, "test overload");
    shmem_barrier_all();
    shmem_free(flag);
    shmem_free(l);
    shmem_free(d);
    shmem_finalize();
    return 0;
}
