//! The generated part of the device API: `device/rshmem_device_types.cuh`.
//!
//! Everything the device headers share with the host is written out here from the host's
//! own definitions, so the three APIs (Rust, C, device) have one source: the type tables
//! of [`crate::types`] (RMA, wait, AMO and reduction lists), the team handles, comparison and signal
//! constants, the atomic codes of [`crate::transport::AmoOp`], the protocol codes of
//! [`crate::config::GpuProto`], and the device structs of [`crate::gpu::state`]. The test
//! `tests/device_header.rs` regenerates the file and compares (`RSHMEM_BLESS=1` rewrites).
//!
//! 64-bit types are spelled as `<stdint.h>` spells them on 64-bit Linux (`int64_t` is
//! `long`, `uint64_t`, `size_t` are `unsigned long`), so a kernel passing an `int64_t*`
//! calls the `int64` functions without a cast, from nvcc or NVRTC alike. Device code is C++,
//! so the same names are also overloaded for the `long long` spellings (`*_ALT` lists),
//! which kernels written without `<stdint.h>` use for 64-bit words.

use crate::config::{Choice, GpuProto};
use crate::gpu::state::{DeviceState, DeviceTeam, MAX_ROUNDS};
use crate::runtime::teams::Team;
use crate::transport::AmoOp;
use crate::types::Cmp;

/// Where the generated header lives, relative to the crate.
pub const PATH: &str = "device/rshmem_device_types.cuh";

/// The C type of an OpenSHMEM type name (`int64` -> `long`) on 64-bit Linux.
pub fn c_type(name: &str) -> &'static str {
    match name {
        "float" => "float",
        "double" => "double",
        "char" => "char",
        "schar" | "int8" => "signed char",
        "short" | "int16" => "short",
        "int" | "int32" => "int",
        "long" | "int64" | "ptrdiff" => "long",
        "longlong" => "long long",
        "uchar" | "uint8" => "unsigned char",
        "ushort" | "uint16" => "unsigned short",
        "uint" | "uint32" => "unsigned int",
        "ulong" | "uint64" | "size" => "unsigned long",
        "ulonglong" => "unsigned long long",
        other => panic!("no C type for `{other}` in gpu::header::c_type"),
    }
}

/// The other spelling of a 64-bit fixed-width type (`long long` for `int64`), for the
/// overloads of the `*_ALT` lists; `None` for the other types.
pub fn alt_c_type(name: &str) -> Option<&'static str> {
    match name {
        "int64" | "ptrdiff" => Some("long long"),
        "uint64" | "size" => Some("unsigned long long"),
        _ => None,
    }
}

/// The unsigned type device atomics work on for a type of `width` bytes.
fn atomic_word(width: usize) -> &'static str {
    if width == 4 {
        "unsigned int"
    } else {
        "unsigned long long"
    }
}

macro_rules! names {
    ($(($name:ident, $t:ty)),* $(,)?) => {
        [$((stringify!($name), std::mem::size_of::<$t>())),*]
    };
}

/// `#define LIST(X) X(name, T) ...` over a type table, with the atomic word type when
/// `with_word`; then `LIST_ALT(X)` over its 64-bit fixed-width names in their `long long`
/// spellings (overloads of the same functions).
fn type_list(macro_name: &str, entries: &[(&str, usize)], with_word: bool) -> String {
    let item = |n: &str, t: &str, w: usize| if with_word { format!("X({n}, {t}, {})", atomic_word(w)) } else { format!("X({n}, {t})") };
    let items: Vec<String> = entries.iter().map(|&(n, w)| item(n, c_type(n), w)).collect();
    let alts: Vec<String> = entries.iter().filter_map(|&(n, w)| alt_c_type(n).map(|t| item(n, t, w))).collect();
    define(macro_name, &items) + &define(&format!("{macro_name}_ALT"), &alts)
}

/// `#define NAME(X) items...`, four items a line.
fn define(macro_name: &str, items: &[String]) -> String {
    let mut out = format!("#define {macro_name}(X)");
    for chunk in items.chunks(4) {
        out += " \\\n    ";
        out += &chunk.join(" ");
    }
    out + "\n"
}

/// The whole generated header.
pub fn generate() -> String {
    let mut h = String::from(
        "// rshmem device API: the part generated from the host's definitions (src/device_header.rs).\n\
         // Do not edit: `RSHMEM_BLESS=1 cargo test -p rshmem --test device_header` rewrites it.\n\
         #ifndef RSHMEM_DEVICE_TYPES_CUH\n#define RSHMEM_DEVICE_TYPES_CUH\n\n\
         typedef unsigned long long rshmem_u64;\ntypedef long long rshmem_i64;\ntypedef unsigned long long rshmem_size_t;\n\
         typedef int rshmem_team_t;\n\n",
    );
    h += &format!(
        "#define RSHMEM_TEAM_WORLD {}\n#define RSHMEM_TEAM_SHARED {}\n#define RSHMEM_TEAM_INVALID (-1)\n\n",
        Team::WORLD.raw(),
        Team::SHARED.raw()
    );
    for c in Cmp::ALL {
        h += &format!("#define RSHMEM_CMP_{} {}\n", format!("{c:?}").to_ascii_uppercase(), c as i32);
    }
    h += &format!(
        "\n#define RSHMEM_SIGNAL_SET {}\n#define RSHMEM_SIGNAL_ADD {}\n\n",
        crate::SignalOp::Set as i32,
        crate::SignalOp::Add as i32
    );
    let amo_names = ["FETCH", "SET", "SWAP", "CSWAP", "ADD", "AND", "OR", "XOR"];
    for op in AmoOp::ALL {
        h += &format!("#define RSHMEMI_AMO_{} {}u\n", amo_names[op.code() as usize], op.code());
    }
    h += "\n";
    for (name, p) in GpuProto::CHOICES {
        h += &format!("#define RSHMEMX_PROTO_{} {}\n", name.to_ascii_uppercase(), p.code());
    }
    h += &format!("\n#define RSHMEM_MAX_ROUNDS {MAX_ROUNDS}\n\n");
    h += &DeviceTeam::c_declaration();
    h += "\n";
    h += &DeviceState::c_declaration();
    h += "\n// The type tables (src/types.rs): X(name, C type) or X(name, C type, atomic word type).\n";
    h += &type_list("RSHMEM_RMA_TYPES", &crate::rma_types!(names), false);
    h += &type_list("RSHMEM_SYNC_TYPES", &crate::sync_types!(names), false);
    h += &type_list("RSHMEM_AMO_STANDARD_TYPES", &crate::amo_standard_types!(names), true);
    h += &type_list("RSHMEM_AMO_BITWISE_TYPES", &crate::amo_bitwise_types!(names), true);
    h += &type_list("RSHMEM_AMO_EXTENDED_TYPES", &crate::amo_extended_types!(names), true);
    h += &type_list("RSHMEM_REDUCE_BITWISE_TYPES", &crate::reduce_bitwise_types!(names), false);
    h += &type_list("RSHMEM_REDUCE_ARITH_TYPES", &crate::reduce_arith_types!(names), false);
    h + "\n#endif\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixty_four_bit_types_are_spelled_as_stdint_spells_them() {
        assert_eq!((c_type("int64"), c_type("uint64"), c_type("size")), ("long", "unsigned long", "unsigned long"));
        let h = generate();
        assert!(h.contains("X(int64, long)"), "{h}");
        assert!(h.contains("X(uint64, unsigned long, unsigned long long)"), "{h}");
        assert!(h.contains("#define RSHMEMI_AMO_XOR 7u"));
        assert!(h.contains("#define RSHMEMX_PROTO_PROXY 4"));
        assert!(h.contains("struct rshmem_device_state {\n    int my_pe;"));
    }
}
