// rshmem device API: the part generated from the host's definitions (src/device_header.rs).
// Do not edit: `RSHMEM_BLESS=1 cargo test -p rshmem --test device_header` rewrites it.
#ifndef RSHMEM_DEVICE_TYPES_CUH
#define RSHMEM_DEVICE_TYPES_CUH

typedef unsigned long long rshmem_u64;
typedef long long rshmem_i64;
typedef unsigned long long rshmem_size_t;
typedef int rshmem_team_t;

#define RSHMEM_TEAM_WORLD 0
#define RSHMEM_TEAM_SHARED 1
#define RSHMEM_TEAM_INVALID (-1)

#define RSHMEM_CMP_EQ 0
#define RSHMEM_CMP_NE 1
#define RSHMEM_CMP_GT 2
#define RSHMEM_CMP_GE 3
#define RSHMEM_CMP_LT 4
#define RSHMEM_CMP_LE 5

#define RSHMEM_SIGNAL_SET 0
#define RSHMEM_SIGNAL_ADD 1

#define RSHMEMI_AMO_FETCH 0u
#define RSHMEMI_AMO_SET 1u
#define RSHMEMI_AMO_SWAP 2u
#define RSHMEMI_AMO_CSWAP 3u
#define RSHMEMI_AMO_ADD 4u
#define RSHMEMI_AMO_AND 5u
#define RSHMEMI_AMO_OR 6u
#define RSHMEMI_AMO_XOR 7u

#define RSHMEMX_PROTO_AUTO 0
#define RSHMEMX_PROTO_SIMPLE 1
#define RSHMEMX_PROTO_LL 2
#define RSHMEMX_PROTO_LL128 3
#define RSHMEMX_PROTO_PROXY 4

#define RSHMEM_MAX_ROUNDS 64

struct rshmem_device_team {
    int start; // First member (world PE).
    int stride; // Distance between members.
    int size; // Members.
    int valid; // 1 for a live team.
};

struct rshmem_device_state {
    int my_pe; // This PE.
    int n_pes; // PEs in the job.
    rshmem_u64 heap_base; // This PE's user heap (device address).
    rshmem_u64 heap_size; // Bytes of user heap currently mapped per PE.
    rshmem_u64 peers_base; // PE 0's heap as mapped here.
    rshmem_u64 stride; // Distance between consecutive PEs' heaps.
    rshmem_u64 sys_base; // This PE's device runtime area.
    rshmem_u64 sys_size; // Its size.
    rshmem_u64 teams; // `DeviceTeam[max_teams]` in the runtime area.
    int max_teams; // Team slots.
    int debug; // 1 when device calls check PE range and heap bounds.
    rshmem_u64 wait_timeout_ns; // Device waits trap after this many nanoseconds (0: never).
    rshmem_u64 epochs; // `u64[max_teams]` barrier epochs.
    rshmem_u64 counters; // `u64[max_teams * MAX_ROUNDS]` barrier counters.
    rshmem_u64 proxy_ring; // Host proxy request ring (`rshmemi_proxy_slot[proxy_slots]`, pinned host memory, as the device sees it); 0 when this PE has no proxy.
    rshmem_u64 proxy_done; // Per-slot completion words (`rshmemi_proxy_done[proxy_slots]`, pinned host memory).
    rshmem_u64 proxy_control; // `u64[4]` in pinned host memory: requests completed, proxy status (1 running, 2 gone).
    rshmem_u64 proxy_head; // `u64` in device memory: requests issued (tickets claimed).
    rshmem_u64 proxy_peers; // `u8[n_pes]` in device memory: 1 for the PEs reached through the proxy.
    rshmem_u64 proxy_slots; // Slots in the ring (a power of two).
    rshmem_u64 coll_seq; // `u64[coll_teams]` device-numbered collective calls completed per team.
    rshmem_u64 coll_done; // `u64[coll_teams][2][coll_sets]` last call finished per synchronization set.
    rshmem_u64 coll_arrive; // `u64[coll_teams][2][coll_sets][n_pes]` flag-barrier arrivals.
    rshmem_u64 coll_gridbar; // `u32[coll_teams][2][coll_sets][4]` per-set grid barrier words.
    rshmem_u64 coll_data; // Scratch slots `[coll_teams][2][coll_sets][n_pes]` of `coll_slot_bytes`.
    rshmem_u64 coll_slot_bytes; // Bytes per scratch slot.
    rshmem_u64 coll_ll_max; // Auto protocol: LL up to this many bytes per pair of PEs.
    rshmem_u64 coll_ll128_max; // Auto protocol: LL128 up to this many bytes per pair of PEs.
    int coll_teams; // Team slots with synchronization sets.
    int coll_sets; // Sets per team and numbering space.
    int coll_proto; // Forced protocol (0 auto, 1 simple, 2 LL, 3 LL128).
    int one_device; // 1 when every PE this one maps is on this PE's GPU (thread PEs, or processes sharing one GPU): fences, signals and barrier counters then need only GPU scope.
    int proxied; // PEs reached only through the host proxy (0: every PE is mapped, so the device API never reads the reach flags on its load/store path).
    int reserved; // Unused: keeps the struct free of padding (0).
};

// The type tables (src/types.rs): X(name, C type) or X(name, C type, atomic word type).
#define RSHMEM_RMA_TYPES(X) \
    X(float, float) X(double, double) X(char, char) X(schar, signed char) \
    X(short, short) X(int, int) X(long, long) X(longlong, long long) \
    X(uchar, unsigned char) X(ushort, unsigned short) X(uint, unsigned int) X(ulong, unsigned long) \
    X(ulonglong, unsigned long long) X(int8, signed char) X(int16, short) X(int32, int) \
    X(int64, long) X(uint8, unsigned char) X(uint16, unsigned short) X(uint32, unsigned int) \
    X(uint64, unsigned long) X(size, unsigned long) X(ptrdiff, long)
#define RSHMEM_RMA_TYPES_ALT(X) \
    X(int64, long long) X(uint64, unsigned long long) X(size, unsigned long long) X(ptrdiff, long long)
#define RSHMEM_SYNC_TYPES(X) \
    X(short, short) X(int, int) X(long, long) X(longlong, long long) \
    X(ushort, unsigned short) X(uint, unsigned int) X(ulong, unsigned long) X(ulonglong, unsigned long long) \
    X(int32, int) X(int64, long) X(uint32, unsigned int) X(uint64, unsigned long) \
    X(size, unsigned long) X(ptrdiff, long)
#define RSHMEM_SYNC_TYPES_ALT(X) \
    X(int64, long long) X(uint64, unsigned long long) X(size, unsigned long long) X(ptrdiff, long long)
#define RSHMEM_AMO_STANDARD_TYPES(X) \
    X(int, int, unsigned int) X(long, long, unsigned long long) X(longlong, long long, unsigned long long) X(uint, unsigned int, unsigned int) \
    X(ulong, unsigned long, unsigned long long) X(ulonglong, unsigned long long, unsigned long long) X(int32, int, unsigned int) X(int64, long, unsigned long long) \
    X(uint32, unsigned int, unsigned int) X(uint64, unsigned long, unsigned long long) X(size, unsigned long, unsigned long long) X(ptrdiff, long, unsigned long long)
#define RSHMEM_AMO_STANDARD_TYPES_ALT(X) \
    X(int64, long long, unsigned long long) X(uint64, unsigned long long, unsigned long long) X(size, unsigned long long, unsigned long long) X(ptrdiff, long long, unsigned long long)
#define RSHMEM_AMO_BITWISE_TYPES(X) \
    X(uint, unsigned int, unsigned int) X(ulong, unsigned long, unsigned long long) X(ulonglong, unsigned long long, unsigned long long) X(int32, int, unsigned int) \
    X(int64, long, unsigned long long) X(uint32, unsigned int, unsigned int) X(uint64, unsigned long, unsigned long long)
#define RSHMEM_AMO_BITWISE_TYPES_ALT(X) \
    X(int64, long long, unsigned long long) X(uint64, unsigned long long, unsigned long long)
#define RSHMEM_AMO_EXTENDED_TYPES(X) \
    X(float, float, unsigned int) X(double, double, unsigned long long)
#define RSHMEM_AMO_EXTENDED_TYPES_ALT(X)
#define RSHMEM_REDUCE_BITWISE_TYPES(X) \
    X(uchar, unsigned char) X(ushort, unsigned short) X(uint, unsigned int) X(ulong, unsigned long) \
    X(ulonglong, unsigned long long) X(int8, signed char) X(int16, short) X(int32, int) \
    X(int64, long) X(uint8, unsigned char) X(uint16, unsigned short) X(uint32, unsigned int) \
    X(uint64, unsigned long) X(size, unsigned long)
#define RSHMEM_REDUCE_BITWISE_TYPES_ALT(X) \
    X(int64, long long) X(uint64, unsigned long long) X(size, unsigned long long)
#define RSHMEM_REDUCE_ARITH_TYPES(X) \
    X(char, char) X(schar, signed char) X(short, short) X(int, int) \
    X(long, long) X(longlong, long long) X(ptrdiff, long) X(uchar, unsigned char) \
    X(ushort, unsigned short) X(uint, unsigned int) X(ulong, unsigned long) X(ulonglong, unsigned long long) \
    X(int8, signed char) X(int16, short) X(int32, int) X(int64, long) \
    X(uint8, unsigned char) X(uint16, unsigned short) X(uint32, unsigned int) X(uint64, unsigned long) \
    X(size, unsigned long) X(float, float) X(double, double)
#define RSHMEM_REDUCE_ARITH_TYPES_ALT(X) \
    X(ptrdiff, long long) X(int64, long long) X(uint64, unsigned long long) X(size, unsigned long long)

#endif
