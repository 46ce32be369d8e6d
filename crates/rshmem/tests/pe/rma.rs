//! RMA test program (tests/rma.rs): put, get, p, g, iput, iget, put_nbi, get_nbi for every
//! type of the `rma_types!` table, the sized forms (u8..u128) and the byte (mem) forms,
//! between neighbours and to self, checked element by element against a model. Also
//! strided transfers at several strides, `ptr`/`ptr_addr` and zero-length transfers.
//! Checks are named `TYPE.FORM` (`double.put`, `sized8.g`), `mem.FORM` and `ptr.WHAT`.
//! Run: `rshmemrun -n 4 target/release/examples/pe_rma`.

#[path = "../support/mod.rs"]
mod support;

use rshmem::{Ctx, Result, SymType, WordType};
use std::process::ExitCode;
use support::{mix, pattern, Check};

/// Elements per test array: odd, so strides do not divide it.
const L: usize = 37;

/// (destination stride, source stride) pairs of the strided tests.
const STRIDES: [(usize, usize); 6] = [(1, 1), (2, 1), (1, 2), (3, 2), (2, 5), (7, 3)];

fn name_tag(name: &str) -> u64 {
    name.bytes().fold(0u64, |h, b| mix(h ^ b as u64)) & 0xff_ffff
}

struct Peers {
    me: usize,
    n: usize,
    right: usize,
    left: usize,
}

fn peers(ctx: &Ctx) -> Peers {
    let (me, n) = (ctx.my_pe(), ctx.n_pes());
    Peers { me, n, right: (me + 1) % n, left: (me + n - 1) % n }
}

/// put, get, put_nbi, get_nbi, iput, iget, self and zero-length transfers of `T`.
fn bulk<T: SymType>(ctx: &Ctx, ck: &mut Check, name: &str) -> Result<()> {
    let Peers { me, right, left, .. } = peers(ctx);
    let t = name_tag(name) << 8;
    let a = ctx.alloc::<T>(L)?;
    let b = ctx.alloc::<T>(L)?;
    b.copy_from(0, &pattern::<T>(me, t + 1, L))?;
    ctx.barrier_all()?;

    // put of the whole array to the right; then a partial put at an index to the left.
    ctx.put(&a, 0, &pattern::<T>(me, t + 2, L), right)?;
    ctx.barrier_all()?;
    let mut want = pattern::<T>(left, t + 2, L);
    ck.same_bits(&format!("{name}.put"), &a.to_vec()?, &want, format_args!("put of {L} elements from PE {left}"));
    ctx.barrier_all()?;
    ctx.put(&a, 20, &pattern::<T>(me, t + 3, 10), left)?;
    ctx.barrier_all()?;
    want[20..30].copy_from_slice(&pattern::<T>(right, t + 3, 10));
    ck.same_bits(&format!("{name}.put"), &a.to_vec()?, &want, format_args!("put of 10 elements at index 20 from PE {right}"));

    // get: whole from the right, a tail from the left.
    let mut buf = vec![T::zeroed(); L];
    ctx.get(&mut buf, &b, 0, right)?;
    ck.same_bits(&format!("{name}.get"), &buf, &pattern::<T>(right, t + 1, L), format_args!("get of {L} elements from PE {right}"));
    let mut tail = vec![T::zeroed(); 9];
    ctx.get(&mut tail, &b, L - 9, left)?;
    ck.same_bits(
        &format!("{name}.get"),
        &tail,
        &pattern::<T>(left, t + 1, L)[L - 9..],
        format_args!("get of the last 9 elements from PE {left}"),
    );

    // Non-blocking forms, completed by quiet.
    ctx.barrier_all()?;
    ctx.put_nbi(&a, 0, &pattern::<T>(me, t + 4, L), right)?;
    ctx.quiet()?;
    ctx.barrier_all()?;
    ck.same_bits(&format!("{name}.put_nbi"), &a.to_vec()?, &pattern::<T>(left, t + 4, L), format_args!("put_nbi from PE {left}"));
    ctx.get_nbi(&mut buf, &b, 0, left)?;
    ctx.quiet()?;
    ck.same_bits(&format!("{name}.get_nbi"), &buf, &pattern::<T>(left, t + 1, L), format_args!("get_nbi from PE {left}"));

    // To self: complete on return, no barrier needed to see it.
    ctx.barrier_all()?;
    let mine = pattern::<T>(me, t + 5, L);
    ctx.put(&a, 0, &mine, me)?;
    ck.same_bits(&format!("{name}.self"), &a.to_vec()?, &mine, "put to self");
    ctx.get(&mut buf, &a, 0, me)?;
    ck.same_bits(&format!("{name}.self"), &buf, &mine, "get from self");
    ctx.put_nbi(&a, 3, &mine[..5], me)?;
    ctx.quiet()?;
    let mut self_model = mine.clone();
    self_model[3..8].copy_from_slice(&mine[..5]);
    ck.same_bits(&format!("{name}.self"), &a.to_vec()?, &self_model, "put_nbi to self (overlapping own data)");

    // Strided: iput to the right, iget from the left, at several stride pairs.
    let b_left = pattern::<T>(left, t + 1, L);
    for (k, &(ds, ss)) in STRIDES.iter().enumerate() {
        let nel = ((L - 1) / ds + 1).min((L - 1) / ss + 1);
        let src = pattern::<T>(me, t + 10 + k as u64, L);
        ctx.barrier_all()?;
        a.fill(T::zeroed())?;
        ctx.barrier_all()?;
        ctx.iput(&a, 0, &src, ds, ss, nel, right)?;
        ctx.barrier_all()?;
        let src_left = pattern::<T>(left, t + 10 + k as u64, L);
        let mut want = vec![T::zeroed(); L];
        for i in 0..nel {
            want[i * ds] = src_left[i * ss];
        }
        ck.same_bits(
            &format!("{name}.iput"),
            &a.to_vec()?,
            &want,
            format_args!("iput of {nel} elements, dst stride {ds}, src stride {ss}, from PE {left}"),
        );

        let mut got = pattern::<T>(me, 0xdead, L);
        let mut want = got.clone();
        ctx.iget(&mut got, &b, 0, ds, ss, nel, left)?;
        for i in 0..nel {
            want[i * ds] = b_left[i * ss];
        }
        ck.same_bits(
            &format!("{name}.iget"),
            &got,
            &want,
            format_args!("iget of {nel} elements, dst stride {ds}, src stride {ss}, from PE {left}"),
        );
    }
    // Strided put starting at an index, into a non-zero background.
    ctx.barrier_all()?;
    let background = pattern::<T>(me, t + 30, L);
    a.copy_from(0, &background)?;
    ctx.barrier_all()?;
    let src = pattern::<T>(me, t + 31, 18);
    ctx.iput(&a, 1, &src, 2, 1, 18, right)?;
    ctx.barrier_all()?;
    let mut want = background.clone();
    for (i, v) in pattern::<T>(left, t + 31, 18).into_iter().enumerate() {
        want[1 + 2 * i] = v;
    }
    ck.same_bits(&format!("{name}.iput"), &a.to_vec()?, &want, format_args!("iput of 18 elements at index 1, stride 2, from PE {left}"));

    // Zero-length transfers are allowed anywhere in the allocation, the end included,
    // and change nothing.
    ctx.barrier_all()?;
    ctx.put(&a, 0, &[], right)?;
    ctx.put(&a, L, &[], right)?;
    ctx.put_nbi(&a, L, &[], left)?;
    ctx.get(&mut [], &b, L, left)?;
    ctx.get_nbi(&mut [], &b, 0, right)?;
    ctx.iput(&a, 0, &[], 1, 1, 0, right)?;
    ctx.iget(&mut [], &b, 0, 3, 3, 0, left)?;
    ctx.putmem(a.addr(), &[], right)?;
    ctx.quiet()?;
    ctx.barrier_all()?;
    ck.same_bits(&format!("{name}.zero_length"), &a.to_vec()?, &want, "zero-length transfers changed nothing");
    ctx.barrier_all()?;
    ctx.free(a)?;
    ctx.free(b)?;
    Ok(())
}

/// p and g of `T` (to neighbours and self), then the bulk tests.
fn word<T: WordType>(ctx: &Ctx, ck: &mut Check, name: &str) -> Result<()> {
    let Peers { me, right, left, .. } = peers(ctx);
    let t = name_tag(name) << 8;
    let a = ctx.alloc::<T>(L)?;
    let mine = pattern::<T>(me, t + 40, L);
    for (i, &v) in mine.iter().enumerate() {
        ctx.p(&a, i, v, right)?;
    }
    ctx.barrier_all()?;
    ck.same_bits(&format!("{name}.p"), &a.to_vec()?, &pattern::<T>(left, t + 40, L), format_args!("p of {L} elements from PE {left}"));
    // `a` on the right holds what this PE wrote there.
    let got: Vec<T> = (0..L).map(|i| ctx.g(&a, i, right)).collect::<Result<_>>()?;
    ck.same_bits(&format!("{name}.g"), &got, &mine, format_args!("g of {L} elements from PE {right}"));
    ctx.barrier_all()?;
    let v = pattern::<T>(me, t + 41, 1)[0];
    ctx.p(&a, L - 1, v, me)?;
    ck.eq(&format!("{name}.p_self"), ctx.g(&a, L - 1, me)?.to_bits(), v.to_bits(), "p then g on self");
    ck.eq(&format!("{name}.p_self"), a.load(L - 1)?.to_bits(), v.to_bits(), "p to self seen by a local load");
    ctx.barrier_all()?;
    ctx.free(a)?;
    bulk::<T>(ctx, ck, name)
}

/// The byte (mem) forms at unaligned offsets and odd lengths.
fn mem_forms(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let Peers { me, n, right, left } = peers(ctx);
    const M: usize = 1000;
    let m = ctx.alloc::<u8>(M)?;
    let src: Vec<u8> = pattern(me, 77, M - 3);
    ctx.putmem(m.addr() + 3, &src, right)?;
    ctx.barrier_all()?;
    let mut want = vec![0u8; 3];
    want.extend(pattern::<u8>(left, 77, M - 3));
    ck.same_bits("mem.putmem", &m.to_vec()?, &want, format_args!("putmem of {} bytes at offset 3 from PE {left}", M - 3));
    // `m` on the left holds what the PE left of it put.
    let left2 = (me + 2 * n - 2) % n;
    let mut buf = vec![0u8; 501];
    ctx.getmem(&mut buf, m.addr() + 101, left)?;
    ck.same_bits(
        "mem.getmem",
        &buf,
        &pattern::<u8>(left2, 77, M - 3)[98..599],
        format_args!("getmem of 501 bytes at offset 101 from PE {left}"),
    );

    ctx.barrier_all()?;
    ctx.putmem_nbi(m.addr(), &pattern::<u8>(me, 78, M), right)?;
    ctx.quiet()?;
    ctx.barrier_all()?;
    ck.same_bits("mem.putmem_nbi", &m.to_vec()?, &pattern::<u8>(left, 78, M), format_args!("putmem_nbi of {M} bytes from PE {left}"));
    ctx.getmem_nbi(&mut buf[..7], m.addr() + 993, right)?;
    ctx.quiet()?;
    ck.same_bits(
        "mem.getmem_nbi",
        &buf[..7],
        &pattern::<u8>(me, 78, M)[993..],
        format_args!("getmem_nbi of the last 7 bytes from PE {right}"),
    );

    // Strided bytes: elements of 3 bytes.
    ctx.barrier_all()?;
    m.fill(0)?;
    ctx.barrier_all()?;
    let (elem, ds, ss, nel) = (3usize, 2usize, 3usize, 50usize);
    let src: Vec<u8> = pattern(me, 79, elem * ((nel - 1) * ss + 1));
    ctx.iputmem(m.addr() + 1, &src, elem, ds, ss, nel, right)?;
    ctx.barrier_all()?;
    let src_left: Vec<u8> = pattern(left, 79, src.len());
    let mut want = vec![0u8; M];
    for i in 0..nel {
        want[1 + i * ds * elem..][..elem].copy_from_slice(&src_left[i * ss * elem..][..elem]);
    }
    ck.same_bits("mem.iputmem", &m.to_vec()?, &want, "iputmem of 50 3-byte elements, dst stride 2, src stride 3");
    let mut got = vec![0xeeu8; elem * ((nel - 1) * ss + 1)];
    let mut want_get = got.clone();
    ctx.igetmem(&mut got, m.addr() + 1, elem, ss, ds, nel, right)?;
    // `m` on the right holds this PE's `src` scattered at stride ds.
    for i in 0..nel {
        want_get[i * ss * elem..][..elem].copy_from_slice(&src[i * ss * elem..][..elem]);
    }
    ck.same_bits("mem.igetmem", &got, &want_get, "igetmem of 50 3-byte elements, dst stride 3, src stride 2");
    ctx.barrier_all()?;
    ctx.free(m)?;
    Ok(())
}

/// `ptr` and `ptr_addr` give addresses that load and store the peer's memory.
fn pointers(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    let Peers { me, n, right, left } = peers(ctx);
    let s = ctx.alloc::<u64>(16)?;
    let stack_value = 5u64;
    ck.eq("ptr.self", ctx.ptr(&s, me), Some(s.addr() as *mut u64), "ptr to self is the local address");
    ck.eq("ptr.out_of_range", ctx.ptr(&s, n), None, format_args!("ptr to PE {n} (out of range) is None"));
    ck.eq("ptr.stack_address", ctx.ptr_addr(&stack_value as *const u64 as usize, right), None, "ptr_addr of a stack address is None");
    if std::env::var("RSHMEM_TRANSPORT").is_ok_and(|t| t == "ucx") && right != me {
        // Peers reached through UCX have no load/store address.
        ck.eq("ptr.peer", ctx.ptr(&s, right), None, format_args!("ptr to PE {right} is None through UCX"));
        ctx.barrier_all()?;
        ctx.free(s)?;
        return Ok(());
    }
    let Some(p) = ctx.ptr(&s, right) else {
        ck.ok("ptr.peer", false, format_args!("ptr to PE {right} is None on the mapped transport"));
        return Ok(());
    };
    ck.ok("ptr.peer", true, format_args!("ptr to PE {right} is {p:?}"));
    ck.eq("ptr.addr_of_element", ctx.ptr_addr(s.addr_of(3), right), Some(p as usize + 24), "ptr_addr of element 3 is ptr + 24");
    for i in 0..16 {
        // SAFETY: `p` is the mapped address of PE `right`'s 16-element allocation `s`, which
        // stays allocated until after the barrier below; only this PE writes it meanwhile.
        unsafe { p.add(i).write_volatile((me as u64) << 32 | i as u64) };
    }
    ctx.barrier_all()?;
    let want: Vec<u64> = (0..16).map(|i| (left as u64) << 32 | i).collect();
    ck.eq("ptr.store", s.to_vec()?, want, format_args!("stores through ptr by PE {left}"));
    // SAFETY: as above; after the barrier nobody writes `s` any more.
    let back: Vec<u64> = (0..16).map(|i| unsafe { p.add(i).read_volatile() }).collect();
    ck.eq("ptr.load", back, (0..16).map(|i| (me as u64) << 32 | i).collect::<Vec<_>>(), format_args!("loads through ptr from PE {right}"));
    ctx.barrier_all()?;
    ctx.free(s)?;
    Ok(())
}

fn run(ctx: &Ctx, ck: &mut Check) -> Result<()> {
    macro_rules! each_rma_type {
        ($(($name:ident, $t:ty)),* $(,)?) => { $( word::<$t>(ctx, ck, stringify!($name))?; )* };
    }
    rshmem::rma_types!(each_rma_type);
    // Sized forms: 8, 16, 32, 64 bits (bulk, p and g) and 128 bits (bulk only: not a word).
    word::<u8>(ctx, ck, "sized8")?;
    word::<u16>(ctx, ck, "sized16")?;
    word::<u32>(ctx, ck, "sized32")?;
    word::<u64>(ctx, ck, "sized64")?;
    bulk::<u128>(ctx, ck, "sized128")?;
    bulk::<i128>(ctx, ck, "i128")?;
    mem_forms(ctx, ck)?;
    pointers(ctx, ck)
}

fn main() -> ExitCode {
    support::run_program("pe_rma", 1, run)
}
