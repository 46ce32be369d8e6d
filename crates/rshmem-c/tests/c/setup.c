/* Library setup and query routines: init_thread, query_thread, query_initialized,
 * my_pe/n_pes and the deprecated names, pe_accessible, addr_accessible, ptr,
 * info_get_version/name, finalize. */
#include "check.h"
#include <string.h>

static int global_word;

int main(void) {
    int initialized = 1;
    shmem_query_initialized(&initialized);
    if (initialized != 0) {
        fprintf(stderr, "query_initialized says initialized before init\n");
        return 1;
    }
    int provided = -1;
    int rc = shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    CHECK(rc == 0, "init_thread returned %d", rc);
    CHECK(provided == SHMEM_THREAD_MULTIPLE, "provided %d", provided);
    int queried = -1;
    shmem_query_thread(&queried);
    CHECK(queried == provided, "query_thread %d, init_thread provided %d", queried, provided);
    shmem_query_initialized(&initialized);
    CHECK(initialized != 0, "query_initialized says not initialized");

    int me = shmem_my_pe(), n = shmem_n_pes();
    CHECK(me >= 0 && me < n, "my_pe %d of %d", me, n);
    CHECK(_my_pe() == me && _num_pes() == n, "deprecated names disagree: %d %d", _my_pe(), _num_pes());
    for (int pe = -1; pe <= n; pe++) {
        int expect = pe >= 0 && pe < n;
        CHECK(shmem_pe_accessible(pe) == expect, "pe_accessible(%d) = %d", pe, shmem_pe_accessible(pe));
    }
    int *heap = shmem_malloc(sizeof(int));
    int local = 0;
    CHECK(shmem_addr_accessible(heap, (me + 1) % n) == 1, "heap address not accessible");
    CHECK(shmem_addr_accessible(&global_word, (me + 1) % n) == 1, "global not accessible");
    CHECK(shmem_addr_accessible(&local, (me + 1) % n) == 0, "stack address accessible");
    CHECK(shmem_addr_accessible(heap, n) == 0, "address accessible on PE n");

    /* shmem_ptr: every PE is on this host, so peers' memory is directly addressable,
     * unless RSHMEM_TRANSPORT=ucx sends every pair through UCX and maps no peer. */
    int next = (me + 1) % n;
    const char *transport = getenv("RSHMEM_TRANSPORT");
    int mapped = !(transport && strcmp(transport, "ucx") == 0) || next == me;
    int *peer = shmem_ptr(heap, next);
    CHECK(shmem_ptr(heap, me) == heap, "shmem_ptr to this PE");
    CHECK(shmem_ptr(&local, next) == NULL, "shmem_ptr of a stack address");
    CHECK(shmem_team_ptr(SHMEM_TEAM_INVALID, heap, next) == NULL, "team_ptr(INVALID) not NULL");
    if (!mapped) {
        CHECK(peer == NULL, "shmem_ptr to a peer with RSHMEM_TRANSPORT=ucx");
        CHECK(shmem_ptr(&global_word, next) == NULL, "shmem_ptr of a global with RSHMEM_TRANSPORT=ucx");
        CHECK(shmem_team_ptr(SHMEM_TEAM_WORLD, heap, next) == NULL, "team_ptr with RSHMEM_TRANSPORT=ucx");
    } else {
        CHECK(peer != NULL, "shmem_ptr returned NULL for a heap object");
        *heap = -1;
        shmem_barrier_all();
        *peer = me;
        shmem_barrier_all();
        CHECK(*heap == (me + n - 1) % n, "store through shmem_ptr: got %d", *heap);
        int *gpeer = shmem_ptr(&global_word, next);
        CHECK(gpeer != NULL, "shmem_ptr of a global");
        shmem_barrier_all();
        *gpeer = 1000 + me;
        shmem_barrier_all();
        CHECK(global_word == 1000 + (me + n - 1) % n, "store to a global through shmem_ptr: %d", global_word);
        CHECK(shmem_team_ptr(SHMEM_TEAM_WORLD, heap, next) == (void *)peer, "team_ptr(WORLD) differs from ptr");
    }

    int major = 0, minor = 0;
    shmem_info_get_version(&major, &minor);
    CHECK(major == SHMEM_MAJOR_VERSION && minor == SHMEM_MINOR_VERSION, "version %d.%d", major, minor);
    CHECK(major == 1 && minor >= 5, "version %d.%d", major, minor);
    char name[SHMEM_MAX_NAME_LEN];
    memset(name, 'x', sizeof name);
    shmem_info_get_name(name);
    CHECK(strcmp(name, SHMEM_VENDOR_STRING) == 0, "name `%.20s`", name);
    CHECK(_SHMEM_CMP_EQ == SHMEM_CMP_EQ && _SHMEM_MAJOR_VERSION == SHMEM_MAJOR_VERSION, "deprecated constants");

    shmem_free(heap);
    shmem_finalize();
    shmem_query_initialized(&initialized);
    if (initialized != 0) {
        fprintf(stderr, "query_initialized says initialized after finalize\n");
        return 1;
    }
    return 0;
}
