//! Receive model: TCP payload → FPDUs → DDP/RDMAP checks → placement.
//!
//! [`Receiver::receive`] takes in-order TCP payload at a sequence number
//! (chunks may split FPDUs anywhere and hold several), and for each whole
//! FPDU, in this order:
//!
//! 1. MPA (RFC 5044): strips and checks the markers (§4.3), checks the CRC
//!    when negotiated (§4.4). Errors: MPA CRC Error, MPA Marker mismatch
//!    (§8, Layer 2 EType 0).
//! 2. DDP (RFC 5041): header present (else DDP Local Catastrophic), DV = 1
//!    (§4.1; "Invalid DDP version" of the tagged or untagged error type).
//!    Untagged (§5.3, §7.2): QN (0 Send, 1 Read Request, 2 Terminate; else
//!    "Invalid QN"); MSN must be the expected one of its queue — one behind
//!    or more than 2^31 away is "MSN range is not valid", one at or past the
//!    buffers available (posted receive buffers for QN 0, free IRD slots
//!    for QN 1) "no buffer available"; MO must continue the message
//!    ("Invalid MO"); the message must fit its buffer ("DDP Message too long
//!    for available buffer").
//! 3. RDMAP (RFC 5040): RV = 1 ("Invalid RDMAP version"), a defined opcode
//!    that matches the buffer model and queue ("Unexpected OpCode"; also a
//!    Read Response with no RDMA Read outstanding, and RFC 7306 Atomics,
//!    which rnic does not implement).
//! 4. Placement. Tagged (RFC 5041 §7.2 tagged buffer errors, via
//!    [`TptEntry::check`]): RDMA Write needs Remote Write, Read Response
//!    Local Write; invalid STag → "Invalid STag", other PD → "STag not
//!    associated with DDP Stream", outside the region → "Base or bounds
//!    violation", TO + length past 2^64 → "TO wrap"; a missing access right
//!    has no DDP code and is RDMAP Remote Protection "Access rights
//!    violation" (RFC 5040 §4.8). Read Request (RFC 5040 §4.4, §7.1): the
//!    Data Source region needs Remote Read, errors are RDMAP Remote
//!    Protection errors and the Terminate echoes the Read Request.
//!    Send with Invalidate (RFC 5040 §5.3): the STag must be a valid one of
//!    this PD, else RDMAP Remote Protection "STag cannot be Invalidated".
//!
//! Every check of a segment happens before any of its octets is written, so
//! a segment that fails places nothing. On the first error the receiver
//! emits [`Event::SendTerminate`] with the cause and the headers RFC 5040
//! §4.8 (Figure 10) says to echo — DDP segment length and header for RDMAP
//! remote errors and every DDP error, the Read Request header for Remote
//! Protection errors on a Read Request, nothing for LLP (MPA) errors — and
//! the stream is dead: further input is [`RxError::Dead`]. A Terminate
//! received also ends the stream (RFC 5040 §7: a Terminate is the last
//! message on a stream).
//!
//! The model handles one stream in order; where DDP allows more (placing
//! out-of-order segments, several messages open on one queue) it refuses
//! what an in-order sender cannot produce.

use std::collections::{BTreeMap, VecDeque};
use std::vec::Vec;

use super::MpaSettings;
use super::INITIAL_MSN;
use crate::abi::tpt::{
    Stag, TptEntry, TptFault, TptState, ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ,
    ACCESS_REMOTE_WRITE, PAGE_SHIFT_MIN,
};
use crate::ddp::{
    control as ddp_control, DdpSegment, QueueNumber, TaggedSegment, UntaggedSegment, DDP_VERSION,
    TAGGED_HEADER_LEN, UNTAGGED_HEADER_LEN,
};
use crate::mpa::{fpdu_len, marked_len, marker_phase, strip_fpdu_with_markers, Fpdu, FpduRepr};
use crate::mpa::{MPA_MARKER_LEN, MPA_ULPDU_LENGTH_LEN};
use crate::rdmap::{
    control as rdmap_control, control_version, Opcode, ReadRequestHeader, ReadRequestRepr,
    IMMEDIATE_DATA_LEN, RDMAP_VERSION, READ_REQUEST_HEADER_LEN,
};
use crate::terminate::{
    DdpError, EchoedDdpHeader, MpaError, RemoteOperationError, RemoteProtectionError,
    TaggedBufferError, TerminateCause, TerminateHeader, TerminateRepr, TerminatedDdp,
    UntaggedBufferError,
};
use crate::Error;

/// A registered memory region: its TPT entry and its octets (the entry's
/// `va` is the TO of `bytes[0]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// The TPT entry (state, key, PD, rights, VA, length).
    pub entry: TptEntry,
    /// The region's memory, `entry.length` octets.
    pub bytes: Vec<u8>,
}

/// A small Translation and Protection Table: STag index → region.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tpt {
    regions: BTreeMap<u32, Region>,
}

impl Tpt {
    /// An empty table.
    pub fn new() -> Tpt {
        Tpt::default()
    }

    /// Registers `bytes` as a valid region named by `stag` (its index and
    /// key), in protection domain `pd`, with `access` rights (`ACCESS_*`),
    /// whose first octet has TO `va`. Replaces any region at that index.
    pub fn register(&mut self, stag: u32, pd: u32, access: u8, va: u64, bytes: Vec<u8>) {
        let stag = Stag(stag);
        let length = bytes.len() as u64;
        let page = 1u64 << PAGE_SHIFT_MIN;
        let first_page = va & !(page - 1);
        let npages = va.saturating_add(length).div_ceil(page) - first_page / page;
        let entry = TptEntry {
            state: TptState::Valid,
            key: stag.key(),
            access,
            page_shift: PAGE_SHIFT_MIN,
            pd,
            va,
            length,
            pbl_base: 0,
            npages: npages.min(u32::MAX as u64) as u32,
        };
        self.regions.insert(stag.index(), Region { entry, bytes });
    }

    /// The region at `stag`'s index (whatever its key or state).
    pub fn region(&self, stag: u32) -> Option<&Region> {
        self.regions.get(&Stag(stag).index())
    }

    /// The region at `stag`'s index, mutable.
    pub fn region_mut(&mut self, stag: u32) -> Option<&mut Region> {
        self.regions.get_mut(&Stag(stag).index())
    }

    /// All regions, by STag index.
    pub fn regions(&self) -> impl Iterator<Item = (&u32, &Region)> {
        self.regions.iter()
    }

    /// The access check of [`TptEntry::check`] for `len` octets at TO `to`;
    /// an STag whose index has no entry is [`TptFault::InvalidStag`].
    pub fn check(&self, stag: u32, pd: u32, need: u8, to: u64, len: u64) -> Result<(), TptFault> {
        let region = self.region(stag).ok_or(TptFault::InvalidStag)?;
        region.entry.check(Stag(stag), pd, need, to, len)
    }

    /// The `len` octets at TO `to` of `stag`, if a peer in `pd` may read
    /// them (Remote Read): what a Read Response carries.
    pub fn read(&self, stag: u32, pd: u32, to: u64, len: u64) -> Result<&[u8], TptFault> {
        self.check(stag, pd, ACCESS_REMOTE_READ, to, len)?;
        let region = self.region(stag).ok_or(TptFault::InvalidStag)?;
        if len == 0 {
            return Ok(&[]);
        }
        let (start, end) = span(&region.entry, to, len).ok_or(TptFault::Bounds)?;
        region.bytes.get(start..end).ok_or(TptFault::Bounds)
    }

    /// Writes `data` at TO `to` of `stag` after the check for `need`.
    fn write(
        &mut self,
        stag: u32,
        pd: u32,
        need: u8,
        to: u64,
        data: &[u8],
    ) -> Result<(), TptFault> {
        self.check(stag, pd, need, to, data.len() as u64)?;
        if data.is_empty() {
            return Ok(());
        }
        let region = self.region_mut(stag).ok_or(TptFault::InvalidStag)?;
        let (start, end) = span(&region.entry, to, data.len() as u64).ok_or(TptFault::Bounds)?;
        region
            .bytes
            .get_mut(start..end)
            .ok_or(TptFault::Bounds)?
            .copy_from_slice(data);
        Ok(())
    }

    /// Whether `stag` names a valid region of `pd` that may be invalidated.
    fn can_invalidate(&self, stag: u32, pd: u32) -> bool {
        self.region(stag).is_some_and(|r| {
            r.entry.state == TptState::Valid && r.entry.key == Stag(stag).key() && r.entry.pd == pd
        })
    }

    /// Marks `stag`'s region invalid (RFC 5040 §5.3, Send with Invalidate).
    fn invalidate(&mut self, stag: u32) {
        if let Some(r) = self.region_mut(stag) {
            r.entry.state = TptState::Invalid;
        }
    }
}

/// Octet range in a region's memory of `len` octets at TO `to`.
fn span(entry: &TptEntry, to: u64, len: u64) -> Option<(usize, usize)> {
    let start = usize::try_from(to.checked_sub(entry.va)?).ok()?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    Some((start, end))
}

/// A posted receive buffer (the untagged buffers of QN 0, RFC 5041 §5.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecvBuffer {
    /// The consumer's identifier.
    pub wr_id: u64,
    /// The buffer's memory.
    pub bytes: Vec<u8>,
}

/// The receiver's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxConfig {
    /// MPA settings of the direction received.
    pub mpa: MpaSettings,
    /// The QP's protection domain.
    pub pd: u32,
    /// IRD: RDMA Read Requests that may be outstanding at once (RFC 5040
    /// §6.1, negotiated in the RFC 6581 block).
    pub ird: u16,
}

/// What the receiver saw and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A tagged segment's payload was written to `len` octets at `to` of
    /// `stag` (not reported for empty segments).
    Placed {
        /// Data Sink STag.
        stag: u32,
        /// TO of the first octet.
        to: u64,
        /// Octets written.
        len: u32,
    },
    /// The last segment (L = 1) of an RDMA Write arrived.
    WriteCompleted {
        /// STag of the last segment.
        stag: u32,
        /// Octets in the whole message.
        len: u64,
    },
    /// The last segment of an RDMA Read Response arrived; `request` is the
    /// outstanding RDMA Read it answers.
    ReadResponseCompleted {
        /// STag of the last segment.
        stag: u32,
        /// Octets in the whole message.
        len: u64,
        /// The Read Request it answers.
        request: ReadRequestRepr,
    },
    /// A Send (any of the four kinds) filled the posted buffer `wr_id`.
    RecvCompleted {
        /// The buffer's identifier.
        wr_id: u64,
        /// MSN of the message on QN 0.
        msn: u32,
        /// Octets in the message.
        len: u32,
        /// Send with Solicited Event.
        solicited: bool,
        /// The STag invalidated by a Send with Invalidate.
        invalidated: Option<u32>,
    },
    /// RFC 7306 Immediate Data consumed the posted buffer `wr_id` (its 8
    /// octets are written there too).
    ImmediateReceived {
        /// The buffer's identifier.
        wr_id: u64,
        /// MSN of the message on QN 0.
        msn: u32,
        /// The immediate data.
        data: [u8; IMMEDIATE_DATA_LEN],
        /// With Solicited Event.
        solicited: bool,
    },
    /// An RDMA Read Request passed its checks and holds an IRD slot until
    /// [`Receiver::read_response_sent`]; the responder sends the Read
    /// Response (the data is [`Tpt::read`]).
    ReadRequest(ReadRequestRepr),
    /// The peer sent a Terminate; the stream is over.
    TerminateReceived(TerminateRepr),
    /// A segment failed: send this Terminate; the stream is over.
    SendTerminate(TerminateRepr),
}

/// Misuse of the receiver (not a protocol error: those are Terminates).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RxError {
    /// The stream ended (Terminate sent or received); no more input.
    Dead,
    /// Payload after a hole: TCP must deliver in order.
    OutOfOrder {
        /// The sequence number expected.
        expected: u32,
        /// The sequence number given.
        got: u32,
    },
}

/// The receiving half of one direction of an RDMAP stream.
#[derive(Debug, Clone)]
pub struct Receiver {
    cfg: RxConfig,
    tpt: Tpt,
    posted: VecDeque<RecvBuffer>,
    completed: Vec<RecvBuffer>,
    /// Next TCP sequence number expected.
    next_seq: u32,
    /// Sequence number of `pending[0]`: where the next FPDU starts.
    fpdu_seq: u32,
    /// Wire octets received but not yet consumed as whole FPDUs.
    pending: Vec<u8>,
    /// Expected MSN of QN 0, 1, 2.
    expected_msn: [u32; 3],
    /// Octets of the current (incomplete) message on QN 0.
    send_mo: u32,
    /// Octets of the current RDMA Write / Read Response message so far.
    write_len: u64,
    read_response_len: u64,
    /// Read Requests received and not yet answered (IRD slots in use).
    inbound_reads: usize,
    /// Read Requests we sent, awaiting their Read Responses, in order.
    outbound_reads: VecDeque<ReadRequestRepr>,
    dead: bool,
    fpdus: u64,
}

/// Converts anything that is a cause into the `Err` of a check.
type Check<T = ()> = Result<T, TerminateCause>;

impl Receiver {
    /// A receiver for a stream whose first FPDU starts at
    /// `cfg.mpa.seq_start`, with a TPT.
    pub fn new(cfg: RxConfig, tpt: Tpt) -> Receiver {
        Receiver {
            cfg,
            tpt,
            posted: VecDeque::new(),
            completed: Vec::new(),
            next_seq: cfg.mpa.seq_start,
            fpdu_seq: cfg.mpa.seq_start,
            pending: Vec::new(),
            expected_msn: [INITIAL_MSN; 3],
            send_mo: 0,
            write_len: 0,
            read_response_len: 0,
            inbound_reads: 0,
            outbound_reads: VecDeque::new(),
            dead: false,
            fpdus: 0,
        }
    }

    /// The configuration.
    pub fn config(&self) -> RxConfig {
        self.cfg
    }

    /// The TPT.
    pub fn tpt(&self) -> &Tpt {
        &self.tpt
    }

    /// The TPT, to register regions.
    pub fn tpt_mut(&mut self) -> &mut Tpt {
        &mut self.tpt
    }

    /// Posts a receive buffer of `len` zero octets for QN 0.
    pub fn post_recv(&mut self, wr_id: u64, len: usize) {
        self.post_recv_buffer(RecvBuffer {
            wr_id,
            bytes: std::vec![0; len],
        });
    }

    /// Posts a receive buffer for QN 0.
    pub fn post_recv_buffer(&mut self, buf: RecvBuffer) {
        self.posted.push_back(buf);
    }

    /// Posted buffers not yet consumed, oldest first (the first may be
    /// partly filled by a Send in progress).
    pub fn posted(&self) -> impl Iterator<Item = &RecvBuffer> {
        self.posted.iter()
    }

    /// Buffers filled by completed Sends, in completion order.
    pub fn completed(&self) -> &[RecvBuffer] {
        &self.completed
    }

    /// The completed buffer `wr_id`.
    pub fn completed_recv(&self, wr_id: u64) -> Option<&RecvBuffer> {
        self.completed.iter().find(|b| b.wr_id == wr_id)
    }

    /// Records an RDMA Read Request this side sent (ORD), so that its Read
    /// Response is expected; Read Responses are matched in order.
    pub fn expect_read_response(&mut self, request: ReadRequestRepr) {
        self.outbound_reads.push_back(request);
    }

    /// The responder has sent the Read Response of the oldest Read Request:
    /// its IRD slot is free again.
    pub fn read_response_sent(&mut self) {
        self.inbound_reads = self.inbound_reads.saturating_sub(1);
    }

    /// TCP sequence number of the next octet expected.
    pub fn next_seq(&self) -> u32 {
        self.next_seq
    }

    /// Whether the stream is over.
    pub fn is_dead(&self) -> bool {
        self.dead
    }

    /// FPDUs taken whole off the stream so far.
    pub fn fpdus(&self) -> u64 {
        self.fpdus
    }

    /// Octets received that do not yet make a whole FPDU.
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// Takes TCP payload `data` whose first octet has sequence number `seq`.
    /// Octets already received are skipped (a retransmission); a gap is
    /// [`RxError::OutOfOrder`]. Returns the events of every FPDU completed.
    pub fn receive(&mut self, seq: u32, data: &[u8]) -> Result<Vec<Event>, RxError> {
        if self.dead {
            return Err(RxError::Dead);
        }
        // Octets of `data` before `next_seq` (modulo 2^32, RFC 9293 §3.4).
        let behind = self.next_seq.wrapping_sub(seq);
        if behind > i32::MAX as u32 {
            return Err(RxError::OutOfOrder {
                expected: self.next_seq,
                got: seq,
            });
        }
        let new = data.get(behind as usize..).unwrap_or(&[]);
        self.pending.extend_from_slice(new);
        self.next_seq = self.next_seq.wrapping_add(new.len() as u32);

        let mut events = Vec::new();
        while !self.dead {
            match self.take_fpdu() {
                Ok(None) => break,
                Ok(Some(ulpdu)) => {
                    self.fpdus += 1;
                    if let Err(cause) = self.segment(&ulpdu, &mut events) {
                        events.push(Event::SendTerminate(terminate_for(cause, &ulpdu)));
                        self.dead = true;
                    }
                }
                Err(cause) => {
                    events.push(Event::SendTerminate(terminate_for(cause, &[])));
                    self.dead = true;
                }
            }
        }
        Ok(events)
    }

    /// Takes the next whole FPDU off `pending` and returns its ULPDU, after
    /// the marker and CRC checks (RFC 5044 §4.3, §4.4, §8).
    fn take_fpdu(&mut self) -> Check<Option<Vec<u8>>> {
        let mpa = self.cfg.mpa;
        // A marker can only lead an FPDU, never split ULPDU_LENGTH (FPDUs
        // and markers are 4-aligned, RFC 5044 §4.3).
        let header_at = if mpa.markers && marker_phase(mpa.seq_start, self.fpdu_seq) == 0 {
            MPA_MARKER_LEN
        } else {
            0
        };
        let Some(h) = self
            .pending
            .get(header_at..header_at + MPA_ULPDU_LENGTH_LEN)
        else {
            return Ok(None);
        };
        let ulpdu_len = u16::from_be_bytes([h[0], h[1]]) as usize;
        let flen = fpdu_len(ulpdu_len);
        let wire_len = if mpa.markers {
            marked_len(mpa.seq_start, self.fpdu_seq, flen)
        } else {
            flen
        };
        let Some(wire) = self.pending.get(..wire_len) else {
            return Ok(None);
        };
        let ulpdu = if mpa.markers {
            let mut plain = std::vec![0u8; flen];
            match strip_fpdu_with_markers(wire, mpa.crc, mpa.seq_start, self.fpdu_seq, &mut plain) {
                Ok(_) => plain[MPA_ULPDU_LENGTH_LEN..MPA_ULPDU_LENGTH_LEN + ulpdu_len].to_vec(),
                Err(Error::BadCrc) => return Err(MpaError::CrcError.into()),
                Err(_) => return Err(MpaError::MarkerMismatch.into()),
            }
        } else {
            let fpdu = Fpdu::new_checked(wire).map_err(|_| MpaError::MarkerMismatch)?;
            match FpduRepr::parse(&fpdu, mpa.crc) {
                Ok(repr) => repr.ulpdu.to_vec(),
                Err(_) => return Err(MpaError::CrcError.into()),
            }
        };
        self.pending.drain(..wire_len);
        self.fpdu_seq = self.fpdu_seq.wrapping_add(wire_len as u32);
        Ok(Some(ulpdu))
    }

    /// One DDP segment (an FPDU's ULPDU).
    fn segment(&mut self, ulpdu: &[u8], events: &mut Vec<Event>) -> Check {
        // RFC 5041 §4: a ULPDU too short for its DDP header cannot be
        // processed at all.
        match DdpSegment::new_checked(ulpdu).map_err(|_| DdpError::LocalCatastrophic)? {
            DdpSegment::Tagged(s) => self.tagged(&s, events),
            DdpSegment::Untagged(s) => self.untagged(&s, events),
        }
    }

    /// A tagged segment: RDMA Write or Read Response.
    fn tagged(&mut self, s: &TaggedSegment<&[u8]>, events: &mut Vec<Event>) -> Check {
        if s.version() != DDP_VERSION {
            return Err(TaggedBufferError::InvalidDdpVersion.into());
        }
        let opcode = rdmap_opcode(s.rsvd_ulp())?;
        let need = match opcode {
            Opcode::RdmaWrite => ACCESS_REMOTE_WRITE,
            Opcode::ReadResponse if !self.outbound_reads.is_empty() => ACCESS_LOCAL_WRITE,
            _ => return Err(RemoteOperationError::UnexpectedOpcode.into()),
        };
        let (stag, to, payload) = (s.stag(), s.tagged_offset(), s.payload());
        let pd = self.cfg.pd;
        self.tpt
            .write(stag, pd, need, to, payload)
            .map_err(tagged_fault)?;
        if !payload.is_empty() {
            events.push(Event::Placed {
                stag,
                to,
                len: payload.len() as u32,
            });
        }
        let len = payload.len() as u64;
        if opcode == Opcode::RdmaWrite {
            self.write_len = self.write_len.saturating_add(len);
            if s.last() {
                events.push(Event::WriteCompleted {
                    stag,
                    len: core::mem::take(&mut self.write_len),
                });
            }
        } else {
            self.read_response_len = self.read_response_len.saturating_add(len);
            if s.last() {
                let request = self.outbound_reads.pop_front().unwrap_or_default();
                events.push(Event::ReadResponseCompleted {
                    stag,
                    len: core::mem::take(&mut self.read_response_len),
                    request,
                });
            }
        }
        Ok(())
    }

    /// An untagged segment: Send, Immediate Data, Read Request, Terminate.
    fn untagged(&mut self, s: &UntaggedSegment<&[u8]>, events: &mut Vec<Event>) -> Check {
        use UntaggedBufferError as U;
        if s.version() != DDP_VERSION {
            return Err(U::InvalidDdpVersion.into());
        }
        let queue = match QueueNumber::from_u32(s.queue_number()) {
            Ok(q @ (QueueNumber::Send | QueueNumber::ReadRequest | QueueNumber::Terminate)) => q,
            _ => return Err(U::InvalidQn.into()),
        };
        let q = queue.value() as usize;
        // MSN (RFC 5041 §5.3, §7.2).
        let buffers = match queue {
            QueueNumber::Send => self.posted.len(),
            QueueNumber::ReadRequest => (self.cfg.ird as usize).saturating_sub(self.inbound_reads),
            _ => 1,
        };
        let ahead = s.msn().wrapping_sub(self.expected_msn[q]);
        if ahead > i32::MAX as u32 {
            return Err(U::InvalidMsnRange.into());
        }
        if ahead as usize >= buffers {
            return Err(U::InvalidMsnNoBuffer.into());
        }
        if ahead != 0 {
            return Err(U::InvalidMsnRange.into());
        }
        // MO: in order, each segment continues its message.
        let expected_mo = if queue == QueueNumber::Send {
            self.send_mo
        } else {
            0
        };
        if s.message_offset() != expected_mo {
            return Err(U::InvalidMo.into());
        }
        let payload = s.payload();
        match queue {
            QueueNumber::Send => {
                let room = self.posted.front().map_or(0, |b| b.bytes.len() as u64);
                if u64::from(expected_mo) + payload.len() as u64 > room {
                    return Err(U::MessageTooLong.into());
                }
            }
            // QN 1 and 2 hold one RDMAP header: the message is one segment.
            _ if !s.last() => return Err(U::MessageTooLong.into()),
            _ => {}
        }
        let opcode = rdmap_opcode(s.rsvd_ulp())?;
        if opcode.queue() != Some(queue) {
            return Err(RemoteOperationError::UnexpectedOpcode.into());
        }
        match opcode {
            Opcode::Send | Opcode::SendSe | Opcode::SendInvalidate | Opcode::SendSeInvalidate => {
                let invalidate = opcode.has_invalidate_stag().then(|| s.rsvd_ulp_ext());
                if let Some(stag) = invalidate.filter(|_| s.last()) {
                    if !self.tpt.can_invalidate(stag, self.cfg.pd) {
                        return Err(RemoteProtectionError::StagCannotBeInvalidated.into());
                    }
                }
                self.place_untagged(payload);
                if s.last() {
                    if let Some(stag) = invalidate {
                        self.tpt.invalidate(stag);
                    }
                    let (wr_id, msn, len) = self.complete_recv();
                    events.push(Event::RecvCompleted {
                        wr_id,
                        msn,
                        len,
                        solicited: opcode.solicited_event(),
                        invalidated: invalidate,
                    });
                }
                Ok(())
            }
            Opcode::ImmediateData | Opcode::ImmediateDataSe => {
                let data: [u8; IMMEDIATE_DATA_LEN] = payload
                    .try_into()
                    .ok()
                    .filter(|_| s.last() && expected_mo == 0)
                    .ok_or(RemoteOperationError::CatastrophicLocal)?;
                self.place_untagged(payload);
                let (wr_id, msn, _) = self.complete_recv();
                events.push(Event::ImmediateReceived {
                    wr_id,
                    msn,
                    data,
                    solicited: opcode.solicited_event(),
                });
                Ok(())
            }
            Opcode::ReadRequest => {
                if payload.len() > READ_REQUEST_HEADER_LEN {
                    return Err(U::MessageTooLong.into());
                }
                let h = ReadRequestHeader::new_checked(payload)
                    .map_err(|_| RemoteOperationError::CatastrophicLocal)?;
                let request = ReadRequestRepr::parse(&h)
                    .map_err(|_| RemoteOperationError::CatastrophicLocal)?;
                // RFC 5040 §4.4: the Data Source checks SrcSTag/SrcTO/size.
                self.tpt
                    .check(
                        request.src_stag,
                        self.cfg.pd,
                        ACCESS_REMOTE_READ,
                        request.src_to,
                        u64::from(request.size),
                    )
                    .map_err(read_fault)?;
                self.inbound_reads += 1;
                self.expected_msn[q] = self.expected_msn[q].wrapping_add(1);
                events.push(Event::ReadRequest(request));
                Ok(())
            }
            Opcode::Terminate => {
                let terminate = TerminateHeader::new_checked(payload)
                    .and_then(|h| TerminateRepr::parse(&h))
                    .map_err(|_| RemoteOperationError::CatastrophicLocal)?;
                self.expected_msn[q] = self.expected_msn[q].wrapping_add(1);
                events.push(Event::TerminateReceived(terminate));
                self.dead = true;
                Ok(())
            }
            // RFC 7306 Atomics: not implemented by rnic.
            _ => Err(RemoteOperationError::UnexpectedOpcode.into()),
        }
    }

    /// Writes a QN 0 segment's payload at the current MO of the oldest
    /// posted buffer (bounds checked by the caller).
    fn place_untagged(&mut self, payload: &[u8]) {
        let mo = self.send_mo as usize;
        if let Some(dst) = self
            .posted
            .front_mut()
            .and_then(|b| b.bytes.get_mut(mo..mo + payload.len()))
        {
            dst.copy_from_slice(payload);
        }
        self.send_mo = self.send_mo.wrapping_add(payload.len() as u32);
    }

    /// Completes the QN 0 message: the buffer moves to `completed`, the MSN
    /// advances. Returns (wr_id, msn, length).
    fn complete_recv(&mut self) -> (u64, u32, u32) {
        let msn = self.expected_msn[0];
        self.expected_msn[0] = msn.wrapping_add(1);
        let len = core::mem::take(&mut self.send_mo);
        let wr_id = match self.posted.pop_front() {
            Some(buf) => {
                let id = buf.wr_id;
                self.completed.push(buf);
                id
            }
            None => 0, // unreachable: the MSN check found a buffer
        };
        (wr_id, msn, len)
    }
}

/// The RDMAP opcode of a control octet: RV must be 1 ("Invalid RDMAP
/// version"), the opcode defined ("Unexpected OpCode") (RFC 5040 §4.1, §7).
fn rdmap_opcode(control: u8) -> Check<Opcode> {
    if control_version(control) != RDMAP_VERSION {
        return Err(RemoteOperationError::InvalidRdmapVersion.into());
    }
    Opcode::from_value(control & rdmap_control::OPCODE_MASK)
        .map_err(|_| RemoteOperationError::UnexpectedOpcode.into())
}

/// A tagged placement refused by the TPT, as DDP reports it (RFC 5041
/// §7.2); DDP has no access-rights code, RDMAP does (RFC 5040 §4.8).
fn tagged_fault(f: TptFault) -> TerminateCause {
    match f {
        TptFault::InvalidStag => TaggedBufferError::InvalidStag.into(),
        TptFault::WrongPd => TaggedBufferError::StagNotAssociated.into(),
        TptFault::Bounds => TaggedBufferError::BaseOrBoundsViolation.into(),
        TptFault::OffsetWrap => TaggedBufferError::ToWrap.into(),
        TptFault::AccessRights => RemoteProtectionError::AccessRightsViolation.into(),
    }
}

/// A Read Request's Data Source refused by the TPT: RDMAP Remote
/// Protection errors (RFC 5040 §4.8 Figure 9).
fn read_fault(f: TptFault) -> TerminateCause {
    match f {
        TptFault::InvalidStag => RemoteProtectionError::InvalidStag.into(),
        TptFault::WrongPd => RemoteProtectionError::StagNotAssociated.into(),
        TptFault::Bounds => RemoteProtectionError::BaseOrBoundsViolation.into(),
        TptFault::OffsetWrap => RemoteProtectionError::ToWrap.into(),
        TptFault::AccessRights => RemoteProtectionError::AccessRightsViolation.into(),
    }
}

/// The Terminate for `cause` found in the DDP segment `ulpdu` (empty for
/// MPA errors), with what RFC 5040 §4.8 Figure 10 says to echo: the DDP
/// segment length (M) and header (D) when the cause calls for it and the
/// header is whole; the Read Request header (R) for a Remote Protection
/// error on a Read Request.
pub fn terminate_for(cause: TerminateCause, ulpdu: &[u8]) -> TerminateRepr {
    let mut t = TerminateRepr::new(cause);
    let Some(&control) = ulpdu.first() else {
        return t;
    };
    let tagged = control & ddp_control::TAGGED != 0;
    let header_len = if tagged {
        TAGGED_HEADER_LEN
    } else {
        UNTAGGED_HEADER_LEN
    };
    if cause.echoes_ddp_header() {
        if let (Some(h), Ok(segment_length)) = (ulpdu.get(..header_len), u16::try_from(ulpdu.len()))
        {
            if let Ok(header) = EchoedDdpHeader::from_bytes(h) {
                t.ddp = Some(TerminatedDdp {
                    segment_length_valid: true,
                    segment_length,
                    header,
                });
            }
        }
    }
    let is_read_request = !tagged
        && ulpdu.get(1).map(|c| c & rdmap_control::OPCODE_MASK)
            == Some(Opcode::ReadRequest.value());
    if cause.echoes_rdma_header() && is_read_request {
        t.rdma = ulpdu
            .get(header_len..)
            .and_then(|b| ReadRequestHeader::new_checked(b).ok())
            .and_then(|h| ReadRequestRepr::parse(&h).ok());
    }
    t
}
