//! Wire format between `rshmemrun` and its PEs: length-prefixed frames over a Unix
//! stream socket, with file descriptors passed as `SCM_RIGHTS` ancillary data.
//!
//! A frame is `u32 payload length (LE) | u8 kind | payload`. Descriptors travel with the
//! frame's first byte. Both sides use only [`send_frame`] and [`recv_frame`].

use rustix::fd::{BorrowedFd, OwnedFd};
use rustix::io::{IoSlice, IoSliceMut};
use rustix::net::{
    recvmsg, sendmsg, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer, SendAncillaryMessage, SendFlags,
};
use std::io;
use std::mem::MaybeUninit;

/// Frame kinds. PE to launcher first, then launcher to PE.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// PE introduces itself: key, PE number, pid.
    Hello = 1,
    /// PE's contribution to an allgather.
    Allgather = 2,
    /// PE's contribution to a descriptor allgather (one descriptor attached).
    AllgatherFd = 3,
    /// PE finished cleanly (after its final barrier).
    Finalize = 4,
    /// PE asks to end the job: i32 exit code, then a message.
    Abort = 5,
    /// Launcher accepted the PE.
    Welcome = 10,
    /// Launcher refused the PE; payload is the reason.
    Refused = 11,
    /// Allgather result: for each PE, u32 length then bytes.
    AllgatherResult = 12,
    /// One descriptor of a descriptor allgather (sent once per PE, in PE order).
    FdResult = 13,
    /// The launcher found the PEs' calls inconsistent; payload is the reason.
    Failed = 14,
}

impl Kind {
    fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            1 => Kind::Hello,
            2 => Kind::Allgather,
            3 => Kind::AllgatherFd,
            4 => Kind::Finalize,
            5 => Kind::Abort,
            10 => Kind::Welcome,
            11 => Kind::Refused,
            12 => Kind::AllgatherResult,
            13 => Kind::FdResult,
            14 => Kind::Failed,
            _ => return None,
        })
    }
}

/// A received frame.
#[derive(Debug)]
pub struct Frame {
    /// Its kind.
    pub kind: Kind,
    /// Its payload.
    pub payload: Vec<u8>,
    /// Descriptors that came with it.
    pub fds: Vec<OwnedFd>,
}

/// Largest hello: a 32-character key, a PE number and a pid, with list framing.
pub const MAX_HELLO: usize = 256;
/// Largest contribution of one PE to an allgather (host names, transport addresses,
/// heap descriptors: kilobytes in practice).
pub const MAX_CONTRIBUTION: usize = 64 << 20;
/// Largest message (an abort's, a refusal's, a failure's reason).
pub const MAX_MESSAGE: usize = 64 << 10;

impl Kind {
    /// The largest payload a frame of this kind may carry in a job of `n_pes` PEs: what
    /// the protocol expects, so that a corrupt or hostile length is refused before
    /// anything is allocated or waited for.
    pub fn max_payload(self, n_pes: usize) -> usize {
        match self {
            Kind::Hello => MAX_HELLO,
            Kind::Allgather => MAX_CONTRIBUTION,
            Kind::AllgatherFd | Kind::Finalize | Kind::Welcome | Kind::FdResult => 0,
            Kind::Abort | Kind::Refused | Kind::Failed => MAX_MESSAGE,
            Kind::AllgatherResult => n_pes.saturating_mul(MAX_CONTRIBUTION + 4),
        }
    }
}

/// Sends one frame, with optional descriptors.
pub fn send_frame(sock: BorrowedFd<'_>, kind: Kind, payload: &[u8], fds: &[BorrowedFd<'_>]) -> io::Result<()> {
    let mut header = [0u8; 5];
    header[..4].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    header[4] = kind as u8;
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(4))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !fds.is_empty() {
        assert!(fds.len() <= 4, "protocol sends at most 4 descriptors per frame");
        control.push(SendAncillaryMessage::ScmRights(fds));
    }
    let total = header.len() + payload.len();
    let mut sent = 0usize;
    let mut first = true;
    while sent < total {
        let (h, p) = if sent < header.len() { (&header[sent..], payload) } else { (&[][..], &payload[sent - header.len()..]) };
        let iov = [IoSlice::new(h), IoSlice::new(p)];
        let n = if first {
            sendmsg(sock, &iov, &mut control, SendFlags::NOSIGNAL)?
        } else {
            sendmsg(sock, &iov, &mut SendAncillaryBuffer::default(), SendFlags::NOSIGNAL)?
        };
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::WriteZero, "socket closed while sending"));
        }
        first = false;
        sent += n;
    }
    Ok(())
}

/// Receives exactly `buf.len()` bytes, collecting any descriptors that arrive.
fn recv_exact(sock: BorrowedFd<'_>, buf: &mut [u8], fds: &mut Vec<OwnedFd>) -> io::Result<()> {
    let mut got = 0;
    while got < buf.len() {
        let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(8))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let mut iov = [IoSliceMut::new(&mut buf[got..])];
        let msg = match recvmsg(sock, &mut iov, &mut control, RecvFlags::CMSG_CLOEXEC) {
            Ok(m) => m,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        };
        for m in control.drain() {
            if let RecvAncillaryMessage::ScmRights(received) = m {
                fds.extend(received);
            }
        }
        if msg.bytes == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "peer closed the socket"));
        }
        got += msg.bytes;
    }
    Ok(())
}

/// Receives one frame (blocking) in a job of `n_pes` PEs, refusing a payload larger than
/// its kind allows ([`Kind::max_payload`]) before reading it.
pub fn recv_frame(sock: BorrowedFd<'_>, n_pes: usize) -> io::Result<Frame> {
    let mut fds = Vec::new();
    let mut header = [0u8; 5];
    recv_exact(sock, &mut header, &mut fds)?;
    let len = u32::from_le_bytes(header[..4].try_into().expect("4 bytes")) as usize;
    let kind =
        Kind::from_u8(header[4]).ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, format!("unknown frame kind {}", header[4])))?;
    let max = kind.max_payload(n_pes);
    if len > max {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a {kind:?} frame claims {len} bytes, more than the {max} the protocol allows"),
        ));
    }
    let mut payload = vec![0u8; len];
    recv_exact(sock, &mut payload, &mut fds)?;
    Ok(Frame { kind, payload, fds })
}

/// Encodes a list of byte strings as `u32 len | bytes` pairs.
pub fn encode_list(items: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(items.iter().map(|i| i.len() + 4).sum());
    for item in items {
        out.extend_from_slice(&(item.len() as u32).to_le_bytes());
        out.extend_from_slice(item);
    }
    out
}

/// Decodes what [`encode_list`] produced.
pub fn decode_list(mut bytes: &[u8]) -> io::Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        if bytes.len() < 4 {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "truncated list"));
        }
        let len = u32::from_le_bytes(bytes[..4].try_into().expect("4 bytes")) as usize;
        bytes = &bytes[4..];
        if bytes.len() < len {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "truncated list item"));
        }
        out.push(bytes[..len].to_vec());
        bytes = &bytes[len..];
    }
    Ok(out)
}

/// The Hello payload: key, PE, pid.
pub fn encode_hello(key: &str, pe: u32, pid: u32) -> Vec<u8> {
    encode_list(&[key.as_bytes().to_vec(), pe.to_le_bytes().to_vec(), pid.to_le_bytes().to_vec()])
}

/// Parses a Hello payload.
pub fn decode_hello(payload: &[u8]) -> Option<(String, u32, u32)> {
    let items = decode_list(payload).ok()?;
    if items.len() != 3 || items[1].len() != 4 || items[2].len() != 4 {
        return None;
    }
    let key = String::from_utf8(items[0].clone()).ok()?;
    Some((key, u32::from_le_bytes(items[1][..].try_into().ok()?), u32::from_le_bytes(items[2][..].try_into().ok()?)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fd::AsFd;
    use std::os::unix::net::UnixStream;

    #[test]
    fn frames_round_trip_with_descriptors() {
        let (a, b) = UnixStream::pair().unwrap();
        let memfd = rustix::fs::memfd_create("t", rustix::fs::MemfdFlags::CLOEXEC).unwrap();
        rustix::fs::ftruncate(&memfd, 4096).unwrap();
        // Too long for its kind: refused from the header, before any payload is read.
        send_frame(a.as_fd(), Kind::AllgatherFd, b"hello", &[memfd.as_fd()]).unwrap();
        let e = recv_frame(b.as_fd(), 1).unwrap_err();
        assert!(e.to_string().contains("AllgatherFd frame claims 5 bytes"), "{e}");
        let (a, b) = UnixStream::pair().unwrap();
        let mut hostile = 1u32.wrapping_shl(30).to_le_bytes().to_vec();
        hostile.push(Kind::Hello as u8);
        std::io::Write::write_all(&mut &a, &hostile).unwrap();
        let e = recv_frame(b.as_fd(), 4).unwrap_err();
        assert!(e.to_string().contains("Hello frame claims 1073741824 bytes, more than the 256"), "{e}");
        let (a, b) = UnixStream::pair().unwrap();
        send_frame(a.as_fd(), Kind::AllgatherFd, b"", &[memfd.as_fd()]).unwrap();
        let f = recv_frame(b.as_fd(), 1).unwrap();
        assert_eq!(f.kind, Kind::AllgatherFd);
        assert_eq!(f.fds.len(), 1);
        assert_eq!(rustix::fs::fstat(&f.fds[0]).unwrap().st_size, 4096);
        let big = vec![7u8; 3 << 20];
        let t = std::thread::spawn(move || send_frame(a.as_fd(), Kind::Allgather, &big, &[]).unwrap());
        let f = recv_frame(b.as_fd(), 1).unwrap();
        t.join().unwrap();
        assert_eq!(f.payload.len(), 3 << 20);
        assert!(f.payload.iter().all(|&x| x == 7));
    }

    #[test]
    fn lists_and_hello_round_trip() {
        let items = vec![b"a".to_vec(), vec![], vec![1, 2, 3]];
        assert_eq!(decode_list(&encode_list(&items)).unwrap(), items);
        assert_eq!(decode_hello(&encode_hello("k3y", 5, 77)), Some(("k3y".to_string(), 5, 77)));
        assert!(decode_list(&[1, 0, 0]).is_err());
    }
}
