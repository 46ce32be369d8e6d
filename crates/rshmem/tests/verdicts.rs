//! The harness itself: verdict lines survive the round trip through their text, and
//! `Job`'s assertions pass what they should and fail what they should, naming the
//! failed checks. No PEs are started.

mod common;
use common::*;

fn verdict(pe: usize, name: &str, passed: bool, count: u64, detail: &str) -> Verdict {
    Verdict { pe, program: "pe_test".into(), name: name.into(), passed, count, detail: detail.into() }
}

fn summary(pe: usize, checks: usize, failed: usize) -> Summary {
    Summary { pe, program: "pe_test".into(), checks, failed }
}

/// A finished job with exit status `code` that printed `lines` (and some other text).
fn job(code: i32, lines: &[String]) -> Job {
    let mut stdout = String::from("a line that is not a verdict\n");
    for l in lines {
        stdout += l;
        stdout.push('\n');
    }
    Job { code, stdout, stderr: "what the PEs said on stderr\n".into() }
}

/// Two PEs that passed `a` (PE 1 in two lines) and `b`.
fn passing() -> Job {
    job(
        0,
        &[
            verdict(0, "a", true, 3, "first").to_string(),
            verdict(1, "a", true, 1, "one").to_string(),
            verdict(1, "a", true, 2, "two").to_string(),
            verdict(0, "b", true, 1, "").to_string(),
            verdict(1, "b", true, 1, "").to_string(),
            summary(0, 2, 0).to_string(),
            summary(1, 3, 0).to_string(),
        ],
    )
}

/// The panic message of `f`, which must panic.
fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let err = std::panic::catch_unwind(f).expect_err("the assertion must fail");
    err.downcast_ref::<String>().cloned().or_else(|| err.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

#[test]
fn lines_round_trip_with_quotes_and_newlines_in_the_detail() {
    let v = verdict(3, "double.put", false, 7, "got \"x\\y\"\nwant z");
    assert_eq!(verdict::parse(&v.to_string()), Some(Line::Check(v.clone())));
    assert!(!v.to_string().contains('\n'), "one line: {v}");
    let s = summary(3, 12, 1);
    assert_eq!(verdict::parse(&s.to_string()), Some(Line::Summary(s)));
    assert_eq!(
        summary(0, 2, 0).to_string(),
        "RSHMEM-SUMMARY pe=0 program=pe_test checks=2 failed=0 result=pass",
        "the format the GPU scripts grep"
    );
}

#[test]
fn other_and_damaged_lines_are_not_verdicts() {
    let line = verdict(0, "a", true, 1, "text").to_string();
    for bad in [
        "PE 0: all 12 checks passed",
        &line[..line.len() - 3],
        "RSHMEM-CHECK pe=0 program=p name=a result=maybe count=1 detail=\"\"",
        "RSHMEM-SUMMARY pe=0 program=p checks=2 failed=1 result=pass",
    ] {
        assert_eq!(verdict::parse(bad), None, "{bad}");
    }
}

#[test]
fn a_passing_job_passes_and_merges_the_lines_of_a_check() {
    let j = passing();
    j.assert_passed(2).assert_checks(0..2, &["a", "b"]).assert_all(2, &["a"]);
    let a = j.check(1, "a");
    assert_eq!((a.passed, a.count, a.detail.as_str()), (true, 3, "two"));
}

#[test]
fn a_failed_check_fails_the_job_with_its_detail() {
    let j = job(1, &[verdict(0, "a", false, 5, "element 3: got 1, want 2").to_string(), summary(0, 1, 1).to_string()]);
    let msg = panic_message(|| {
        j.assert_passed(1);
    });
    assert!(msg.contains("PE 0: 1 of its 1 checks failed") && msg.contains("element 3: got 1, want 2"), "{msg}");
    assert!(msg.contains("what the PEs said on stderr"), "the report shows stderr: {msg}");
}

#[test]
fn a_missing_summary_a_lost_line_or_a_missing_check_fails() {
    let j = job(0, &[verdict(0, "a", true, 1, "").to_string()]);
    assert!(panic_message(|| {
        j.assert_passed(1);
    })
    .contains("PE 0 printed no summary line"));
    let j = job(0, &[verdict(0, "a", true, 1, "").to_string(), summary(0, 2, 0).to_string()]);
    assert!(panic_message(|| {
        j.assert_passed(1);
    })
    .contains("says it printed 2 check lines; 1 were read"));
    let j = passing();
    assert!(panic_message(|| {
        j.assert_checks(0..2, &["a", "c"]);
    })
    .contains("PE 0 did not check c"));
}

#[test]
fn names_are_every_combination_of_their_parts() {
    assert_eq!(names(&[&["int", "long"], &["put", "get"]]), ["int.put", "int.get", "long.put", "long.get"]);
    assert!(rma_checks().iter().any(|n| n == "double.put") && amo_table_checks().iter().any(|n| n == "extended.float"));
}
