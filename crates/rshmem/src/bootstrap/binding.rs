//! CPU binding of the PEs a launcher starts (`rshmemrun --bind-to`, spelled as Open MPI
//! spells it): each process is bound to the CPUs of its PEs before it runs, so a PE that
//! waits by spinning keeps its core and the scheduler does not move it between cores.
//!
//! The CPUs are those the launcher itself may run on (its affinity mask: a cgroup or
//! `taskset` limit is respected), in ascending order. PE `p` gets CPU `p mod count`
//! (`core`), or every allowed CPU of the NUMA node holding that CPU (`numa`, from
//! `/sys/devices/system/node`); a process of several thread PEs gets the union of its
//! PEs' CPUs. `auto` (the default) is `core` when the job's PEs fit on the allowed CPUs,
//! and `none` when they do not (oversubscribed PEs must be free to share every core).
//! The policy is `--bind-to`'s, else `RSHMEM_BIND_TO`'s. Every PE learns how many CPUs
//! the host's PEs share from `RSHMEM_HOST_CPUS` (a bound PE's own mask shows one).

pub use crate::config::BindTo;
use rustix::thread::CpuSet;

/// The CPUs this process may run on, ascending (empty when the mask cannot be read).
pub fn allowed_cpus() -> Vec<usize> {
    match rustix::thread::sched_getaffinity(None) {
        Ok(set) => (0..CpuSet::MAX_CPU).filter(|&c| set.is_set(c)).collect(),
        Err(_) => Vec::new(),
    }
}

/// Parses a kernel CPU list (`0-3,8,10-11`).
pub fn parse_cpu_list(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.trim().parse::<usize>(), b.trim().parse::<usize>()) {
                    out.extend(a..=b);
                }
            }
            None => out.extend(part.trim().parse::<usize>().ok()),
        }
    }
    out
}

/// Formats CPUs as a kernel CPU list (`0-3,8`).
pub fn format_cpu_list(cpus: &[usize]) -> String {
    let mut sorted = cpus.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { sorted[i].to_string() } else { format!("{}-{}", sorted[i], sorted[j]) });
        i = j + 1;
    }
    parts.join(",")
}

/// The NUMA nodes' CPU lists of this machine (empty when the kernel shows none).
fn numa_nodes() -> Vec<Vec<usize>> {
    let Ok(dir) = std::fs::read_dir("/sys/devices/system/node") else { return Vec::new() };
    let mut nodes: Vec<(usize, Vec<usize>)> = dir
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let id = name.strip_prefix("node")?.parse::<usize>().ok()?;
            let list = std::fs::read_to_string(e.path().join("cpulist")).ok()?;
            Some((id, parse_cpu_list(&list)))
        })
        .collect();
    nodes.sort();
    nodes.into_iter().map(|(_, cpus)| cpus).collect()
}

/// The CPUs of each process of a job of `n_pes` PEs, `per_process` to a process, under
/// `policy`, given the allowed CPUs and the NUMA nodes' CPU lists: `None` for a process
/// left unbound.
pub fn plan_with(policy: BindTo, n_pes: usize, per_process: usize, allowed: &[usize], nodes: &[Vec<usize>]) -> Vec<Option<Vec<usize>>> {
    let per = per_process.max(1);
    let processes = n_pes.div_ceil(per);
    let policy = match policy {
        BindTo::Auto if n_pes <= allowed.len() => BindTo::Core,
        BindTo::Auto => BindTo::None,
        p => p,
    };
    if policy == BindTo::None || allowed.is_empty() {
        return vec![None; processes];
    }
    let core_of = |pe: usize| allowed[pe % allowed.len()];
    let cpus_of = |pe: usize| -> Vec<usize> {
        let core = core_of(pe);
        match policy {
            BindTo::Numa => match nodes.iter().find(|n| n.contains(&core)) {
                Some(node) => node.iter().copied().filter(|c| allowed.contains(c)).collect(),
                None => allowed.to_vec(),
            },
            _ => vec![core],
        }
    };
    (0..processes)
        .map(|j| {
            let mut cpus: Vec<usize> = (j * per..((j + 1) * per).min(n_pes)).flat_map(cpus_of).collect();
            cpus.sort_unstable();
            cpus.dedup();
            Some(cpus)
        })
        .collect()
}

/// [`plan_with`] on this machine: this process's allowed CPUs and its NUMA nodes.
pub fn plan(policy: BindTo, n_pes: usize, per_process: usize) -> Vec<Option<Vec<usize>>> {
    let nodes = if policy == BindTo::Numa { numa_nodes() } else { Vec::new() };
    plan_with(policy, n_pes, per_process, &allowed_cpus(), &nodes)
}

/// The core of each PE of every process, in PE order, when `policy` binds PEs to a core
/// each (`core`, or `auto` when the PEs fit) and processes host more than one PE: their
/// threads then bind themselves to their own core (see `RSHMEM_THREAD_CPUS`). `None` for
/// a process that keeps one mask for all its PEs.
pub fn thread_cores_with(policy: BindTo, n_pes: usize, per_process: usize, allowed: &[usize]) -> Vec<Option<Vec<usize>>> {
    let per = per_process.max(1);
    let processes = n_pes.div_ceil(per);
    let core = match policy {
        BindTo::Core => true,
        BindTo::Auto => n_pes <= allowed.len(),
        _ => false,
    };
    (0..processes)
        .map(|j| {
            (core && per > 1 && !allowed.is_empty())
                .then(|| (j * per..((j + 1) * per).min(n_pes)).map(|pe| allowed[pe % allowed.len()]).collect())
        })
        .collect()
}

/// The CPUs of `allowed` that no process of `plan` is bound to: where a bound job leaves
/// cores free, the runtime's polling helper threads (the GPU proxy) run there instead of
/// on their PE's core, where they would share it with a PE spinning on its GPU or in a
/// wait. Empty when a process is unbound (it may run anywhere).
pub fn spare_cpus(plan: &[Option<Vec<usize>>], allowed: &[usize]) -> Vec<usize> {
    if plan.iter().any(Option::is_none) {
        return Vec::new();
    }
    allowed.iter().copied().filter(|c| !plan.iter().flatten().any(|m| m.contains(c))).collect()
}

/// The CPUs of `RSHMEM_SPARE_CPUS` (none when unset): where the runtime's helper threads
/// (the GPU proxy, the UCX progress thread) move with [`move_helper_thread`].
pub fn configured_spare_cpus(config: &crate::config::Config) -> Vec<usize> {
    config.spare_cpus.as_deref().map(parse_cpu_list).unwrap_or_default()
}

/// Moves the calling helper thread onto `spare` (see [`spare_cpus`]; `RSHMEM_SPARE_CPUS`),
/// leaving it where it is when `spare` is empty. Returns the CPUs it may now run on.
pub fn move_helper_thread(spare: &[usize]) -> std::io::Result<Vec<usize>> {
    if !spare.is_empty() {
        bind_thread_to(spare)?;
    }
    Ok(allowed_cpus())
}

/// Binds the calling thread (not its whole process) to CPU `cpu`.
pub fn bind_this_thread(cpu: usize) -> std::io::Result<()> {
    bind_thread_to(&[cpu])
}

/// Binds the calling thread (not its whole process) to `cpus`.
fn bind_thread_to(cpus: &[usize]) -> std::io::Result<()> {
    rustix::thread::sched_setaffinity(None, &cpu_set(cpus)).map_err(std::io::Error::from)
}

/// The affinity mask of `cpus` (CPUs past the mask's size are left out).
pub fn cpu_set(cpus: &[usize]) -> CpuSet {
    let mut set = CpuSet::new();
    for &c in cpus.iter().filter(|&&c| c < CpuSet::MAX_CPU) {
        set.set(c);
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_pes_get_a_core_each_only_under_core_binding() {
        let allowed = [4, 5, 6];
        // 5 PEs, 2 per process: the cores round robin in PE order, the last process has one PE.
        assert_eq!(thread_cores_with(BindTo::Core, 5, 2, &allowed), vec![Some(vec![4, 5]), Some(vec![6, 4]), Some(vec![5])]);
        assert_eq!(thread_cores_with(BindTo::Auto, 3, 3, &allowed), vec![Some(vec![4, 5, 6])]);
        // auto with more PEs than CPUs, none, numa, and one PE per process: no thread binding.
        assert_eq!(thread_cores_with(BindTo::Auto, 4, 2, &allowed), vec![None, None]);
        assert_eq!(thread_cores_with(BindTo::None, 2, 2, &allowed), vec![None]);
        assert_eq!(thread_cores_with(BindTo::Numa, 2, 2, &allowed), vec![None]);
        assert_eq!(thread_cores_with(BindTo::Core, 2, 1, &allowed), vec![None, None]);
    }

    #[test]
    fn spare_cpus_are_the_allowed_ones_no_process_is_bound_to() {
        let allowed = [0, 1, 2, 3, 4, 5];
        let plan = plan_with(BindTo::Core, 2, 2, &allowed, &[]);
        assert_eq!(plan, vec![Some(vec![0, 1])]);
        assert_eq!(spare_cpus(&plan, &allowed), vec![2, 3, 4, 5]);
        assert_eq!(spare_cpus(&plan_with(BindTo::Core, 3, 1, &allowed, &[]), &allowed), vec![3, 4, 5]);
        // Every CPU taken, or a process left unbound: nothing spare.
        assert_eq!(spare_cpus(&plan_with(BindTo::Core, 6, 1, &allowed, &[]), &allowed), Vec::<usize>::new());
        assert_eq!(spare_cpus(&plan_with(BindTo::None, 2, 1, &allowed, &[]), &allowed), Vec::<usize>::new());
        assert_eq!(spare_cpus(&plan_with(BindTo::Auto, 8, 1, &allowed, &[]), &allowed), Vec::<usize>::new());
        // A NUMA node's worth each: the other node is spare.
        let nodes = vec![vec![0, 1, 2], vec![3, 4, 5]];
        assert_eq!(spare_cpus(&plan_with(BindTo::Numa, 2, 1, &allowed, &nodes), &allowed), vec![3, 4, 5]);
    }

    #[test]
    fn policies_parse_and_print() {
        for p in [BindTo::Auto, BindTo::None, BindTo::Core, BindTo::Numa] {
            assert_eq!(p.to_string().parse::<BindTo>(), Ok(p));
        }
        let err = "socket".parse::<BindTo>().unwrap_err();
        assert!(err.contains("socket") && err.contains("core"), "{err}");
        assert_eq!(" Core ".parse::<BindTo>(), Ok(BindTo::Core));
    }

    #[test]
    fn cpu_lists_round_trip() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(format_cpu_list(&[11, 0, 1, 2, 3, 8, 10, 3]), "0-3,8,10-11");
        assert_eq!(format_cpu_list(&[5]), "5");
        assert!(parse_cpu_list("").is_empty());
    }

    #[test]
    fn core_gives_each_pe_its_own_cpu_and_auto_unbinds_when_oversubscribed() {
        let allowed = [2, 3, 6, 7];
        let p = plan_with(BindTo::Core, 4, 1, &allowed, &[]);
        assert_eq!(p, vec![Some(vec![2]), Some(vec![3]), Some(vec![6]), Some(vec![7])]);
        assert_eq!(plan_with(BindTo::Auto, 4, 1, &allowed, &[]), p);
        // Threads of one process: the union of their PEs' CPUs.
        assert_eq!(plan_with(BindTo::Core, 4, 2, &allowed, &[]), vec![Some(vec![2, 3]), Some(vec![6, 7])]);
        // More PEs than CPUs: auto leaves them free; core goes round robin.
        assert_eq!(plan_with(BindTo::Auto, 8, 1, &allowed, &[]), vec![None; 8]);
        assert_eq!(plan_with(BindTo::Core, 6, 1, &allowed, &[])[4], Some(vec![2]));
        assert_eq!(plan_with(BindTo::None, 2, 1, &allowed, &[]), vec![None, None]);
    }

    #[test]
    fn numa_binds_to_the_allowed_cpus_of_the_node() {
        let nodes = vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]];
        let allowed = [1, 2, 5, 6];
        let p = plan_with(BindTo::Numa, 3, 1, &allowed, &nodes);
        assert_eq!(p, vec![Some(vec![1, 2]), Some(vec![1, 2]), Some(vec![5, 6])]);
        // No NUMA information: every allowed CPU.
        assert_eq!(plan_with(BindTo::Numa, 1, 1, &allowed, &[]), vec![Some(allowed.to_vec())]);
    }

    #[test]
    fn masks_hold_the_cpus() {
        let set = cpu_set(&[0, 3]);
        assert!(set.is_set(0) && set.is_set(3) && !set.is_set(1));
        assert_eq!(set.count(), 2);
    }
}
