/* The C types Rust lacks, computed in C for libshmem (compiled by build.rs, linked into
 * the library, its symbols hidden):
 *  - reductions of long double (MAX, MIN, SUM, PROD) and of float/double _Complex (SUM,
 *    PROD), called by src/c_arith.rs;
 *  - long double p and g, which pass the value itself (Rust cannot), reached from the
 *    exported shmem_/pshmem_ names by the jumps in src/longdouble.rs. */
#include <stddef.h>

/* Operator numbers: rshmem::ReduceOp's values (checked by the c_arith unit tests). */
enum { RSHMEM_C_MAX = 3, RSHMEM_C_MIN = 4, RSHMEM_C_SUM = 5, RSHMEM_C_PROD = 6 };

/* acc[i] = acc[i] op x[i] for i < n, in the type's own arithmetic. MAX and MIN follow
 * IEEE maxNum/minNum, as rshmem's float reductions do: a NaN loses to a number. Returns
 * 0, or -1 for an operator the type does not have. */
int rshmem_c_longdouble_combine(int op, long double *acc, const long double *x, size_t n) {
    for (size_t i = 0; i < n; i++) {
        long double a = acc[i], b = x[i];
        switch (op) {
        case RSHMEM_C_MAX: acc[i] = (b > a || a != a) ? b : a; break;
        case RSHMEM_C_MIN: acc[i] = (b < a || a != a) ? b : a; break;
        case RSHMEM_C_SUM: acc[i] = a + b; break;
        case RSHMEM_C_PROD: acc[i] = a * b; break;
        default: return -1;
        }
    }
    return 0;
}

#define COMPLEX_COMBINE(NAME, TYPE)                                       \
    int NAME(int op, TYPE *acc, const TYPE *x, size_t n) {                \
        if (op != RSHMEM_C_SUM && op != RSHMEM_C_PROD) return -1;         \
        for (size_t i = 0; i < n; i++) {                                  \
            if (op == RSHMEM_C_SUM) acc[i] += x[i];                       \
            else acc[i] *= x[i];                                          \
        }                                                                 \
        return 0;                                                         \
    }

COMPLEX_COMBINE(rshmem_c_complexf_combine, float _Complex)
COMPLEX_COMBINE(rshmem_c_complexd_combine, double _Complex)

/* Defined in Rust (src/longdouble.rs): moves `nbytes` between the local buffer `local`
 * and the symmetric address `remote` on `pe` (a put when `put`, else a get), through
 * context `ctx` when `explicit_ctx` (else the default context); errors name `call`. */
void rshmem_c_rma(const char *call, void *ctx, int explicit_ctx, void *remote, void *local, size_t nbytes, int pe, int put);

void rshmem_c_longdouble_p(long double *dest, long double value, int pe) {
    rshmem_c_rma("shmem_longdouble_p", NULL, 0, dest, &value, sizeof value, pe, 1);
}

void rshmem_c_ctx_longdouble_p(void *ctx, long double *dest, long double value, int pe) {
    rshmem_c_rma("shmem_ctx_longdouble_p", ctx, 1, dest, &value, sizeof value, pe, 1);
}

long double rshmem_c_longdouble_g(const long double *source, int pe) {
    long double v;
    rshmem_c_rma("shmem_longdouble_g", NULL, 0, (void *)source, &v, sizeof v, pe, 0);
    return v;
}

long double rshmem_c_ctx_longdouble_g(void *ctx, const long double *source, int pe) {
    long double v;
    rshmem_c_rma("shmem_ctx_longdouble_g", ctx, 1, (void *)source, &v, sizeof v, pe, 0);
    return v;
}
