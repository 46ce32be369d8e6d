//! Generates `include/shmem.h` from the type table ([`crate::table`]) and the routine
//! descriptions below, so the header's per-type declarations, its C11 `_Generic`
//! selections and its C++ overloads all come from the same lists that generate the
//! exported Rust functions. The checked-in header is compared with [`shmem_h`] by the
//! `header` test (`RSHMEM_BLESS=1 cargo test -p rshmem-c --test header` rewrites it),
//! and the `exports` test checks that every declared routine is exported.

use crate::table::{
    c_type, is_base_type, AMO_BITWISE, AMO_DEPRECATED_EXTENDED, AMO_DEPRECATED_STANDARD, AMO_EXTENDED, AMO_STANDARD, REDUCE_ARITH_TYPES,
    REDUCE_BITWISE_TYPES, REDUCE_MINMAX_TYPES, RMA, RMA_C_ONLY, SIZES, SYNC, TO_ALL_ARITH_TYPES, TO_ALL_BITWISE_TYPES,
};
use std::fmt::Write;

/// A family routine over a type list: one C function per TYPENAME (and its `shmem_ctx_`
/// twin when `ctx`), optionally a C11 generic and C++ overloads.
struct Op {
    /// The generic's name (`shmem_put`), or "" when the spec defines none.
    generic: &'static str,
    /// The typed name after `shmem_` (and `ctx_`), `{T}` standing for the TYPENAME.
    name: &'static str,
    /// Return type (`$T` is the C type).
    ret: &'static str,
    /// Parameters without the context (`$T` is the C type).
    params: &'static str,
    /// Whether a `shmem_ctx_` form exists.
    ctx: bool,
    /// Which parameter (0-based, without the context) the generic selects on.
    dispatch: usize,
    /// The selecting parameter is `const $T *`: accept `$T *` too.
    dispatch_const: bool,
    /// Types for which C++ must not get an overload (a C function of the same name and
    /// signature exists, e.g. the deprecated `long` `shmem_wait_until`).
    no_cxx: &'static [&'static str],
}

impl Op {
    const fn new(generic: &'static str, name: &'static str, ret: &'static str, params: &'static str, ctx: bool) -> Op {
        Op { generic, name, ret, params, ctx, dispatch: 0, dispatch_const: false, no_cxx: &[] }
    }
    const fn on(mut self, dispatch: usize) -> Op {
        self.dispatch = dispatch;
        self
    }
    const fn const_ptr(mut self) -> Op {
        self.dispatch_const = true;
        self
    }
    const fn no_cxx(mut self, types: &'static [&'static str]) -> Op {
        self.no_cxx = types;
        self
    }
    fn func(&self, t: &str, ctx: bool) -> String {
        format!("shmem_{}{}", if ctx { "ctx_" } else { "" }, self.name.replace("{T}", t))
    }
}

const RMA_BULK: &[Op] = &[
    Op::new("shmem_put", "{T}_put", "void", "$T *dest, const $T *source, size_t nelems, int pe", true),
    Op::new("shmem_get", "{T}_get", "void", "$T *dest, const $T *source, size_t nelems, int pe", true),
    Op::new("shmem_put_nbi", "{T}_put_nbi", "void", "$T *dest, const $T *source, size_t nelems, int pe", true),
    Op::new("shmem_get_nbi", "{T}_get_nbi", "void", "$T *dest, const $T *source, size_t nelems, int pe", true),
    Op::new("shmem_iput", "{T}_iput", "void", "$T *dest, const $T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe", true),
    Op::new("shmem_iget", "{T}_iget", "void", "$T *dest, const $T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe", true),
    Op::new(
        "shmem_ibput",
        "{T}_ibput",
        "void",
        "$T *dest, const $T *source, ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, int pe",
        true,
    ),
    Op::new(
        "shmem_ibget",
        "{T}_ibget",
        "void",
        "$T *dest, const $T *source, ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, int pe",
        true,
    ),
];

const RMA_SCALAR: &[Op] = &[
    Op::new("shmem_p", "{T}_p", "void", "$T *dest, $T value, int pe", true),
    Op::new("shmem_g", "{T}_g", "$T", "const $T *source, int pe", true).const_ptr(),
];

const P2P: &[Op] = &[
    Op::new("shmem_wait_until", "{T}_wait_until", "void", "$T *ivar, int cmp, $T cmp_value", false).no_cxx(&["long"]),
    Op::new("shmem_wait", "{T}_wait", "void", "$T *ivar, $T cmp_value", false).no_cxx(&["long"]),
    Op::new("shmem_test", "{T}_test", "int", "$T *ivar, int cmp, $T cmp_value", false),
    Op::new(
        "shmem_wait_until_all",
        "{T}_wait_until_all",
        "void",
        "$T *ivars, size_t nelems, const int *status, int cmp, $T cmp_value",
        false,
    ),
    Op::new(
        "shmem_wait_until_any",
        "{T}_wait_until_any",
        "size_t",
        "$T *ivars, size_t nelems, const int *status, int cmp, $T cmp_value",
        false,
    ),
    Op::new(
        "shmem_wait_until_some",
        "{T}_wait_until_some",
        "size_t",
        "$T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, $T cmp_value",
        false,
    ),
    Op::new(
        "shmem_wait_until_all_vector",
        "{T}_wait_until_all_vector",
        "void",
        "$T *ivars, size_t nelems, const int *status, int cmp, const $T *cmp_values",
        false,
    ),
    Op::new(
        "shmem_wait_until_any_vector",
        "{T}_wait_until_any_vector",
        "size_t",
        "$T *ivars, size_t nelems, const int *status, int cmp, const $T *cmp_values",
        false,
    ),
    Op::new(
        "shmem_wait_until_some_vector",
        "{T}_wait_until_some_vector",
        "size_t",
        "$T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, const $T *cmp_values",
        false,
    ),
    Op::new("shmem_test_all", "{T}_test_all", "int", "$T *ivars, size_t nelems, const int *status, int cmp, $T cmp_value", false),
    Op::new("shmem_test_any", "{T}_test_any", "size_t", "$T *ivars, size_t nelems, const int *status, int cmp, $T cmp_value", false),
    Op::new(
        "shmem_test_some",
        "{T}_test_some",
        "size_t",
        "$T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, $T cmp_value",
        false,
    ),
    Op::new(
        "shmem_test_all_vector",
        "{T}_test_all_vector",
        "int",
        "$T *ivars, size_t nelems, const int *status, int cmp, const $T *cmp_values",
        false,
    ),
    Op::new(
        "shmem_test_any_vector",
        "{T}_test_any_vector",
        "size_t",
        "$T *ivars, size_t nelems, const int *status, int cmp, const $T *cmp_values",
        false,
    ),
    Op::new(
        "shmem_test_some_vector",
        "{T}_test_some_vector",
        "size_t",
        "$T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, const $T *cmp_values",
        false,
    ),
];

const AMO_EXT: &[Op] = &[
    Op::new("shmem_atomic_fetch", "{T}_atomic_fetch", "$T", "const $T *source, int pe", true).const_ptr(),
    Op::new("shmem_atomic_set", "{T}_atomic_set", "void", "$T *dest, $T value, int pe", true),
    Op::new("shmem_atomic_swap", "{T}_atomic_swap", "$T", "$T *dest, $T value, int pe", true),
    Op::new("shmem_atomic_fetch_nbi", "{T}_atomic_fetch_nbi", "void", "$T *fetch, const $T *source, int pe", true),
    Op::new("shmem_atomic_swap_nbi", "{T}_atomic_swap_nbi", "void", "$T *fetch, $T *dest, $T value, int pe", true),
];

const AMO_EXT_OLD: &[Op] = &[
    Op::new("shmem_fetch", "{T}_fetch", "$T", "const $T *source, int pe", false).const_ptr(),
    Op::new("shmem_set", "{T}_set", "void", "$T *dest, $T value, int pe", false),
    Op::new("shmem_swap", "{T}_swap", "$T", "$T *dest, $T value, int pe", false),
];

const AMO_STD: &[Op] = &[
    Op::new("shmem_atomic_compare_swap", "{T}_atomic_compare_swap", "$T", "$T *dest, $T cond, $T value, int pe", true),
    Op::new("shmem_atomic_compare_swap_nbi", "{T}_atomic_compare_swap_nbi", "void", "$T *fetch, $T *dest, $T cond, $T value, int pe", true),
    Op::new("shmem_atomic_fetch_inc", "{T}_atomic_fetch_inc", "$T", "$T *dest, int pe", true),
    Op::new("shmem_atomic_fetch_inc_nbi", "{T}_atomic_fetch_inc_nbi", "void", "$T *fetch, $T *dest, int pe", true),
    Op::new("shmem_atomic_inc", "{T}_atomic_inc", "void", "$T *dest, int pe", true),
    Op::new("shmem_atomic_fetch_add", "{T}_atomic_fetch_add", "$T", "$T *dest, $T value, int pe", true),
    Op::new("shmem_atomic_fetch_add_nbi", "{T}_atomic_fetch_add_nbi", "void", "$T *fetch, $T *dest, $T value, int pe", true),
    Op::new("shmem_atomic_add", "{T}_atomic_add", "void", "$T *dest, $T value, int pe", true),
];

const AMO_STD_OLD: &[Op] = &[
    Op::new("shmem_cswap", "{T}_cswap", "$T", "$T *dest, $T cond, $T value, int pe", false),
    Op::new("shmem_finc", "{T}_finc", "$T", "$T *dest, int pe", false),
    Op::new("shmem_inc", "{T}_inc", "void", "$T *dest, int pe", false),
    Op::new("shmem_fadd", "{T}_fadd", "$T", "$T *dest, $T value, int pe", false),
    Op::new("shmem_add", "{T}_add", "void", "$T *dest, $T value, int pe", false),
];

const AMO_BIT: &[Op] = &[
    Op::new("shmem_atomic_fetch_and", "{T}_atomic_fetch_and", "$T", "$T *dest, $T value, int pe", true),
    Op::new("shmem_atomic_fetch_and_nbi", "{T}_atomic_fetch_and_nbi", "void", "$T *fetch, $T *dest, $T value, int pe", true),
    Op::new("shmem_atomic_and", "{T}_atomic_and", "void", "$T *dest, $T value, int pe", true),
    Op::new("shmem_atomic_fetch_or", "{T}_atomic_fetch_or", "$T", "$T *dest, $T value, int pe", true),
    Op::new("shmem_atomic_fetch_or_nbi", "{T}_atomic_fetch_or_nbi", "void", "$T *fetch, $T *dest, $T value, int pe", true),
    Op::new("shmem_atomic_or", "{T}_atomic_or", "void", "$T *dest, $T value, int pe", true),
    Op::new("shmem_atomic_fetch_xor", "{T}_atomic_fetch_xor", "$T", "$T *dest, $T value, int pe", true),
    Op::new("shmem_atomic_fetch_xor_nbi", "{T}_atomic_fetch_xor_nbi", "void", "$T *fetch, $T *dest, $T value, int pe", true),
    Op::new("shmem_atomic_xor", "{T}_atomic_xor", "void", "$T *dest, $T value, int pe", true),
];

const SIGNAL: &[Op] = &[
    Op::new(
        "shmem_put_signal",
        "{T}_put_signal",
        "void",
        "$T *dest, const $T *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe",
        true,
    ),
    Op::new(
        "shmem_put_signal_nbi",
        "{T}_put_signal_nbi",
        "void",
        "$T *dest, const $T *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe",
        true,
    ),
];

const COLL: &[Op] = &[
    Op::new("shmem_broadcast", "{T}_broadcast", "int", "shmem_team_t team, $T *dest, const $T *source, size_t nelems, int PE_root", false)
        .on(1),
    Op::new("shmem_collect", "{T}_collect", "int", "shmem_team_t team, $T *dest, const $T *source, size_t nelems", false).on(1),
    Op::new("shmem_fcollect", "{T}_fcollect", "int", "shmem_team_t team, $T *dest, const $T *source, size_t nelems", false).on(1),
    Op::new("shmem_alltoall", "{T}_alltoall", "int", "shmem_team_t team, $T *dest, const $T *source, size_t nelems", false).on(1),
    Op::new(
        "shmem_alltoalls",
        "{T}_alltoalls",
        "int",
        "shmem_team_t team, $T *dest, const $T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems",
        false,
    )
    .on(1),
];

const REDUCE_PARAMS: &str = "shmem_team_t team, $T *dest, const $T *source, size_t nreduce";
const REDUCE_BITWISE: &[Op] = &[
    Op::new("shmem_and_reduce", "{T}_and_reduce", "int", REDUCE_PARAMS, false).on(1),
    Op::new("shmem_or_reduce", "{T}_or_reduce", "int", REDUCE_PARAMS, false).on(1),
    Op::new("shmem_xor_reduce", "{T}_xor_reduce", "int", REDUCE_PARAMS, false).on(1),
];
const REDUCE_MINMAX: &[Op] = &[
    Op::new("shmem_max_reduce", "{T}_max_reduce", "int", REDUCE_PARAMS, false).on(1),
    Op::new("shmem_min_reduce", "{T}_min_reduce", "int", REDUCE_PARAMS, false).on(1),
];
const REDUCE_ARITH: &[Op] = &[
    Op::new("shmem_sum_reduce", "{T}_sum_reduce", "int", REDUCE_PARAMS, false).on(1),
    Op::new("shmem_prod_reduce", "{T}_prod_reduce", "int", REDUCE_PARAMS, false).on(1),
    Op::new("shmem_sum_inscan", "{T}_sum_inscan", "int", "shmem_team_t team, $T *dest, const $T *source, size_t nelems", false).on(1),
    Op::new("shmem_sum_exscan", "{T}_sum_exscan", "int", "shmem_team_t team, $T *dest, const $T *source, size_t nelems", false).on(1),
];

const TO_ALL_PARAMS: &str = "$T *dest, const $T *source, int nreduce, int PE_start, int logPE_stride, int PE_size, $T *pWrk, long *pSync";
const TO_ALL_BITWISE: &[Op] = &[
    Op::new("", "{T}_and_to_all", "void", TO_ALL_PARAMS, false),
    Op::new("", "{T}_or_to_all", "void", TO_ALL_PARAMS, false),
    Op::new("", "{T}_xor_to_all", "void", TO_ALL_PARAMS, false),
];
const TO_ALL_ARITH: &[Op] = &[
    Op::new("", "{T}_max_to_all", "void", TO_ALL_PARAMS, false),
    Op::new("", "{T}_min_to_all", "void", TO_ALL_PARAMS, false),
    Op::new("", "{T}_sum_to_all", "void", TO_ALL_PARAMS, false),
    Op::new("", "{T}_prod_to_all", "void", TO_ALL_PARAMS, false),
];

/// A family and the TYPENAMEs it covers.
struct Family {
    title: &'static str,
    ops: &'static [Op],
    types: Vec<&'static str>,
    /// TYPENAMEs whose functions the header defines inline (no exported symbol).
    inline: Vec<&'static str>,
}

fn bulk_types() -> Vec<&'static str> {
    RMA.iter().chain(RMA_C_ONLY).copied().collect()
}

fn families() -> Vec<Family> {
    let bulk = bulk_types();
    let scalar: Vec<&str> = RMA.iter().chain(RMA_C_ONLY).copied().collect();
    vec![
        Family { title: "RMA: typed put/get, nbi, strided, blocked strided", ops: RMA_BULK, types: bulk, inline: vec![] },
        Family { title: "RMA: single elements", ops: RMA_SCALAR, types: scalar, inline: RMA_C_ONLY.to_vec() },
        Family { title: "Point-to-point synchronization", ops: P2P, types: SYNC.to_vec(), inline: vec![] },
        Family {
            title: "Atomics: fetch, set, swap",
            ops: AMO_EXT,
            types: AMO_STANDARD.iter().chain(AMO_EXTENDED).copied().collect(),
            inline: vec![],
        },
        Family { title: "Atomics: arithmetic", ops: AMO_STD, types: AMO_STANDARD.to_vec(), inline: vec![] },
        Family { title: "Atomics: bitwise", ops: AMO_BIT, types: AMO_BITWISE.to_vec(), inline: vec![] },
        Family { title: "Atomics: deprecated names", ops: AMO_EXT_OLD, types: AMO_DEPRECATED_EXTENDED.to_vec(), inline: vec![] },
        Family { title: "Atomics: deprecated names (integers)", ops: AMO_STD_OLD, types: AMO_DEPRECATED_STANDARD.to_vec(), inline: vec![] },
        Family { title: "Signals: put with signal", ops: SIGNAL, types: bulk_types(), inline: vec![] },
        Family { title: "Collectives: broadcast, collect, alltoall", ops: COLL, types: bulk_types(), inline: vec![] },
        Family { title: "Reductions: and, or, xor", ops: REDUCE_BITWISE, types: REDUCE_BITWISE_TYPES.to_vec(), inline: vec![] },
        Family { title: "Reductions: max, min", ops: REDUCE_MINMAX, types: REDUCE_MINMAX_TYPES.to_vec(), inline: vec![] },
        Family { title: "Reductions: sum, prod; sum scans", ops: REDUCE_ARITH, types: REDUCE_ARITH_TYPES.to_vec(), inline: vec![] },
        Family {
            title: "Active-set reductions (deprecated): and, or, xor",
            ops: TO_ALL_BITWISE,
            types: TO_ALL_BITWISE_TYPES.to_vec(),
            inline: vec![],
        },
        Family {
            title: "Active-set reductions (deprecated): max, min, sum, prod",
            ops: TO_ALL_ARITH,
            types: TO_ALL_ARITH_TYPES.to_vec(),
            inline: vec![],
        },
    ]
}

fn subst(template: &str, t: &str) -> String {
    template.replace("$T", c_type(t))
}

/// The parameter names of a parameter list.
fn arg_names(params: &str) -> Vec<String> {
    if params.trim().is_empty() || params.trim() == "void" {
        return Vec::new();
    }
    params.split(',').map(|p| p.trim().rsplit([' ', '*']).next().expect("a parameter name").to_string()).collect()
}

/// The header being written, and the exported functions it declares.
struct Writer {
    text: String,
    declared: Vec<String>,
    /// (return type, name, parameters) of every declared function, for `pshmem.h`.
    signatures: Vec<(String, String, String)>,
}

impl Writer {
    fn line(&mut self, s: &str) {
        self.text.push_str(s);
        self.text.push('\n');
    }
    fn section(&mut self, title: &str) {
        let _ = write!(self.text, "\n/* ---- {title} ---- */\n");
    }
    /// Declares an exported function.
    fn func(&mut self, ret: &str, name: &str, params: &str) {
        let sep = if ret.ends_with('*') { "" } else { " " };
        let params = if params.is_empty() { "void" } else { params };
        let _ = writeln!(self.text, "{ret}{sep}{name}({params});");
        self.declared.push(name.to_string());
        self.signatures.push((ret.to_string(), name.to_string(), params.to_string()));
    }
}

fn constants(w: &mut Writer) {
    use crate::setup::*;
    w.section("Constants");
    let mut defs: Vec<(String, String)> = vec![
        ("SHMEM_MAJOR_VERSION".into(), MAJOR_VERSION.to_string()),
        ("SHMEM_MINOR_VERSION".into(), MINOR_VERSION.to_string()),
        ("SHMEM_MAX_NAME_LEN".into(), MAX_NAME_LEN.to_string()),
        ("SHMEM_VENDOR_STRING".into(), format!("\"{VENDOR_STRING}\"")),
        ("SHMEM_THREAD_SINGLE".into(), THREAD_SINGLE.to_string()),
        ("SHMEM_THREAD_FUNNELED".into(), THREAD_FUNNELED.to_string()),
        ("SHMEM_THREAD_SERIALIZED".into(), THREAD_SERIALIZED.to_string()),
        ("SHMEM_THREAD_MULTIPLE".into(), THREAD_MULTIPLE.to_string()),
    ];
    for c in rshmem::Cmp::ALL {
        defs.push((format!("SHMEM_CMP_{}", format!("{c:?}").to_uppercase()), (c as i32).to_string()));
    }
    defs.push(("SHMEM_TEAM_NUM_CONTEXTS".into(), format!("{}L", crate::teams::TEAM_NUM_CONTEXTS)));
    let sync = crate::active_set::SYNC_SIZE.to_string();
    for name in ["SYNC", "BARRIER_SYNC", "BCAST_SYNC", "COLLECT_SYNC", "REDUCE_SYNC", "ALLTOALL_SYNC", "ALLTOALLS_SYNC"] {
        defs.push((format!("SHMEM_{name}_SIZE"), sync.clone()));
    }
    defs.push(("SHMEM_SYNC_VALUE".into(), "0L".into()));
    defs.push(("SHMEM_REDUCE_MIN_WRKDATA_SIZE".into(), "1".into()));
    defs.push(("SHMEM_SIGNAL_SET".into(), (rshmem::SignalOp::Set as i32).to_string()));
    defs.push(("SHMEM_SIGNAL_ADD".into(), (rshmem::SignalOp::Add as i32).to_string()));
    defs.push(("SHMEM_MALLOC_ATOMICS_REMOTE".into(), "1L".into()));
    defs.push(("SHMEM_MALLOC_SIGNAL_REMOTE".into(), "2L".into()));
    for (name, value) in &defs {
        w.line(&format!("#define {name} {value}"));
    }
    w.line("/* Deprecated spellings. */");
    for (name, _) in defs.iter().filter(|(n, _)| {
        n.starts_with("SHMEM_CMP_")
            || [
                "SHMEM_MAJOR_VERSION",
                "SHMEM_MINOR_VERSION",
                "SHMEM_MAX_NAME_LEN",
                "SHMEM_VENDOR_STRING",
                "SHMEM_SYNC_VALUE",
                "SHMEM_BARRIER_SYNC_SIZE",
                "SHMEM_BCAST_SYNC_SIZE",
                "SHMEM_COLLECT_SYNC_SIZE",
                "SHMEM_REDUCE_SYNC_SIZE",
                "SHMEM_REDUCE_MIN_WRKDATA_SIZE",
            ]
            .contains(&n.as_str())
    }) {
        w.line(&format!("#define _{name} {name}"));
    }
}

fn handles(w: &mut Writer) {
    w.section("Handles and configuration");
    w.line("typedef struct rshmem_ctx_handle *shmem_ctx_t;");
    w.line("typedef struct rshmem_team_handle *shmem_team_t;");
    w.line("typedef struct {\n    int num_contexts;\n} shmem_team_config_t;");
    w.line(&format!("#define SHMEM_CTX_DEFAULT ((shmem_ctx_t)(uintptr_t){})", crate::state::CTX_DEFAULT));
    for (name, bits) in
        [("SERIALIZED", rshmem::CtxOptions::SERIALIZED), ("PRIVATE", rshmem::CtxOptions::PRIVATE), ("NOSTORE", rshmem::CtxOptions::NOSTORE)]
    {
        w.line(&format!("#define SHMEM_CTX_{name} {bits}L"));
    }
    w.line("#define SHMEM_CTX_INVALID ((shmem_ctx_t)(uintptr_t)0)");
    for (name, team) in [("WORLD", rshmem::Team::WORLD), ("SHARED", rshmem::Team::SHARED), ("INVALID", rshmem::Team::INVALID)] {
        w.line(&format!("#define SHMEM_TEAM_{name} ((shmem_team_t)(uintptr_t){})", crate::teams::handle(team) as usize));
    }
}

fn setup(w: &mut Writer) {
    w.section("Library setup, exit and query");
    w.func("void", "shmem_init", "");
    w.func("int", "shmem_init_thread", "int requested, int *provided");
    w.func("void", "shmem_query_thread", "int *provided");
    w.func("void", "shmem_query_initialized", "int *initialized");
    w.func("void", "shmem_finalize", "");
    w.line("#if defined(__cplusplus) && __cplusplus >= 201103L\n[[noreturn]]\n#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L\n_Noreturn\n#endif");
    w.func("void", "shmem_global_exit", "int status");
    w.func("int", "shmem_my_pe", "");
    w.func("int", "shmem_n_pes", "");
    w.func("int", "shmem_pe_accessible", "int pe");
    w.func("int", "shmem_addr_accessible", "const void *addr, int pe");
    w.func("void *", "shmem_ptr", "const void *dest, int pe");
    w.func("void *", "shmem_team_ptr", "shmem_team_t team, const void *dest, int pe");
    w.func("void", "shmem_info_get_version", "int *major, int *minor");
    w.func("void", "shmem_info_get_name", "char *name");
    w.line("/* Deprecated. */");
    w.func("void", "start_pes", "int npes");
    w.func("int", "_my_pe", "");
    w.func("int", "_num_pes", "");
    w.line("/* Profiling control: rshmem has no profiling layer, so this does nothing. */");
    w.line("static inline void shmem_pcontrol(const int level, ...) { (void)level; }");
}

fn memory(w: &mut Writer) {
    w.section("Memory management (collective)");
    w.func("void *", "shmem_malloc", "size_t size");
    w.func("void *", "shmem_malloc_with_hints", "size_t size, long hints");
    w.func("void *", "shmem_calloc", "size_t count, size_t size");
    w.func("void *", "shmem_align", "size_t alignment, size_t size");
    w.func("void *", "shmem_realloc", "void *ptr, size_t size");
    w.func("void", "shmem_free", "void *ptr");
    w.line("/* Deprecated. */");
    w.func("void *", "shmalloc", "size_t size");
    w.func("void", "shfree", "void *ptr");
    w.func("void *", "shrealloc", "void *ptr, size_t size");
    w.func("void *", "shmemalign", "size_t alignment, size_t size");
}

fn teams(w: &mut Writer) {
    w.section("Teams");
    w.func("int", "shmem_team_my_pe", "shmem_team_t team");
    w.func("int", "shmem_team_n_pes", "shmem_team_t team");
    w.func("int", "shmem_team_get_config", "shmem_team_t team, long config_mask, shmem_team_config_t *config");
    w.func("int", "shmem_team_translate_pe", "shmem_team_t src_team, int src_pe, shmem_team_t dest_team");
    w.func(
        "int",
        "shmem_team_split_strided",
        "shmem_team_t parent_team, int start, int stride, int size, const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team",
    );
    w.func(
        "int",
        "shmem_team_split_2d",
        "shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config, long xaxis_mask, shmem_team_t *xaxis_team, \
         const shmem_team_config_t *yaxis_config, long yaxis_mask, shmem_team_t *yaxis_team",
    );
    w.func("void", "shmem_team_destroy", "shmem_team_t team");
    w.func("int", "shmem_team_sync", "shmem_team_t team");
}

fn family(w: &mut Writer, f: &Family) {
    w.section(f.title);
    for op in f.ops {
        for &t in &f.types {
            let ret = subst(op.ret, t);
            let params = subst(op.params, t);
            if f.inline.contains(&t) {
                inline_bytes_op(w, op, t, &ret, &params);
                continue;
            }
            w.func(&ret, &op.func(t, false), &params);
            if op.ctx {
                w.func(&ret, &op.func(t, true), &format!("shmem_ctx_t ctx, {params}"));
            }
        }
    }
}

/// `p`/`g` of a type Rust cannot pass by value, as inline byte moves.
fn inline_bytes_op(w: &mut Writer, op: &Op, t: &str, ret: &str, params: &str) {
    let ct = c_type(t);
    let (ctx_body, body) = match op.name {
        "{T}_p" => (
            "{ shmem_ctx_putmem(ctx, dest, &value, sizeof value, pe); }".to_string(),
            "{ shmem_putmem(dest, &value, sizeof value, pe); }".to_string(),
        ),
        "{T}_g" => (
            format!("{{ {ct} v; shmem_ctx_getmem(ctx, &v, source, sizeof v, pe); return v; }}"),
            format!("{{ {ct} v; shmem_getmem(&v, source, sizeof v, pe); return v; }}"),
        ),
        other => panic!("no inline form of {other}"),
    };
    w.line(&format!("static inline {ret} {}(shmem_ctx_t ctx, {params}) {ctx_body}", op.func(t, true)));
    w.line(&format!("static inline {ret} {}({params}) {body}", op.func(t, false)));
}

fn sized_and_mem(w: &mut Writer) {
    w.section("RMA: sized and byte forms");
    let forms = [
        ("put{S}", "void *dest, const void *source, size_t nelems, int pe"),
        ("get{S}", "void *dest, const void *source, size_t nelems, int pe"),
        ("put{S}_nbi", "void *dest, const void *source, size_t nelems, int pe"),
        ("get{S}_nbi", "void *dest, const void *source, size_t nelems, int pe"),
        ("iput{S}", "void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe"),
        ("iget{S}", "void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe"),
        ("ibput{S}", "void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, int pe"),
        ("ibget{S}", "void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t bsize, size_t nblocks, int pe"),
    ];
    for (name, params) in forms {
        for s in SIZES {
            let n = name.replace("{S}", &s.to_string());
            w.func("void", &format!("shmem_{n}"), params);
            w.func("void", &format!("shmem_ctx_{n}"), &format!("shmem_ctx_t ctx, {params}"));
        }
    }
    for n in ["putmem", "getmem", "putmem_nbi", "getmem_nbi"] {
        let params = "void *dest, const void *source, size_t nelems, int pe";
        w.func("void", &format!("shmem_{n}"), params);
        w.func("void", &format!("shmem_ctx_{n}"), &format!("shmem_ctx_t ctx, {params}"));
    }
}

fn ordering(w: &mut Writer) {
    w.section("Memory ordering");
    for n in ["fence", "quiet"] {
        w.func("void", &format!("shmem_{n}"), "");
        w.func("void", &format!("shmem_ctx_{n}"), "shmem_ctx_t ctx");
    }
    w.func("void", "shmem_pe_quiet", "const int *target_pes, size_t npes");
    w.func("void", "shmem_ctx_pe_quiet", "shmem_ctx_t ctx, const int *target_pes, size_t npes");
}

fn sync(w: &mut Writer) {
    w.section("Barriers and syncs");
    w.func("void", "shmem_barrier_all", "");
    w.func("void", "shmem_sync_all", "");
}

fn contexts(w: &mut Writer) {
    w.section("Communication contexts");
    w.func("int", "shmem_ctx_create", "long options, shmem_ctx_t *ctx");
    w.func("int", "shmem_team_create_ctx", "shmem_team_t team, long options, shmem_ctx_t *ctx");
    w.func("void", "shmem_ctx_destroy", "shmem_ctx_t ctx");
    w.func("int", "shmem_ctx_get_team", "shmem_ctx_t ctx, shmem_team_t *team");
}

fn signals(w: &mut Writer) {
    w.section("Signals: sized and byte forms, updates, fetch, wait");
    let params = "void *dest, const void *source, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe";
    for nbi in ["", "_nbi"] {
        for s in SIZES {
            w.func("void", &format!("shmem_put{s}_signal{nbi}"), params);
            w.func("void", &format!("shmem_ctx_put{s}_signal{nbi}"), &format!("shmem_ctx_t ctx, {params}"));
        }
        w.func("void", &format!("shmem_putmem_signal{nbi}"), params);
        w.func("void", &format!("shmem_ctx_putmem_signal{nbi}"), &format!("shmem_ctx_t ctx, {params}"));
    }
    for op in ["add", "set"] {
        w.func("void", &format!("shmem_signal_{op}"), "uint64_t *sig_addr, uint64_t signal, int pe");
        w.func("void", &format!("shmem_ctx_signal_{op}"), "shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int pe");
    }
    w.func("uint64_t", "shmem_signal_fetch", "const uint64_t *sig_addr");
    w.func("uint64_t", "shmem_signal_wait_until", "uint64_t *sig_addr, int cmp, uint64_t cmp_value");
}

fn active_sets(w: &mut Writer) {
    w.section("Active-set collectives (deprecated): pSync arrays of SHMEM_*_SYNC_SIZE longs");
    let set = "int PE_start, int logPE_stride, int PE_size, long *pSync";
    w.func("void", "shmem_barrier", set);
    w.func("void", "shmem_sync", set);
    for bits in [32, 64] {
        w.func("void", &format!("shmem_broadcast{bits}"), &format!("void *dest, const void *source, size_t nelems, int PE_root, {set}"));
        for op in ["collect", "fcollect", "alltoall"] {
            w.func("void", &format!("shmem_{op}{bits}"), &format!("void *dest, const void *source, size_t nelems, {set}"));
        }
        w.func(
            "void",
            &format!("shmem_alltoalls{bits}"),
            &format!("void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, {set}"),
        );
    }
}

fn collectives_mem(w: &mut Writer) {
    w.section("Collectives: byte forms");
    w.func("int", "shmem_broadcastmem", "shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root");
    for op in ["collectmem", "fcollectmem", "alltoallmem"] {
        w.func("int", &format!("shmem_{op}"), "shmem_team_t team, void *dest, const void *source, size_t nelems");
    }
    w.func("int", "shmem_alltoallsmem", "shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems");
}

fn locks(w: &mut Writer) {
    w.section("Distributed locks");
    w.func("void", "shmem_set_lock", "long *lock");
    w.func("void", "shmem_clear_lock", "long *lock");
    w.func("int", "shmem_test_lock", "long *lock");
}

fn p2p_long(w: &mut Writer) {
    w.line("/* Deprecated untyped forms (long). */");
    w.func("void", "shmem_wait", "long *ivar, long cmp_value");
    w.func("void", "shmem_wait_until", "long *ivar, int cmp, long cmp_value");
}

fn cache(w: &mut Writer) {
    w.section("Cache management (deprecated; no-ops)");
    for n in ["clear_cache_inv", "set_cache_inv", "udcflush"] {
        w.func("void", &format!("shmem_{n}"), "");
    }
    for n in ["clear_cache_line_inv", "set_cache_line_inv", "udcflush_line"] {
        w.func("void", &format!("shmem_{n}"), "void *dest");
    }
}

/// The C11 generic selections of one family.
fn c11_generics(w: &mut Writer, f: &Family) {
    for op in f.ops.iter().filter(|o| !o.generic.is_empty()) {
        let types: Vec<&str> = f.types.iter().copied().filter(|t| is_base_type(t)).collect();
        let assoc = |ctx: bool| -> String {
            let mut s = String::new();
            for t in &types {
                let ct = c_type(t);
                let fname = op.func(t, ctx);
                if op.dispatch_const {
                    let _ = write!(s, " const {ct} *: {fname}, {ct} *: {fname},");
                } else {
                    let _ = write!(s, " {ct} *: {fname},");
                }
            }
            s
        };
        let sel = |i: usize| if i == 0 { "RSHMEM_ARG1(__VA_ARGS__)".to_string() } else { format!("RSHMEM_ARG{}N(__VA_ARGS__)", i + 1) };
        let plain = assoc(false);
        let text = if op.ctx {
            format!(
                "#define {}(...) _Generic({}, shmem_ctx_t: _Generic({},{} default: rshmem_generic_nomatch),{} default: rshmem_generic_nomatch)(__VA_ARGS__)",
                op.generic,
                sel(0),
                sel(op.dispatch + 1),
                assoc(true),
                plain
            )
        } else {
            format!("#define {}(...) _Generic({},{} default: rshmem_generic_nomatch)(__VA_ARGS__)", op.generic, sel(op.dispatch), plain)
        };
        w.line(&text);
    }
}

/// The C++ overloads of one family (C++ has no `_Generic`).
fn cxx_overloads(w: &mut Writer, f: &Family) {
    for op in f.ops.iter().filter(|o| !o.generic.is_empty()) {
        for t in f.types.iter().copied().filter(|t| is_base_type(t) && !op.no_cxx.contains(t)) {
            let ret = subst(op.ret, t);
            let params = subst(op.params, t);
            let args = arg_names(&params).join(", ");
            w.line(&format!("inline {ret} {}({params}) {{ return {}({args}); }}", op.generic, op.func(t, false)));
            if op.ctx {
                w.line(&format!(
                    "inline {ret} {}(shmem_ctx_t ctx, {params}) {{ return {}(ctx{}{args}); }}",
                    op.generic,
                    op.func(t, true),
                    if args.is_empty() { "" } else { ", " }
                ));
            }
        }
    }
}

fn build() -> Writer {
    let mut w = Writer { text: String::new(), declared: Vec::new(), signatures: Vec::new() };
    w.line("/* shmem.h: the OpenSHMEM 1.5 C API and the 1.6 additions, as implemented by rshmem.");
    w.line(" * GENERATED by crates/rshmem-c/src/header.rs from the type table; do not edit.");
    w.line(" * Regenerate: RSHMEM_BLESS=1 cargo test -p rshmem-c --test header */");
    w.line("#ifndef RSHMEM_SHMEM_H\n#define RSHMEM_SHMEM_H\n\n#include <stddef.h>\n#include <stdint.h>\n");
    constants(&mut w);
    w.line("\n#ifdef __cplusplus\nextern \"C\" {\n#endif");
    handles(&mut w);
    setup(&mut w);
    memory(&mut w);
    teams(&mut w);
    contexts(&mut w);
    let fams = families();
    sized_and_mem(&mut w);
    for f in &fams {
        family(&mut w, f);
    }
    p2p_long(&mut w);
    signals(&mut w);
    locks(&mut w);
    active_sets(&mut w);
    collectives_mem(&mut w);
    ordering(&mut w);
    sync(&mut w);
    cache(&mut w);
    w.line("\n#ifdef __cplusplus\n} /* extern \"C\" */\n#endif");
    w.section("Type-generic interfaces");
    w.line("#if defined(__cplusplus)");
    for f in &fams {
        cxx_overloads(&mut w, f);
    }
    w.line("#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L");
    w.line("/* Selected when no association matches: calling it with arguments does not compile. */");
    w.line("void rshmem_generic_nomatch(void);");
    w.line("#define RSHMEM_ARG1(...) RSHMEM_ARG1_(__VA_ARGS__, 0)\n#define RSHMEM_ARG1_(a, ...) (&*(a))");
    w.line("#define RSHMEM_ARG2N(...) RSHMEM_ARG2N_(__VA_ARGS__, 0, 0)\n#define RSHMEM_ARG2N_(a, b, ...) ((b) + 0)");
    w.line("#define RSHMEM_ARG3N(...) RSHMEM_ARG3N_(__VA_ARGS__, 0, 0, 0)\n#define RSHMEM_ARG3N_(a, b, c, ...) ((c) + 0)");
    for f in &fams {
        c11_generics(&mut w, f);
    }
    w.line("#endif /* generics */");
    w.line("\n#endif /* RSHMEM_SHMEM_H */");
    w
}

/// The text of `shmem.h`.
pub fn shmem_h() -> String {
    build().text
}

/// Names of the functions `shmem.h` declares that `libshmem` must export.
pub fn declared_functions() -> Vec<String> {
    build().declared
}

/// Names of the profiling interface's functions (`pshmem.h`).
pub fn profiling_functions() -> Vec<String> {
    build().declared.iter().filter(|n| n.starts_with("shmem_")).map(|n| format!("p{n}")).collect()
}

/// The text of `pshmem.h`: the profiling interface, every `shmem_` routine under the
/// shifted name `pshmem_`.
pub fn pshmem_h() -> String {
    let w = build();
    let mut text = String::from(
        "/* pshmem.h: the OpenSHMEM profiling interface of rshmem: every shmem_ routine as pshmem_.\n\
         * GENERATED by crates/rshmem-c/src/header.rs from the type table; do not edit. */\n\
         #ifndef RSHMEM_PSHMEM_H\n#define RSHMEM_PSHMEM_H\n\n#include <shmem.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
    );
    for (ret, name, params) in w.signatures.iter().filter(|(_, n, _)| n.starts_with("shmem_")) {
        let sep = if ret.ends_with('*') { "" } else { " " };
        let noreturn = if name == "shmem_global_exit" {
            "#if defined(__cplusplus) && __cplusplus >= 201103L\n[[noreturn]]\n#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L\n_Noreturn\n#endif\n"
        } else {
            ""
        };
        let _ = writeln!(text, "{noreturn}{ret}{sep}p{name}({params});");
    }
    text.push_str("\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* RSHMEM_PSHMEM_H */\n");
    text
}

/// The text of `shmemx.h` (rshmem's extensions: none yet beyond what `shmem.h` has).
pub fn shmemx_h() -> String {
    "/* shmemx.h: rshmem extensions to OpenSHMEM.\n * GENERATED by crates/rshmem-c/src/header.rs; do not edit. */\n\
     #ifndef RSHMEM_SHMEMX_H\n#define RSHMEM_SHMEMX_H\n\n#include <shmem.h>\n\n#endif /* RSHMEM_SHMEMX_H */\n"
        .to_string()
}
