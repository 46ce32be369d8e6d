// rshmem device collectives, at every scope:
//   thread (no suffix, or _thread), _warp, _block, _grid (every thread of a cooperative
//   launch works on one collective), and the host's on-stream forms (which launch the grid
//   forms with a sequence number the host assigned at enqueue time).
//
// Protocols (chosen per call by rshmemi_pick, with the host's thresholds from the device
// state; RSHMEM_GPU_COLL_PROTO or an explicit `proto` argument forces one):
//   simple: data by direct loads/stores from/to the peers' user buffers, delimited by two
//           flag barriers (entry, exit) on the call's synchronization set;
//   LL:     push: each PE writes its contribution into every peer's scratch set as 16-byte
//           lines {8 bytes of data, 8-byte flag = sequence number} with one vector store;
//           receivers poll their lines until the flag matches. No barrier.
//   LL128:  as LL with 128-byte lines {120 bytes of data, 8-byte flag}, each line stored by
//           8 lanes of a warp with 16-byte stores in one instruction (relies on a warp's
//           128-byte store being seen whole, which holds for same-GPU and NVLink peers:
//           every mapped GPU peer here; never used at thread scope).
//   proxy:  teams with a member on another host (no pointer to it): puts between two team
//           barriers, direct copies to mapped members and host-proxy requests for the
//           others; reductions gather through the scratch slots a slot's size at a time.
//           Always chosen for such teams (every member agrees); calls on such a team must
//           not overlap (they share the team barrier).
//
// Synchronization sets: each of the first `coll_teams` team slots has 2 spaces (0: calls
// from kernels, numbered by a per-team device counter; 1: on-stream calls, numbered by
// the host at enqueue time) of `coll_sets` sets each. Call `seq` (1, 2, ...) of a space uses
// set `seq % coll_sets`; its flags carry `seq`, so back-to-back calls need no barrier and
// up to `coll_sets` on-stream calls on one team may run at once (every PE must enqueue them
// in the same order). Reuse of a set is guarded by credits: a PE marks `done[set] = seq`
// when it has finished reading the set; a writer of call `seq` into a peer's set first
// waits until that peer's `done[set] >= seq - coll_sets`, and a call waits for its own PE's
// `done[set] >= seq - coll_sets` before it starts. Teams in higher slots fall back to the
// simple protocol delimited by the team barrier (no concurrency on such teams).
//
// Reductions combine contributions in team-rank order (16-bit floats in f32, rounded
// once), so every PE gets bit-identical results whatever the scope and protocol.
// Every wait goes through rshmemi_waiter: a hang traps with a message after
// RSHMEM_DEVICE_WAIT_TIMEOUT instead of hanging.
#ifndef RSHMEM_DEVICE_COLL_CUH
#define RSHMEM_DEVICE_COLL_CUH
#include "rshmem_device.cuh"


// ---------------------------------------------------------------- 16-bit floats (no headers)
// rshmem_half and rshmem_bf16 are defined by rshmem_device.cuh (typed RMA); their f32 forms:
__device__ __forceinline__ float rshmemi_to_f32(rshmem_half h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits)); return f; }
__device__ __forceinline__ rshmem_half rshmemi_from_f32_h(float f) { rshmem_half h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(f)); return h; }
__device__ __forceinline__ float rshmemi_to_f32(rshmem_bf16 b) { return __uint_as_float(((unsigned)b.bits) << 16); }
__device__ __forceinline__ rshmem_bf16 rshmemi_from_f32_b(float f) {
    unsigned u = __float_as_uint(f);
    rshmem_bf16 b;
    if ((u & 0x7fffffffu) > 0x7f800000u) b.bits = (unsigned short)((u >> 16) | 0x40);  // NaN stays NaN
    else b.bits = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);            // round to nearest even
    return b;
}

// Loads that bypass L1 (peers' data may change between collectives of one kernel).
template <typename T> __device__ __forceinline__ T rshmemi_ld(const T* p) { return __ldcg(p); }
template <> __device__ __forceinline__ rshmem_half rshmemi_ld(const rshmem_half* p) { rshmem_half h; h.bits = __ldcg((const unsigned short*)p); return h; }
template <> __device__ __forceinline__ rshmem_bf16 rshmemi_ld(const rshmem_bf16* p) { rshmem_bf16 h; h.bits = __ldcg((const unsigned short*)p); return h; }

// Reduction operators (value combine), with 16-bit floats computed in f32.
#define RSHMEMI_OPS(X) X(sum) X(prod) X(min) X(max) X(and) X(or) X(xor)
template <typename T> struct rshmemi_arith { typedef T acc; __device__ static acc up(T v) { return v; } __device__ static T down(acc a) { return a; } };
template <> struct rshmemi_arith<rshmem_half> { typedef float acc; __device__ static float up(rshmem_half v) { return rshmemi_to_f32(v); } __device__ static rshmem_half down(float a) { return rshmemi_from_f32_h(a); } };
template <> struct rshmemi_arith<rshmem_bf16> { typedef float acc; __device__ static float up(rshmem_bf16 v) { return rshmemi_to_f32(v); } __device__ static rshmem_bf16 down(float a) { return rshmemi_from_f32_b(a); } };

struct rshmemi_op_sum { template <typename A> __device__ static A f(A a, A b) { return a + b; } };
struct rshmemi_op_prod { template <typename A> __device__ static A f(A a, A b) { return a * b; } };
struct rshmemi_op_min { template <typename A> __device__ static A f(A a, A b) { return b < a ? b : a; } };
struct rshmemi_op_max { template <typename A> __device__ static A f(A a, A b) { return b > a ? b : a; } };
struct rshmemi_op_and { template <typename A> __device__ static A f(A a, A b) { return a & b; } };
struct rshmemi_op_or { template <typename A> __device__ static A f(A a, A b) { return a | b; } };
struct rshmemi_op_xor { template <typename A> __device__ static A f(A a, A b) { return a ^ b; } };
// The operator chosen at run time (code as in the on-stream kernels: 0 sum .. 6 xor), so
// one kernel instantiation per type serves every operator.
template <typename A> __device__ __forceinline__ A rshmemi_bits(int op, A a, A b) { return op == 4 ? (a & b) : op == 5 ? (a | b) : (a ^ b); }
__device__ __forceinline__ float rshmemi_bits(int, float a, float) { return a; }
__device__ __forceinline__ double rshmemi_bits(int, double a, double) { return a; }
struct rshmemi_op_rt {
    int code;
    template <typename A> __device__ A f(A a, A b) const {
        switch (code) {
            case 0: return a + b;
            case 1: return a * b;
            case 2: return b < a ? b : a;
            case 3: return b > a ? b : a;
            default: return rshmemi_bits(code, a, b);
        }
    }
};

// ---------------------------------------------------------------- memory access helpers
__device__ __forceinline__ unsigned rshmemi_laneid() { unsigned l; asm("mov.u32 %0, %%laneid;" : "=r"(l)); return l; }
// Flag words: acquire / release at GPU scope when every mapped PE is on this GPU
// (one_device), else at system scope. Polls use relaxed loads (several in flight: an
// acquire load holds back every later load until it completes) and one acquire fence
// once every flag is in.
__device__ __forceinline__ rshmem_u64 rshmemi_ld_acquire(const rshmem_u64* p) {
    rshmem_u64 v;
    if (rshmem_state.one_device) asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    else asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ rshmem_u64 rshmemi_ld_relaxed(const rshmem_u64* p) {
    rshmem_u64 v;
    asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ void rshmemi_fence_acquire() {
    if (rshmem_state.one_device) asm volatile("fence.acq_rel.gpu;" ::: "memory");
    else asm volatile("fence.acq_rel.sys;" ::: "memory");
}
__device__ __forceinline__ void rshmemi_st_release(rshmem_u64* p, rshmem_u64 v) {
    if (rshmem_state.one_device) asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
    else asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
// One 16-byte store / load. PTX treats a vector access as its scalar accesses in no set
// order: each 8-byte half is seen whole, the line may not be (so an LL line carries its flag
// in both halves, see rshmemi_ll_pack).
__device__ __forceinline__ void rshmemi_st16(void* p, rshmem_u64 a, rshmem_u64 b) {
    asm volatile("st.volatile.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(a), "l"(b) : "memory");
}
__device__ __forceinline__ void rshmemi_ld16(const void* p, rshmem_u64& a, rshmem_u64& b) {
    asm volatile("ld.volatile.global.v2.u64 {%0, %1}, [%2];" : "=l"(a), "=l"(b) : "l"(p) : "memory");
}
// LL line of call `seq`: 8 payload bytes as two 4-byte halves, each beside a 32-bit flag
// in its own 8-byte word, so that a line whose two words both carry the flag is the whole
// payload even when the two words land apart. The flag is never 0 (a line never written).
__device__ __forceinline__ rshmem_u64 rshmemi_ll_flag(rshmem_u64 seq) { return seq % 0xffffffffull + 1; }
__device__ __forceinline__ void rshmemi_ll_pack(rshmem_u64 w, rshmem_u64 seq, rshmem_u64& a, rshmem_u64& b) {
    rshmem_u64 f = rshmemi_ll_flag(seq) << 32;
    a = (w & 0xffffffffull) | f;
    b = (w >> 32) | f;
}
// Whether line (a, b) is call `seq`'s; its payload goes to w.
__device__ __forceinline__ bool rshmemi_ll_take(rshmem_u64 a, rshmem_u64 b, rshmem_u64 seq, rshmem_u64& w) {
    rshmem_u64 f = rshmemi_ll_flag(seq);
    if ((a >> 32) != f || (b >> 32) != f) return false;
    w = (a & 0xffffffffull) | (b << 32);
    return true;
}
// Up to 8 bytes of a user buffer at p (avail bytes left; the rest zero), any alignment.
__device__ __forceinline__ rshmem_u64 rshmemi_ld8(const char* p, rshmem_i64 avail) {
    if (avail <= 0) return 0;
    if (avail >= 8 && (((rshmem_u64)p) & 7) == 0) return *(const rshmem_u64*)p;
    rshmem_u64 v = 0;
    for (int i = 0; i < 8 && i < avail; i++) v |= ((rshmem_u64)(unsigned char)p[i]) << (8 * i);
    return v;
}
__device__ __forceinline__ void rshmemi_st8(char* p, rshmem_u64 v, rshmem_i64 avail) {
    if (avail <= 0) return;
    if (avail >= 8 && (((rshmem_u64)p) & 7) == 0) { *(rshmem_u64*)p = v; return; }
    for (int i = 0; i < 8 && i < avail; i++) p[i] = (char)(v >> (8 * i));
}

// ---------------------------------------------------------------- scopes
__device__ __forceinline__ bool rshmemi_block_leader() { return rshmemi_block_rank() == 0; }
__device__ __forceinline__ bool rshmemi_grid_leader() { return rshmemi_block_leader() && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0; }
__device__ __forceinline__ rshmem_u64 rshmemi_grid_rank() {
    return ((rshmem_u64)blockIdx.x + (rshmem_u64)gridDim.x * (blockIdx.y + (rshmem_u64)gridDim.y * blockIdx.z)) * rshmemi_block_size() + rshmemi_block_rank();
}
__device__ __forceinline__ rshmem_u64 rshmemi_grid_blocks() { return (rshmem_u64)gridDim.x * gridDim.y * gridDim.z; }
__device__ __forceinline__ rshmem_u64 rshmemi_grid_size() { return rshmemi_grid_blocks() * rshmemi_block_size(); }

// Sense-reversing barrier over the blocks of a cooperative launch; `bar` is two unsigned
// words {count, generation} in this PE's memory.
__device__ __forceinline__ void rshmemi_grid_sync_at(unsigned* bar) {
    __syncthreads();
    if (rshmemi_block_leader()) {
        unsigned* count = bar;
        volatile unsigned* gen = bar + 1;
        unsigned g = *gen;
        __threadfence();
        if (atomicAdd(count, 1u) == (unsigned)rshmemi_grid_blocks() - 1) {
            *count = 0;
            __threadfence();
            atomicAdd((unsigned*)gen, 1u);
        } else {
            rshmemi_waiter w;
            while (*gen == g) w.tick("rshmemx grid sync", (const void*)gen);
        }
        __threadfence();
    }
    __syncthreads();
}
// The per-PE grid barrier (one grid collective at a time per PE: device-scope grid calls).
__device__ __forceinline__ void rshmemi_grid_sync() { rshmemi_grid_sync_at((unsigned*)(rshmem_state.sys_base + rshmem_state.sys_size - 256 + 64)); }

#define RSHMEMI_SCOPE_THREAD 0
#define RSHMEMI_SCOPE_WARP 1
#define RSHMEMI_SCOPE_BLOCK 2
#define RSHMEMI_SCOPE_GRID 3

// The state of one collective call on this PE.
struct rshmemi_cs {
    rshmem_team_t team;
    int me, np, start, stride;
    int space;          // 0: device-numbered, 1: host-numbered
    int set;
    int scratch;        // 1: the team has synchronization sets
    rshmem_u64 seq;     // this call's number in its space (flags carry it)
    unsigned* bar;      // this call's grid barrier words
};
__device__ __forceinline__ int rshmemi_cs_pe(const rshmemi_cs& c, int r) { return c.start + r * c.stride; }
__device__ __forceinline__ rshmem_u64 rshmemi_cs_index(const rshmemi_cs& c) { return ((rshmem_u64)c.team * 2 + c.space) * rshmem_state.coll_sets + c.set; }
__device__ __forceinline__ rshmem_u64* rshmemi_cs_done(const rshmemi_cs& c) { return (rshmem_u64*)rshmem_state.coll_done + rshmemi_cs_index(c); }
__device__ __forceinline__ rshmem_u64* rshmemi_cs_arrive(const rshmemi_cs& c) { return (rshmem_u64*)rshmem_state.coll_arrive + rshmemi_cs_index(c) * rshmem_state.n_pes; }
// Scratch slot that team rank `src` writes into, in this PE's set.
__device__ __forceinline__ char* rshmemi_cs_slot(const rshmemi_cs& c, int src) {
    return (char*)rshmem_state.coll_data + (rshmemi_cs_index(c) * rshmem_state.n_pes + src) * rshmem_state.coll_slot_bytes;
}
// Per-set grid words: {count, generation, finished blocks}, 16 bytes each.
__device__ __forceinline__ unsigned* rshmemi_cs_gridwords(const rshmemi_cs& c) { return (unsigned*)rshmem_state.coll_gridbar + rshmemi_cs_index(c) * 4; }

template <int S> struct rshmemi_scope;
template <> struct rshmemi_scope<RSHMEMI_SCOPE_THREAD> {
    __device__ static rshmem_u64 lane() { return 0; }
    __device__ static rshmem_u64 lanes() { return 1; }
    __device__ static bool leader() { return true; }
    __device__ static void sync(const rshmemi_cs&) {}
};
template <> struct rshmemi_scope<RSHMEMI_SCOPE_WARP> {
    __device__ static rshmem_u64 lane() { return rshmemi_lane(); }
    __device__ static rshmem_u64 lanes() { return 32; }
    __device__ static bool leader() { return rshmemi_lane() == 0; }
    __device__ static void sync(const rshmemi_cs&) { __syncwarp(); }
};
template <> struct rshmemi_scope<RSHMEMI_SCOPE_BLOCK> {
    __device__ static rshmem_u64 lane() { return rshmemi_block_rank(); }
    __device__ static rshmem_u64 lanes() { return rshmemi_block_size(); }
    __device__ static bool leader() { return rshmemi_block_leader(); }
    __device__ static void sync(const rshmemi_cs&) { __syncthreads(); }
};
template <> struct rshmemi_scope<RSHMEMI_SCOPE_GRID> {
    __device__ static rshmem_u64 lane() { return rshmemi_grid_rank(); }
    __device__ static rshmem_u64 lanes() { return rshmemi_grid_size(); }
    __device__ static bool leader() { return rshmemi_grid_leader(); }
    __device__ static void sync(const rshmemi_cs& c) { rshmemi_grid_sync_at(c.bar); }
};

__device__ __forceinline__ int rshmemi_team_pe(rshmem_team_t t, int i) { const rshmem_device_team* d = rshmemi_team(t); return d->start + i * d->stride; }

// Team barrier at each scope (the fallback for teams without synchronization sets).
template <int S> __device__ __forceinline__ void rshmemi_team_barrier(rshmem_team_t t) {
    rshmemi_cs none;
    none.bar = (unsigned*)(rshmem_state.sys_base + rshmem_state.sys_size - 256 + 64);
    rshmemi_scope<S>::sync(none);
    if (rshmemi_scope<S>::leader()) rshmem_barrier(t);
    rshmemi_scope<S>::sync(none);
}
__device__ __forceinline__ void rshmemi_coll_sync_block(rshmem_team_t t) { rshmemi_team_barrier<RSHMEMI_SCOPE_BLOCK>(t); }
__device__ __forceinline__ void rshmemi_coll_sync_grid(rshmem_team_t t) { rshmemi_team_barrier<RSHMEMI_SCOPE_GRID>(t); }

// ---------------------------------------------------------------- call begin / end
// Begin: number the call (host-assigned `host_seq`, or the team's device counter when 0),
// pick its set, and wait until this PE has finished the set's previous call.
template <int S>
__device__ __forceinline__ rshmemi_cs rshmemi_begin(rshmem_team_t team, rshmem_u64 host_seq, const char* call) {
    const rshmem_device_team* d = rshmemi_team(team);
    rshmemi_cs c;
    c.team = team;
    c.start = d->start;
    c.stride = d->stride;
    c.np = d->size;
    c.me = rshmem_team_my_pe(team);
    if (c.me < 0) rshmemi_fail(call, "this PE is not a member of the team", team, 0, 0);
    c.scratch = team < rshmem_state.coll_teams && rshmem_state.coll_sets > 0;
    c.space = host_seq ? 1 : 0;
    c.seq = host_seq;
    c.set = 0;
    c.bar = (unsigned*)(rshmem_state.sys_base + rshmem_state.sys_size - 256 + 64);
    if (!c.scratch) return c;
    if (!host_seq) {
        // Everyone of the scope reads the counter after the previous call's end wrote it.
        if (S == RSHMEMI_SCOPE_GRID) rshmemi_grid_sync();
        else rshmemi_scope<S>::sync(c);
        c.seq = *(volatile rshmem_u64*)((rshmem_u64*)rshmem_state.coll_seq + team) + 1;
    }
    c.set = (int)(c.seq % (rshmem_u64)rshmem_state.coll_sets);
    c.bar = rshmemi_cs_gridwords(c);
    if (host_seq && c.seq > (rshmem_u64)rshmem_state.coll_sets) {
        // Concurrent on-stream calls: the set's previous call on this PE must be over.
        if (rshmemi_block_leader()) {
            rshmemi_waiter w;
            rshmem_u64 need = c.seq - rshmem_state.coll_sets;
            while (rshmemi_ld_acquire(rshmemi_cs_done(c)) < need) w.tick(call, rshmemi_cs_done(c));
        }
        __syncthreads();
    }
    return c;
}

// End: this PE has finished reading the set (credit for writers of the set's next call),
// and the device counter moves on.
template <int S>
__device__ __forceinline__ void rshmemi_end(const rshmemi_cs& c) {
    if (!c.scratch) return;
    if (S == RSHMEMI_SCOPE_GRID) {
        __syncthreads();
        if (rshmemi_block_leader()) {
            unsigned* fin = rshmemi_cs_gridwords(c) + 2;
            __threadfence();
            if (atomicAdd(fin, 1u) == (unsigned)rshmemi_grid_blocks() - 1) {
                *(volatile unsigned*)fin = 0;
                rshmemi_fence_peers();
                if (c.space == 0) *(volatile rshmem_u64*)((rshmem_u64*)rshmem_state.coll_seq + c.team) = c.seq;
                rshmemi_st_release(rshmemi_cs_done(c), c.seq);
            }
        }
        return;
    }
    rshmemi_scope<S>::sync(c);
    if (rshmemi_scope<S>::leader()) {
        rshmemi_fence_peers();
        if (c.space == 0) *(volatile rshmem_u64*)((rshmem_u64*)rshmem_state.coll_seq + c.team) = c.seq;
        rshmemi_st_release(rshmemi_cs_done(c), c.seq);
    }
    rshmemi_scope<S>::sync(c);
}

// Flag barrier of the simple protocol on the call's set: phase 0 (entry) or 1 (exit).
// Arrival words only grow (a set's calls are ordered on every PE), so a peer that runs
// ahead into the next phase still satisfies the wait.
template <int S>
__device__ __forceinline__ void rshmemi_set_barrier(const rshmemi_cs& c, int phase, const char* call) {
    if (!c.scratch) { rshmemi_team_barrier<S>(c.team); return; }
    rshmemi_scope<S>::sync(c);
    if (rshmemi_scope<S>::leader() && c.np > 1) {
        rshmemi_fence_peers();
        rshmem_u64 v = c.seq * 2 + phase;
        rshmem_u64* mine = rshmemi_cs_arrive(c);
        for (int k = 1; k < c.np; k++) {
            int r = (c.me + k) % c.np;
            rshmemi_st_release((rshmem_u64*)rshmemi_remote(mine + c.me, rshmemi_cs_pe(c, r)), v);
        }
        for (int k = 1; k < c.np; k++) {
            int r = (c.me + c.np - k) % c.np;
            rshmemi_waiter w;
            while (rshmemi_ld_relaxed(mine + r) < v) w.tick(call, mine + r);
        }
        rshmemi_fence_acquire();
    }
    rshmemi_scope<S>::sync(c);
}

// ---------------------------------------------------------------- protocol choice
// Payload bytes one slot carries under each protocol.
__device__ __forceinline__ rshmem_u64 rshmemi_ll_capacity() { return rshmem_state.coll_slot_bytes / 2; }
__device__ __forceinline__ rshmem_u64 rshmemi_ll128_capacity() { return rshmem_state.coll_slot_bytes / 128 * 120; }

// The protocol of a call moving `bytes` per pair of PEs (the thresholds mirror
// coll::gpu_select on the host). Every PE computes the same answer from the same inputs.
// Whether some member of the call's team is reached only through the proxy (another host).
__device__ __forceinline__ bool rshmemi_cs_remote(const rshmemi_cs& c) {
    for (int r = 0; r < c.np; r++)
        if (rshmemi_proxied(rshmemi_cs_pe(c, r))) return true;
    return false;
}

template <int S>
__device__ __forceinline__ int rshmemi_pick(const rshmemi_cs& c, rshmem_u64 bytes, int proto) {
    if (c.np <= 1) return RSHMEMX_PROTO_SIMPLE;
    if (rshmemi_cs_remote(c)) return RSHMEMX_PROTO_PROXY;
    if (!c.scratch) return RSHMEMX_PROTO_SIMPLE;
    if (proto == RSHMEMX_PROTO_AUTO) proto = rshmem_state.coll_proto;
    if (proto == RSHMEMX_PROTO_PROXY) return RSHMEMX_PROTO_PROXY;
    if (proto == RSHMEMX_PROTO_AUTO) {
        if (bytes <= rshmem_state.coll_ll_max) proto = RSHMEMX_PROTO_LL;
        else if (bytes <= rshmem_state.coll_ll128_max) proto = RSHMEMX_PROTO_LL128;
        else proto = RSHMEMX_PROTO_SIMPLE;
    }
    // LL128 needs whole groups of 8 lanes in whole warps.
    if (proto == RSHMEMX_PROTO_LL128 && (S == RSHMEMI_SCOPE_THREAD || (rshmemi_block_size() & 31) != 0)) proto = RSHMEMX_PROTO_LL;
    if (proto == RSHMEMX_PROTO_LL128 && bytes > rshmemi_ll128_capacity()) proto = RSHMEMX_PROTO_SIMPLE;
    if (proto == RSHMEMX_PROTO_LL && bytes > rshmemi_ll_capacity()) proto = RSHMEMX_PROTO_SIMPLE;
    return proto;
}

// ---------------------------------------------------------------- LL and LL128 lines
// A unit is one lane's share of a line: LL: 8 bytes per 16-byte line; LL128: 16 bytes
// (8 in the line's last lane, beside the flag) of a 128-byte line.
struct rshmemi_unit {
    rshmem_u64 off;  // payload offset
    int len;         // payload bytes this unit carries (before clipping to the message)
    rshmem_u64 line; // byte offset of the 16-byte piece in a slot
    int j;           // lane in the line's group (LL128)
};

// Calls f(unit) for every unit this lane owns.
template <int P, typename F>
__device__ __forceinline__ void rshmemi_for_units(rshmem_u64 bytes, rshmem_u64 lane, rshmem_u64 lanes, F f) {
    if (P == RSHMEMX_PROTO_LL) {
        rshmem_u64 lines = (bytes + 7) / 8;
        for (rshmem_u64 l = lane; l < lines; l += lanes) {
            rshmemi_unit u;
            u.off = l * 8; u.len = 8; u.line = l * 16; u.j = 0;
            f(u);
        }
    } else {
        rshmem_u64 lines = (bytes + 119) / 120;
        rshmem_u64 groups = lanes / 8;
        int j = (int)(lane & 7);
        for (rshmem_u64 l = lane / 8; l < lines; l += groups) {
            rshmemi_unit u;
            u.off = l * 120 + (rshmem_u64)j * 16; u.len = j < 7 ? 16 : 8; u.line = l * 128 + (rshmem_u64)j * 16; u.j = j;
            f(u);
        }
    }
}

// Sends unit u's payload (w0, w1) into team rank r's slot of this PE.
template <int P>
__device__ __forceinline__ void rshmemi_send(const rshmemi_cs& c, int r, const rshmemi_unit& u, rshmem_u64 w0, rshmem_u64 w1) {
    char* slot = (char*)rshmemi_remote(rshmemi_cs_slot(c, c.me), rshmemi_cs_pe(c, r));
    if (P == RSHMEMX_PROTO_LL) {
        rshmem_u64 a, b;
        rshmemi_ll_pack(w0, c.seq, a, b);
        rshmemi_st16(slot + u.line, a, b);
    } else {
        // The line's 8 lanes store together (one 128-byte request).
        rshmem_u64 b = u.j == 7 ? c.seq : w1;
        __syncwarp(0xffu << (rshmemi_laneid() & 24u));
        rshmemi_st16(slot + u.line, w0, b);
    }
}

// Receives unit u from team rank r (polls this PE's slot until the flag carries the seq).
// LL128: every lane of the line's group calls it together.
template <int P>
__device__ __forceinline__ void rshmemi_recv(const rshmemi_cs& c, int r, const rshmemi_unit& u, rshmem_u64& w0, rshmem_u64& w1, const char* call) {
    const char* p = rshmemi_cs_slot(c, r) + u.line;
    rshmemi_waiter w;
    if (P == RSHMEMX_PROTO_LL) {
        for (;;) {
            rshmem_u64 a, b;
            rshmemi_ld16(p, a, b);
            if (rshmemi_ll_take(a, b, c.seq, w0)) break;
            w.tick(call, p);
        }
        w1 = 0;
    } else {
        unsigned group = 0xffu << (rshmemi_laneid() & 24u);
        for (;;) {
            // The line's 8 lanes load together, so the flag vouches for all of them.
            __syncwarp(group);
            rshmemi_ld16(p, w0, w1);
            int ok = __shfl_sync(group, (int)(w1 == c.seq), 7, 8);
            if (ok) break;
            w.tick(call, p);
        }
    }
}

// Writers of call seq wait for every peer's credit on the set (done >= seq - sets). Every
// thread of the scope calls it. Lane k of each warp / block waits for peer me + 1 + k, so
// the peers' words are read at once rather than one latency after another; thread scope
// reads them in turn (relaxed loads, one acquire fence at the end).
template <int S>
__device__ __forceinline__ void rshmemi_credits(const rshmemi_cs& c, const char* call) {
    if (c.seq <= (rshmem_u64)rshmem_state.coll_sets) return;
    rshmem_u64 need = c.seq - rshmem_state.coll_sets;
    unsigned lane = S == RSHMEMI_SCOPE_THREAD ? 0 : S == RSHMEMI_SCOPE_WARP ? rshmemi_lane() : rshmemi_block_rank();
    unsigned lanes = S == RSHMEMI_SCOPE_THREAD ? 1 : S == RSHMEMI_SCOPE_WARP ? 32 : rshmemi_block_size();
    for (int k = 1 + (int)lane; k < c.np; k += (int)lanes) {
        int r = (c.me + k) % c.np;
        const rshmem_u64* d = (const rshmem_u64*)rshmemi_remote(rshmemi_cs_done(c), rshmemi_cs_pe(c, r));
        rshmemi_waiter w;
        while (rshmemi_ld_relaxed(d) < need) w.tick(call, d);
    }
    rshmemi_fence_acquire();
    if (S == RSHMEMI_SCOPE_WARP) __syncwarp();
    else if (S != RSHMEMI_SCOPE_THREAD) __syncthreads();
}

// Unit payload of a user buffer (clipped to n bytes).
__device__ __forceinline__ void rshmemi_unit_load(const char* base, rshmem_u64 n, const rshmemi_unit& u, rshmem_u64& w0, rshmem_u64& w1) {
    rshmem_i64 avail = (rshmem_i64)n - (rshmem_i64)u.off;
    w0 = rshmemi_ld8(base + u.off, avail);
    w1 = u.len > 8 ? rshmemi_ld8(base + u.off + 8, avail - 8) : 0;
}
__device__ __forceinline__ void rshmemi_unit_store(char* base, rshmem_u64 n, const rshmemi_unit& u, rshmem_u64 w0, rshmem_u64 w1) {
    rshmem_i64 avail = (rshmem_i64)n - (rshmem_i64)u.off;
    rshmemi_st8(base + u.off, w0, avail);
    if (u.len > 8) rshmemi_st8(base + u.off + 8, w1, avail - 8);
}

// Element-wise combine over a 16-byte chunk held as two words.
template <typename T, typename OP>
struct rshmemi_chunk {
    typedef rshmemi_arith<T> AR;
    enum { E = 16 / sizeof(T) };
    typename AR::acc a[E];
    OP op;
    __device__ rshmemi_chunk(const OP& o) : op(o) {}
    __device__ void first(rshmem_u64 w0, rshmem_u64 w1) {
        rshmem_u64 w[2] = {w0, w1};
        const T* v = (const T*)w;
        for (int e = 0; e < E; e++) a[e] = AR::up(v[e]);
    }
    __device__ void add(rshmem_u64 w0, rshmem_u64 w1) {
        rshmem_u64 w[2] = {w0, w1};
        const T* v = (const T*)w;
        for (int e = 0; e < E; e++) a[e] = op.f(a[e], AR::up(v[e]));
    }
    __device__ void out(rshmem_u64& w0, rshmem_u64& w1) {
        rshmem_u64 w[2];
        T* v = (T*)w;
        for (int e = 0; e < E; e++) v[e] = AR::down(a[e]);
        w0 = w[0];
        w1 = w[1];
    }
};

// ---------------------------------------------------------------- the algorithms
// LL / LL128 reduction: push my contribution into every peer's slot, then reduce what
// arrived (my own part straight from src), in team-rank order.
template <int P, int S, typename T, typename OP>
__device__ __forceinline__ void rshmemi_reduce_lines(const rshmemi_cs& c, T* dest, const T* src, rshmem_u64 bytes, int kind, const OP& op, const char* call) {
    typedef rshmemi_scope<S> SC;
    const char* s = (const char*)src;
    rshmemi_credits<S>(c, call);
    rshmemi_for_units<P>(bytes, SC::lane(), SC::lanes(), [&](const rshmemi_unit& u) {
        for (int k = 1; k < c.np; k++) {
            int r = (c.me + k) % c.np;
            rshmem_u64 w0, w1;
            rshmemi_unit_load(s + (kind ? (rshmem_u64)r * bytes : 0), bytes, u, w0, w1);
            rshmemi_send<P>(c, r, u, w0, w1);
        }
    });
    rshmemi_for_units<P>(bytes, SC::lane(), SC::lanes(), [&](const rshmemi_unit& u) {
        rshmemi_chunk<T, OP> acc(op);
        // LL: the lines of up to 8 sources are loaded at once (one latency for all of
        // them, not one per source); only lines not yet in are then polled one by one.
        constexpr int B = P == RSHMEMX_PROTO_LL ? 8 : 1;
        for (int r0 = 0; r0 < c.np; r0 += B) {
            rshmem_u64 d[B], f[B];
#pragma unroll
            for (int b = 0; b < B; b++) {
                d[b] = 0;
                f[b] = 0;
                if (P == RSHMEMX_PROTO_LL && r0 + b < c.np && r0 + b != c.me) rshmemi_ld16(rshmemi_cs_slot(c, r0 + b) + u.line, d[b], f[b]);
            }
#pragma unroll
            for (int b = 0; b < B; b++) {
                int r = r0 + b;
                if (r >= c.np) break;
                rshmem_u64 w0, w1;
                if (r == c.me) rshmemi_unit_load(s + (kind ? (rshmem_u64)r * bytes : 0), bytes, u, w0, w1);
                else if (P == RSHMEMX_PROTO_LL && rshmemi_ll_take(d[b], f[b], c.seq, w0)) w1 = 0;
                else rshmemi_recv<P>(c, r, u, w0, w1, call);
                if (r == 0) acc.first(w0, w1);
                else acc.add(w0, w1);
            }
        }
        rshmem_u64 o0, o1;
        acc.out(o0, o1);
        rshmemi_unit_store((char*)dest, bytes, u, o0, o1);
    });
}

// LL / LL128 data movement (kind as in rshmemi_move): senders push into every peer's slot
// (their own part goes straight from src to dest), receivers copy what arrived.
template <int P, int S>
__device__ __forceinline__ void rshmemi_move_lines(const rshmemi_cs& c, char* d, const char* s, rshmem_u64 n, int kind, int root, const char* call) {
    typedef rshmemi_scope<S> SC;
    bool sender = kind != 0 || c.me == root;
    if (sender) {
        rshmemi_credits<S>(c, call);
        rshmemi_for_units<P>(n, SC::lane(), SC::lanes(), [&](const rshmemi_unit& u) {
            for (int k = 1; k < c.np; k++) {
                int r = (c.me + k) % c.np;
                rshmem_u64 w0, w1;
                rshmemi_unit_load(kind == 2 ? s + (rshmem_u64)r * n : s, n, u, w0, w1);
                rshmemi_send<P>(c, r, u, w0, w1);
            }
            if (kind != 0 || d != s) {
                rshmem_u64 w0, w1;
                rshmemi_unit_load(kind == 2 ? s + (rshmem_u64)c.me * n : s, n, u, w0, w1);
                rshmemi_unit_store(kind == 0 ? d : d + (rshmem_u64)c.me * n, n, u, w0, w1);
            }
        });
    }
    if (kind == 0 && c.me == root) return;
    rshmemi_for_units<P>(n, SC::lane(), SC::lanes(), [&](const rshmemi_unit& u) {
        for (int k = 1; k < c.np; k++) {
            int r = (c.me + c.np - k) % c.np;
            if (kind == 0 && r != root) continue;
            rshmem_u64 w0, w1;
            rshmemi_recv<P>(c, r, u, w0, w1, call);
            rshmemi_unit_store(kind == 0 ? d : d + (rshmem_u64)r * n, n, u, w0, w1);
        }
    });
}

// ---------------------------------------------------------------- proxy protocol
// For teams with members on other hosts: every contribution is a put (a copy by the
// scope's lanes to a mapped member or this PE, a request by its leader to the host proxy
// for the others) between two team barriers; the barrier's quiet waits for the proxy's
// puts to complete, so after it every block is in place.

// `n` bytes from this PE's `src` to `dst` (a symmetric address) on team rank `r`.
template <int S>
__device__ __forceinline__ void rshmemi_proxy_send(const rshmemi_cs& c, void* dst, const void* src, rshmem_u64 n, int r, const char* call) {
    typedef rshmemi_scope<S> SC;
    int pe = rshmemi_cs_pe(c, r);
    if (n == 0) return;
    if (rshmemi_proxied(pe)) {
        if (SC::leader()) rshmemi_proxy_put(call, dst, src, n, pe, false);
    } else {
        rshmemi_copy(rshmemi_remote(dst, pe), src, n, SC::lane(), SC::lanes());
    }
}

// The barrier between the puts and the reads: each lane's stores first (direct copies),
// then the team barrier (the leader quiets the proxy and meets every member).
template <int S>
__device__ __forceinline__ void rshmemi_proxy_barrier(const rshmemi_cs& c) {
    __threadfence_system();
    rshmemi_team_barrier<S>(c.team);
}

template <int S>
__device__ __forceinline__ void rshmemi_move_proxy(const rshmemi_cs& c, char* d, const char* s, rshmem_u64 n, int kind, int root, const char* call) {
    typedef rshmemi_scope<S> SC;
    rshmemi_team_barrier<S>(c.team);  // every member is in the call: its dest may change
    if (kind == 0) {
        if (c.me == root) {
            for (int k = 0; k < c.np; k++) {
                int r = (c.me + k) % c.np;
                if (r != c.me) rshmemi_proxy_send<S>(c, d, s, n, r, call);
                else if (d != s) rshmemi_copy(d, s, n, SC::lane(), SC::lanes());
            }
        }
    } else {
        for (int k = 0; k < c.np; k++) {
            int r = (c.me + k) % c.np;
            rshmemi_proxy_send<S>(c, d + (rshmem_u64)c.me * n, kind == 2 ? s + (rshmem_u64)r * n : s, n, r, call);
        }
    }
    rshmemi_proxy_barrier<S>(c);
}

// Reductions gather one chunk at a time: each PE puts its block for rank r into r's scratch
// slot of this PE (the slot `rshmemi_cs_slot(c, me)`, the same offset on every PE), then
// every PE combines the slots of ranks 0..np-1 in rank order.
template <int S, typename T, typename OP>
__device__ __forceinline__ void rshmemi_reduce_proxy(const rshmemi_cs& c, T* dest, const T* src, rshmem_size_t n, int kind, const OP& op, const char* call) {
    typedef rshmemi_scope<S> SC;
    typedef rshmemi_arith<T> AR;
    if (!c.scratch)
        rshmemi_fail(call, "a reduction on a team with members on other hosts needs the team's synchronization sets (team slot below 4)", c.team, 0, 0);
    rshmem_size_t chunk = rshmem_state.coll_slot_bytes / sizeof(T);
    for (rshmem_size_t o = 0; o < n; o += chunk) {
        rshmem_size_t len = n - o < chunk ? n - o : chunk;
        rshmemi_team_barrier<S>(c.team);  // every member has finished reading the slots
        for (int k = 0; k < c.np; k++) {
            int r = (c.me + k) % c.np;
            const T* part = src + (kind ? (rshmem_size_t)r * n : 0) + o;
            rshmemi_proxy_send<S>(c, rshmemi_cs_slot(c, c.me), part, (rshmem_u64)len * sizeof(T), r, call);
        }
        rshmemi_proxy_barrier<S>(c);
        for (rshmem_size_t i = SC::lane(); i < len; i += SC::lanes()) {
            typename AR::acc a = AR::up(rshmemi_ld((const T*)rshmemi_cs_slot(c, 0) + i));
            for (int r = 1; r < c.np; r++) a = op.f(a, AR::up(rshmemi_ld((const T*)rshmemi_cs_slot(c, r) + i)));
            dest[o + i] = AR::down(a);
        }
    }
    // The next call's first barrier keeps the slots until every member has read them.
    SC::sync(c);
}

// ---------------------------------------------------------------- simple all-reduce, split
// Whether a simple-protocol all-reduce runs as a reduce-scatter + all-gather (mirrors
// coll::gpu_select::simple_reduce_splits): on teams whose members all use this PE's GPU
// (one_device: every PE this one maps is on its GPU, so every member agrees) and a dest in
// the symmetric heap (peers store into it; every PE passes its copy of the same object).
// Otherwise every PE reads all n inputs and writes its own dest (n * n * S bytes read).
__device__ __forceinline__ bool rshmemi_reduce_splits(const rshmemi_cs& c, const void* dest, rshmem_u64 bytes) {
    if (c.np <= 1 || !rshmem_state.one_device) return false;
    rshmem_u64 d = (rshmem_u64)dest;
    return d >= rshmem_state.heap_base && d + bytes <= rshmem_state.heap_base + rshmem_state.heap_size;
}

// U 16-byte vectors at j, j + stride, ..: loads all U from each member's src (U loads in
// flight per thread), combines in rank order, then stores the U results into every
// member's dest (starting with the next rank, so the PEs spread their stores).
template <int U, typename T, typename OP>
__device__ __forceinline__ void rshmemi_split_vectors(const rshmemi_cs& c, T* dest, const T* src, rshmem_size_t j, rshmem_size_t stride, const OP& op) {
    typedef rshmemi_arith<T> AR;
    enum { V = 16 / sizeof(T) };
    union vec { int4 v; T e[V]; };
    typename AR::acc a[U][V];
    for (int r = 0; r < c.np; r++) {
        const int4* in = (const int4*)rshmemi_remote(src, rshmemi_cs_pe(c, r));
        vec x[U];
#pragma unroll
        for (int u = 0; u < U; u++) x[u].v = __ldcg(in + j + u * stride);
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int k = 0; k < V; k++) a[u][k] = r == 0 ? AR::up(x[u].e[k]) : op.f(a[u][k], AR::up(x[u].e[k]));
    }
    vec o[U];
#pragma unroll
    for (int u = 0; u < U; u++)
#pragma unroll
        for (int k = 0; k < V; k++) o[u].e[k] = AR::down(a[u][k]);
    for (int k = 0; k < c.np; k++) {
        int4* out = (int4*)rshmemi_remote(dest, rshmemi_cs_pe(c, (c.me + 1 + k) % c.np));
#pragma unroll
        for (int u = 0; u < U; u++) out[j + u * stride] = o[u].v;
    }
}

// Reduce-scatter + all-gather in one pass, between the simple protocol's two barriers:
// team rank q owns the q-th 1/np of the elements (whole 16-byte vectors when src and dest
// allow them; the elements past the last whole vector split the same way), reads that part
// of every member's src once and writes the result into every member's dest once. Total
// traffic: np * S bytes read and np * S written (the read-all form reads np * np * S).
// Each element still combines in rank order, so results are bit-identical to it. Safe in
// place (dest == src): an owner reads all inputs of its part before it writes that part,
// and no other PE touches it.
template <int S, typename T, typename OP>
__device__ __forceinline__ void rshmemi_reduce_split(const rshmemi_cs& c, T* dest, const T* src, rshmem_size_t n, const OP& op) {
    typedef rshmemi_scope<S> SC;
    typedef rshmemi_arith<T> AR;
    const rshmem_size_t lane = SC::lane(), lanes = SC::lanes();
    rshmem_size_t done = 0;
    constexpr int V = (sizeof(T) <= 8 && 16 % sizeof(T) == 0) ? (int)(16 / sizeof(T)) : 1;
    if (V > 1 && ((((rshmem_u64)src) | (rshmem_u64)dest) & 15) == 0) {
        rshmem_size_t nv = n / V;
        rshmem_size_t lo = nv * c.me / c.np, hi = nv * (c.me + 1) / c.np;
        // Four vectors per thread and step: 64 bytes of loads in flight per thread and member.
        rshmem_size_t j = lo + lane;
        for (; j + 3 * lanes < hi; j += 4 * lanes) rshmemi_split_vectors<4, T, OP>(c, dest, src, j, lanes, op);
        for (; j < hi; j += lanes) rshmemi_split_vectors<1, T, OP>(c, dest, src, j, lanes, op);
        done = nv * V;
    }
    rshmem_size_t rest = n - done;
    rshmem_size_t lo = done + rest * c.me / c.np, hi = done + rest * (c.me + 1) / c.np;
    for (rshmem_size_t i = lo + lane; i < hi; i += lanes) {
        typename AR::acc a = AR::up(rshmemi_ld((const T*)rshmemi_remote(src + i, rshmemi_cs_pe(c, 0))));
        for (int r = 1; r < c.np; r++) a = op.f(a, AR::up(rshmemi_ld((const T*)rshmemi_remote(src + i, rshmemi_cs_pe(c, r)))));
        T v = AR::down(a);
        for (int k = 0; k < c.np; k++) *(T*)rshmemi_remote(dest + i, rshmemi_cs_pe(c, (c.me + 1 + k) % c.np)) = v;
    }
    // Every lane's stores to the peers before the exit barrier (one GPU: GPU scope).
    __threadfence();
}

// kind 0: all-reduce (every PE contributes src[0..n)), 1: reduce-scatter (PE r receives the
// reduction of every PE's src[r*n..(r+1)*n)). n elements.
template <int S, typename T, typename OP>
__device__ __forceinline__ void rshmemi_reduce(rshmem_team_t team, T* dest, const T* src, rshmem_size_t n, int kind, int proto, rshmem_u64 host_seq, const OP& op) {
    const char* call = kind ? "rshmem reduce_scatter" : "rshmem reduce";
    typedef rshmemi_scope<S> SC;
    rshmemi_cs c = rshmemi_begin<S>(team, host_seq, call);
    rshmem_u64 bytes = (rshmem_u64)n * sizeof(T);
    int p = rshmemi_pick<S>(c, bytes, proto);
    if (p == RSHMEMX_PROTO_PROXY) {
        rshmemi_reduce_proxy<S, T, OP>(c, dest, src, n, kind, op, call);
    } else if (p == RSHMEMX_PROTO_SIMPLE) {
        typedef rshmemi_arith<T> AR;
        rshmemi_set_barrier<S>(c, 0, call);
        if (kind == 0 && rshmemi_reduce_splits(c, dest, bytes)) {
            rshmemi_reduce_split<S, T, OP>(c, dest, src, n, op);
            rshmemi_set_barrier<S>(c, 1, call);
            rshmemi_end<S>(c);
            return;
        }
        rshmem_size_t first = kind ? (rshmem_size_t)c.me * n : 0;
        // 16 bytes per load where the buffers allow it (every PE's copy has the same
        // alignment); each element still combines in rank order, so the result is the
        // scalar loop's, bit for bit.
        constexpr int V = (sizeof(T) <= 8 && 16 % sizeof(T) == 0) ? (int)(16 / sizeof(T)) : 1;
        rshmem_size_t done = 0;
        if (V > 1 && ((((rshmem_u64)(src + first)) | (rshmem_u64)dest) & 15) == 0) {
            union vec { int4 v; T e[V]; };
            rshmem_size_t nv = n / V;
            for (rshmem_size_t j = SC::lane(); j < nv; j += SC::lanes()) {
                vec x, y;
                x.v = __ldcg((const int4*)rshmemi_remote(src + first + j * V, rshmemi_cs_pe(c, 0)));
                typename AR::acc a[V];
#pragma unroll
                for (int k = 0; k < V; k++) a[k] = AR::up(x.e[k]);
                for (int r = 1; r < c.np; r++) {
                    y.v = __ldcg((const int4*)rshmemi_remote(src + first + j * V, rshmemi_cs_pe(c, r)));
#pragma unroll
                    for (int k = 0; k < V; k++) a[k] = op.f(a[k], AR::up(y.e[k]));
                }
#pragma unroll
                for (int k = 0; k < V; k++) x.e[k] = AR::down(a[k]);
                *(int4*)(dest + j * V) = x.v;
            }
            done = nv * V;
        }
        for (rshmem_size_t i = done + SC::lane(); i < n; i += SC::lanes()) {
            typename AR::acc a = AR::up(rshmemi_ld((const T*)rshmemi_remote(src + first + i, rshmemi_cs_pe(c, 0))));
            for (int r = 1; r < c.np; r++) a = op.f(a, AR::up(rshmemi_ld((const T*)rshmemi_remote(src + first + i, rshmemi_cs_pe(c, r)))));
            dest[i] = AR::down(a);
        }
        rshmemi_set_barrier<S>(c, 1, call);
    } else {
        if (p == RSHMEMX_PROTO_LL) rshmemi_reduce_lines<RSHMEMX_PROTO_LL, S, T, OP>(c, dest, src, bytes, kind, op, call);
        else rshmemi_reduce_lines<RSHMEMX_PROTO_LL128, S, T, OP>(c, dest, src, bytes, kind, op, call);
    }
    rshmemi_end<S>(c);
}

// kind 0: broadcast (root's src to every dest), 1: fcollect (every src into dest + rank*n),
// 2: alltoall (src block r to rank r's dest + me*n). n bytes per pair of PEs.
template <int S>
__device__ __forceinline__ void rshmemi_move(rshmem_team_t team, void* dest, const void* src, rshmem_size_t n, int kind, int root, int proto, rshmem_u64 host_seq) {
    const char* call = kind == 0 ? "rshmem broadcast" : kind == 1 ? "rshmem fcollect" : "rshmem alltoall";
    typedef rshmemi_scope<S> SC;
    rshmemi_cs c = rshmemi_begin<S>(team, host_seq, call);
    if (kind == 0 && (root < 0 || root >= c.np)) rshmemi_fail(call, "root out of range", root, (rshmem_u64)root, (rshmem_u64)c.np);
    int p = rshmemi_pick<S>(c, n, proto);
    char* d = (char*)dest;
    const char* s = (const char*)src;
    if (p == RSHMEMX_PROTO_PROXY) {
        rshmemi_move_proxy<S>(c, d, s, n, kind, root, call);
    } else if (p == RSHMEMX_PROTO_SIMPLE) {
        rshmemi_set_barrier<S>(c, 0, call);
        if (kind == 0) {
            if (c.me != root || dest != src) rshmemi_copy(dest, rshmemi_remote(src, rshmemi_cs_pe(c, root)), n, SC::lane(), SC::lanes());
        } else {
            for (int k = 0; k < c.np; k++) {
                int r = (c.me + k) % c.np;
                rshmemi_copy(rshmemi_remote(d + (rshmem_u64)c.me * n, rshmemi_cs_pe(c, r)), kind == 2 ? s + (rshmem_u64)r * n : s, n, SC::lane(), SC::lanes());
            }
            rshmemi_fence_peers();
        }
        rshmemi_set_barrier<S>(c, 1, call);
    } else {
        if (p == RSHMEMX_PROTO_LL) rshmemi_move_lines<RSHMEMX_PROTO_LL, S>(c, d, s, n, kind, root, call);
        else rshmemi_move_lines<RSHMEMX_PROTO_LL128, S>(c, d, s, n, kind, root, call);
    }
    rshmemi_end<S>(c);
}

// ---------------------------------------------------------------- public names at every scope
// Generic forms (T and the operator as template arguments; `proto` is RSHMEMX_PROTO_*):
//   rshmemx_reduce<T, OP>[_warp|_block|_grid](team, dest, src, nelems[, proto])
//   rshmemx_reduce_scatter<T, OP>[...](team, dest, src, nelems[, proto])
//   rshmem_broadcastmem[...](team, dest, src, bytes, root), rshmemx_broadcastmem_proto[...](..., proto)
//   rshmem_fcollectmem / rshmem_alltoallmem[...](team, dest, src, bytes), *_proto forms
// Thread scope has no suffix (or `_thread`). Every PE of the team calls with the same
// arguments at the same scope; a warp / block / grid form is called by every thread of it.
#define RSHMEMI_COLL_SCOPE(SCOPE, SK)                                                                                   \
    template <typename T, typename OP>                                                                                   \
    __device__ __forceinline__ void rshmemx_reduce##SCOPE(rshmem_team_t t, T* dest, const T* src, rshmem_size_t n, int proto = RSHMEMX_PROTO_AUTO) { \
        rshmemi_reduce<SK, T, OP>(t, dest, src, n, 0, proto, 0, OP());                                                         \
    }                                                                                                                    \
    template <typename T, typename OP>                                                                                   \
    __device__ __forceinline__ void rshmemx_reduce_scatter##SCOPE(rshmem_team_t t, T* dest, const T* src, rshmem_size_t n, int proto = RSHMEMX_PROTO_AUTO) { \
        rshmemi_reduce<SK, T, OP>(t, dest, src, n, 1, proto, 0, OP());                                                         \
    }                                                                                                                    \
    __device__ __forceinline__ void rshmemx_broadcastmem_proto##SCOPE(rshmem_team_t t, void* dest, const void* src, rshmem_size_t n, int root, int proto) { \
        rshmemi_move<SK>(t, dest, src, n, 0, root, proto, 0);                                                            \
    }                                                                                                                    \
    __device__ __forceinline__ void rshmemx_fcollectmem_proto##SCOPE(rshmem_team_t t, void* dest, const void* src, rshmem_size_t n, int proto) { \
        rshmemi_move<SK>(t, dest, src, n, 1, 0, proto, 0);                                                               \
    }                                                                                                                    \
    __device__ __forceinline__ void rshmemx_alltoallmem_proto##SCOPE(rshmem_team_t t, void* dest, const void* src, rshmem_size_t n, int proto) { \
        rshmemi_move<SK>(t, dest, src, n, 2, 0, proto, 0);                                                               \
    }                                                                                                                    \
    __device__ __forceinline__ void rshmem_broadcastmem##SCOPE(rshmem_team_t t, void* dest, const void* src, rshmem_size_t n, int root) { \
        rshmemi_move<SK>(t, dest, src, n, 0, root, RSHMEMX_PROTO_AUTO, 0);                                               \
    }                                                                                                                    \
    __device__ __forceinline__ void rshmem_fcollectmem##SCOPE(rshmem_team_t t, void* dest, const void* src, rshmem_size_t n) { \
        rshmemi_move<SK>(t, dest, src, n, 1, 0, RSHMEMX_PROTO_AUTO, 0);                                                  \
    }                                                                                                                    \
    __device__ __forceinline__ void rshmem_alltoallmem##SCOPE(rshmem_team_t t, void* dest, const void* src, rshmem_size_t n) { \
        rshmemi_move<SK>(t, dest, src, n, 2, 0, RSHMEMX_PROTO_AUTO, 0);                                                  \
    }

RSHMEMI_COLL_SCOPE(, RSHMEMI_SCOPE_THREAD)
RSHMEMI_COLL_SCOPE(_thread, RSHMEMI_SCOPE_THREAD)
RSHMEMI_COLL_SCOPE(_warp, RSHMEMI_SCOPE_WARP)
RSHMEMI_COLL_SCOPE(_block, RSHMEMI_SCOPE_BLOCK)
RSHMEMI_COLL_SCOPE(_grid, RSHMEMI_SCOPE_GRID)

// Typed names in the NVSHMEM style at every scope: rshmem_float_sum_reduce[_warp|_block](team,
// dest, src, n), rshmemx_float_sum_reduce_grid, and the same for reduce_scatter, over the
// reduction type tables (rshmem_device_typed.cuh); typed broadcast / fcollect / alltoall:
// rshmem_int_broadcast_block(team, dest, src, nelems, root).
#define RSHMEMI_WANT_TYPED_COLL
#include "rshmem_device_typed.cuh"

#define RSHMEMI_TYPED_MOVE_SCOPE(TNAME, T, PFX, SCOPE)                                                                              \
    __device__ __forceinline__ void PFX##_##TNAME##_broadcast##SCOPE(rshmem_team_t t, T* d, const T* s, rshmem_size_t n, int root) { \
        rshmem_broadcastmem##SCOPE(t, d, s, n * sizeof(T), root);                                                                   \
    }                                                                                                                                \
    __device__ __forceinline__ void PFX##_##TNAME##_fcollect##SCOPE(rshmem_team_t t, T* d, const T* s, rshmem_size_t n) {            \
        rshmem_fcollectmem##SCOPE(t, d, s, n * sizeof(T));                                                                          \
    }                                                                                                                                \
    __device__ __forceinline__ void PFX##_##TNAME##_alltoall##SCOPE(rshmem_team_t t, T* d, const T* s, rshmem_size_t n) {            \
        rshmem_alltoallmem##SCOPE(t, d, s, n * sizeof(T));                                                                          \
    }
#define RSHMEMI_TYPED_MOVE(TNAME, T)                                                                                      \
    RSHMEMI_TYPED_MOVE_SCOPE(TNAME, T, rshmem, ) RSHMEMI_TYPED_MOVE_SCOPE(TNAME, T, rshmem, _thread)                      \
    RSHMEMI_TYPED_MOVE_SCOPE(TNAME, T, rshmem, _warp) RSHMEMI_TYPED_MOVE_SCOPE(TNAME, T, rshmem, _block)                  \
    RSHMEMI_TYPED_MOVE_SCOPE(TNAME, T, rshmemx, _grid)
RSHMEM_RMA_TYPES(RSHMEMI_TYPED_MOVE)
RSHMEM_RMA_TYPES_ALT(RSHMEMI_TYPED_MOVE)
RSHMEMI_TYPED_MOVE(half, rshmem_half)
RSHMEMI_TYPED_MOVE(bfloat16, rshmem_bf16)

// ---------------------------------------------------------------- the host's on-stream forms
// dtype: 0 float, 1 double, 2 half, 3 bf16, 4 int, 5 long long, 6 uint, 7 ulonglong.
// op: 0 sum, 1 prod, 2 min, 3 max, 4 and, 5 or, 6 xor. kind: 0 reduce, 1 reduce_scatter.
// seq: the host's number for this call on the team (never 0).
template <typename T>
__device__ __forceinline__ void rshmemi_stream_reduce_t(int team, void* d, const void* s, rshmem_size_t n, int op, int kind, int proto, rshmem_u64 seq) {
    rshmemi_op_rt o;
    o.code = op;
    rshmemi_reduce<RSHMEMI_SCOPE_GRID, T, rshmemi_op_rt>(team, (T*)d, (const T*)s, n, kind, proto, seq, o);
}

#endif  // RSHMEM_DEVICE_COLL_CUH
