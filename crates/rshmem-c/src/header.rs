//! Generates `include/shmem.h`, `pshmem.h` and `shmemx.h` from the descriptions of the
//! exported routines ([`crate::routine::Routine`], recorded by the macros that define
//! them), so each C signature is written once, with the routine. Declarations, the C11
//! `_Generic` selections and the C++ overloads all come from those descriptions and the
//! type table ([`crate::table`]). The checked-in headers are compared with these texts
//! by the `header` test (`RSHMEM_BLESS=1 cargo test -p rshmem-c --test header` rewrites
//! them), and the `c_programs` tests check that every declared routine is exported and
//! every exported one declared. This module is the top of the crate: it reads every
//! routine module, and none reads it.

use crate::routine::{Naming, Routine};
use crate::table::{c_type, is_base_type, typedef_needs_own_entry};
use std::fmt::Write;

/// A part of the header: a title and the routines it declares, in order.
struct Section {
    title: &'static str,
    routines: Vec<&'static Routine>,
}

impl Section {
    fn new(title: &'static str, lists: &[&'static [&'static [Routine]]]) -> Section {
        Section { title, routines: lists.iter().flat_map(|l| l.iter()).flat_map(|r| r.iter()).collect() }
    }
}

/// Every exported routine, by header section.
fn sections() -> Vec<Section> {
    use crate::{active_set, amo, cache, coll, ctx, lock, longdouble, meet, memory, order, p2p, rma, setup, signal, sync, teams};
    vec![
        Section::new("Library setup, exit and query", &[&[setup::ROUTINES, meet::ROUTINES]]),
        Section::new("Memory management (collective)", &[&[memory::ROUTINES]]),
        Section::new("Teams", &[&[teams::ROUTINES]]),
        Section::new("Communication contexts", &[&[ctx::ROUTINES]]),
        Section::new("RMA: sized and byte forms", &[rma::sized::ROUTINES, &[rma::mem::ROUTINES]]),
        Section::new("RMA: typed put/get, nbi, strided, blocked strided", &[rma::typed::ROUTINES, rma::typed_c_only::ROUTINES]),
        Section::new("RMA: single elements", &[rma::scalar::ROUTINES, &[longdouble::ROUTINES]]),
        Section::new("Point-to-point synchronization", &[p2p::typed::ROUTINES, &[p2p::ROUTINES]]),
        Section::new("Atomics: fetch, set, swap", &[amo::extended::ROUTINES, amo::extended_float::ROUTINES]),
        Section::new("Atomics: arithmetic", &[amo::standard::ROUTINES]),
        Section::new("Atomics: bitwise", &[amo::bitwise::ROUTINES]),
        Section::new("Atomics: deprecated names", &[amo::extended::DEPRECATED, amo::extended_float::DEPRECATED, amo::standard::DEPRECATED]),
        Section::new(
            "Signals: put with signal, updates, fetch, wait",
            &[signal::typed::ROUTINES, signal::typed_c_only::ROUTINES, signal::sized::ROUTINES, &[signal::ROUTINES]],
        ),
        Section::new("Distributed locks", &[&[lock::ROUTINES]]),
        Section::new(
            "Collectives: broadcast, collect, alltoall",
            &[coll::typed::ROUTINES, coll::typed_c_only::ROUTINES, &[coll::ROUTINES]],
        ),
        Section::new("Reductions: and, or, xor", &[coll::bitwise::ROUTINES]),
        Section::new("Reductions: max, min", &[coll::minmax::ROUTINES, coll::minmax_c_only::ROUTINES]),
        Section::new("Reductions: sum, prod; sum scans", &[coll::arith::ROUTINES, coll::arith_c_only::ROUTINES]),
        Section::new("Active-set collectives (deprecated): pSync arrays of SHMEM_*_SYNC_SIZE longs", &[active_set::ROUTINES]),
        Section::new(
            "Active-set reductions (deprecated)",
            &[
                active_set::to_all_rust::BITWISE,
                active_set::to_all_rust::ARITH,
                active_set::to_all_c_only::BITWISE,
                active_set::to_all_c_only::ARITH,
            ],
        ),
        Section::new("Memory ordering", &[&[order::ROUTINES]]),
        Section::new("Barriers and syncs", &[&[sync::ROUTINES]]),
        Section::new("Cache management (deprecated; no-ops)", &[&[cache::ROUTINES]]),
    ]
}

/// The C spelling of a parameter or return type as the routine's Rust code writes it
/// (`T` is the element type, spelled `elem` in C).
fn c_of(rust: &str, elem: &str) -> String {
    let ty: String = rust.chars().filter(|c| !c.is_whitespace()).collect();
    let c = match ty.as_str() {
        "" | "!" | "()" => "void",
        "T" => return elem.to_string(),
        "*mutT" => return format!("{elem} *"),
        "*constT" => return format!("const {elem} *"),
        "*mutc_void" => "void *",
        "*constc_void" => "const void *",
        "usize" => "size_t",
        "*mutusize" => "size_t *",
        "isize" => "ptrdiff_t",
        "c_int" => "int",
        "*mutc_int" => "int *",
        "*constc_int" => "const int *",
        "c_long" => "long",
        "*mutc_long" => "long *",
        "*mutc_char" => "char *",
        "*constc_char" => "const char *",
        "u64" => "uint64_t",
        "*mutu64" => "uint64_t *",
        "*constu64" => "const uint64_t *",
        "f64" => "double",
        "TeamHandle" => "shmem_team_t",
        "*mutTeamHandle" => "shmem_team_t *",
        "CtxHandle" => "shmem_ctx_t",
        "*mutCtxHandle" => "shmem_ctx_t *",
        "*constTeamConfigC" => "const shmem_team_config_t *",
        "*mutTeamConfigC" => "shmem_team_config_t *",
        "*constSessionConfigC" => "const shmem_ctx_session_config_t *",
        "Stream" => "rshmemx_stream_t",
        "CuModule" => "rshmemx_cumodule_t",
        "Dim3" => "rshmemx_dim3",
        "*mut*mutc_void" => "void **",
        "StateAddressFn" => "rshmemx_state_address_fn",
        "FunctionOfFn" => "rshmemx_function_of_fn",
        other => panic!("header: no C spelling for the Rust type `{other}`: add it to c_of"),
    };
    c.to_string()
}

/// Whether a Rust parameter type is the element type or a pointer to it.
fn mentions_element(rust: &str) -> bool {
    let ty: String = rust.chars().filter(|c| !c.is_whitespace()).collect();
    matches!(ty.as_str(), "T" | "*mutT" | "*constT")
}

/// `type name`, without a space after a `*`.
fn declarator(ty: &str, name: &str) -> String {
    if ty.ends_with('*') {
        format!("{ty}{name}")
    } else {
        format!("{ty} {name}")
    }
}

/// A C declaration's pieces.
#[derive(Clone)]
struct Signature {
    ret: String,
    name: String,
    /// (C type, name) of each parameter.
    params: Vec<(String, String)>,
    noreturn: bool,
}

impl Signature {
    fn params_text(&self) -> String {
        if self.params.is_empty() {
            return "void".into();
        }
        self.params.iter().map(|(t, n)| declarator(t, n)).collect::<Vec<_>>().join(", ")
    }
    fn text(&self, prefix: &str) -> String {
        let sep = if self.ret.ends_with('*') { "" } else { " " };
        let noreturn = if self.noreturn { NORETURN } else { "" };
        format!("{noreturn}{}{sep}{prefix}{}({});", self.ret, self.name, self.params_text())
    }
}

/// The attribute of `shmem_global_exit`, for C11 and C++11.
const NORETURN: &str =
    "#if defined(__cplusplus) && __cplusplus >= 201103L\n[[noreturn]]\n#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L\n_Noreturn\n#endif\n";

/// The C element type of a routine (`""` when untyped).
fn elem(r: &Routine) -> &'static str {
    if r.typename.is_empty() {
        ""
    } else {
        c_type(r.typename)
    }
}

/// The signatures a routine exports under `prefix` names (its plain and context forms).
fn signatures(r: &Routine, prefix: &str) -> Vec<Signature> {
    let e = elem(r);
    let params: Vec<(String, String)> = r.params.iter().map(|(n, t)| (c_of(t, e), n.to_string())).collect();
    let ret = c_of(r.ret, e);
    let noreturn = r.ret == "!";
    let plain = Signature { ret: ret.clone(), name: format!("{prefix}{}", r.name), params: params.clone(), noreturn };
    if !r.ctx {
        return vec![plain];
    }
    let mut with_ctx = vec![("shmem_ctx_t".to_string(), "ctx".to_string())];
    with_ctx.extend(params);
    vec![plain, Signature { ret, name: format!("{prefix}ctx_{}", r.name), params: with_ctx, noreturn }]
}

/// The standard C names a routine is declared under in `shmem.h` (none for an extension
/// without a standard name).
fn standard_signatures(r: &Routine) -> Vec<Signature> {
    match r.naming {
        Naming::Shmem => signatures(r, "shmem_"),
        Naming::Bare => signatures(r, ""),
        Naming::ExtensionOnly | Naming::Rshmemx => Vec::new(),
    }
}

/// The header being written, and the functions it declares.
struct Writer {
    text: String,
    declared: Vec<Signature>,
}

impl Writer {
    fn line(&mut self, s: &str) {
        self.text.push_str(s);
        self.text.push('\n');
    }
    fn section(&mut self, title: &str) {
        let _ = write!(self.text, "\n/* ---- {title} ---- */\n");
    }
    fn declare(&mut self, sig: Signature) {
        self.line(&sig.text(""));
        self.declared.push(sig);
    }
}

/// The routines of a section grouped by operation (first appearance first), each group
/// in type order: `long_put`, `int_put`, ..., then `long_get`, ...
fn by_op(routines: &[&'static Routine]) -> Vec<Vec<&'static Routine>> {
    let mut groups: Vec<Vec<&'static Routine>> = Vec::new();
    for &r in routines {
        let key = |x: &Routine| (x.op, x.typename.is_empty());
        match groups.iter_mut().find(|g| key(g[0]) == key(r)) {
            Some(g) => g.push(r),
            None => groups.push(vec![r]),
        }
    }
    groups
}

fn declare_section(w: &mut Writer, s: &Section) {
    w.section(s.title);
    let mut bare_noted = false;
    for group in by_op(&s.routines) {
        for r in group {
            if r.naming == Naming::Bare && !bare_noted {
                w.line("/* Deprecated SGI-era names. */");
                bare_noted = true;
            }
            for sig in standard_signatures(r) {
                w.declare(sig);
            }
        }
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
    w.line(&format!("#define SHMEM_CTX_DEFAULT ((shmem_ctx_t)(uintptr_t){})", crate::handle::CTX_DEFAULT));
    for (name, bits) in
        [("SERIALIZED", rshmem::CtxOptions::SERIALIZED), ("PRIVATE", rshmem::CtxOptions::PRIVATE), ("NOSTORE", rshmem::CtxOptions::NOSTORE)]
    {
        w.line(&format!("#define SHMEM_CTX_{name} {bits}L"));
    }
    w.line(&format!("#define SHMEM_CTX_INVALID ((shmem_ctx_t)(uintptr_t){})", crate::handle::CTX_INVALID));
    w.line("typedef struct {\n    size_t total_ops;\n} shmem_ctx_session_config_t;");
    w.line(&format!("#define SHMEM_CTX_SESSION_BATCH {}L", crate::ctx::SESSION_BATCH));
    w.line(&format!("#define SHMEM_CTX_SESSION_TOTAL_OPS {}L", crate::ctx::SESSION_TOTAL_OPS));
    for (name, team) in [("WORLD", rshmem::Team::WORLD), ("SHARED", rshmem::Team::SHARED), ("INVALID", rshmem::Team::INVALID)] {
        w.line(&format!("#define SHMEM_TEAM_{name} ((shmem_team_t)(uintptr_t){})", crate::handle::team_handle(team) as usize));
    }
    let (f, d) = (c_type("complexf"), c_type("complexd"));
    w.line("/* The complex types of the reductions: C's, or C++'s of the same layout. */");
    w.line(&format!("#if defined(__cplusplus)\ntypedef std::complex<float> {f};\ntypedef std::complex<double> {d};"));
    w.line(&format!("#else\ntypedef float _Complex {f};\ntypedef double _Complex {d};\n#endif"));
}

/// The routines' C11 generic selections and C++ overloads: one generic per operation of
/// the typed routines that have one.
struct Generic {
    /// `shmem_` + the operation.
    name: String,
    /// One routine per type, in table order.
    routines: Vec<&'static Routine>,
}

fn generics() -> Vec<Generic> {
    let mut out: Vec<Generic> = Vec::new();
    for s in sections() {
        for group in by_op(&s.routines) {
            let typed: Vec<&'static Routine> = group.into_iter().filter(|r| r.generic && r.naming == Naming::Shmem).collect();
            if let Some(first) = typed.first() {
                out.push(Generic { name: format!("shmem_{}", first.op), routines: typed });
            }
        }
    }
    out
}

impl Generic {
    /// The parameter the selection is made on (the first that holds the element type).
    fn dispatch(&self) -> usize {
        self.routines[0].params.iter().position(|(_, t)| mentions_element(t)).expect("a typed routine mentions its type")
    }
    fn dispatch_is_const(&self) -> bool {
        let (_, t) = self.routines[0].params[self.dispatch()];
        t.replace(' ', "") == "*constT"
    }
    fn typenames(&self) -> Vec<&'static str> {
        self.routines.iter().map(|r| r.typename).collect()
    }
    /// The routines selected by base type, and those that need their typedef named
    /// (their base types may be missing from the list).
    fn split(&self) -> (Vec<&'static Routine>, Vec<&'static Routine>) {
        let types = self.typenames();
        let base = self.routines.iter().copied().filter(|r| is_base_type(r.typename)).collect();
        let own = self.routines.iter().copied().filter(|r| typedef_needs_own_entry(r.typename, &types)).collect();
        (base, own)
    }
}

/// `_Generic(sel, T *: f_T, ..., default: <fallbacks, one level each>)`.
fn selection(sel: &str, base: &[&Routine], own: &[&Routine], ctx: bool, is_const: bool) -> String {
    let assoc = |r: &Routine| -> String {
        let ct = c_type(r.typename);
        let f = format!("shmem_{}{}", if ctx { "ctx_" } else { "" }, r.name);
        if is_const {
            format!(" const {ct} *: {f}, {ct} *: {f},")
        } else {
            format!(" {ct} *: {f},")
        }
    };
    let mut fallback = "rshmem_generic_nomatch".to_string();
    for r in own.iter().rev() {
        fallback = format!("_Generic({sel},{} default: {fallback})", assoc(r));
    }
    let list: String = base.iter().map(|r| assoc(r)).collect();
    format!("_Generic({sel},{list} default: {fallback})")
}

fn c11_generic(w: &mut Writer, g: &Generic) {
    let (base, own) = g.split();
    let d = g.dispatch();
    let sel = |i: usize| if i == 0 { "RSHMEM_ARG1(__VA_ARGS__)".to_string() } else { format!("RSHMEM_ARG{}N(__VA_ARGS__)", i + 1) };
    let is_const = g.dispatch_is_const();
    let text = if g.routines[0].ctx {
        format!(
            "#define {}(...) _Generic({}, shmem_ctx_t: {}, default: {})(__VA_ARGS__)",
            g.name,
            sel(0),
            selection(&sel(d + 1), &base, &own, true, is_const),
            selection(&sel(0), &base, &own, false, is_const)
        )
    } else {
        format!("#define {}(...) {}(__VA_ARGS__)", g.name, selection(&sel(d), &base, &own, false, is_const))
    };
    w.line(&text);
}

/// The C++ overloads of one generic (C++ has no `_Generic`): one per base type, and a
/// template per typedef that needs its own entry, enabled only for that type.
fn cxx_overloads(w: &mut Writer, g: &Generic, declared: &[Signature]) {
    let (base, own) = g.split();
    let d = g.dispatch();
    for r in &base {
        for sig in signatures(r, "shmem_") {
            // A C function of the generic's name and these parameter types exists (the
            // deprecated `long` shmem_wait_until): it serves as the overload.
            if declared.iter().any(|s| s.name == g.name && s.params.iter().map(|p| &p.0).eq(sig.params.iter().map(|p| &p.0))) {
                continue;
            }
            let args: Vec<&str> = sig.params.iter().map(|(_, n)| n.as_str()).collect();
            let sep = if sig.ret.ends_with('*') { "" } else { " " };
            w.line(&format!("inline {}{sep}{}({}) {{ return {}({}); }}", sig.ret, g.name, sig.params_text(), sig.name, args.join(", ")));
        }
    }
    for (k, r) in own.iter().enumerate() {
        let ct = c_type(r.typename);
        let mut cond = format!("rshmem_cxx::same<T, {ct}>::value");
        for earlier in &own[..k] {
            let _ = write!(cond, " && !rshmem_cxx::same<T, {}>::value", c_type(earlier.typename));
        }
        for sig in signatures(r, "shmem_") {
            let offset = usize::from(sig.name.starts_with("shmem_ctx_"));
            let params: Vec<String> = sig
                .params
                .iter()
                .enumerate()
                .map(|(i, (t, n))| {
                    let generic_t = if i == d + offset { "T" } else { "typename rshmem_cxx::id<T>::type" };
                    declarator(&t.replace(ct, generic_t), n)
                })
                .collect();
            let ret = if sig.ret == ct { "T".to_string() } else { sig.ret.clone() };
            let args: Vec<&str> = sig.params.iter().map(|(_, n)| n.as_str()).collect();
            w.line(&format!(
                "template <class T> inline typename rshmem_cxx::enable_if<{cond}, {ret}>::type {}({}) {{ return {}({}); }}",
                g.name,
                params.join(", "),
                sig.name,
                args.join(", ")
            ));
        }
    }
}

fn build() -> Writer {
    let mut w = Writer { text: String::new(), declared: Vec::new() };
    w.line("/* shmem.h: the OpenSHMEM 1.5 C API and the 1.6 additions, as implemented by rshmem.");
    w.line(" * GENERATED by crates/rshmem-c/src/header.rs from the routines' descriptions; do not edit.");
    w.line(" * Regenerate: RSHMEM_BLESS=1 cargo test -p rshmem-c --test header */");
    w.line("#ifndef RSHMEM_SHMEM_H\n#define RSHMEM_SHMEM_H\n\n#include <stddef.h>\n#include <stdint.h>");
    w.line("#if defined(__cplusplus)\n#include <complex>\n#endif\n");
    constants(&mut w);
    w.line("\n#ifdef __cplusplus\nextern \"C\" {\n#endif");
    handles(&mut w);
    let secs = sections();
    for s in &secs {
        declare_section(&mut w, s);
        if s.title.starts_with("Library setup") {
            w.line("/* Profiling control: rshmem has no profiling layer, so this does nothing. */");
            w.line("static inline void shmem_pcontrol(const int level, ...) { (void)level; }");
        }
    }
    w.line("\n#ifdef __cplusplus\n} /* extern \"C\" */\n#endif");
    w.section("Type-generic interfaces");
    let gens = generics();
    w.line("#if defined(__cplusplus)");
    w.line("namespace rshmem_cxx {");
    w.line("template <class A, class B> struct same { static const bool value = false; };");
    w.line("template <class A> struct same<A, A> { static const bool value = true; };");
    w.line("template <bool C, class R> struct enable_if {};");
    w.line("template <class R> struct enable_if<true, R> { typedef R type; };");
    w.line("template <class T> struct id { typedef T type; };");
    w.line("} /* namespace rshmem_cxx */");
    let declared = w.declared.clone();
    for g in &gens {
        cxx_overloads(&mut w, g, &declared);
    }
    w.line("/* shmem_sync(team): the team form (OpenSHMEM 1.5) beside the deprecated active-set form. */");
    w.line("inline int shmem_sync(shmem_team_t team) { return shmem_team_sync(team); }");
    w.line("#elif defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L");
    w.line("/* Selected when no association matches: calling it with arguments does not compile. */");
    w.line("void rshmem_generic_nomatch(void);");
    w.line("#define RSHMEM_ARG1(...) RSHMEM_ARG1_(__VA_ARGS__, 0)\n#define RSHMEM_ARG1_(a, ...) (&*(a))");
    w.line("#define RSHMEM_ARG2N(...) RSHMEM_ARG2N_(__VA_ARGS__, 0, 0)\n#define RSHMEM_ARG2N_(a, b, ...) ((b) + 0)");
    w.line("#define RSHMEM_ARG3N(...) RSHMEM_ARG3N_(__VA_ARGS__, 0, 0, 0)\n#define RSHMEM_ARG3N_(a, b, c, ...) ((c) + 0)");
    for g in &gens {
        c11_generic(&mut w, g);
    }
    w.line("#endif /* generics */");
    w.line("#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L");
    w.line("/* shmem_sync(team) (OpenSHMEM 1.5) or the deprecated shmem_sync(PE_start, logPE_stride, PE_size, pSync),");
    w.line(" * chosen by the number of arguments. */");
    w.line("#define RSHMEM_SYNC_FORM(a, b, c, d, form, ...) form");
    w.line("#define shmem_sync(...) RSHMEM_SYNC_FORM(__VA_ARGS__, shmem_sync, 0, 0, shmem_team_sync, 0)(__VA_ARGS__)");
    w.line("#endif");
    w.line("\n#endif /* RSHMEM_SHMEM_H */");
    w
}

/// The text of `shmem.h`.
pub fn shmem_h() -> String {
    build().text
}

/// Names of the functions `shmem.h` declares that `libshmem` must export.
pub fn declared_functions() -> Vec<String> {
    build().declared.into_iter().map(|s| s.name).collect()
}

/// The routines exported under `pshmem_` names (the standard ones).
fn profiled() -> Vec<Signature> {
    sections().iter().flat_map(|s| s.routines.iter()).filter(|r| r.naming == Naming::Shmem).flat_map(|r| signatures(r, "shmem_")).collect()
}

/// Names of the profiling interface's functions (`pshmem.h`).
pub fn profiling_functions() -> Vec<String> {
    profiled().into_iter().map(|s| format!("p{}", s.name)).collect()
}

/// The text of `pshmem.h`: the profiling interface, every `shmem_` routine under the
/// shifted name `pshmem_`.
pub fn pshmem_h() -> String {
    let mut text = String::from(
        "/* pshmem.h: the OpenSHMEM profiling interface of rshmem: every shmem_ routine as pshmem_.\n\
         * GENERATED by crates/rshmem-c/src/header.rs from the routines' descriptions; do not edit. */\n\
         #ifndef RSHMEM_PSHMEM_H\n#define RSHMEM_PSHMEM_H\n\n#include <shmem.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
    );
    for sig in profiled() {
        let _ = writeln!(text, "{}", sig.text("p"));
    }
    text.push_str("\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* RSHMEM_PSHMEM_H */\n");
    text
}

/// What each extension without a standard name does (`shmemx.h`'s comments).
const EXTENSION_DOCS: &[(&str, &str)] = &[
    (
        "wtime",
        "seconds since a fixed point in this process (its first call), by the monotonic\n * clock; only differences between calls mean anything.",
    ),
    (
        "get_uniqueid",
        "on the process that will be rank 0 of a job started without a launcher: writes\n * a meeting point on this host (text, at most SHMEMX_UNIQUEID_LEN bytes with its NUL; len is\n * the buffer's size) for the program to hand to the other processes itself (MPI, a file).",
    ),
    (
        "init_uniqueid",
        "starts the library (as shmem_init) as PE `rank` of `npes`, the PEs meeting over\n * TCP at the id shmemx_get_uniqueid made; rank 0 is the process that made it.",
    ),
    (
        "init_mpi_comm",
        "starts the library (as shmem_init) with the ranks of the MPI communicator `comm`\n * points to (an MPI_Comm *) as PEs, in the communicator's order; MPI must be initialized.",
    ),
];

/// The `shmemx_` signatures, and whether each is an extension of its own
/// ([`Naming::ExtensionOnly`]) or an earlier name of a standard routine.
fn extensions() -> Vec<(Signature, Naming)> {
    sections()
        .iter()
        .flat_map(|s| s.routines.iter())
        .filter(|r| r.shmemx)
        .flat_map(|r| signatures(r, "shmemx_").into_iter().map(|s| (s, r.naming)))
        .collect()
}

/// Names of the functions `shmemx.h` declares.
pub fn extension_functions() -> Vec<String> {
    extensions().into_iter().map(|(s, _)| s.name).collect()
}

/// The text of `shmemx.h`: rshmem's extensions, each mapping onto what the library has.
pub fn shmemx_h() -> String {
    let mut text = String::from(
        "/* shmemx.h: extensions to OpenSHMEM that programs written for other implementations call,\n \
         * each mapped onto what rshmem has. GENERATED by crates/rshmem-c/src/header.rs; do not edit. */\n\
         #ifndef RSHMEM_SHMEMX_H\n#define RSHMEM_SHMEMX_H\n\n#include <shmem.h>\n\n",
    );
    text.push_str(
        "/* SHMEMX_TEAM_NODE: the PEs on this PE's node. rshmem's SHMEM_TEAM_SHARED: the PEs of this\n \
         * host, which map each other's memory. */\n#define SHMEMX_TEAM_NODE SHMEM_TEAM_SHARED\n\n\
         /* SHMEMX_UNIQUEID_LEN: the size of a buffer for shmemx_get_uniqueid's id. */\n#define SHMEMX_UNIQUEID_LEN 128\n\n\
         #ifdef __cplusplus\nextern \"C\" {\n#endif\n\n",
    );
    for (sig, _) in extensions().iter().filter(|(_, n)| *n == Naming::ExtensionOnly) {
        let doc = EXTENSION_DOCS.iter().find(|(n, _)| sig.name == format!("shmemx_{n}")).map(|(_, d)| *d);
        let doc = doc.unwrap_or_else(|| panic!("header: {} needs a line in EXTENSION_DOCS", sig.name));
        let _ = writeln!(text, "/* {}: {doc} */\n{}", sig.name, sig.text(""));
    }
    text.push_str(
        "\n/* Earlier names of routines that OpenSHMEM standardized later: each is exactly the shmem_\n \
         * routine of the same name (pe_quiet, signal_add/set and the sum scans: 1.6). */\n",
    );
    for (sig, _) in extensions().iter().filter(|(_, n)| *n == Naming::Shmem) {
        let _ = writeln!(text, "{}", sig.text(""));
    }
    text.push_str("\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* RSHMEM_SHMEMX_H */\n");
    text
}

/// The sections of `rshmemx_cuda.h`.
fn cuda_sections() -> Vec<Section> {
    use crate::cuda;
    vec![
        Section::new(
            "GPU PEs: init, the device state of nvcc-built code, device team handles, GPU heap, user buffers, rshmemx_ptr (a peer's address for kernels)",
            &[&[cuda::SETUP]],
        ),
        Section::new(
            "Host RMA whose local side is host or device memory (device memory: one device copy to a peer whose GPU heap is mapped here, else staged through the host); relay_putmem/getmem go through relay_pe, which carries the bytes on to pe (complete at return)",
            &[&[cuda::HOST_RMA]],
        ),
        Section::new("Stream-ordered RMA, signals, waits, ordering and barriers", &[&[cuda::STREAM]]),
        Section::new("Stream-ordered typed RMA and data-moving collectives", &[cuda::TYPED]),
        Section::new("Stream-ordered reductions and reduce-scatters", &[cuda::reduce_float::ROUTINES, cuda::reduce_int::ROUTINES]),
        Section::new("Stream-ordered byte collectives; collective (cooperative) launch", &[&[cuda::COLL]]),
        Section::new(
            "The GPU API's host routines: GPU PEs over shmem_init's CPU PEs (rshmemx_cuda_init_with_shmem: a second runtime of the same PEs, which these routines and every rshmemx_ routine above then act on, while shmem_* routines act on the CPU PEs; 0 on success, else a message and 1), its finalize (the CPU PEs keep running; shmem_finalize finalizes it first when it still runs), and its forms of the OpenSHMEM routines of the same names. Without a second runtime they act on the one runtime, as the shmem_ routines do. Team handles made here belong to the GPU API's runtime",
            &[&[crate::cuda_host::ROUTINES]],
        ),
    ]
}

/// The `rshmemx_` signatures of `rshmemx_cuda.h`.
fn cuda_signatures() -> Vec<(&'static str, Vec<Signature>)> {
    cuda_sections().into_iter().map(|s| (s.title, s.routines.iter().flat_map(|r| signatures(r, "rshmemx_")).collect())).collect()
}

/// Names of the functions `rshmemx_cuda.h` declares.
pub fn cuda_functions() -> Vec<String> {
    cuda_signatures().into_iter().flat_map(|(_, sigs)| sigs.into_iter().map(|s| s.name)).collect()
}

/// The text of `rshmemx_cuda.h`: the C host API for GPU PEs.
pub fn rshmemx_cuda_h() -> String {
    let mut text = String::from(
        "/* rshmemx_cuda.h: rshmem's C host API for GPU PEs (heaps in GPU memory), usable from C and C++,\n \
         * with or without the CUDA headers. Names follow NVSHMEM's host API with the rshmemx_ prefix.\n \
         * GENERATED by crates/rshmem-c/src/header.rs from the routines' descriptions; do not edit.\n \
         * Regenerate: RSHMEM_BLESS=1 cargo test -p rshmem-c --test header\n *\n \
         * rshmemx_cuda_init starts the library with GPU PEs: shmem_malloc and rshmemx_cuda_malloc then\n \
         * both allocate in GPU memory (rshmemx_cuda_malloc ends the job on a CPU PE). shmem_init keeps\n \
         * CPU PEs with host memory. The GPU is the one current at init (cudaSetDevice), else the PE's\n \
         * rank on its host modulo the host's GPUs. Streams, modules and kernels are the CUDA driver's\n \
         * handles: a cudaStream_t is an rshmemx_stream_t, a CUmodule an rshmemx_cumodule_t, and a dim3\n \
         * has rshmemx_dim3's layout. Bad arguments end the job with a message naming the call and the\n \
         * argument; routines on a team return nonzero for SHMEM_TEAM_INVALID. */\n\
         #ifndef RSHMEM_RSHMEMX_CUDA_H\n#define RSHMEM_RSHMEMX_CUDA_H\n\n#include <shmem.h>\n\n\
         #ifdef __cplusplus\nextern \"C\" {\n#endif\n\n\
         /* A CUDA stream (cudaStream_t, CUstream); 0 is the legacy default stream. */\n\
         typedef struct CUstream_st *rshmemx_stream_t;\n\
         /* A module loaded with the driver API (CUmodule). */\n\
         typedef struct CUmod_st *rshmemx_cumodule_t;\n\
         /* Grid and block dimensions, laid out as CUDA's dim3. */\n\
         typedef struct {\n    unsigned int x, y, z;\n} rshmemx_dim3;\n\
         /* What rshmem_device.cuh registers from each nvcc-built file (rshmemx_cudart_register): the\n \
         * address and size of the file's rshmem_state on a device, and a kernel's driver handle from its\n \
         * host function. Programs do not call these themselves. */\n\
         typedef void *(*rshmemx_state_address_fn)(int device, unsigned long *size);\n\
         typedef void *(*rshmemx_function_of_fn)(const void *host_function);\n\
         /* 16-bit floats: the bits of CUDA's __half (half) and __nv_bfloat16, which a pointer to\n \
         * either may be cast to; by value they pass as those types do. */\n\
         typedef struct {\n    unsigned short bits;\n} rshmemx_half;\n\
         typedef struct {\n    unsigned short bits;\n} rshmemx_bfloat16;\n",
    );
    for (title, sigs) in cuda_signatures() {
        let _ = write!(text, "\n/* ---- {title} ---- */\n");
        for sig in sigs {
            let _ = writeln!(text, "{}", sig.text(""));
        }
    }
    text.push_str("\n#ifdef __cplusplus\n} /* extern \"C\" */\n#endif\n\n#endif /* RSHMEM_RSHMEMX_CUDA_H */\n");
    text
}
