//! The ready-to-receive (RTR) message of RFC 6581's peer-to-peer model.
//!
//! When MPA Rev 2 negotiates the peer-to-peer model (the P bit in both
//! frames, one RTR type chosen by the responder), the initiator's first
//! FPDU is the RTR message and the responder sends nothing in RDMA mode
//! before it has received it (RFC 6581 §3.2). The three RTR types are
//! zero-length messages:
//! * **Write**: a zero-length RDMA Write (tagged, L = 1). A zero-length
//!   tagged message places nothing, so its STag is not checked; Linux siw
//!   sends STag 1, TO 0 ([`RTR_STAG`]), and so do we;
//! * **Read**: a zero-length RDMA Read Request (QN 1, MSN 1), which the
//!   responder answers with a zero-length Read Response before anything
//!   else (RFC 5040 §4.5: every Read Request gets its Read Response);
//! * **Send**: a zero-length Send (QN 0, MSN 1). It consumes no receive
//!   WQE: the firmware takes it before the fast path sees the stream.
//!
//! The firmware sends and takes these messages itself while the connection
//! is still in firmware mode, so the device starts RDMA mode with the RTR
//! behind it: the MSN of the queue the RTR used starts at 2 in the QP
//! context ([`crate::qp::Qp::context`]). A first FPDU that is not the
//! negotiated RTR is answered with a Terminate, layer LLP, MPA error
//! "No Matching RTR Option" ([`MpaError::NoMatchingRtr`], RFC 6581 §9),
//! and the connection is closed.
//!
//! Markers are not combined with the peer-to-peer model here (the
//! firmware neither offers nor accepts both): the RTR would carry a marker
//! the device's marker reference would then have to skip. Linux siw never
//! uses markers.

use rnic_wire::abi::context::RtrKind;
use rnic_wire::ddp::DdpSegment;
use rnic_wire::mpa::{fpdu_len, Fpdu, FpduRepr};
use rnic_wire::rdmap::{RdmapRepr, ReadRequestRepr};

pub use rnic_wire::terminate::MpaError;

/// The STag and TO of our zero-length Write RTR, and the sink and source
/// STag of our zero-length Read RTR: 1 and 0, as Linux siw sends them (the
/// `siw-rping-crc-p2p` capture). Nothing is placed or read for them.
pub const RTR_STAG: u32 = 1;

/// The MSN of an RTR on its queue: the first message (RFC 5040 §5.1).
pub const RTR_MSN: u32 = 1;

/// The largest FPDU the firmware takes as an RTR candidate: a Read Request
/// (18 + 28 octets of DDP and RDMAP headers) framed, with room to spare. A
/// longer first FPDU is not an RTR.
pub const RTR_FPDU_MAX: usize = 64;

/// The zero-length message of RTR type `kind` (`None` for no RTR).
pub fn message(kind: RtrKind) -> Option<RdmapRepr<'static>> {
    Some(match kind {
        RtrKind::None => return None,
        RtrKind::Write => RdmapRepr::RdmaWrite {
            last: true,
            stag: RTR_STAG,
            to: 0,
            payload: &[],
        },
        RtrKind::Read => RdmapRepr::ReadRequest {
            msn: RTR_MSN,
            request: ReadRequestRepr {
                sink_stag: RTR_STAG,
                sink_to: 0,
                size: 0,
                src_stag: RTR_STAG,
                src_to: 0,
            },
        },
        RtrKind::Send => RdmapRepr::Send {
            solicited: false,
            invalidate_stag: None,
            last: true,
            msn: RTR_MSN,
            mo: 0,
            payload: &[],
        },
    })
}

/// Frames `msg` as one FPDU into `buf` (CRC32c in its CRC field when `crc`
/// was negotiated, zero otherwise); returns its length, `None` if `buf` is
/// too small.
pub fn frame(msg: &RdmapRepr, crc: bool, buf: &mut [u8]) -> Option<usize> {
    let mut ulpdu = [0u8; RTR_FPDU_MAX];
    let n = msg.buffer_len();
    msg.emit(ulpdu.get_mut(..n)?).ok()?;
    let repr = FpduRepr { ulpdu: &ulpdu[..n] };
    let len = repr.buffer_len();
    let mut f = Fpdu::new_unchecked(buf.get_mut(..len)?);
    repr.emit(&mut f, crc).ok()?;
    Some(len)
}

/// The FPDU of RTR type `kind` into `buf`; its length (`None` for no RTR
/// or a short buffer).
pub fn rtr_fpdu(kind: RtrKind, crc: bool, buf: &mut [u8]) -> Option<usize> {
    frame(&message(kind)?, crc, buf)
}

/// The zero-length Read Response that answers a Read RTR `req`.
pub fn read_response(req: &ReadRequestRepr) -> RdmapRepr<'static> {
    RdmapRepr::ReadResponse {
        last: true,
        stag: req.sink_stag,
        to: req.sink_to,
        payload: &[],
    }
}

/// What the first octets of the peer's FPDU stream are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Not a whole FPDU yet: `need` octets in all (once the length is
    /// known; 2 before).
    Incomplete {
        /// Octets the first FPDU takes.
        need: usize,
    },
    /// The expected message, `len` octets of FPDU; for a Read RTR the
    /// request to answer.
    Expected {
        /// Octets of the FPDU.
        len: usize,
        /// The Read Request of a Read RTR.
        read: Option<ReadRequestRepr>,
    },
    /// Something else (another message, a bad CRC, a malformed segment):
    /// the peer did not keep the negotiated model.
    Unexpected,
}

/// Octets of the FPDU that `octets` starts with, once its ULPDU_LENGTH is
/// there.
fn fpdu_total(octets: &[u8]) -> Option<usize> {
    let l = octets.get(..2)?;
    Some(fpdu_len(u16::from_be_bytes([l[0], l[1]]) as usize))
}

fn judge(octets: &[u8], crc: bool, want: impl Fn(&RdmapRepr) -> bool) -> Verdict {
    let Some(need) = fpdu_total(octets) else {
        return Verdict::Incomplete { need: 2 };
    };
    if need > RTR_FPDU_MAX {
        return Verdict::Unexpected;
    }
    if octets.len() < need {
        return Verdict::Incomplete { need };
    }
    let Ok(f) = Fpdu::new_checked(&octets[..need]) else {
        return Verdict::Unexpected;
    };
    let Ok(repr) = FpduRepr::parse(&f, crc) else {
        return Verdict::Unexpected;
    };
    let Ok(seg) = DdpSegment::new_checked(repr.ulpdu) else {
        return Verdict::Unexpected;
    };
    match RdmapRepr::parse(&seg) {
        Ok(m) if want(&m) => Verdict::Expected {
            len: need,
            read: match m {
                RdmapRepr::ReadRequest { request, .. } => Some(request),
                _ => None,
            },
        },
        _ => Verdict::Unexpected,
    }
}

/// The responder's check of the peer's first FPDU against RTR type `kind`
/// (RFC 6581 §3.2): a zero-length RDMA Write with L = 1 (any STag and
/// TO), a zero-length Read Request with MSN 1, or a zero-length Send with
/// MSN 1, MO 0 and L = 1.
pub fn check_rtr(kind: RtrKind, crc: bool, octets: &[u8]) -> Verdict {
    judge(octets, crc, |m| match (kind, m) {
        (RtrKind::Write, RdmapRepr::RdmaWrite { last, payload, .. }) => *last && payload.is_empty(),
        (RtrKind::Read, RdmapRepr::ReadRequest { msn, request }) => {
            *msn == RTR_MSN && request.size == 0
        }
        (
            RtrKind::Send,
            RdmapRepr::Send {
                solicited: false,
                invalidate_stag: None,
                last: true,
                msn,
                mo: 0,
                payload,
            },
        ) => *msn == RTR_MSN && payload.is_empty(),
        _ => false,
    })
}

/// The initiator's check, after a Read RTR, of the responder's first FPDU:
/// the zero-length Read Response (L = 1) that answers it.
pub fn check_read_response(crc: bool, octets: &[u8]) -> Verdict {
    judge(
        octets,
        crc,
        |m| matches!(m, RdmapRepr::ReadResponse { last: true, payload, .. } if payload.is_empty()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// siw's Write RTR with CRC on, from the `siw-rping-crc-p2p` capture
    /// (the same octets `rnic_wire::mpa::fpdu`'s test holds).
    const SIW_WRITE_RTR: [u8; 20] = [
        0x00, 0x0e, 0xc1, 0x40, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0xeb, 0xd3, 0x4c, 0x5f,
    ];

    #[test]
    fn every_rtr_type_frames_and_checks_as_itself_only() {
        let kinds = [RtrKind::Write, RtrKind::Read, RtrKind::Send];
        for crc in [false, true] {
            for &k in &kinds {
                let mut b = [0u8; RTR_FPDU_MAX];
                let n = rtr_fpdu(k, crc, &mut b).unwrap();
                for &other in &kinds {
                    let v = check_rtr(other, crc, &b[..n]);
                    if other == k {
                        assert!(
                            matches!(v, Verdict::Expected { len, .. } if len == n),
                            "{k:?}"
                        );
                    } else {
                        assert_eq!(v, Verdict::Unexpected, "{k:?} taken as {other:?}");
                    }
                }
                for cut in 0..n {
                    assert!(matches!(
                        check_rtr(k, crc, &b[..cut]),
                        Verdict::Incomplete { .. }
                    ));
                }
            }
        }
        assert_eq!(rtr_fpdu(RtrKind::None, true, &mut [0u8; 64]), None);
    }

    #[test]
    fn a_bad_crc_or_a_payload_is_not_an_rtr() {
        let mut b = [0u8; RTR_FPDU_MAX];
        let n = rtr_fpdu(RtrKind::Write, true, &mut b).unwrap();
        b[n - 1] ^= 1;
        assert_eq!(
            check_rtr(RtrKind::Write, true, &b[..n]),
            Verdict::Unexpected
        );
        let w = RdmapRepr::RdmaWrite {
            last: true,
            stag: RTR_STAG,
            to: 0,
            payload: &[1, 2, 3, 4],
        };
        let n = frame(&w, false, &mut b).unwrap();
        assert_eq!(
            check_rtr(RtrKind::Write, false, &b[..n]),
            Verdict::Unexpected
        );
    }

    #[test]
    fn siws_write_rtr_is_accepted_and_ours_is_the_same_octets() {
        assert!(matches!(
            check_rtr(RtrKind::Write, true, &SIW_WRITE_RTR),
            Verdict::Expected {
                len: 20,
                read: None
            }
        ));
        let mut b = [0u8; RTR_FPDU_MAX];
        let n = rtr_fpdu(RtrKind::Write, true, &mut b).unwrap();
        assert_eq!(&b[..n], &SIW_WRITE_RTR[..]);
    }

    #[test]
    fn the_read_rtr_is_answered_by_a_zero_length_read_response() {
        let mut b = [0u8; RTR_FPDU_MAX];
        let n = rtr_fpdu(RtrKind::Read, true, &mut b).unwrap();
        let Verdict::Expected {
            read: Some(req), ..
        } = check_rtr(RtrKind::Read, true, &b[..n])
        else {
            panic!("Read RTR not taken");
        };
        let n = frame(&read_response(&req), true, &mut b).unwrap();
        assert!(matches!(
            check_read_response(true, &b[..n]),
            Verdict::Expected { read: None, .. }
        ));
        assert_eq!(
            check_rtr(RtrKind::Write, true, &b[..n]),
            Verdict::Unexpected
        );
    }
}
