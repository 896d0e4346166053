//! Transmit model: RDMAP messages → DDP segments → FPDUs → TCP segments.
//!
//! Rules (each pinned down by the tests in `wire/tests/model*.rs`):
//!
//! * A message is cut into DDP segments whose ULPDU (DDP header + payload)
//!   is at most MULPDU octets (RFC 5041 §5.2 / RFC 5044 §4.5, where MULPDU =
//!   [`mpa::mulpdu`]`(EMSS, markers)`); the last one has L = 1 (RFC 5041
//!   §4.1). A zero-length Write, Send or Read Response is one segment with an
//!   empty payload (RFC 5040 §4.1 allows zero-length messages).
//! * Tagged segments carry TO = message TO + octets before them (RFC 5041
//!   §4.2); untagged ones carry MO = octets before them (RFC 5041 §4.3) and
//!   the message's MSN.
//! * MSNs: one counter per untagged queue (QN 0 Send and Immediate Data,
//!   QN 1 Read Request, QN 2 Terminate), starting at [`INITIAL_MSN`] and
//!   incremented once per message, wrapping (RFC 5041 §4.3).
//! * One FPDU per TCP segment (DESIGN.md §4): each segment's payload is one
//!   whole FPDU as it goes on the wire, markers and CRC included, so it is
//!   at most EMSS octets wherever it falls relative to the markers.
//!
//! [`TxStream::send`] checks everything before it changes any state: on an
//! error nothing is sent and no sequence number or MSN moves.

use std::vec::Vec;

use super::{MpaSettings, INITIAL_MSN};
use crate::ddp::{QueueNumber, TAGGED_HEADER_LEN, UNTAGGED_HEADER_LEN};
use crate::mpa::{self, emit_fpdu_with_markers, fpdu_len, marked_len, Fpdu, FpduRepr};
use crate::rdmap::{RdmapRepr, ReadRequestRepr, IMMEDIATE_DATA_LEN};
use crate::terminate::TerminateRepr;
use crate::Error;

/// An RDMAP message to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Message<'a> {
    /// RDMA Write into the peer's tagged buffer `stag` at `to` (RFC 5040 §4.3).
    Write {
        /// Data Sink STag.
        stag: u32,
        /// Data Sink TO of the first octet.
        to: u64,
        /// The data.
        data: &'a [u8],
    },
    /// Send, Send with SE, Send with Invalidate, Send with SE and Invalidate
    /// (RFC 5040 §4.3, §5.3).
    Send {
        /// The data.
        data: &'a [u8],
        /// With Solicited Event.
        solicited: bool,
        /// STag for the peer to invalidate.
        invalidate: Option<u32>,
    },
    /// RDMA Read Request (RFC 5040 §4.4).
    ReadRequest(ReadRequestRepr),
    /// RDMA Read Response into the requester's `stag` at `to` (RFC 5040 §4.5).
    ReadResponse {
        /// Data Sink STag (the request's SinkSTag).
        stag: u32,
        /// Data Sink TO of the first octet (the request's SinkTO).
        to: u64,
        /// The data read.
        data: &'a [u8],
    },
    /// Terminate (RFC 5040 §4.8).
    Terminate(TerminateRepr),
    /// Immediate Data, 8 octets on QN 0 (RFC 7306 §6).
    ImmediateData {
        /// The immediate data.
        data: [u8; IMMEDIATE_DATA_LEN],
        /// With Solicited Event.
        solicited: bool,
    },
    /// RDMA Write with Immediate: an RDMA Write followed by an Immediate
    /// Data message (RFC 7306 §6).
    WriteWithImmediate {
        /// Data Sink STag.
        stag: u32,
        /// Data Sink TO of the first octet.
        to: u64,
        /// The data.
        data: &'a [u8],
        /// The immediate data.
        immediate: [u8; IMMEDIATE_DATA_LEN],
        /// With Solicited Event.
        solicited: bool,
    },
}

/// One TCP segment's worth of a stream: its sequence number and its
/// payload, exactly one FPDU as on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Segment {
    /// TCP sequence number of the first payload octet.
    pub seq: u32,
    /// The FPDU, with markers and CRC.
    pub payload: Vec<u8>,
}

/// Why [`TxStream::send`] refused a message (nothing was sent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TxError {
    /// MULPDU cannot hold this message's DDP/RDMAP header (EMSS too small).
    MulpduTooSmall,
    /// TO + length of a tagged message passes 2^64 (RFC 5041 §4.2 TO wrap).
    ToWrap,
    /// An untagged message longer than MO can address (2^32 - 1 octets).
    MessageTooLong,
    /// A wire format refused to emit (should not happen; kept typed).
    Wire(Error),
}

impl From<Error> for TxError {
    fn from(e: Error) -> Self {
        TxError::Wire(e)
    }
}

/// Frames one ULPDU as the FPDU that starts at TCP sequence number `seq`:
/// with markers (and the CRC over them) when `mpa.markers`, else the plain
/// FPDU (RFC 5044 §4.1, §4.3, §4.4).
pub fn frame_ulpdu(mpa: &MpaSettings, seq: u32, ulpdu: &[u8]) -> Result<Vec<u8>, Error> {
    let flen = fpdu_len(ulpdu.len());
    if mpa.markers {
        let mut out = std::vec![0u8; marked_len(mpa.seq_start, seq, flen)];
        let n = emit_fpdu_with_markers(ulpdu, mpa.crc, mpa.seq_start, seq, &mut out)?;
        out.truncate(n);
        Ok(out)
    } else {
        let mut out = std::vec![0u8; flen];
        FpduRepr { ulpdu }.emit(&mut Fpdu::new_unchecked(&mut out[..]), mpa.crc)?;
        Ok(out)
    }
}

/// The sending half of one direction of an RDMAP stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxStream {
    mpa: MpaSettings,
    emss: u16,
    mulpdu: u16,
    seq: u32,
    /// Next MSN of QN 0, 1, 2.
    next_msn: [u32; 3],
}

impl TxStream {
    /// A stream whose first FPDU goes at `mpa.seq_start`, sent in TCP
    /// segments of at most `emss` octets.
    pub fn new(mpa: MpaSettings, emss: u16) -> TxStream {
        TxStream {
            mpa,
            emss,
            mulpdu: mpa::mulpdu(emss, mpa.markers),
            seq: mpa.seq_start,
            next_msn: [INITIAL_MSN; 3],
        }
    }

    /// The MPA settings.
    pub fn settings(&self) -> MpaSettings {
        self.mpa
    }

    /// EMSS the stream was made for.
    pub fn emss(&self) -> u16 {
        self.emss
    }

    /// MULPDU (RFC 5044 §4.5).
    pub fn mulpdu(&self) -> u16 {
        self.mulpdu
    }

    /// TCP sequence number of the next segment.
    pub fn seq(&self) -> u32 {
        self.seq
    }

    /// MSN the next message on `qn` (Send, Read Request or Terminate queue)
    /// will carry; `None` for a queue this model does not send on.
    pub fn next_msn(&self, qn: QueueNumber) -> Option<u32> {
        self.next_msn.get(qn.value() as usize).copied()
    }

    /// Cuts `msg` into segments and advances the stream past them.
    pub fn send(&mut self, msg: &Message<'_>) -> Result<Vec<Segment>, TxError> {
        let mut msn = self.next_msn;
        let mut reprs = Vec::new();
        self.ddp_segments(msg, &mut msn, &mut reprs)?;
        let mut seq = self.seq;
        let mut out = Vec::with_capacity(reprs.len());
        let mut ulpdu = Vec::new();
        for repr in &reprs {
            ulpdu.clear();
            ulpdu.resize(repr.buffer_len(), 0);
            repr.emit(&mut ulpdu)?;
            let payload = frame_ulpdu(&self.mpa, seq, &ulpdu)?;
            let next = seq.wrapping_add(payload.len() as u32);
            out.push(Segment { seq, payload });
            seq = next;
        }
        self.seq = seq;
        self.next_msn = msn;
        Ok(out)
    }

    /// The DDP segments of `msg`, taking MSNs from `msn`.
    fn ddp_segments<'a>(
        &self,
        msg: &Message<'a>,
        msn: &mut [u32; 3],
        out: &mut Vec<RdmapRepr<'a>>,
    ) -> Result<(), TxError> {
        let mulpdu = self.mulpdu as usize;
        let take_msn = |msn: &mut [u32; 3], qn: QueueNumber| {
            let m = msn[qn.value() as usize];
            msn[qn.value() as usize] = m.wrapping_add(1);
            m
        };
        // A message with an RDMAP header goes whole in one segment.
        let single = |repr: RdmapRepr<'a>, out: &mut Vec<RdmapRepr<'a>>| {
            if repr.buffer_len() > mulpdu {
                return Err(TxError::MulpduTooSmall);
            }
            out.push(repr);
            Ok(())
        };
        match *msg {
            Message::Write { stag, to, data } => tagged(mulpdu, stag, to, data, false, out),
            Message::ReadResponse { stag, to, data } => tagged(mulpdu, stag, to, data, true, out),
            Message::Send {
                data,
                solicited,
                invalidate,
            } => {
                if u32::try_from(data.len()).is_err() {
                    return Err(TxError::MessageTooLong);
                }
                let room = mulpdu
                    .checked_sub(UNTAGGED_HEADER_LEN)
                    .ok_or(TxError::MulpduTooSmall)?;
                let m = take_msn(msn, QueueNumber::Send);
                for (mo, payload, last) in chunks(data, room)? {
                    out.push(RdmapRepr::Send {
                        solicited,
                        invalidate_stag: invalidate,
                        last,
                        msn: m,
                        mo: mo as u32,
                        payload,
                    });
                }
                Ok(())
            }
            Message::ReadRequest(request) => {
                let m = take_msn(msn, QueueNumber::ReadRequest);
                single(RdmapRepr::ReadRequest { msn: m, request }, out)
            }
            Message::Terminate(terminate) => {
                let m = take_msn(msn, QueueNumber::Terminate);
                single(RdmapRepr::Terminate { msn: m, terminate }, out)
            }
            Message::ImmediateData { data, solicited } => {
                let m = take_msn(msn, QueueNumber::Send);
                single(
                    RdmapRepr::ImmediateData {
                        solicited,
                        msn: m,
                        data,
                    },
                    out,
                )
            }
            Message::WriteWithImmediate {
                stag,
                to,
                data,
                immediate,
                solicited,
            } => {
                tagged(mulpdu, stag, to, data, false, out)?;
                let m = take_msn(msn, QueueNumber::Send);
                single(
                    RdmapRepr::ImmediateData {
                        solicited,
                        msn: m,
                        data: immediate,
                    },
                    out,
                )
            }
        }
    }
}

/// The tagged segments of an RDMA Write or Read Response.
fn tagged<'a>(
    mulpdu: usize,
    stag: u32,
    to: u64,
    data: &'a [u8],
    response: bool,
    out: &mut Vec<RdmapRepr<'a>>,
) -> Result<(), TxError> {
    let len = u64::try_from(data.len()).map_err(|_| TxError::ToWrap)?;
    to.checked_add(len).ok_or(TxError::ToWrap)?;
    let room = mulpdu
        .checked_sub(TAGGED_HEADER_LEN)
        .ok_or(TxError::MulpduTooSmall)?;
    for (off, payload, last) in chunks(data, room)? {
        let to = to + off as u64; // no overflow: checked above
        out.push(if response {
            RdmapRepr::ReadResponse {
                last,
                stag,
                to,
                payload,
            }
        } else {
            RdmapRepr::RdmaWrite {
                last,
                stag,
                to,
                payload,
            }
        });
    }
    Ok(())
}

/// A piece of a message: offset in the message, octets, last piece?
type Piece<'a> = (usize, &'a [u8], bool);

/// The pieces of at most `room` octets; one empty piece for empty data.
fn chunks(data: &[u8], room: usize) -> Result<Vec<Piece<'_>>, TxError> {
    if data.is_empty() {
        return Ok(std::vec![(0, data, true)]);
    }
    if room == 0 {
        return Err(TxError::MulpduTooSmall);
    }
    let n = data.len().div_ceil(room);
    Ok(data
        .chunks(room)
        .enumerate()
        .map(|(i, c)| (i * room, c, i + 1 == n))
        .collect())
}
