//! Teams test program (tests/teams.rs): split_strided (nested, stride 0), split_2d,
//! translate_pe, my_pe/n_pes/get_config, barriers on split teams checked with data,
//! destroy (and the errors after it), thousands of teams in sequence and hundreds alive
//! at once. Arguments: `[sequence [alive]]` (defaults 5200 and 300); `slots` checks
//! that running out of RSHMEM_MAX_TEAMS slots is a clear error. Checks are named
//! `TEAM.WHAT` (`even.layout`, `grid.translate`), `ring.TEAM` for the barriers checked
//! with data, `sequence.*`, `alive.*`, `slots.*`.
//! Run: `rshmemrun -n 4 target/release/examples/pe_teams`.

#[path = "../support/mod.rs"]
mod support;

use rshmem::{Ctx, Error, Result, Sym, Team, TeamConfig};
use std::process::ExitCode;
use support::Check;

fn cfg(num_contexts: i32) -> TeamConfig {
    TeamConfig { num_contexts }
}

/// Members of `team` pass a value around it (member i to member i + 1, addressed through
/// translate_pe to world PE numbers), barrier on the team, and check what arrived. A
/// barrier that let a member through early, or a wrong translation, shows as wrong data.
/// Check `ring.LABEL`.
fn ring_on(ctx: &Ctx, ck: &mut Check, team: Team, inbox: &Sym<u64>, word: usize, tag: u64, label: &str) -> Result<()> {
    let (i, k) = (ctx.team_my_pe(team)?, ctx.team_n_pes(team)?);
    let next = ctx.team_translate_pe(team, (i + 1) % k, Team::WORLD)?.expect("a member is in the world");
    ctx.p(inbox, word, tag << 16 | i as u64, next)?;
    ctx.barrier(team)?;
    let prev = (i + k - 1) % k;
    let what = format_args!("value from team member {prev} after a barrier of team {team:?}");
    ck.eq(&format!("ring.{label}"), inbox.load(word)?, tag << 16 | prev as u64, what);
    ctx.sync(team)?; // nobody writes the word again before every member has read it
    Ok(())
}

fn structure(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let inbox = ctx.alloc::<u64>(16)?;

    // Predefined teams.
    ck.eq("world.my_pe", ctx.team_my_pe(Team::WORLD)?, me, "team_my_pe(WORLD)");
    // SHARED is the PEs whose heaps this PE can reach by pointer (all of one host's PEs;
    // only this PE when RSHMEM_TRANSPORT=ucx maps no peer), in world order.
    let mapped: Vec<usize> = (0..n).filter(|&pe| ctx.ptr(&inbox, pe).is_some()).collect();
    let holds = format!("SHARED holds {} of {n} PEs (those reachable by pointer)", mapped.len());
    ck.eq("shared.size", ctx.team_n_pes(Team::SHARED)?, mapped.len(), holds);
    ck.eq(
        "shared.my_pe",
        ctx.team_my_pe(Team::SHARED)?,
        mapped.iter().position(|&pe| pe == me).unwrap_or(usize::MAX),
        "team_my_pe(SHARED)",
    );
    for (i, &pe) in mapped.iter().enumerate() {
        ck.eq(
            "shared.translate",
            ctx.team_translate_pe(Team::SHARED, i, Team::WORLD)?,
            Some(pe),
            format_args!("translate SHARED member {i} -> WORLD"),
        );
    }

    // Even PEs, with a config.
    let evens_n = n.div_ceil(2);
    let evens = ctx.team_split_strided(Team::WORLD, 0, 2, evens_n, cfg(3))?;
    if me % 2 == 0 {
        ck.eq("even.my_pe", ctx.team_my_pe(evens)?, me / 2, "my number in the even team");
        ck.eq("even.size", ctx.team_n_pes(evens)?, evens_n, "size of the even team");
        ck.eq("even.config", ctx.team_get_config(evens)?, cfg(3), "get_config of the even team");
        ck.eq("even.layout", ctx.team_layout(evens)?, (0, 2, evens_n), "layout of the even team");
        for i in 0..evens_n {
            ck.eq(
                "even.translate",
                ctx.team_translate_pe(evens, i, Team::WORLD)?,
                Some(2 * i),
                format_args!("translate even member {i} -> WORLD"),
            );
        }
        ck.eq("even.translate", ctx.team_translate_pe(Team::WORLD, me, evens)?, Some(me / 2), "translate WORLD -> even team");
        if n > 1 {
            ck.eq("even.translate", ctx.team_translate_pe(Team::WORLD, 1, evens)?, None, "PE 1 is not in the even team");
        }
        ring_on(ctx, ck, evens, &inbox, 0, 1, "even")?;
    } else {
        ck.ok("even.invalid_outside", evens.is_invalid(), "odd PEs get Team::INVALID from the even split");
    }

    // A split of the split: even-team members 1, 3, ... = world PEs 2, 6, 10, ...
    if me % 2 == 0 && evens_n >= 2 {
        let sub_n = evens_n / 2;
        let sub = ctx.team_split_strided(evens, 1, 2, sub_n, cfg(0))?;
        if me % 4 == 2 && me / 4 < sub_n {
            ck.eq("nested.my_pe", ctx.team_my_pe(sub)?, me / 4, "my number in the nested team");
            ck.eq("nested.layout", ctx.team_layout(sub)?, (2, 4, sub_n), "layout of the nested team (strides compose)");
            ck.eq("nested.translate", ctx.team_translate_pe(sub, 0, evens)?, Some(1), "translate nested member 0 -> even team");
            ck.eq("nested.translate", ctx.team_translate_pe(sub, 0, Team::WORLD)?, Some(2), "translate nested member 0 -> WORLD");
            ring_on(ctx, ck, sub, &inbox, 1, 2, "nested")?;
            ctx.team_destroy(sub)?;
        } else {
            ck.ok("nested.invalid_outside", sub.is_invalid(), "PEs outside the nested team get INVALID");
        }
    }

    // Stride 0 makes a team of one PE.
    let last = ctx.team_split_strided(Team::WORLD, n - 1, 0, 1, cfg(0))?;
    if me == n - 1 {
        ck.eq("single.team", (ctx.team_my_pe(last)?, ctx.team_n_pes(last)?), (0, 1), "the one-PE team");
        ctx.barrier(last)?;
        ctx.team_destroy(last)?;
    } else {
        ck.ok("single.invalid_outside", last.is_invalid(), "PEs outside the one-PE team get INVALID");
    }

    // A 2-D grid, 3 columns: rows of 3 and columns of every third PE.
    let x = 3usize;
    let (row, col) = ctx.team_split_2d(Team::WORLD, x, cfg(1), cfg(2))?;
    let (r, c) = (me / x, me % x);
    let row_n = x.min(n - r * x);
    let col_n = (n - c).div_ceil(x);
    ck.eq("grid.row", (ctx.team_my_pe(row)?, ctx.team_n_pes(row)?), (c, row_n), "my number and size in my row");
    ck.eq("grid.column", (ctx.team_my_pe(col)?, ctx.team_n_pes(col)?), (r, col_n), "my number and size in my column");
    ck.eq("grid.config", (ctx.team_get_config(row)?, ctx.team_get_config(col)?), (cfg(1), cfg(2)), "get_config of row and column");
    ck.eq("grid.translate", ctx.team_translate_pe(row, 0, Team::WORLD)?, Some(r * x), "translate row member 0 -> WORLD");
    ck.eq(
        "grid.translate",
        ctx.team_translate_pe(col, col_n - 1, Team::WORLD)?,
        Some(c + (col_n - 1) * x),
        "translate last column member -> WORLD",
    );
    ck.eq("grid.translate", ctx.team_translate_pe(row, c, col)?, Some(r), "translate row -> column (same PE)");
    // Row and column barriers run concurrently in different teams.
    for round in 0..20u64 {
        ring_on(ctx, ck, row, &inbox, 2, 100 + round, "row")?;
        ring_on(ctx, ck, col, &inbox, 3, 200 + round, "column")?;
    }
    // xrange larger than the team: one row of everything.
    let (all_row, all_col) = ctx.team_split_2d(Team::WORLD, n + 5, cfg(0), cfg(0))?;
    ck.eq("grid.wide_row", ctx.team_n_pes(all_row)?, n, "split_2d with xrange > n: one row");
    ck.eq("grid.wide_columns", ctx.team_n_pes(all_col)?, 1, "split_2d with xrange > n: columns of one");
    for t in [row, col, all_row, all_col] {
        ctx.team_destroy(t)?;
    }
    ck.ok("destroyed.error", matches!(ctx.team_n_pes(row), Err(Error::InvalidTeam { .. })), "a destroyed row team is an error");
    ck.ok(
        "destroyed.error",
        matches!(ctx.barrier(col), Err(Error::InvalidTeam { .. })),
        "a barrier on a destroyed column team is an error",
    );
    if me % 2 == 0 {
        ctx.team_destroy(evens)?;
        ck.ok(
            "destroyed.error",
            matches!(ctx.team_translate_pe(evens, 0, Team::WORLD), Err(Error::InvalidTeam { .. })),
            "translate on a destroyed team",
        );
    }
    ctx.barrier_all()?;
    ctx.free(inbox)
}

/// Creates and destroys `count` teams one after another, of varying shapes.
fn sequence(ctx: &Ctx, ck: &mut Check, count: usize) -> Result<()> {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    let inbox = ctx.alloc::<u64>(1)?;
    for k in 0..count {
        let (start, stride) = (k % n, 1 + k % 2);
        let size = (n - 1 - start) / stride + 1;
        let t = ctx.team_split_strided(Team::WORLD, start, stride, size, cfg(0))?;
        let member = me >= start && (me - start).is_multiple_of(stride);
        let what = format_args!("team {k} (start {start}, stride {stride}): member {member}, handle valid {}", !t.is_invalid());
        if !ck.ok("sequence.membership", member != t.is_invalid(), what) {
            continue;
        }
        if member {
            let numbering = (ctx.team_n_pes(t)?, ctx.team_my_pe(t)?);
            ck.eq("sequence.numbering", numbering, (size, (me - start) / stride), format_args!("size and number in team {k}"));
            if k % 500 == 0 {
                ring_on(ctx, ck, t, &inbox, 0, k as u64, "sequence")?;
            }
            ctx.team_destroy(t)?;
        }
    }
    ctx.barrier_all()?;
    ctx.free(inbox)?;
    Ok(())
}

/// Keeps `count` teams alive at once, runs a checked barrier on each, destroys them in
/// an interleaved order, then shows the slots are free again.
fn alive(ctx: &Ctx, ck: &mut Check, count: usize) -> Result<()> {
    let n = ctx.n_pes();
    let inbox = ctx.alloc::<u64>(count)?;
    let mut teams = Vec::with_capacity(count);
    for k in 0..count {
        let t = match k % 3 {
            0 => ctx.team_split_strided(Team::WORLD, 0, 1, n, cfg(k as i32))?,
            1 => ctx.team_split_strided(Team::WORLD, 0, 2, n.div_ceil(2), cfg(k as i32))?,
            _ => ctx.team_split_strided(Team::WORLD, 1, 2, n / 2, cfg(k as i32))?,
        };
        teams.push(t);
    }
    let mine: Vec<(usize, Team)> = teams.iter().copied().enumerate().filter(|(_, t)| !t.is_invalid()).collect();
    ck.ok("alive.member", mine.len() * 3 >= count, format_args!("{count} teams alive at once on {n} PEs; this PE is in {}", mine.len()));
    for &(k, t) in &mine {
        ck.eq("alive.config", ctx.team_get_config(t)?, cfg(k as i32), format_args!("config of live team {k}"));
        ring_on(ctx, ck, t, &inbox, k, k as u64, "live")?;
    }
    ctx.barrier_all()?;
    // Destroy every other one first, then the rest (members only: collective per team).
    for pass in 0..2 {
        for &(k, t) in &mine {
            if k % 2 == pass {
                ctx.team_destroy(t)?;
            }
        }
    }
    ctx.barrier_all()?;
    // The slots are free again: as many teams fit a second time.
    let again: Vec<Team> = (0..count).map(|_| ctx.team_split_strided(Team::WORLD, 0, 1, n, cfg(0))).collect::<Result<_>>()?;
    ck.eq("alive.refill", again.iter().filter(|t| !t.is_invalid()).count(), count, "the same number of teams fits again after destroying");
    ring_on(ctx, ck, again[count - 1], &inbox, 0, 7, "refill")?;
    for t in again {
        ctx.team_destroy(t)?;
    }
    ctx.barrier_all()?;
    ctx.free(inbox)
}

/// With RSHMEM_MAX_TEAMS slots, the splits beyond them fail clearly, on every PE, and
/// work again once a team is destroyed.
fn slots(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let n = ctx.n_pes();
    let mut teams = Vec::new();
    let err = loop {
        match ctx.team_split_strided(Team::WORLD, 0, 1, n, cfg(0)) {
            Ok(t) => teams.push(t),
            Err(e) => break e,
        }
        if teams.len() > 100_000 {
            ck.ok("slots.exhausted", false, "no limit on team slots");
            return Ok(());
        }
    };
    let msg = err.to_string();
    let me = format!("PE {}", ctx.my_pe());
    ck.ok(
        "slots.exhausted",
        msg.contains("team_split_strided") && msg.contains("RSHMEM_MAX_TEAMS") && msg.contains(&me),
        format_args!("after {} teams: {msg}", teams.len()),
    );
    let last = teams.pop().expect("at least one team");
    ctx.team_destroy(last)?;
    let t = ctx.team_split_strided(Team::WORLD, 0, 1, n, cfg(0))?;
    ck.ok("slots.reusable", !t.is_invalid(), "a split works again after a destroy");
    teams.push(t);
    for t in teams {
        ctx.team_destroy(t)?;
    }
    Ok(())
}

fn main() -> ExitCode {
    support::run_program("pe_teams", 2, |ctx, ck| {
        let args: Vec<String> = std::env::args().skip(1).collect();
        let r = if args.first().map(String::as_str) == Some("slots") {
            slots(ctx, ck)
        } else {
            let count: usize = args.first().map_or(5200, |s| s.parse().expect("sequence length"));
            let live: usize = args.get(1).map_or(300, |s| s.parse().expect("teams alive"));
            structure(ctx, ck).and_then(|_| sequence(ctx, ck, count)).and_then(|_| alive(ctx, ck, live))
        };
        r
    })
}
