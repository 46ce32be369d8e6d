// rshmem device API, the proxy path: operations on peers this GPU cannot address (no
// mapping, or RSHMEM_TRANSPORT=ucx) become requests in a ring in pinned host memory that a
// host thread of this PE (src/gpu/proxy.rs) carries out over the PE's transport (UCX,
// staged through host memory) in ring order.
//
// Protocol (the Rust side mirrors these structs; keep them in step):
// * A thread claims ticket t with an atomic add on `proxy_head` (device memory); slot
//   t % slots is its own once the slot's `released` word reads t / slots (each use of a
//   slot ends by storing the next round there).
// * It writes the request, makes it visible (__threadfence_system), then stores t + 1
//   into `ready`. The proxy takes tickets strictly in order, so requests from this PE take
//   effect in issue order (which is what fence asks for).
// * Requests that return something (g, blocking get, fetching atomics, blocking puts
//   from device memory) carry RSHMEMI_PX_WAIT: the proxy stores the value and then t + 1
//   into the slot's `ticket` word; the issuing thread reads it and releases the slot.
//   Others the proxy releases itself once it has read the request.
// * quiet: wait until the proxy's `completed` count (pinned host memory, written after
//   the transport's own quiet and after every copy-engine copy of earlier tickets) reaches
//   the tickets claimed so far. The count last seen is cached in device memory, so a quiet
//   with nothing outstanding costs no read across PCIe.
// * Engine-explicit requests (rshmem_device_engines.cuh) use the same ring: RSHMEMI_PX_REMOTE
//   marks a put/get/atomic the proxy carries out over the remote transport even when the
//   peer is mapped; RSHMEMI_PX_CE_PUT/GET are copy-engine copies between mapped device
//   addresses, issued on the proxy's stream and complete when its event fires
//   (`ce_done_upto`, control word 2); RSHMEMI_PX_BATCH points at several requests in
//   device memory (one ticket, one doorbell).
// * Every wait polls through rshmemi_waiter (RSHMEM_DEVICE_WAIT_TIMEOUT) and checks the
//   proxy's status word, so a dead or refusing proxy traps with a message instead of a hang.
//
// Included by rshmem_device.cuh after its addressing helpers; not meant on its own.
#ifndef RSHMEM_DEVICE_PROXY_CUH
#define RSHMEM_DEVICE_PROXY_CUH

#define RSHMEMI_PX_PUT 1u
#define RSHMEMI_PX_GET 2u
#define RSHMEMI_PX_AMO 3u
#define RSHMEMI_PX_CE_PUT 4u
#define RSHMEMI_PX_CE_GET 5u
#define RSHMEMI_PX_BATCH 6u
#define RSHMEMI_PX_CE_PUT2D 7u  // len: row bytes; operand: rows; compare: dst pitch << 32 | src pitch
#define RSHMEMI_PX_CE_GET2D 8u
#define RSHMEMI_PX_RELAY_PUT 9u  // pe: the final PE; operand: the relay PE
#define RSHMEMI_PX_RELAY_GET 10u
#define RSHMEMI_PX_WAIT 1u
#define RSHMEMI_PX_REMOTE 2u
#define RSHMEMI_PX_INLINE 64u

// Per-PE reach flags (`proxy_peers[pe]`, written by the host): through the proxy (no
// mapping), reachable by the remote transport, reachable by the copy engine (mapped).
#define RSHMEMI_REACH_PROXY 1u
#define RSHMEMI_REACH_REMOTE 2u
#define RSHMEMI_REACH_CE 4u

// Words of the proxy's device area (`proxy_head` points at word 0; device memory).
#define RSHMEMI_PXW_HEAD 0          // next ticket
#define RSHMEMI_PXW_COMPLETED_SEEN 1 // largest `completed` a device thread has read
#define RSHMEMI_PXW_LAST_EXPLICIT 2  // 1 + last ticket of a CE request or a remote request to a mapped peer
#define RSHMEMI_PXW_LAST_CE 3        // 1 + last ticket of a CE request
#define RSHMEMI_PXW_CE_SEEN 4        // largest `ce_done_upto` a device thread has read
// After the reach flags (256 + n_pes rounded up to 256 bytes): u64[n_pes], 1 + the last
// ticket of a remote request to each PE.

// Control words (pinned host memory, written by the proxy).
#define RSHMEMI_PXC_COMPLETED 0
#define RSHMEMI_PXC_STATUS 1
#define RSHMEMI_PXC_CE_DONE_UPTO 2

// Atomic operation codes (as `AmoOp` on the host).

// One request: 128 bytes. Must match `gpu::proxy::Slot`.
struct rshmemi_proxy_slot {
    rshmem_u64 ready;    // ticket + 1, stored last
    unsigned kind;       // RSHMEMI_PX_*
    int pe;              // target PE
    rshmem_u64 offset;   // byte offset from the symmetric heap base
    rshmem_u64 len;      // bytes
    rshmem_u64 local;    // device address: put source / get destination (0: inline)
    rshmem_u64 operand;
    rshmem_u64 compare;
    unsigned amo;        // RSHMEMI_AMO_*
    unsigned flags;      // RSHMEMI_PX_WAIT
    rshmem_u64 data[8];  // inline payload (puts of up to 64 bytes)
};

// A slot's completion words: 32 bytes. Must match `gpu::proxy::Done`.
struct rshmemi_proxy_done {
    rshmem_u64 ticket;    // ticket + 1 once a waited-for request is complete
    rshmem_u64 value;     // its result (g, atomics)
    rshmem_u64 released;  // round in which the slot may next be claimed
    rshmem_u64 pad;
};

// Reach flags of `pe` (0 when this PE has no proxy).
// The flags are written once, before the proxy starts, so they are read through the
// read-only data cache.
__device__ __forceinline__ unsigned rshmemi_reach(int pe) {
    return rshmem_state.proxy_ring != 0 ? __ldg((const unsigned char*)rshmem_state.proxy_peers + pe) : 0u;
}

// Whether operations on `pe` go through the proxy. When every PE is mapped (`proxied` 0,
// from the constant bank) the answer costs no memory load: a dependent load of the flags
// before every g / p would add to the latency of each.
__device__ __forceinline__ bool rshmemi_proxied(int pe) {
    return rshmem_state.proxied != 0 && (rshmemi_reach(pe) & RSHMEMI_REACH_PROXY) != 0;
}

// Word `i` of the proxy's device area.
__device__ __forceinline__ rshmem_u64* rshmemi_pxw(int i) { return (rshmem_u64*)rshmem_state.proxy_head + i; }

__device__ __forceinline__ void rshmemi_proxy_poll(rshmemi_waiter& w, const char* call, const volatile void* addr) {
    if ((w.polls & 255u) == 0 && ((const volatile rshmem_u64*)rshmem_state.proxy_control)[RSHMEMI_PXC_STATUS] != 1)
        rshmemi_fail(call, "the host proxy thread of this PE is gone or refused a request (see its stderr)", rshmem_state.my_pe, (rshmem_u64)addr, 0);
    w.tick(call, (const void*)addr);
}

// The out-of-line part of a proxy request. Under nvcc -rdc a kernel that can reach the proxy
// path takes the register count of these functions (after the device link), and a kernel of
// 1024-thread blocks has 64 per thread. So the two waits and the payload copy are functions of
// their own and the copy loops stay rolled (nvlink -v on NVSHMEM's put-block example: 66
// registers before, 52 after; at 66 its 1024-thread launch fails with "too many resources
// requested for launch").

// Waits until the proxy word `*p` equals `want` (the proxy's status and the wait timeout
// checked on the way).
static __device__ __noinline__ void rshmemi_proxy_await(const char* call, const volatile rshmem_u64* p, rshmem_u64 want) {
    rshmemi_waiter w;
    while (*p != want) rshmemi_proxy_poll(w, call, p);
}

// Whole words of an inline payload of `len` bytes (at most 64) into slot `s`, built one byte
// at a time: the source need not be aligned.
static __device__ __noinline__ void rshmemi_proxy_inline(volatile rshmemi_proxy_slot* s, const void* inl, rshmem_u64 len) {
    const unsigned char* src = (const unsigned char*)inl;
#pragma unroll 1
    for (rshmem_u64 i = 0; i < (len + 7) / 8; i++) {
        rshmem_u64 word = 0;
#pragma unroll 1
        for (rshmem_u64 j = 0; j < 8 && i * 8 + j < len; j++) word |= (rshmem_u64)src[i * 8 + j] << (8 * j);
        s->data[i] = word;
    }
}

// Issues one request with `flags` (RSHMEMI_PX_WAIT, RSHMEMI_PX_REMOTE); returns the result
// when it waits, else 0. `sym` is a symmetric address (its heap offset goes in the slot),
// except for RSHMEMI_PX_BATCH, whose `sym` is unused. The ticket goes to `*ticket_out`.
static __device__ __noinline__ rshmem_u64 rshmemi_proxy_post(const char* call, unsigned kind, int pe, const void* sym, rshmem_u64 len,
                                                            const void* local, const void* inl, unsigned amo, rshmem_u64 operand,
                                                            rshmem_u64 compare, unsigned flags, rshmem_u64* ticket_out) {
    if (rshmem_state.proxy_ring == 0) rshmemi_fail(call, "this PE has no host proxy (not a GPU PE of rshmem's runtime?)", pe, 0, 0);
    rshmem_u64 ticket = atomicAdd(rshmemi_pxw(RSHMEMI_PXW_HEAD), 1ull);
    if (ticket_out) *ticket_out = ticket;
    rshmem_u64 slots = rshmem_state.proxy_slots;
    rshmem_u64 round = ticket / slots;
    volatile rshmemi_proxy_slot* s = (volatile rshmemi_proxy_slot*)rshmem_state.proxy_ring + (ticket & (slots - 1));
    volatile rshmemi_proxy_done* d = (volatile rshmemi_proxy_done*)rshmem_state.proxy_done + (ticket & (slots - 1));
    rshmemi_proxy_await(call, &d->released, round);
    s->kind = kind;
    s->pe = pe;
    s->offset = kind == RSHMEMI_PX_BATCH ? 0 : (rshmem_u64)sym - rshmem_state.heap_base;
    s->len = len;
    s->local = (rshmem_u64)local;
    s->operand = operand;
    s->compare = compare;
    s->amo = amo;
    s->flags = flags;
    if (inl) rshmemi_proxy_inline(s, inl, len);
    __threadfence_system();
    s->ready = ticket + 1;
    __threadfence_system();
    if (!(flags & RSHMEMI_PX_WAIT)) return 0;
    rshmemi_proxy_await(call, &d->ticket, ticket + 1);
    rshmem_u64 v = d->value;
    __threadfence_system();
    d->released = round + 1;
    return v;
}

// Issues one implicit-path request; returns the result when `wait`, else 0.
__device__ __forceinline__ rshmem_u64 rshmemi_proxy_issue(const char* call, unsigned kind, int pe, const void* sym, rshmem_u64 len,
                                                         const void* local, const void* inl, unsigned amo, rshmem_u64 operand,
                                                         rshmem_u64 compare, bool wait) {
    return rshmemi_proxy_post(call, kind, pe, sym, len, local, inl, amo, operand, compare, wait ? RSHMEMI_PX_WAIT : 0u, 0);
}

// Waits until the proxy's control word `word` reaches `target`, with the value last seen
// cached in device word `seen` (so a wait that is already satisfied stays on the GPU).
// Nothing to wait for when `target` is 0 (no such request was ever issued).
__device__ __forceinline__ void rshmemi_proxy_wait_word(const char* call, int word, int seen, rshmem_u64 target) {
    if (target == 0) return;
    if (*(volatile rshmem_u64*)rshmemi_pxw(seen) >= target) {
        __threadfence_system();
        return;
    }
    const volatile rshmem_u64* w = (const volatile rshmem_u64*)rshmem_state.proxy_control + word;
    rshmemi_waiter wt;
    rshmem_u64 v;
    while ((v = *w) < target) rshmemi_proxy_poll(wt, call, w);
    atomicMax(rshmemi_pxw(seen), v);
    __threadfence_system();
}

// Put of `n` bytes: inline when small (the source is free again at once), else from
// device memory (`src` must be global memory; a blocking put waits until the proxy has
// copied it out).
__device__ __forceinline__ void rshmemi_proxy_put(const char* call, void* dst, const void* src, rshmem_size_t n, int pe, bool blocking) {
    if (n == 0) return;
    if (n <= RSHMEMI_PX_INLINE) rshmemi_proxy_issue(call, RSHMEMI_PX_PUT, pe, dst, n, 0, src, 0, 0, 0, false);
    else rshmemi_proxy_issue(call, RSHMEMI_PX_PUT, pe, dst, n, src, 0, 0, 0, 0, blocking);
}

// Get of `n` bytes into device memory `dst` (a blocking get waits for the data).
__device__ __forceinline__ void rshmemi_proxy_get(const char* call, void* dst, const void* src, rshmem_size_t n, int pe, bool blocking) {
    if (n == 0) return;
    rshmemi_proxy_issue(call, RSHMEMI_PX_GET, pe, src, n, dst, 0, 0, 0, 0, blocking);
}

// A word of up to 8 bytes from `pe` (the value comes back in the completion word).
__device__ __forceinline__ rshmem_u64 rshmemi_proxy_g(const char* call, const void* src, rshmem_size_t n, int pe) {
    return rshmemi_proxy_issue(call, RSHMEMI_PX_GET, pe, src, n, 0, 0, 0, 0, 0, true);
}

// An atomic of width `n` (4 or 8); returns the old value when `fetch`.
__device__ __forceinline__ rshmem_u64 rshmemi_proxy_amo(const char* call, const void* a, rshmem_size_t n, int pe, unsigned op,
                                                       rshmem_u64 operand, rshmem_u64 compare, bool fetch) {
    return rshmemi_proxy_issue(call, RSHMEMI_PX_AMO, pe, a, n, 0, 0, op, operand, compare, fetch);
}

// Completes every proxy request issued so far by this PE, of every engine (implicit
// proxy puts, remote-engine and copy-engine requests, batches).
// rshmem_quiet's part for the proxy, in two halves around the memory fence so that the
// reads of the proxy's words overlap the fence: `rshmemi_proxy_issued` reads how many
// requests were issued (this thread's own tickets are among them: its atomicAdd on the
// counter came first in program order), `rshmemi_proxy_quiet_upto` waits for them.
__device__ __forceinline__ rshmem_u64 rshmemi_proxy_issued() {
    return rshmem_state.proxy_ring == 0 ? 0 : *(volatile rshmem_u64*)rshmemi_pxw(RSHMEMI_PXW_HEAD);
}
__device__ __forceinline__ void rshmemi_proxy_quiet_upto(const char* call, rshmem_u64 issued) {
    rshmemi_proxy_wait_word(call, RSHMEMI_PXC_COMPLETED, RSHMEMI_PXW_COMPLETED_SEEN, issued);
}

// What rshmem_fence adds for the proxy: requests to mapped peers through another engine
// (copy engine, remote transport) may otherwise be overtaken by later SM stores, so the
// fence completes them; implicit proxy requests need nothing (the proxy keeps issue order).
__device__ __forceinline__ void rshmemi_proxy_fence(const char* call) {
    if (rshmem_state.proxy_ring == 0) return;
    rshmem_u64 last = *(volatile rshmem_u64*)rshmemi_pxw(RSHMEMI_PXW_LAST_EXPLICIT);
    rshmemi_proxy_wait_word(call, RSHMEMI_PXC_COMPLETED, RSHMEMI_PXW_COMPLETED_SEEN, last);
}

// Adds `v` to the u64 at symmetric address `a` on `pe` (no result): the barrier's step.
__device__ __forceinline__ void rshmemi_add_u64(rshmem_u64* a, rshmem_u64 v, int pe, const char* call) {
    if (rshmemi_proxied(pe)) rshmemi_proxy_amo(call, a, 8, pe, RSHMEMI_AMO_ADD, v, 0, false);
    else if (rshmem_state.one_device) atomicAdd((rshmem_u64*)rshmemi_remote(a, pe), v);
    else atomicAdd_system((rshmem_u64*)rshmemi_remote(a, pe), v);
}

#endif  // RSHMEM_DEVICE_PROXY_CUH
