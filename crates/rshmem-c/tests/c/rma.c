/* RMA: every typed put/get/p/g/nbi/iput/iget/ibput/ibget (typed names and C11 generics,
 * default-context and ctx forms), the sized and mem forms, on heap objects and on global
 * and static variables. */
#include "check.h"
#include <string.h>

#define N 24

/* (TYPE, TYPENAME) of every standard RMA type. */
#define RMA_TYPES(X)                                                                           \
    X(float, float) X(double, double) X(long double, longdouble) X(char, char)                \
    X(signed char, schar) X(short, short) X(int, int) X(long, long) X(long long, longlong)     \
    X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint)                    \
    X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int8_t, int8) X(int16_t, int16) \
    X(int32_t, int32) X(int64_t, int64) X(uint8_t, uint8) X(uint16_t, uint16)                  \
    X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)

static int me, npes, next, prev;

/* Values that fit every type: v(pe, i) in 0..127. */
#define V(pe, i) (((pe) * 31 + (i)) % 128)

#define TEST_TYPED(TYPE, NAME)                                                                  \
    static void test_##NAME(void) {                                                             \
        TYPE *dst = shmem_malloc(N * 4 * sizeof(TYPE));                                         \
        TYPE src[N * 4], out[N * 4];                                                            \
        for (int i = 0; i < N * 4; i++) { src[i] = (TYPE)V(me, i); dst[i] = (TYPE)0; }          \
        shmem_barrier_all();                                                                    \
        shmem_##NAME##_put(dst, src, N, next);                                                  \
        shmem_ctx_##NAME##_put_nbi(SHMEM_CTX_DEFAULT, dst + N, src + N, N, next);               \
        shmem_quiet();                                                                          \
        shmem_barrier_all();                                                                    \
        for (int i = 0; i < 2 * N; i++)                                                         \
            CHECK(dst[i] == (TYPE)V(prev, i), #NAME " put: dst[%d] wrong", i);                  \
        shmem_##NAME##_get(out, dst, N, next);                                                  \
        for (int i = 0; i < N; i++) CHECK(out[i] == (TYPE)V(me, i), #NAME " get: out[%d]", i);  \
        shmem_ctx_##NAME##_get_nbi(SHMEM_CTX_DEFAULT, out, dst + N, N, prev);                   \
        shmem_quiet();                                                                          \
        for (int i = 0; i < N; i++)                                                             \
            CHECK(out[i] == (TYPE)V((prev + npes - 1) % npes, N + i), #NAME " get_nbi: %d", i); \
        TYPE one = shmem_##NAME##_g(dst + 5, next);                                             \
        CHECK(one == (TYPE)V(me, 5), #NAME " g");                                               \
        shmem_barrier_all();                                                                    \
        shmem_##NAME##_p(dst + 2 * N, (TYPE)V(me, 77), next);                                   \
        shmem_ctx_##NAME##_p(SHMEM_CTX_DEFAULT, dst + 2 * N + 1, (TYPE)V(me, 78), next);        \
        shmem_barrier_all();                                                                    \
        CHECK(dst[2 * N] == (TYPE)V(prev, 77) && dst[2 * N + 1] == (TYPE)V(prev, 78), #NAME " p"); \
        CHECK(shmem_ctx_##NAME##_g(SHMEM_CTX_DEFAULT, dst + 2 * N + 1, me) == (TYPE)V(prev, 78), \
              #NAME " ctx g");                                                                  \
        /* strided: every 3rd source element to every 2nd destination element */              \
        for (int i = 0; i < N * 4; i++) dst[i] = (TYPE)0;                                       \
        shmem_barrier_all();                                                                    \
        shmem_##NAME##_iput(dst, src, 2, 3, N, next);                                           \
        shmem_barrier_all();                                                                    \
        for (int i = 0; i < N; i++) {                                                           \
            CHECK(dst[2 * i] == (TYPE)V(prev, 3 * i), #NAME " iput dst[%d]", 2 * i);            \
            CHECK(dst[2 * i + 1] == (TYPE)0, #NAME " iput touched dst[%d]", 2 * i + 1);         \
        }                                                                                       \
        memset(out, 0, sizeof out);                                                             \
        shmem_ctx_##NAME##_iget(SHMEM_CTX_DEFAULT, out, dst, 3, 2, N, next);                    \
        for (int i = 0; i < N; i++) CHECK(out[3 * i] == (TYPE)V(me, 3 * i), #NAME " iget %d", i); \
        /* blocked strided: 4 blocks of 3 elements, block strides 5 (dest) and 7 (source) */   \
        shmem_barrier_all();                                                                    \
        for (int i = 0; i < N * 4; i++) dst[i] = (TYPE)0;                                       \
        shmem_barrier_all();                                                                    \
        shmem_##NAME##_ibput(dst, src, 5, 7, 3, 4, next);                                       \
        shmem_barrier_all();                                                                    \
        for (int b = 0; b < 4; b++)                                                             \
            for (int k = 0; k < 5; k++) {                                                       \
                TYPE want = k < 3 ? (TYPE)V(prev, 7 * b + k) : (TYPE)0;                         \
                CHECK(dst[5 * b + k] == want, #NAME " ibput block %d elem %d", b, k);           \
            }                                                                                   \
        memset(out, 0, sizeof out);                                                             \
        shmem_ctx_##NAME##_ibget(SHMEM_CTX_DEFAULT, out, dst, 2, 5, 3, 4, next);                \
        for (int b = 0; b < 4; b++)                                                             \
            for (int k = 0; k < 2; k++)                                                         \
                CHECK(out[2 * b + k] == (TYPE)V(me, 7 * b + k), #NAME " ibget %d %d", b, k);    \
        shmem_barrier_all();                                                                    \
        shmem_free(dst);                                                                        \
    }
RMA_TYPES(TEST_TYPED)

/* The C11 generic interfaces select the typed routine from the pointer type. */
static void test_generics(void) {
    long *l = shmem_calloc(8, sizeof(long));
    double *d = shmem_calloc(8, sizeof(double));
    unsigned char *uc = shmem_calloc(8, 1);
    long double *ld = shmem_calloc(4, sizeof(long double));
    long lv[4] = {1, 2, 3, 4};
    double dv[4] = {0.5, 1.5, 2.5, 3.5};
    shmem_barrier_all();
    shmem_put(l, lv, 4, next);
    shmem_put(SHMEM_CTX_DEFAULT, d, dv, 4, next);
    shmem_put_nbi(l + 4, lv, 4, next);
    shmem_p(uc, (unsigned char)(200 + me), next);
    shmem_p(SHMEM_CTX_DEFAULT, uc + 1, (unsigned char)(201 + me), next);
    shmem_p(ld, (long double)me + 0.25L, next);
    shmem_quiet();
    shmem_barrier_all();
    for (int i = 0; i < 4; i++) CHECK(l[i] == lv[i] && l[4 + i] == lv[i] && d[i] == dv[i], "generic put %d", i);
    CHECK(uc[0] == (unsigned char)(200 + prev) && uc[1] == (unsigned char)(201 + prev), "generic p");
    CHECK(ld[0] == (long double)prev + 0.25L, "generic long double p");
    const long *cl = l;
    CHECK(shmem_g(cl + 2, next) == 3, "generic g on const pointer");
    CHECK(shmem_g(SHMEM_CTX_DEFAULT, d + 1, next) == 1.5, "generic ctx g");
    CHECK(shmem_g(ld, me) == (long double)prev + 0.25L, "generic long double g");
    long back[4];
    shmem_get(back, l, 4, prev);
    shmem_get_nbi(SHMEM_CTX_DEFAULT, back, l, 4, prev);
    shmem_quiet();
    for (int i = 0; i < 4; i++) CHECK(back[i] == lv[i], "generic get %d", i);
    long s[8] = {10, 11, 12, 13, 14, 15, 16, 17};
    shmem_barrier_all();
    shmem_iput(l, s, 2, 2, 4, next);
    shmem_barrier_all();
    CHECK(l[0] == 10 && l[2] == 12 && l[4] == 14 && l[6] == 16, "generic iput");
    long gl[4] = {0};
    shmem_iget(gl, l, 1, 2, 4, me);
    CHECK(gl[0] == 10 && gl[1] == 12 && gl[2] == 14 && gl[3] == 16, "generic iget");
    shmem_barrier_all();
    shmem_ibput(SHMEM_CTX_DEFAULT, l, s, 4, 4, 2, 2, next);
    shmem_barrier_all();
    CHECK(l[0] == 10 && l[1] == 11 && l[4] == 14 && l[5] == 15, "generic ibput");
    long bl[4] = {0};
    shmem_ibget(bl, l, 2, 4, 2, 2, me);
    CHECK(bl[0] == 10 && bl[1] == 11 && bl[2] == 14 && bl[3] == 15, "generic ibget");
    shmem_barrier_all();
    shmem_free(ld);
    shmem_free(uc);
    shmem_free(d);
    shmem_free(l);
}

/* Sized and byte forms. */
static void test_sized(void) {
    unsigned char *b = shmem_calloc(1024, 1);
    unsigned char src[1024];
    for (int i = 0; i < 1024; i++) src[i] = (unsigned char)(i * 7 + me);
    shmem_barrier_all();
    shmem_put8(b, src, 16, next);
    shmem_put16(b + 16, src + 16, 8, next);
    shmem_put32(b + 32, src + 32, 4, next);
    shmem_put64(b + 48, src + 48, 2, next);
    shmem_put128(b + 64, src + 64, 2, next);
    shmem_putmem(b + 96, src + 96, 32, next);
    shmem_ctx_putmem_nbi(SHMEM_CTX_DEFAULT, b + 128, src + 128, 64, next);
    shmem_put32_nbi(b + 192, src + 192, 16, next);
    shmem_ctx_put64_nbi(SHMEM_CTX_DEFAULT, b + 256, src + 256, 8, next);
    shmem_quiet();
    shmem_barrier_all();
    for (int i = 0; i < 320; i++) CHECK(b[i] == (unsigned char)(i * 7 + prev), "sized put byte %d", i);
    unsigned char out[1024];
    memset(out, 0, sizeof out);
    shmem_get8(out, b, 8, next);
    shmem_get16(out + 8, b + 8, 4, next);
    shmem_get32(out + 16, b + 16, 4, next);
    shmem_get64(out + 32, b + 32, 2, next);
    shmem_get128(out + 48, b + 48, 1, next);
    shmem_getmem(out + 64, b + 64, 64, next);
    shmem_getmem_nbi(out + 128, b + 128, 64, next);
    shmem_ctx_get32_nbi(SHMEM_CTX_DEFAULT, out + 192, b + 192, 16, next);
    shmem_quiet();
    for (int i = 0; i < 256; i++) CHECK(out[i] == (unsigned char)(i * 7 + me), "sized get byte %d", i);
    /* 16 non-blocking gets in flight at once (over a remote transport they stay in flight
       until the quiet), 8 KiB each, into distinct pieces of one buffer */
    {
        enum { PIECES = 16, PIECE = 8192 };
        unsigned char *gsrc = shmem_malloc(PIECES * PIECE);
        static unsigned char got[PIECES * PIECE];
        for (int i = 0; i < PIECES * PIECE; i++) gsrc[i] = (unsigned char)(i * 13 + me);
        memset(got, 0, sizeof got);
        shmem_barrier_all();
        for (int k = PIECES - 1; k >= 0; k--) shmem_getmem_nbi(got + k * PIECE, gsrc + k * PIECE, PIECE, next);
        shmem_quiet();
        int bad = 0;
        for (int i = 0; i < PIECES * PIECE; i++) bad += got[i] != (unsigned char)(i * 13 + next);
        CHECK(bad == 0, "16 getmem_nbi in flight: %d of %d bytes wrong", bad, PIECES * PIECE);
        shmem_barrier_all();
        shmem_free(gsrc);
    }
    /* iput64: 8-byte elements, every 2nd */
    uint64_t *w = (uint64_t *)(void *)b;
    uint64_t wv[4] = {1, 2, 3, 4};
    shmem_barrier_all();
    shmem_iput64(w, wv, 2, 1, 4, next);
    shmem_ctx_iput32(SHMEM_CTX_DEFAULT, b + 512, wv, 1, 2, 4, next);
    shmem_barrier_all();
    CHECK(w[0] == 1 && w[2] == 2 && w[4] == 3 && w[6] == 4, "iput64");
    uint32_t *h = (uint32_t *)(void *)(b + 512);
    CHECK(h[0] == 1 && h[1] == 2 && h[2] == 3 && h[3] == 4, "iput32 from 64-bit values (little endian low words)");
    uint64_t wg[4] = {0};
    shmem_iget64(wg, w, 1, 2, 4, me);
    CHECK(wg[0] == 1 && wg[3] == 4, "iget64");
    uint16_t hb[8] = {0};
    shmem_iget16(hb, b + 512, 2, 2, 4, me);
    CHECK(hb[0] == 1 && hb[1] == 0 && hb[2] == 2 && hb[4] == 3 && hb[6] == 4, "iget16");
    uint64_t blk[6] = {0};
    shmem_ibget64(blk, w, 3, 4, 1, 2, me);
    CHECK(blk[0] == 1 && blk[3] == 3, "ibget64");
    shmem_barrier_all();
    shmem_ibput128(b + 768, src, 2, 1, 1, 2, next);
    shmem_ibput8(b + 900, src, 2, 3, 1, 4, next);
    shmem_barrier_all();
    for (int i = 0; i < 16; i++) CHECK(b[768 + i] == (unsigned char)(i * 7 + prev), "ibput128 %d", i);
    for (int i = 0; i < 16; i++) CHECK(b[768 + 32 + i] == (unsigned char)((16 + i) * 7 + prev), "ibput128 block 1 %d", i);
    for (int k = 0; k < 4; k++) CHECK(b[900 + 2 * k] == (unsigned char)(3 * k * 7 + prev), "ibput8 %d", k);
    shmem_barrier_all();
    shmem_free(b);
}

/* Global and static variables are symmetric. */
long global_counter;
double global_arr[16];
static int static_arr[32];
static struct {
    char tag[8];
    long long value;
} static_rec;

static void test_statics(void) {
    static short local_static[4];
    shmem_barrier_all();
    shmem_long_p(&global_counter, 1000 + me, next);
    double dv[16];
    for (int i = 0; i < 16; i++) dv[i] = me + i / 16.0;
    shmem_double_put(global_arr, dv, 16, next);
    int iv[32];
    for (int i = 0; i < 32; i++) iv[i] = me * 32 + i;
    shmem_put(static_arr, iv, 32, next);
    shmem_putmem(static_rec.tag, "peer!", 6, next);
    shmem_p(&static_rec.value, (long long)me << 40, next);
    shmem_short_p(&local_static[3], (short)(me + 5), next);
    shmem_barrier_all();
    CHECK(global_counter == 1000 + prev, "global_counter %ld", global_counter);
    for (int i = 0; i < 16; i++) CHECK(global_arr[i] == prev + i / 16.0, "global_arr[%d]", i);
    for (int i = 0; i < 32; i++) CHECK(static_arr[i] == prev * 32 + i, "static_arr[%d] %d", i, static_arr[i]);
    CHECK(strcmp(static_rec.tag, "peer!") == 0 && static_rec.value == (long long)prev << 40, "static struct");
    CHECK(local_static[3] == prev + 5, "function-local static %d", local_static[3]);
    long got = shmem_g(&global_counter, next);
    CHECK(got == 1000 + me, "g of a peer's global: %ld", got);
    int back[32];
    shmem_int_get(back, static_arr, 32, prev);
    for (int i = 0; i < 32; i++) CHECK(back[i] == ((prev + npes - 1) % npes) * 32 + i, "get of a peer's static %d", i);
    shmem_barrier_all();
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    next = (me + 1) % npes;
    prev = (me + npes - 1) % npes;
#define CALL(TYPE, NAME) test_##NAME();
    RMA_TYPES(CALL)
    test_generics();
    test_sized();
    test_statics();
    shmem_finalize();
    return 0;
}
