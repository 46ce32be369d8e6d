//! The progress bar on stderr while a sweep runs (hidden when stderr is not a terminal),
//! and a way to print beside it without breaking it.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A cheap, cloneable handle on the run's progress bar.
#[derive(Clone)]
pub struct Progress {
    bar: ProgressBar,
    visible: bool,
}

impl Progress {
    /// A bar over `total` cases; drawn only when stderr is a terminal.
    pub fn new(total: u64) -> Progress {
        let visible = std::io::stderr().is_terminal();
        let target = if visible { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        let bar = ProgressBar::with_draw_target(Some(total), target);
        if let Ok(style) = ProgressStyle::with_template("{elapsed:>4} [{bar:30}] {pos}/{len} {msg}") {
            bar.set_style(style.progress_chars("=> "));
        }
        Progress { bar, visible }
    }

    /// Says what runs now.
    pub fn set_message(&self, msg: &str) {
        self.bar.set_message(msg.to_string());
    }

    /// One more case done; `next` says what runs now.
    pub fn inc(&self, next: &str) {
        self.bar.inc(1);
        self.bar.set_message(next.to_string());
    }

    /// Prints a line on stderr above the bar.
    pub fn println(&self, line: &str) {
        if self.visible {
            self.bar.suspend(|| eprintln!("{line}"));
        } else {
            eprintln!("{line}");
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
