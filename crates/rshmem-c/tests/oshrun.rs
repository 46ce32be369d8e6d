//! `oshrun --help` says what the launcher is before how to call it.

use std::process::Command;

#[test]
fn help_starts_with_what_the_launcher_is() {
    for flag in ["--help", "-h"] {
        let out = Command::new(env!("CARGO_BIN_EXE_oshrun")).arg(flag).output().expect("oshrun runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "oshrun {flag}: {:?}\n{text}", out.status);
        let first = text.lines().next().unwrap_or("");
        assert!(first.starts_with("oshrun: the launcher of OpenSHMEM programs on one host"), "first line of oshrun {flag}: {first}");
        assert!(text.contains("usage: oshrun [-np N]"), "oshrun {flag} gives the usage: {text}");
    }
}
