//! The enumerations the configuration table reads ([`super::kinds::Choice`]).

use super::kinds::Choice;

/// `RSHMEM_DEVICE`: which kind of PE this process runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Device {
    /// GPU PEs when a CUDA driver and a GPU are present, else CPU PEs.
    #[default]
    Auto,
    /// CPU PEs (host memory), whatever the machine has.
    Cpu,
    /// GPU PEs; init fails without a driver and a GPU.
    Gpu,
}

impl Choice for Device {
    const CHOICES: &'static [(&'static str, Self)] = &[("auto", Device::Auto), ("cpu", Device::Cpu), ("gpu", Device::Gpu)];
}

/// `RSHMEM_TRANSPORT`: how PEs reach each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TransportMode {
    /// Mapped peers (same host) through shared memory, the others through UCX.
    #[default]
    Auto,
    /// Every PE in one shared-memory domain.
    Local,
    /// UCX for every pair of distinct PEs (same-host heaps stay mapped but unused).
    Ucx,
}

impl Choice for TransportMode {
    const CHOICES: &'static [(&'static str, Self)] =
        &[("auto", TransportMode::Auto), ("local", TransportMode::Local), ("ucx", TransportMode::Ucx)];
}

/// `RSHMEM_UCX_PROTOCOL`: how host heaps use UCX.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UcxProtocol {
    /// UCX put/get/atomics on registered memory.
    #[default]
    Rma,
    /// Active messages carried out by the target's progress thread (the staged protocol).
    Am,
}

impl Choice for UcxProtocol {
    const CHOICES: &'static [(&'static str, Self)] = &[("rma", UcxProtocol::Rma), ("am", UcxProtocol::Am)];
}

/// `RSHMEM_REMOTE_ENGINE`: what the device API's remote engine (`rshmemx_remote_*`) reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RemoteEngine {
    /// The peers that already have a remote transport (other hosts; every peer under
    /// `RSHMEM_TRANSPORT=ucx`).
    #[default]
    Auto,
    /// Every peer: GPU PEs connect the staged UCX transport to mapped peers too.
    Ucx,
}

impl Choice for RemoteEngine {
    const CHOICES: &'static [(&'static str, Self)] = &[("auto", RemoteEngine::Auto), ("ucx", RemoteEngine::Ucx)];
}

/// `RSHMEM_GPU_COLL_PROTO`: the protocol of GPU collectives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum GpuProto {
    /// The decision tree decides.
    #[default]
    Auto,
    /// Peer loads/stores between flag barriers.
    Simple,
    /// 8 bytes of data and an 8-byte flag per 16-byte store.
    Ll,
    /// 120 bytes of data and an 8-byte flag per 128-byte line, stored by 8 lanes of a warp.
    Ll128,
    /// Puts (direct or through the host proxy) between team barriers: teams with members
    /// on other hosts.
    Proxy,
}

impl Choice for GpuProto {
    const CHOICES: &'static [(&'static str, Self)] = &[
        ("auto", GpuProto::Auto),
        ("simple", GpuProto::Simple),
        ("ll", GpuProto::Ll),
        ("ll128", GpuProto::Ll128),
        ("proxy", GpuProto::Proxy),
    ];
}

impl GpuProto {
    /// The device code (`RSHMEMX_PROTO_*`): the position in [`Choice::CHOICES`].
    pub fn code(self) -> i32 {
        Self::CHOICES.iter().position(|(_, p)| *p == self).unwrap_or(0) as i32
    }

    /// The protocol of a device code (unknown codes: auto).
    pub fn from_code(code: i32) -> GpuProto {
        usize::try_from(code).ok().and_then(|i| Self::CHOICES.get(i)).map_or(GpuProto::Auto, |(_, p)| *p)
    }

    /// Its name, as `RSHMEM_GPU_COLL_PROTO` spells it.
    pub fn name(self) -> &'static str {
        Choice::name(self)
    }

    /// Parses a name (an empty text is `auto`); the error names the variable.
    pub fn parse(text: &str) -> crate::Result<GpuProto> {
        if text.trim().is_empty() {
            return Ok(GpuProto::Auto);
        }
        GpuProto::from_name(text).map_err(|detail| crate::Error::InvalidArgument {
            call: "init",
            arg: "RSHMEM_GPU_COLL_PROTO",
            detail,
            pe: 0,
        })
    }
}

/// `RSHMEM_LOG_COLOR`: whether log lines carry ANSI colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogColor {
    /// Colour only when stderr is a terminal.
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl Choice for LogColor {
    const CHOICES: &'static [(&'static str, Self)] = &[("auto", LogColor::Auto), ("always", LogColor::Always), ("never", LogColor::Never)];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_proto_codes_match_the_device_header_order() {
        for (i, (_, p)) in GpuProto::CHOICES.iter().enumerate() {
            assert_eq!(p.code(), i as i32);
            assert_eq!(GpuProto::from_code(i as i32), *p);
        }
        assert_eq!(GpuProto::from_code(99), GpuProto::Auto);
        assert_eq!(GpuProto::parse("LL128").unwrap(), GpuProto::Ll128);
        assert!(GpuProto::parse("fast").unwrap_err().to_string().contains("not auto, simple, ll, ll128 or proxy"));
    }
}

/// `RSHMEM_BIND_TO` and `--bind-to`: how a launcher binds its PEs to CPUs
/// (`crate::bootstrap::binding`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BindTo {
    /// `core` when the PEs fit on the allowed CPUs, else `none`.
    #[default]
    Auto,
    /// No binding: PEs run wherever the scheduler puts them.
    None,
    /// Each PE on one CPU of its own (round robin when there are fewer CPUs than PEs).
    Core,
    /// Each PE on the NUMA node of the CPU `core` would give it.
    Numa,
}

impl Choice for BindTo {
    const CHOICES: &'static [(&'static str, Self)] =
        &[("auto", BindTo::Auto), ("none", BindTo::None), ("core", BindTo::Core), ("numa", BindTo::Numa)];
}

impl std::str::FromStr for BindTo {
    type Err = String;

    fn from_str(s: &str) -> Result<BindTo, String> {
        BindTo::from_name(s)
    }
}

impl std::fmt::Display for BindTo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
