//! MPA connection setup (RFC 5044 §7, RFC 6581): the pure negotiation rules
//! and the assembler for a Request/Reply frame that arrives in pieces. The
//! frames themselves are `rnic_wire::mpa`'s. [`crate::fw`] runs the exchange
//! on a connection (timers, host Accept/Reject) and switches it to RDMA mode.
//!
//! Rules, as implemented:
//! * Revision: the initiator asks for 1 or 2; a responder answers a Rev 1
//!   Request with Rev 1 and a Rev 2 Request with Rev 2 (or 1 if it is
//!   configured for Rev 1 only). An initiator refuses a Reply with a higher
//!   revision than it asked for.
//! * CRC is used in both directions if either side asks (C bit, RFC 5044 §7.1).
//! * Markers are per direction: a side's M bit asks for markers on what it
//!   *receives*.
//! * RFC 6581 (Rev 2, enhanced bit): the initiator sends its IRD/ORD, sets P
//!   and offers RTR types (Write, Read and Send); the responder answers with its IRD,
//!   `ORD = min(own ORD, initiator IRD)` and, when P was set, exactly one RTR
//!   type, preferring Write, then Read, then Send. The initiator then uses
//!   `ORD = min(own ORD, responder IRD)` and sends the chosen RTR message as
//!   its first FPDU; the responder sends nothing before it has received it
//!   (`QP_FLAG_RTR_TX`/`QP_FLAG_RTR_RX` in the QP context; the exchange
//!   itself: [`crate::rtr`]). Markers and the peer-to-peer model are not
//!   combined: with markers the Request carries no P bit and the Reply
//!   clears it.
//! * Private data: at most 512 octets with the IRD/ORD block (so 508 after it).

use rnic_wire::abi::caps::MAX_MULPDU;
use rnic_wire::abi::context::{RtrKind, MPA_CRC_RX, MPA_CRC_TX, MPA_MARKERS_RX, MPA_MARKERS_TX};
use rnic_wire::mpa::{
    IrdOrd, MpaFrameKind, MpaRequestReply, MpaRequestReplyRepr, ReadDepth, Revision, RtrTypes,
    MPA_IRD_ORD_LEN, MPA_REPLY_KEY, MPA_REQUEST_KEY, MPA_REQ_REP_HEADER_LEN,
};

/// Longest Request/Reply frame.
pub const MAX_FRAME: usize = MPA_REQ_REP_HEADER_LEN + 512;

/// Why a negotiation failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MpaError {
    /// Not an MPA Request/Reply (bad key, length or revision).
    Malformed,
    /// A Reply where a Request was due, or the other way round.
    WrongKind,
    /// The peer's revision cannot be served.
    Revision,
    /// The responder rejected the connection (R bit).
    Rejected,
    /// Our private data does not fit.
    TooLong,
}

/// What one side asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Offer {
    /// Revision (1 or 2); 2 means RFC 6581 enhanced setup.
    pub revision: u8,
    /// Ask for CRC.
    pub crc: bool,
    /// Ask for markers on what we receive.
    pub markers: bool,
    /// Our IRD.
    pub ird: u16,
    /// Our ORD.
    pub ord: u16,
    /// Use the peer-to-peer model (RTR message) when Rev 2.
    pub p2p: bool,
    /// The RTR types we offer (initiator) or accept (responder).
    pub rtr: RtrTypes,
}

/// What both sides agreed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Agreement {
    /// Revision in use.
    pub revision: u8,
    /// CRC in both directions.
    pub crc: bool,
    /// We insert markers.
    pub markers_tx: bool,
    /// The peer inserts markers.
    pub markers_rx: bool,
    /// Our IRD.
    pub ird: u16,
    /// Our ORD.
    pub ord: u16,
    /// The peer's IRD/ORD as it sent them (0 without the RFC 6581 block).
    pub peer_ird: u16,
    /// See `peer_ird`.
    pub peer_ord: u16,
    /// The RTR message.
    pub rtr: RtrKind,
    /// We send the RTR message (initiator).
    pub rtr_tx: bool,
    /// We wait for the RTR message (responder).
    pub rtr_rx: bool,
}

impl Agreement {
    /// The connection context's `mpa_flags`.
    pub fn ctx_flags(&self) -> u8 {
        let mut f = 0;
        if self.crc {
            f |= MPA_CRC_TX | MPA_CRC_RX;
        }
        if self.markers_tx {
            f |= MPA_MARKERS_TX;
        }
        if self.markers_rx {
            f |= MPA_MARKERS_RX;
        }
        f
    }

    /// The MULPDU we send with on a connection of this EMSS: the RFC 5044
    /// §4.5 formula (`rnic_wire::mpa::mulpdu`), capped at the largest
    /// MULPDU the device transmits (`abi::caps::MAX_MULPDU`). MULPDU is the
    /// sender's choice bounded by EMSS (RFC 5044 §4.5, §8), so a smaller one
    /// is always legal; without the cap a jumbo peer (MSS 8960) would give
    /// a MULPDU the device refuses (every WQE an error completion).
    pub fn mulpdu(&self, emss: u16) -> u16 {
        rnic_wire::mpa::mulpdu(emss, self.markers_tx).min(FW_MAX_MULPDU)
    }

    /// The MULPDU we configure (`fw.rs` `write_ctx`): [`Self::mulpdu`], but
    /// small enough that [`FPDUS_IN_WINDOW`] whole FPDUs (markers included)
    /// fit the peer's receive window `peer_wnd` (the largest it offered),
    /// never below [`MULPDU_WINDOW_FLOOR`] (or the EMSS value if that is
    /// smaller). The device sends one FPDU per segment and a segment only
    /// when it fits the window (RFC 9293 §3.8.6), so with one 8882-octet
    /// FPDU per 12 KiB window (a small peer window) the sender waits
    /// a round trip per FPDU; smaller FPDUs keep the pipe full. Legal: RFC
    /// 5044 §4.5/§8 bound MULPDU by EMSS only, a smaller one is always
    /// allowed. Measured in `docs/rtl.md` "Full 9000-octet frames".
    pub fn mulpdu_in_window(&self, emss: u16, peer_wnd: u32) -> u16 {
        let m = self.mulpdu(emss);
        let share = (peer_wnd / FPDUS_IN_WINDOW).min(u16::MAX as u32) as u16;
        let w = rnic_wire::mpa::mulpdu(share, self.markers_tx);
        if w < m {
            w.max(m.min(MULPDU_WINDOW_FLOOR))
        } else {
            m
        }
    }
}

/// The largest MULPDU the firmware configures: the device's
/// `caps::MAX_MULPDU` (8882, the MULPDU of a 9000-octet MTU's EMSS with
/// markers, RFC 5044 §8; a payload read in up to three 4096-octet DMA
/// pieces). It was one DMA read's payload (4110) until `tx_log`'s replay of
/// a multi-read FPDU was verified (rust-hdl `tx_log::tests::
/// long_fpdus_replay_in_pieces` and the extended random test; Verilator
/// `sim/tests/tx_jumbo.rs` `lost_long_fpdu_is_replayed_byte_exact`; docs/
/// rtl.md "Replay of long FPDUs verified"). A smaller MULPDU is always
/// legal (RFC 5044 §4.5, §8); the window policy
/// ([`Agreement::mulpdu_in_window`]) still lowers it against a small peer
/// window.
pub const FW_MAX_MULPDU: u16 = MAX_MULPDU;

/// Whole FPDUs that must fit the peer's receive window
/// ([`Agreement::mulpdu_in_window`]).
pub const FPDUS_IN_WINDOW: u32 = 3;
/// The window policy never lowers MULPDU below this (an MTU-1500 EMSS's
/// value: RFC 5044 §4.5, 1460 − 6): a small or closed window at setup
/// must not give tiny FPDUs for the connection's life.
pub const MULPDU_WINDOW_FLOOR: u16 = 1454;

fn depth(v: u16) -> ReadDepth {
    ReadDepth::new(v.min(ReadDepth::MAX.get())).unwrap_or(ReadDepth::MAX)
}

/// Whether a Request made with `offer` sets P: Rev 2, at least one RTR
/// type, and no markers (not combined with the peer-to-peer model here).
fn offers_p2p(offer: &Offer) -> bool {
    offer.p2p && !offer.markers && offer.rtr != RtrTypes::NONE
}

/// Builds the initiator's Request into `buf`; returns its length.
pub fn build_request(
    offer: &Offer,
    private_data: &[u8],
    buf: &mut [u8],
) -> Result<usize, MpaError> {
    let revision = if offer.revision >= 2 {
        Revision::V2 {
            enhanced: Some(IrdOrd {
                ird: depth(offer.ird),
                ord: depth(offer.ord),
                // Markers and the peer-to-peer model are not combined
                // (crate::rtr): with markers asked for, no P bit.
                peer_to_peer: offers_p2p(offer),
                rtr: if offers_p2p(offer) {
                    offer.rtr
                } else {
                    RtrTypes::NONE
                },
            }),
        }
    } else {
        Revision::V1
    };
    emit(
        MpaRequestReplyRepr {
            kind: MpaFrameKind::Request,
            markers: offer.markers,
            crc: offer.crc,
            revision,
            private_data,
        },
        buf,
    )
}

fn emit(repr: MpaRequestReplyRepr, buf: &mut [u8]) -> Result<usize, MpaError> {
    let n = repr.buffer_len();
    if n > MAX_FRAME {
        return Err(MpaError::TooLong);
    }
    let b = buf.get_mut(..n).ok_or(MpaError::TooLong)?;
    repr.emit(&mut MpaRequestReply::new_unchecked(b))
        .map_err(|_| MpaError::TooLong)?;
    Ok(n)
}

/// Parses a complete Request or Reply.
pub fn parse(frame: &[u8]) -> Result<MpaRequestReplyRepr<'_>, MpaError> {
    let f = MpaRequestReply::new_checked(frame).map_err(|_| MpaError::Malformed)?;
    MpaRequestReplyRepr::parse(&f).map_err(|_| MpaError::Malformed)
}

/// The responder's decision on a Request: the agreement and the Reply to send.
pub fn respond(request: &MpaRequestReplyRepr, ours: &Offer) -> Result<Agreement, MpaError> {
    if request.kind != MpaFrameKind::Request {
        return Err(MpaError::WrongKind);
    }
    let rev = request.revision.number().min(ours.revision.max(1));
    let crc = request.crc || ours.crc;
    let mut a = Agreement {
        revision: rev,
        crc,
        markers_tx: request.markers,
        markers_rx: ours.markers,
        ird: ours.ird,
        ord: ours.ord,
        peer_ird: 0,
        peer_ord: 0,
        rtr: RtrKind::None,
        rtr_tx: false,
        rtr_rx: false,
    };
    if rev == 2 {
        if let Some(b) = request.revision.enhanced() {
            a.peer_ird = b.ird.get();
            a.peer_ord = b.ord.get();
            a.ord = ours.ord.min(b.ird.get());
            // Markers and the peer-to-peer model are not combined
            // (crate::rtr): with markers either way the Reply clears P, and
            // the initiator decides (RFC 6581 §3.1).
            if b.peer_to_peer && ours.p2p && !request.markers && !ours.markers {
                a.rtr = if b.rtr.write && ours.rtr.write {
                    RtrKind::Write
                } else if b.rtr.read && ours.rtr.read {
                    RtrKind::Read
                } else if b.rtr.send && ours.rtr.send {
                    RtrKind::Send
                } else {
                    RtrKind::None
                };
                a.rtr_rx = a.rtr != RtrKind::None;
            }
        }
    }
    Ok(a)
}

/// Builds the responder's Reply (accepting with `a`, or rejecting) into `buf`.
pub fn build_reply(
    a: &Agreement,
    request_enhanced: bool,
    reject: bool,
    ours: &Offer,
    private_data: &[u8],
    buf: &mut [u8],
) -> Result<usize, MpaError> {
    let revision = if a.revision >= 2 {
        Revision::V2 {
            enhanced: request_enhanced.then(|| IrdOrd {
                ird: depth(a.ird),
                ord: depth(a.ord),
                peer_to_peer: a.rtr != RtrKind::None,
                rtr: RtrTypes {
                    send: a.rtr == RtrKind::Send,
                    write: a.rtr == RtrKind::Write,
                    read: a.rtr == RtrKind::Read,
                },
            }),
        }
    } else {
        Revision::V1
    };
    emit(
        MpaRequestReplyRepr {
            kind: MpaFrameKind::Reply { rejected: reject },
            markers: ours.markers,
            crc: a.crc,
            revision,
            private_data,
        },
        buf,
    )
}

/// The initiator's view of a Reply to its Request made with `ours`.
pub fn on_reply(reply: &MpaRequestReplyRepr, ours: &Offer) -> Result<Agreement, MpaError> {
    let MpaFrameKind::Reply { rejected } = reply.kind else {
        return Err(MpaError::WrongKind);
    };
    if rejected {
        return Err(MpaError::Rejected);
    }
    let rev = reply.revision.number();
    if rev > ours.revision.max(1) {
        return Err(MpaError::Revision);
    }
    let mut a = Agreement {
        revision: rev,
        crc: reply.crc || ours.crc,
        markers_tx: reply.markers,
        markers_rx: ours.markers,
        ird: ours.ird,
        ord: ours.ord,
        peer_ird: 0,
        peer_ord: 0,
        rtr: RtrKind::None,
        rtr_tx: false,
        rtr_rx: false,
    };
    if ours.revision >= 2 {
        if let Some(b) = reply.revision.enhanced() {
            a.peer_ird = b.ird.get();
            a.peer_ord = b.ord.get();
            a.ord = ours.ord.min(b.ird.get());
            if b.peer_to_peer && ours.p2p {
                a.rtr = match (b.rtr.write, b.rtr.read, b.rtr.send) {
                    (true, false, false) if ours.rtr.write => RtrKind::Write,
                    (false, true, false) if ours.rtr.read => RtrKind::Read,
                    (false, false, true) if ours.rtr.send => RtrKind::Send,
                    (false, false, false) => RtrKind::None,
                    _ => return Err(MpaError::Malformed), // must choose one
                };
                a.rtr_tx = a.rtr != RtrKind::None;
                if a.rtr_tx && (a.markers_tx || a.markers_rx) {
                    // We did not offer P with markers (build_request); a
                    // responder that adds markers to an RTR cannot be served.
                    return Err(MpaError::Malformed);
                }
            }
        }
    }
    Ok(a)
}

/// Collects one Request/Reply frame from in-order stream octets.
#[derive(Debug, Clone, Default)]
pub struct Assembler {
    buf: heapless::Vec<u8, MAX_FRAME>,
}

impl Assembler {
    /// An empty assembler.
    pub const fn new() -> Self {
        Assembler {
            buf: heapless::Vec::new(),
        }
    }

    fn needed(&self) -> usize {
        if self.buf.len() < MPA_REQ_REP_HEADER_LEN {
            MPA_REQ_REP_HEADER_LEN
        } else {
            MPA_REQ_REP_HEADER_LEN + u16::from_be_bytes([self.buf[18], self.buf[19]]) as usize
        }
    }

    /// Takes octets of `data` up to the end of the frame. Returns how many
    /// it took and whether the frame is complete; the octets after it belong
    /// to the FPDU stream. A bad key or length fails as soon as it is seen.
    pub fn feed(&mut self, data: &[u8]) -> Result<(usize, bool), MpaError> {
        let mut taken = 0;
        loop {
            let need = self.needed();
            if need > MAX_FRAME {
                return Err(MpaError::Malformed);
            }
            if self.buf.len() >= need {
                return Ok((taken, true));
            }
            let n = (need - self.buf.len()).min(data.len() - taken);
            if n == 0 {
                return Ok((taken, false));
            }
            let _ = self.buf.extend_from_slice(&data[taken..taken + n]);
            taken += n;
            let k = self.buf.len().min(16);
            if self.buf[..k] != MPA_REQUEST_KEY[..k] && self.buf[..k] != MPA_REPLY_KEY[..k] {
                return Err(MpaError::Malformed);
            }
        }
    }

    /// The collected octets.
    pub fn frame(&self) -> &[u8] {
        &self.buf
    }

    /// The private data of the complete frame (after the IRD/ORD block).
    pub fn private_data(&self) -> &[u8] {
        match parse(&self.buf) {
            Ok(r) => r.private_data,
            Err(_) => &[],
        }
    }

    /// Forgets the frame.
    pub fn clear(&mut self) {
        self.buf.clear();
    }
}

/// Length of the RFC 6581 block (re-exported for callers).
pub const IRD_ORD_LEN: usize = MPA_IRD_ORD_LEN;
