//! Logging. The library logs through `tracing` and never installs a subscriber behind
//! the program's back: a program that wants rshmem's log lines on stderr calls
//! [`install`] (the launcher, the C ABI's `shmem_init`, the Python module and the
//! examples do), or installs its own subscriber. Messages that must reach a person even
//! when no subscriber is installed (a wait that seems hung, a failed finalize) go through
//! [`always_warn`].

use crate::config::{Config, LogColor};
use std::io::IsTerminal;

/// Installs a stderr subscriber filtered by `RSHMEM_LOG` (default `warn`), with colours
/// as `RSHMEM_LOG_COLOR` says (by default only when stderr is a terminal). Does nothing
/// when a global subscriber is already installed. Returns whether it installed one.
pub fn install() -> bool {
    let (filter, color) = match Config::from_env() {
        Ok(c) => (c.log, c.log_color),
        Err(e) => {
            line(&format!("rshmem: {e}"));
            ("warn".to_string(), LogColor::Auto)
        }
    };
    install_with(&filter, color)
}

/// [`install`] with the filter and colour given.
pub fn install_with(filter: &str, color: LogColor) -> bool {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_new(filter).unwrap_or_else(|_| EnvFilter::new("warn"));
    let ansi = match color {
        LogColor::Always => true,
        LogColor::Never => false,
        LogColor::Auto => std::io::stderr().is_terminal(),
    };
    tracing_subscriber::fmt().with_env_filter(filter).with_ansi(ansi).with_writer(std::io::stderr).try_init().is_ok()
}

/// A warning that a person must see: through the installed subscriber, or on stderr
/// (one whole line) when there is none.
pub(crate) fn always_warn(msg: &str) {
    if tracing::dispatcher::has_been_set() {
        tracing::warn!("{msg}");
    } else {
        line(msg);
    }
}

/// Writes `msg` and a newline to stderr with one `write` call, so that the lines of PEs
/// sharing one stderr (a pipe, a terminal) never interleave within a line the way
/// `eprintln!`, which writes each formatted piece separately, can.
pub fn line(msg: &str) {
    use std::io::Write;
    let mut whole = String::with_capacity(msg.len() + 1);
    whole.push_str(msg);
    whole.push('\n');
    let _ = std::io::stderr().lock().write_all(whole.as_bytes());
}
