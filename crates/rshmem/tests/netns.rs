//! Two hosts on one machine: two network namespaces joined by a veth pair, even PEs in
//! one, odd PEs in the other, every pair of PEs talking through UCX over TCP on the veth
//! link (`RSHMEM_TRANSPORT=ucx`). A 4-PE job across them runs the RMA, AMO and collective
//! test programs. Then the collectives again with the default transport and each
//! namespace named as a host (`RSHMEM_HOST`): PEs of one namespace share memory, the
//! decision tree picks the hierarchical algorithms (checked), and only the leaders'
//! steps cross the link. Needs root, iproute2 and UCX (CI has all three); elsewhere it is
//! skipped with the reason printed.

mod common;
use common::*;
use std::process::Command;

/// The two namespaces and their link; removed on drop.
struct Hosts {
    names: [String; 2],
    devs: [String; 2],
}

fn ip(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip").args(args).output().map_err(|e| format!("ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr).trim()))
    }
}

impl Hosts {
    fn create() -> Result<Hosts, String> {
        let id = std::process::id();
        let h = Hosts { names: [format!("rshmem-{id}-a"), format!("rshmem-{id}-b")], devs: [format!("rv{id}a"), format!("rv{id}b")] };
        for n in &h.names {
            ip(&["netns", "add", n])?;
        }
        ip(&["link", "add", &h.devs[0], "type", "veth", "peer", "name", &h.devs[1]])?;
        for (i, (n, d)) in h.names.iter().zip(&h.devs).enumerate() {
            let addr = format!("10.123.{}.{}/24", id % 200, i + 1);
            ip(&["link", "set", d, "netns", n])?;
            ip(&["-n", n, "addr", "add", &addr, "dev", d])?;
            ip(&["-n", n, "link", "set", d, "up"])?;
            ip(&["-n", n, "link", "set", "lo", "up"])?;
        }
        Ok(h)
    }

    /// A wrapper that runs its arguments as a PE in namespace PE mod 2.
    fn wrapper(&self) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("rshmem-netns-pe-{}.sh", std::process::id()));
        let script = format!(
            "#!/bin/sh\nif [ $((RSHMEM_PE % 2)) = 0 ]; then ns={}; dev={}; else ns={}; dev={}; fi\nexec ip netns exec $ns env UCX_NET_DEVICES=$dev RSHMEM_HOST=$ns \"$@\"\n",
            self.names[0], self.devs[0], self.names[1], self.devs[1]
        );
        std::fs::write(&p, script).expect("write wrapper");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod wrapper");
        p
    }

    /// Bytes received on the first namespace's end of the link.
    fn rx_bytes(&self) -> u64 {
        let path = format!("/sys/class/net/{}/statistics/rx_bytes", self.devs[0]);
        let out = Command::new("ip").args(["netns", "exec", &self.names[0], "cat", &path]).output().expect("ip netns exec");
        String::from_utf8_lossy(&out.stdout).trim().parse().unwrap_or(0)
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for n in &self.names {
            let _ = ip(&["netns", "del", n]);
        }
    }
}

fn skip_reason() -> Option<String> {
    if !rustix::process::getuid().is_root() {
        return Some("creating network namespaces needs root".into());
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Some("iproute2 (`ip`) is not installed".into());
    }
    rshmem::transport::ucx::available().err().map(|e| format!("UCX is not loadable: {e}"))
}

#[test]
fn four_pes_across_two_namespaces_over_ucx_tcp() {
    if let Some(why) = skip_reason() {
        println!("SKIPPED: {why}");
        return;
    }
    let hosts = Hosts::create().expect("set up two network namespaces");
    let wrapper = hosts.wrapper();
    let before = hosts.rx_bytes();
    let ucx = [("RSHMEM_TRANSPORT", "ucx"), ("UCX_TLS", "tcp")];
    let by_host = [("RSHMEM_TRANSPORT", "auto"), ("UCX_TLS", "tcp")];
    for (name, args, expect, env) in [
        ("pe_rma", &[][..], "checks passed", &ucx),
        ("pe_amo", &["table"][..], "passed", &ucx),
        ("pe_coll", &[][..], "all collective cases passed on 4 PEs", &ucx),
        ("pe_coll", &["expect-hier"][..], "decision tree picks the hierarchical forms on hosts [[0, 2], [1, 3]]", &by_host),
    ] {
        let prog = example(name);
        let mut full: Vec<&str> = vec![prog.to_str().expect("utf-8 path")];
        full.extend_from_slice(args);
        // Always rshmemrun: under mpirun the PEs would have to reach its PMIx server over
        // the root namespace's loopback TCP, which another network namespace does not have.
        let job = finish(rshmemrun_command(4, &wrapper, &full, env, 240).output().expect("start rshmemrun"));
        job.assert_ok();
        assert!(job.stdout.contains("all collective cases passed") || name != "pe_coll", "{name}: {}", job.stdout);
        assert!(job.stdout.contains(expect), "{name}: {}", job.stdout);
    }
    let moved = hosts.rx_bytes() - before;
    // The programs move megabytes between the namespaces; a few KiB would mean the
    // traffic did not cross the link.
    assert!(moved > 1 << 20, "only {moved} bytes crossed the veth link");
    println!("{moved} bytes crossed the veth link between the two namespaces");
    let _ = std::fs::remove_file(wrapper);
}
