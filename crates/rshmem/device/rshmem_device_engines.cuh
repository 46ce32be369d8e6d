// rshmem device API, engine-explicit operations: the kernel chooses what moves the bytes.
//
// * SM (the plain `rshmem_putmem_nbi` & co. on mapped peers): the calling threads' own loads
//   and stores through the peer mapping.
// * Remote (`rshmemx_remote_*`): always through this PE's host proxy and the remote transport
//   (UCX, staged through host memory), even when the peer is mapped: for spreading traffic
//   over another path and for testing the slow path on one host. Needs a remote transport to
//   the peer: peers on other hosts have one; `RSHMEM_REMOTE_ENGINE=ucx` (or
//   `RSHMEM_TRANSPORT=ucx`) builds one to every peer. Otherwise the call stops the kernel
//   with a message naming it and the PE.
// * Copy engine (`rshmemx_ce_*`): the device posts a request, the proxy thread issues
//   cuMemcpyAsync between the mapped device addresses on its own stream: no SM is spent on
//   the bytes. Mapped peers only (this PE included); others stop the kernel with a message.
//
// Completion and ordering:
// * `rshmemx_remote_quiet(pe)` completes this PE's remote-engine requests to `pe` (and
//   everything the proxy took before them); `rshmemx_ce_quiet()` completes this PE's
//   copy-engine requests. Neither completes SM stores.
// * `rshmem_quiet` stays the union: it completes SM stores and every proxy request, of every
//   engine (the proxy counts a ticket complete only after the transports' quiet and after
//   the copy-engine event of every earlier copy).
// * `rshmem_fence` also stays the union: copy-engine requests and remote-engine requests
//   to mapped peers could be overtaken by later SM stores, so the fence completes them
//   (a quiet of those engines); SM stores are ordered by the memory fence, and implicit
//   proxy requests by the proxy's ticket order.
// * Requests of the remote and copy engines from one PE are taken in ticket order, but a
//   copy-engine copy completes asynchronously: a remote put issued after a CE put may land
//   first. Put a fence (or the engine's quiet) between them when the order matters.
// * Sources of nbi puts must stay unchanged, and destinations of nbi gets unread, until the
//   quiet. Remote puts of up to 64 bytes travel inline (the source is free at once).
//   Sources and destinations in local memory of the kernel must be global device memory
//   (the proxy and the copy engine read and write them, not the calling thread).
//
// Relays (`rshmemx_relay_putmem_nbi` / `getmem_nbi`, after ACLSHMEM's relay puts): the bytes
// travel to a third PE, whose runtime carries them on to the final PE (see "relays" below).
//
// Also here: batched submission (`rshmemx_batch_*`: several remote or copy-engine requests
// in one ring entry), 2-D puts and gets (`rshmemx_put2d_nbi` by the SM or the proxy,
// `rshmemx_ce_put2d_nbi` on the copy engine), L2 prefetch
// (`rshmemx_cmo_nbi`, `rshmemx_prefetch_nbi`), 32-bit signals (`rshmemx_signal32_*`) and
// `rshmemx_team_pe_mapping`.
//
// Included by rshmem_device.cuh after the rest of the API; not meant on its own.
#ifndef RSHMEM_DEVICE_ENGINES_CUH
#define RSHMEM_DEVICE_ENGINES_CUH

// Engines of batch entries.
#define RSHMEMX_ENGINE_REMOTE 1
#define RSHMEMX_ENGINE_CE 2

// ---------------------------------------------------------------- bookkeeping

// 1 + the last ticket of a remote request to each PE (device memory, after the reach flags).
__device__ __forceinline__ rshmem_u64* rshmemi_px_last_remote() {
    return (rshmem_u64*)(rshmem_state.proxy_peers + (((rshmem_u64)rshmem_state.n_pes + 255ull) & ~255ull));
}

__device__ __forceinline__ void rshmemi_engine_pe(const char* call, int pe) {
    if (pe < 0 || pe >= rshmem_state.n_pes) rshmemi_fail(call, "PE out of range", pe, (rshmem_u64)pe, (rshmem_u64)rshmem_state.n_pes);
    if (rshmem_state.proxy_ring == 0) rshmemi_fail(call, "this PE has no host proxy (engine-explicit calls need a GPU PE of rshmem's runtime)", pe, 0, 0);
}

// Checks that `pe` is reachable by the remote engine; returns its reach flags.
__device__ __forceinline__ unsigned rshmemi_remote_reach(const char* call, const void* sym, rshmem_size_t n, int pe) {
    rshmemi_engine_pe(call, pe);
    rshmemi_check(call, sym, n, pe);
    unsigned r = rshmemi_reach(pe);
    if (!(r & RSHMEMI_REACH_REMOTE))
        rshmemi_fail(call,
                     pe == rshmem_state.my_pe ? "the remote engine does not reach this PE itself"
                                              : "no remote transport reaches this PE (RSHMEM_REMOTE_ENGINE=ucx builds one to every peer)",
                     pe, (rshmem_u64)sym, n);
    return r;
}

__device__ __forceinline__ void rshmemi_ce_reach(const char* call, const void* sym, rshmem_size_t n, int pe) {
    rshmemi_engine_pe(call, pe);
    rshmemi_check(call, sym, n, pe);
    if (!(rshmemi_reach(pe) & RSHMEMI_REACH_CE))
        rshmemi_fail(call, "the copy engine reaches mapped peers only, and this PE is not mapped here", pe, (rshmem_u64)sym, n);
}

// Records ticket `t` as a remote request to `pe` (`mapped`: the peer also has a mapping,
// so fence must complete it).
__device__ __forceinline__ void rshmemi_note_remote(int pe, rshmem_u64 t, bool mapped) {
    atomicMax(rshmemi_px_last_remote() + pe, t + 1);
    if (mapped) atomicMax(rshmemi_pxw(RSHMEMI_PXW_LAST_EXPLICIT), t + 1);
}

__device__ __forceinline__ void rshmemi_note_ce(rshmem_u64 t) {
    atomicMax(rshmemi_pxw(RSHMEMI_PXW_LAST_CE), t + 1);
    atomicMax(rshmemi_pxw(RSHMEMI_PXW_LAST_EXPLICIT), t + 1);
}

// One remote-engine request; returns the result when `wait`.
__device__ __forceinline__ rshmem_u64 rshmemi_remote_request(const char* call, unsigned kind, int pe, const void* sym, rshmem_u64 len,
                                                            const void* local, const void* inl, unsigned amo, rshmem_u64 operand,
                                                            rshmem_u64 compare, bool wait) {
    unsigned r = rshmemi_remote_reach(call, sym, len, pe);
    rshmem_u64 t;
    rshmem_u64 v = rshmemi_proxy_post(call, kind, pe, sym, len, local, inl, amo, operand, compare,
                                      RSHMEMI_PX_REMOTE | (wait ? RSHMEMI_PX_WAIT : 0u), &t);
    rshmemi_note_remote(pe, t, !(r & RSHMEMI_REACH_PROXY));
    return v;
}

// ---------------------------------------------------------------- remote engine

// Thread scope. A put of up to 64 bytes goes inline; a larger one reads `src` (global
// memory) when the proxy takes it.
__device__ __forceinline__ void rshmemx_remote_putmem_nbi(void* dst, const void* src, rshmem_size_t n, int pe) {
    if (n == 0) return;
    if (n <= RSHMEMI_PX_INLINE) rshmemi_remote_request("rshmemx_remote_putmem_nbi", RSHMEMI_PX_PUT, pe, dst, n, 0, src, 0, 0, 0, false);
    else rshmemi_remote_request("rshmemx_remote_putmem_nbi", RSHMEMI_PX_PUT, pe, dst, n, src, 0, 0, 0, 0, false);
}

// Thread scope: `dst` must be global device memory.
__device__ __forceinline__ void rshmemx_remote_getmem_nbi(void* dst, const void* src, rshmem_size_t n, int pe) {
    if (n == 0) return;
    rshmemi_remote_request("rshmemx_remote_getmem_nbi", RSHMEMI_PX_GET, pe, src, n, dst, 0, 0, 0, 0, false);
}

// Warp and block scope: every thread calls with the same arguments; one posts the request.
#define RSHMEMI_SCOPED_ENGINE(scope, leader, sync)                                                                       \
    __device__ __forceinline__ void rshmemx_remote_putmem_nbi##scope(void* dst, const void* src, rshmem_size_t n, int pe) { \
        sync;                                                                                                            \
        if (leader) rshmemx_remote_putmem_nbi(dst, src, n, pe);                                                          \
    }                                                                                                                    \
    __device__ __forceinline__ void rshmemx_remote_getmem_nbi##scope(void* dst, const void* src, rshmem_size_t n, int pe) { \
        sync;                                                                                                            \
        if (leader) rshmemx_remote_getmem_nbi(dst, src, n, pe);                                                          \
    }                                                                                                                    \
    __device__ __forceinline__ void rshmemx_ce_putmem_nbi##scope(void* dst, const void* src, rshmem_size_t n, int pe) {   \
        sync;                                                                                                            \
        if (leader) rshmemx_ce_putmem_nbi(dst, src, n, pe);                                                              \
    }                                                                                                                    \
    __device__ __forceinline__ void rshmemx_ce_getmem_nbi##scope(void* dst, const void* src, rshmem_size_t n, int pe) {   \
        sync;                                                                                                            \
        if (leader) rshmemx_ce_getmem_nbi(dst, src, n, pe);                                                              \
    }                                                                                                                    \
    __device__ __forceinline__ void rshmemx_relay_putmem_nbi##scope(void* dst, const void* src, rshmem_size_t n, int pe,     \
                                                                    int relay_pe) {                                      \
        sync;                                                                                                            \
        if (leader) rshmemx_relay_putmem_nbi(dst, src, n, pe, relay_pe);                                                 \
    }                                                                                                                    \
    __device__ __forceinline__ void rshmemx_relay_getmem_nbi##scope(void* dst, const void* src, rshmem_size_t n, int pe,     \
                                                                    int relay_pe) {                                      \
        sync;                                                                                                            \
        if (leader) rshmemx_relay_getmem_nbi(dst, src, n, pe, relay_pe);                                                 \
    }

// Completes this PE's remote-engine requests to `pe`.
__device__ __forceinline__ void rshmemx_remote_quiet(int pe) {
    rshmemi_engine_pe("rshmemx_remote_quiet", pe);
    rshmem_u64 last = *(volatile rshmem_u64*)(rshmemi_px_last_remote() + pe);
    rshmemi_proxy_wait_word("rshmemx_remote_quiet", RSHMEMI_PXC_COMPLETED, RSHMEMI_PXW_COMPLETED_SEEN, last);
}

// Remote-engine atomics (thread scope): the target's runtime carries them out, so they are
// atomic with respect to other atomics on the word through any engine. `fetch_OP` returns
// the old value; `OP` asks for no answer.
#define RSHMEMI_REMOTE_AMO_CALL(NAME, U, op, code, v, cond, wait) \
    rshmemi_remote_request("rshmemx_remote_" #NAME "_atomic_" #op, RSHMEMI_PX_AMO, pe, a, sizeof(U), 0, 0, code, (rshmem_u64)(U)(v), (rshmem_u64)(U)(cond), wait)
#define RSHMEMI_REMOTE_AMO_OP(NAME, T, U, op, code)                                                                            \
    __device__ __forceinline__ T rshmemx_remote_##NAME##_atomic_fetch_##op(T* a, T v, int pe) {                              \
        return (T)(U)RSHMEMI_REMOTE_AMO_CALL(NAME, U, fetch_##op, code, v, 0, true);                                         \
    }                                                                                                                        \
    __device__ __forceinline__ void rshmemx_remote_##NAME##_atomic_##op(T* a, T v, int pe) {                                 \
        RSHMEMI_REMOTE_AMO_CALL(NAME, U, op, code, v, 0, false);                                                             \
    }
#define RSHMEMI_REMOTE_AMO(NAME, T, U)                                                                                         \
    __device__ __forceinline__ T rshmemx_remote_##NAME##_atomic_fetch(const T* a, int pe) {                                  \
        return (T)(U)RSHMEMI_REMOTE_AMO_CALL(NAME, U, fetch, RSHMEMI_AMO_FETCH, 0, 0, true);                                 \
    }                                                                                                                        \
    __device__ __forceinline__ void rshmemx_remote_##NAME##_atomic_set(T* a, T v, int pe) {                                  \
        RSHMEMI_REMOTE_AMO_CALL(NAME, U, set, RSHMEMI_AMO_SET, v, 0, false);                                                 \
    }                                                                                                                        \
    __device__ __forceinline__ T rshmemx_remote_##NAME##_atomic_swap(T* a, T v, int pe) {                                    \
        return (T)(U)RSHMEMI_REMOTE_AMO_CALL(NAME, U, swap, RSHMEMI_AMO_SWAP, v, 0, true);                                   \
    }                                                                                                                        \
    __device__ __forceinline__ T rshmemx_remote_##NAME##_atomic_compare_swap(T* a, T cond, T v, int pe) {                    \
        return (T)(U)RSHMEMI_REMOTE_AMO_CALL(NAME, U, compare_swap, RSHMEMI_AMO_CSWAP, v, cond, true);                       \
    }                                                                                                                        \
    RSHMEMI_REMOTE_AMO_OP(NAME, T, U, add, RSHMEMI_AMO_ADD)                                                                  \
    __device__ __forceinline__ T rshmemx_remote_##NAME##_atomic_fetch_inc(T* a, int pe) {                                    \
        return rshmemx_remote_##NAME##_atomic_fetch_add(a, (T)1, pe);                                                        \
    }                                                                                                                        \
    __device__ __forceinline__ void rshmemx_remote_##NAME##_atomic_inc(T* a, int pe) { rshmemx_remote_##NAME##_atomic_add(a, (T)1, pe); }
#define RSHMEMI_REMOTE_AMO_BIT(NAME, T, U)               \
    RSHMEMI_REMOTE_AMO_OP(NAME, T, U, and, RSHMEMI_AMO_AND) \
    RSHMEMI_REMOTE_AMO_OP(NAME, T, U, or, RSHMEMI_AMO_OR)   \
    RSHMEMI_REMOTE_AMO_OP(NAME, T, U, xor, RSHMEMI_AMO_XOR)
RSHMEM_AMO_STANDARD_TYPES(RSHMEMI_REMOTE_AMO)
RSHMEM_AMO_STANDARD_TYPES_ALT(RSHMEMI_REMOTE_AMO)
RSHMEM_AMO_BITWISE_TYPES(RSHMEMI_REMOTE_AMO_BIT)
RSHMEM_AMO_BITWISE_TYPES_ALT(RSHMEMI_REMOTE_AMO_BIT)

// ---------------------------------------------------------------- relays

// A relayed request: the bytes go to `relay_pe` (through the remote engine, or the proxy's
// path when the relay is on another host), whose runtime carries them on to `pe` with its
// own means (its mapping when `pe` shares its host, else its own network path). `pe` and
// `relay_pe` must differ, and neither may be this PE.
__device__ __forceinline__ void rshmemi_relay(const char* call, unsigned kind, int pe, int relay_pe, const void* sym, rshmem_size_t n,
                                              const void* local, const void* inl) {
    rshmemi_engine_pe(call, pe);
    rshmemi_engine_pe(call, relay_pe);
    rshmemi_check(call, sym, n, pe);
    int me = rshmem_state.my_pe;
    if (relay_pe == pe) rshmemi_fail(call, "the relay PE is the final PE itself", pe, (rshmem_u64)relay_pe, n);
    if (pe == me || relay_pe == me) rshmemi_fail(call, "a PE cannot relay to itself or through itself", pe, (rshmem_u64)relay_pe, n);
    if (!(rshmemi_reach(relay_pe) & (RSHMEMI_REACH_REMOTE | RSHMEMI_REACH_PROXY)))
        rshmemi_fail(call,
                     "the relay PE is not reached by the staged UCX protocol (a relay on another host, or RSHMEM_REMOTE_ENGINE=ucx)",
                     pe, (rshmem_u64)relay_pe, n);
    rshmem_u64 t;
    rshmemi_proxy_post(call, kind, pe, sym, n, local, inl, 0, (rshmem_u64)relay_pe, 0, RSHMEMI_PX_REMOTE, &t);
    // Complete at rshmemx_remote_quiet of either PE, and at fence (a relayed put can be
    // overtaken by later direct stores to `pe`).
    rshmemi_note_remote(pe, t, true);
    rshmemi_note_remote(relay_pe, t, true);
}

// Thread scope: `n` bytes from `src` to `dst` on `pe`, through `relay_pe`. Up to 64 bytes
// travel inline (the source is free at once); a larger source (global memory) must stay
// unchanged until a quiet. Complete at rshmem_quiet, rshmemx_remote_quiet(pe or relay_pe)
// or rshmem_fence.
__device__ __forceinline__ void rshmemx_relay_putmem_nbi(void* dst, const void* src, rshmem_size_t n, int pe, int relay_pe) {
    if (n == 0) return;
    bool inl = n <= RSHMEMI_PX_INLINE;
    rshmemi_relay("rshmemx_relay_putmem_nbi", RSHMEMI_PX_RELAY_PUT, pe, relay_pe, dst, n, inl ? 0 : src, inl ? src : 0);
}

// Thread scope: `n` bytes from `src` on `pe` into `dst` (global memory here), through
// `relay_pe`; `dst` holds them after a quiet.
__device__ __forceinline__ void rshmemx_relay_getmem_nbi(void* dst, const void* src, rshmem_size_t n, int pe, int relay_pe) {
    if (n == 0) return;
    rshmemi_relay("rshmemx_relay_getmem_nbi", RSHMEMI_PX_RELAY_GET, pe, relay_pe, src, n, dst, 0);
}

// ---------------------------------------------------------------- copy engine

// Thread scope: a copy of `n` bytes from `src` (global memory of this PE) to `dst` on `pe`
// (mapped), carried out by the copy engine.
__device__ __forceinline__ void rshmemx_ce_putmem_nbi(void* dst, const void* src, rshmem_size_t n, int pe) {
    if (n == 0) return;
    rshmemi_ce_reach("rshmemx_ce_putmem_nbi", dst, n, pe);
    rshmem_u64 t;
    rshmemi_proxy_post("rshmemx_ce_putmem_nbi", RSHMEMI_PX_CE_PUT, pe, dst, n, src, 0, 0, 0, 0, 0u, &t);
    rshmemi_note_ce(t);
}

// Thread scope: a copy of `n` bytes from `src` on `pe` (mapped) into `dst` (global memory).
__device__ __forceinline__ void rshmemx_ce_getmem_nbi(void* dst, const void* src, rshmem_size_t n, int pe) {
    if (n == 0) return;
    rshmemi_ce_reach("rshmemx_ce_getmem_nbi", src, n, pe);
    rshmem_u64 t;
    rshmemi_proxy_post("rshmemx_ce_getmem_nbi", RSHMEMI_PX_CE_GET, pe, src, n, dst, 0, 0, 0, 0, 0u, &t);
    rshmemi_note_ce(t);
}

// Thread scope, 2-D on the copy engine (cuMemcpy2DAsync): `rows` rows of `row_bytes` bytes,
// row i from `src + i * src_pitch` to `dst + i * dst_pitch` (pitches below 4 GiB); `dst`
// (put) or `src` (get) symmetric on mapped `pe`, the other end global memory here.
__device__ __forceinline__ void rshmemi_ce_2d(const char* call, unsigned kind, void* local, const void* sym, rshmem_size_t rows,
                                              rshmem_size_t row_bytes, rshmem_size_t dst_pitch, rshmem_size_t src_pitch, int pe) {
    if (rows == 0 || row_bytes == 0) return;
    rshmem_size_t pitch = kind == RSHMEMI_PX_CE_PUT2D ? dst_pitch : src_pitch;
    rshmemi_ce_reach(call, sym, (rows - 1) * pitch + row_bytes, pe);
    if (dst_pitch >= (1ull << 32) || src_pitch >= (1ull << 32) || dst_pitch < row_bytes || src_pitch < row_bytes)
        rshmemi_fail(call, "pitches must be at least the row bytes and below 4 GiB", pe, dst_pitch, src_pitch);
    rshmem_u64 t;
    rshmemi_proxy_post(call, kind, pe, sym, row_bytes, local, 0, 0, rows, (dst_pitch << 32) | src_pitch, 0u, &t);
    rshmemi_note_ce(t);
}
__device__ __forceinline__ void rshmemx_ce_put2d_nbi(void* dst, const void* src, rshmem_size_t rows, rshmem_size_t row_bytes,
                                                     rshmem_size_t dst_pitch, rshmem_size_t src_pitch, int pe) {
    rshmemi_ce_2d("rshmemx_ce_put2d_nbi", RSHMEMI_PX_CE_PUT2D, (void*)src, dst, rows, row_bytes, dst_pitch, src_pitch, pe);
}
__device__ __forceinline__ void rshmemx_ce_get2d_nbi(void* dst, const void* src, rshmem_size_t rows, rshmem_size_t row_bytes,
                                                     rshmem_size_t dst_pitch, rshmem_size_t src_pitch, int pe) {
    rshmemi_ce_2d("rshmemx_ce_get2d_nbi", RSHMEMI_PX_CE_GET2D, dst, src, rows, row_bytes, dst_pitch, src_pitch, pe);
}

// Completes this PE's copy-engine requests.
__device__ __forceinline__ void rshmemx_ce_quiet() {
    if (rshmem_state.proxy_ring == 0) return;
    rshmem_u64 last = *(volatile rshmem_u64*)rshmemi_pxw(RSHMEMI_PXW_LAST_CE);
    rshmemi_proxy_wait_word("rshmemx_ce_quiet", RSHMEMI_PXC_CE_DONE_UPTO, RSHMEMI_PXW_CE_SEEN, last);
}

RSHMEMI_SCOPED_ENGINE(_warp, rshmemi_lane() == 0, __syncwarp())
RSHMEMI_SCOPED_ENGINE(_block, rshmemi_block_rank() == 0, __syncthreads())

// ---------------------------------------------------------------- batched submission

// One request of a batch (32 bytes; must match `gpu::proxy::BatchEntry`).
struct rshmemx_batch_entry {
    unsigned kind;      // RSHMEMI_PX_PUT / GET (remote engine), RSHMEMI_PX_CE_PUT / CE_GET
    int pe;
    rshmem_u64 offset;  // heap offset of the symmetric end
    rshmem_u64 local;   // device address of the local end
    rshmem_u64 len;
};

// A batch: requests collected in `entries` (global memory the caller owns, `capacity`
// entries) and submitted in one ring entry. Owned by one thread.
struct rshmemx_batch {
    rshmemx_batch_entry* entries;
    unsigned capacity;
    unsigned count;
    unsigned ce;           // some entry uses the copy engine
    unsigned mapped_remote;  // some remote entry targets a mapped peer
};

__device__ __forceinline__ void rshmemx_batch_init(rshmemx_batch* b, rshmemx_batch_entry* entries, unsigned capacity) {
    if (entries == 0 || capacity == 0) rshmemi_fail("rshmemx_batch_init", "a batch needs storage for at least one entry", rshmem_state.my_pe, (rshmem_u64)entries, capacity);
    b->entries = entries;
    b->capacity = capacity;
    b->count = 0;
    b->ce = 0;
    b->mapped_remote = 0;
}

// Submits the collected requests with one ring entry (one doorbell) and returns once the
// proxy has read them: the batch is then empty and its storage free. Completion as for
// the requests one by one (the engines' quiets, rshmem_quiet).
__device__ __forceinline__ void rshmemx_batch_submit(rshmemx_batch* b) {
    if (b->count == 0) return;
    rshmem_u64 t;
    rshmemi_proxy_post("rshmemx_batch_submit", RSHMEMI_PX_BATCH, rshmem_state.my_pe, 0, b->count, b->entries, 0, 0, 0, 0,
                       RSHMEMI_PX_WAIT, &t);
    if (b->ce) atomicMax(rshmemi_pxw(RSHMEMI_PXW_LAST_CE), t + 1);
    if (b->ce || b->mapped_remote) atomicMax(rshmemi_pxw(RSHMEMI_PXW_LAST_EXPLICIT), t + 1);
    for (unsigned i = 0; i < b->count; i++) {
        unsigned k = b->entries[i].kind;
        if (k == RSHMEMI_PX_PUT || k == RSHMEMI_PX_GET) atomicMax(rshmemi_px_last_remote() + b->entries[i].pe, t + 1);
    }
    b->count = 0;
    b->ce = 0;
    b->mapped_remote = 0;
}

__device__ __forceinline__ void rshmemi_batch_add(rshmemx_batch* b, const char* call, bool put, void* local, const void* sym,
                                                  rshmem_size_t n, int pe, int engine) {
    if (n == 0) return;
    unsigned kind;
    if (engine == RSHMEMX_ENGINE_REMOTE) {
        unsigned r = rshmemi_remote_reach(call, sym, n, pe);
        if (!(r & RSHMEMI_REACH_PROXY)) b->mapped_remote = 1;
        kind = put ? RSHMEMI_PX_PUT : RSHMEMI_PX_GET;
    } else if (engine == RSHMEMX_ENGINE_CE) {
        rshmemi_ce_reach(call, sym, n, pe);
        b->ce = 1;
        kind = put ? RSHMEMI_PX_CE_PUT : RSHMEMI_PX_CE_GET;
    } else {
        rshmemi_fail(call, "engine must be RSHMEMX_ENGINE_REMOTE or RSHMEMX_ENGINE_CE", pe, (rshmem_u64)engine, 0);
        return;
    }
    if (b->count == b->capacity) rshmemx_batch_submit(b);
    rshmemx_batch_entry* e = &b->entries[b->count++];
    e->kind = kind;
    e->pe = pe;
    e->offset = (rshmem_u64)sym - rshmem_state.heap_base;
    e->local = (rshmem_u64)local;
    e->len = n;
}

// Adds a put of `n` bytes from `src` (global memory) to `dst` on `pe` through `engine`
// (RSHMEMX_ENGINE_REMOTE or RSHMEMX_ENGINE_CE); a full batch is submitted first.
__device__ __forceinline__ void rshmemx_batch_putmem_nbi(rshmemx_batch* b, void* dst, const void* src, rshmem_size_t n, int pe, int engine) {
    rshmemi_batch_add(b, "rshmemx_batch_putmem_nbi", true, (void*)src, dst, n, pe, engine);
}

// Adds a get of `n` bytes from `src` on `pe` into `dst` (global memory) through `engine`.
__device__ __forceinline__ void rshmemx_batch_getmem_nbi(rshmemx_batch* b, void* dst, const void* src, rshmem_size_t n, int pe, int engine) {
    rshmemi_batch_add(b, "rshmemx_batch_getmem_nbi", false, dst, src, n, pe, engine);
}

// ---------------------------------------------------------------- 2-D puts and gets

// `rows` rows of `row_bytes` bytes: row i goes from `src + i * src_pitch` to
// `dst + i * dst_pitch` (pitches in bytes). Mapped peers: the calling threads copy (SM);
// peers behind the proxy: one proxy put/get per row, by lane 0. Completion through quiet.
// `sym` is the symmetric end (dst for a put, src for a get).
__device__ __forceinline__ bool rshmemi_copy2d(const char* call, bool get, void* dst, const void* src, rshmem_size_t rows,
                                               rshmem_size_t row_bytes, rshmem_size_t dst_pitch, rshmem_size_t src_pitch, int pe,
                                               unsigned lane, unsigned lanes) {
    if (rows == 0 || row_bytes == 0) return false;
    const void* sym = get ? src : dst;
    rshmemi_check(call, sym, (rows - 1) * (get ? src_pitch : dst_pitch) + row_bytes, pe);
    if (rshmemi_proxied(pe)) return true;
    char* d = get ? (char*)dst : (char*)rshmemi_remote(dst, pe);
    const char* s = get ? (const char*)rshmemi_remote(src, pe) : (const char*)src;
    for (rshmem_size_t i = 0; i < rows; i++) rshmemi_copy(d + i * dst_pitch, s + i * src_pitch, row_bytes, lane, lanes);
    return false;
}

// The proxy's half of a 2-D transfer (lane 0 after the scope's sync).
__device__ __forceinline__ void rshmemi_proxy_2d(const char* call, bool get, void* dst, const void* src, rshmem_size_t rows,
                                                 rshmem_size_t row_bytes, rshmem_size_t dst_pitch, rshmem_size_t src_pitch, int pe) {
    for (rshmem_size_t i = 0; i < rows; i++) {
        char* d = (char*)dst + i * dst_pitch;
        const char* s = (const char*)src + i * src_pitch;
        if (get) rshmemi_proxy_get(call, d, s, row_bytes, pe, false);
        else rshmemi_proxy_put(call, d, s, row_bytes, pe, false);
    }
}

#define RSHMEMI_SCOPED_2D_DIR(dir, get, scope, lane, lanes, sync)                                                              \
    __device__ __forceinline__ void rshmemx_##dir##2d_nbi##scope(void* dst, const void* src, rshmem_size_t rows, rshmem_size_t row_bytes, \
                                                                rshmem_size_t dst_pitch, rshmem_size_t src_pitch, int pe) {    \
        if (rshmemi_copy2d("rshmemx_" #dir "2d_nbi" #scope, get, dst, src, rows, row_bytes, dst_pitch, src_pitch, pe, lane, lanes)) { \
            sync;                                                                                                              \
            if ((lane) == 0) rshmemi_proxy_2d("rshmemx_" #dir "2d_nbi" #scope, get, dst, src, rows, row_bytes, dst_pitch, src_pitch, pe); \
        }                                                                                                                      \
    }
#define RSHMEMI_SCOPED_2D(scope, lane, lanes, sync)              \
    RSHMEMI_SCOPED_2D_DIR(put, false, scope, lane, lanes, sync) \
    RSHMEMI_SCOPED_2D_DIR(get, true, scope, lane, lanes, sync)
RSHMEMI_SCOPED_2D(, 0, 1, (void)0)
RSHMEMI_SCOPED_2D(_warp, rshmemi_lane(), 32, __syncwarp())
RSHMEMI_SCOPED_2D(_block, rshmemi_block_rank(), rshmemi_block_size(), __syncthreads())

// ---------------------------------------------------------------- L2 prefetch

// Asks the L2 cache to fetch `bytes` of global memory at `ptr` (no completion; a hint).
// Lanes `lane` of `lanes` share the range (thread scope: 0 of 1).
__device__ __forceinline__ void rshmemi_prefetch_l2(const void* ptr, rshmem_size_t bytes, unsigned lane, unsigned lanes) {
    rshmem_u64 a = (rshmem_u64)ptr, end = a + bytes;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    // Bulk prefetch: 16-byte aligned pieces of up to 64 KiB each.
    rshmem_u64 head = (a + 15) & ~15ull, tail = end & ~15ull;
    if (head < tail) {
        const rshmem_u64 piece = 1ull << 16;
        for (rshmem_u64 p = head + (rshmem_u64)lane * piece; p < tail; p += (rshmem_u64)lanes * piece) {
            unsigned sz = (unsigned)(tail - p < piece ? tail - p : piece);
            asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(sz) : "memory");
        }
        if (lane == 0 && a < head) asm volatile("prefetch.global.L2 [%0];" ::"l"(a));
        if (lane == 0 && tail < end) asm volatile("prefetch.global.L2 [%0];" ::"l"(tail));
        return;
    }
#endif
    for (rshmem_u64 p = (a & ~127ull) + (rshmem_u64)lane * 128; p < end; p += (rshmem_u64)lanes * 128)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

// `rshmemx_cmo_nbi(ptr, bytes)`: L2 prefetch of local global memory; `rshmemx_prefetch_nbi(sym,
// bytes, pe)`: of symmetric memory on a mapped `pe` (a peer behind the proxy: no effect).
#define RSHMEMI_SCOPED_CMO(scope, lane, lanes)                                                                       \
    __device__ __forceinline__ void rshmemx_cmo_nbi##scope(const void* ptr, rshmem_size_t bytes) {                  \
        rshmemi_prefetch_l2(ptr, bytes, lane, lanes);                                                               \
    }                                                                                                               \
    __device__ __forceinline__ void rshmemx_prefetch_nbi##scope(const void* sym, rshmem_size_t bytes, int pe) {     \
        rshmemi_check("rshmemx_prefetch_nbi" #scope, sym, bytes, pe);                                               \
        if (rshmemi_proxied(pe)) return;                                                                            \
        rshmemi_prefetch_l2(rshmemi_remote(sym, pe), bytes, lane, lanes);                                           \
    }
RSHMEMI_SCOPED_CMO(, 0, 1)
RSHMEMI_SCOPED_CMO(_warp, rshmemi_lane(), 32)
RSHMEMI_SCOPED_CMO(_block, rshmemi_block_rank(), rshmemi_block_size())

// ---------------------------------------------------------------- 32-bit signals

__device__ __forceinline__ unsigned rshmemx_signal32_fetch(const unsigned* sig) { return *(const volatile unsigned*)sig; }

// RSHMEM_SIGNAL_SET or RSHMEM_SIGNAL_ADD on the u32 `sig` of `pe`.
__device__ __forceinline__ void rshmemx_signal32_op(unsigned* sig, unsigned v, int op, int pe) {
    rshmemi_check("rshmemx_signal32_op", sig, 4, pe);
    if (op != RSHMEM_SIGNAL_SET && op != RSHMEM_SIGNAL_ADD)
        rshmemi_fail("rshmemx_signal32_op", "op must be RSHMEM_SIGNAL_SET or RSHMEM_SIGNAL_ADD", pe, (rshmem_u64)op, 0);
    if (rshmemi_proxied(pe)) {
        rshmemi_proxy_amo("rshmemx_signal32_op", sig, 4, pe, op == RSHMEM_SIGNAL_ADD ? RSHMEMI_AMO_ADD : RSHMEMI_AMO_SET, v, 0, false);
        return;
    }
    unsigned* r = (unsigned*)rshmemi_remote(sig, pe);
    bool add = op == RSHMEM_SIGNAL_ADD;
    if (rshmem_state.one_device) add ? atomicAdd(r, v) : atomicExch(r, v);
    else add ? atomicAdd_system(r, v) : atomicExch_system(r, v);
}

// Waits until the local u32 `sig` compares true against `v` (RSHMEM_CMP_*); returns it.
__device__ __forceinline__ unsigned rshmemx_signal32_wait_until(unsigned* sig, int cmp, unsigned v) {
    rshmemi_check("rshmemx_signal32_wait_until", sig, 4, rshmem_state.my_pe);
    rshmemi_waiter w;
    unsigned cur;
    while (!rshmemi_cmp_ull(cur = *(volatile unsigned*)sig, cmp, v)) w.tick("rshmemx_signal32_wait_until", sig);
    __threadfence_system();
    return cur;
}

// ---------------------------------------------------------------- teams

// The world PE number of `team_pe` in `team`, or -1 when out of range.
__device__ __forceinline__ int rshmemx_team_pe_mapping(rshmem_team_t team, int team_pe) {
    const rshmem_device_team* t = rshmemi_team(team);
    if (team_pe < 0 || team_pe >= t->size) return -1;
    return t->start + team_pe * t->stride;
}

#endif  // RSHMEM_DEVICE_ENGINES_CUH
