//! Placement: turns the payload of one DDP segment into DMA write requests
//! (the DMA write contract of `docs/rtl.md`: a header beat with the bus
//! address and length, then the octets packed from that address), or, in raw
//! mode, into a plain stream of the payload aligned to byte 0.
//!
//! # Command
//! `cmd_*` describes the payload: `cmd_len` octets (1..=65535) whose first
//! octet is at lane `cmd_off` (0..=8; 8 = "the next beat's lane 0") of
//! `cmd_hold`, a beat of the segment the caller has already taken off the
//! stream; `cmd_hold_last` says that beat was the segment's last. The rest of
//! the segment follows on `in_*`, and placement consumes it up to and
//! including its `last` beat (so the caller gets the stream back at the
//! next segment's first beat).
//!
//! With `cmd_hdr` (DMA mode) the payload goes to bus address `cmd_addr`,
//! which is `cmd_page_left` octets before the end of its page, page-list
//! entry `cmd_pbl_idx`, page size `2^cmd_page_shift`. Requests are split at
//! every 4 KiB boundary of the bus address and at every page end, so no
//! request crosses 4 KiB (as PCIe requires) and each is at most 4096 octets;
//! at a page end the next page's bus address is read from the page list
//! through `walk_idx`/`walk_addr` (the TPT's page-walk port: `walk_idx` is
//! `pbl_idx + 1` at all times, so the entry is ready when the page ends).
//!
//! # Realignment
//! Output beat `k` of a request holds octets `p..p+8` of the payload, where
//! the payload octet `p` sits at some lane `off` of the held beat: the beat
//! is `{in_data, hold} >> 8*off`, a byte-granular 9-way shift over two
//! beats. `off` changes only at request boundaries, so the rate is one
//! output beat per clock; a new request costs one clock (its header beat).
//!
//! # Bad input
//! If the segment ends before `cmd_len` octets (the caller's length was
//! wrong), the missing octets are still written (their value undefined)
//! and `cnt_short` counts the segment: no write ever leaves the range the
//! command gave. Beats after the payload are consumed and dropped
//! (`cnt_long` counts such segments).

use rust_hdl::prelude::*;

/// Requests never cross a 4 KiB boundary of the bus address (and so are at
/// most 4096 octets, the DMA write contract's limit).
pub const DMA_BOUNDARY: u64 = 4096;

#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum PlaceState {
    Idle,
    Hdr,
    Data,
    Drain,
}

#[derive(LogicBlock)]
pub struct Placement<const PN: usize> {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // ---- command
    pub cmd_valid: Signal<In, Bit>,
    /// High while idle; falls the clock after a command is taken.
    pub cmd_ready: Signal<Out, Bit>,
    /// 1: DMA requests; 0: raw stream (no header beats, no split).
    pub cmd_hdr: Signal<In, Bit>,
    pub cmd_addr: Signal<In, Bits<64>>,
    pub cmd_len: Signal<In, Bits<16>>,
    pub cmd_page_left: Signal<In, Bits<32>>,
    pub cmd_pbl_idx: Signal<In, Bits<PN>>,
    pub cmd_page_shift: Signal<In, Bits<5>>,
    pub cmd_hold: Signal<In, Bits<64>>,
    pub cmd_off: Signal<In, Bits<4>>,
    pub cmd_hold_last: Signal<In, Bit>,
    // ---- rest of the segment
    pub in_data: Signal<In, Bits<64>>,
    pub in_last: Signal<In, Bit>,
    pub in_valid: Signal<In, Bit>,
    pub in_ready: Signal<Out, Bit>,
    // ---- output (DMA write stream or raw stream)
    pub out_valid: Signal<Out, Bit>,
    pub out_ready: Signal<In, Bit>,
    pub out_hdr: Signal<Out, Bit>,
    pub out_len: Signal<Out, Bits<16>>,
    pub out_data: Signal<Out, Bits<64>>,
    pub out_keep: Signal<Out, Bits<4>>,
    pub out_last: Signal<Out, Bit>,
    // ---- page walk
    pub walk_idx: Signal<Out, Bits<PN>>,
    pub walk_addr: Signal<In, Bits<64>>,
    // ---- counters
    pub cnt_short: Signal<Out, Bits<32>>,
    pub cnt_long: Signal<Out, Bits<32>>,
    boundary: Constant<Bits<16>>,
    one32: Constant<Bits<32>>,
    state: DFF<PlaceState>,
    hdr_mode: DFF<Bit>,
    hold: DFF<Bits<64>>,
    hold_last: DFF<Bit>,
    off: DFF<Bits<4>>,
    rem: DFF<Bits<16>>,
    crem: DFF<Bits<16>>,
    /// `min(8, crem)` and `crem <= 8`, registered with `crem` (from its next
    /// value, `crem_nx`): the data beat's octet count and end come from
    /// flip-flops, not from a 16-bit compare (issue 7: that compare started
    /// a long path through the DMA write arbiter into the FPDU buffer).
    n_r: DFF<Bits<4>>,
    ce_r: DFF<Bit>,
    crem_nx: Signal<Local, Bits<16>>,
    addr: DFF<Bits<64>>,
    page_left: DFF<Bits<32>>,
    pbl_idx: DFF<Bits<PN>>,
    ps: DFF<Bits<5>>,
    crosses: DFF<Bit>,
    short: DFF<Bit>,
    c_short: DFF<Bits<32>>,
    c_long: DFF<Bits<32>>,
    // temporaries
    to_bound: Signal<Local, Bits<16>>,
    addr_lo: Signal<Local, Bits<12>>,
    off_n: Signal<Local, Bits<5>>,
    clen: Signal<Local, Bits<16>>,
    n: Signal<Local, Bits<4>>,
    need_in: Signal<Local, Bit>,
    can_take: Signal<Local, Bit>,
    win: Signal<Local, Bits<128>>,
    shifted: Signal<Local, Bits<128>>,
    fire: Signal<Local, Bit>,
    took: Signal<Local, Bit>,
    chunk_end: Signal<Local, Bit>,
}

impl<const PN: usize> Default for Placement<PN> {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            cmd_valid: Default::default(),
            cmd_ready: Default::default(),
            cmd_hdr: Default::default(),
            cmd_addr: Default::default(),
            cmd_len: Default::default(),
            cmd_page_left: Default::default(),
            cmd_pbl_idx: Default::default(),
            cmd_page_shift: Default::default(),
            cmd_hold: Default::default(),
            cmd_off: Default::default(),
            cmd_hold_last: Default::default(),
            in_data: Default::default(),
            in_last: Default::default(),
            in_valid: Default::default(),
            in_ready: Default::default(),
            out_valid: Default::default(),
            out_ready: Default::default(),
            out_hdr: Default::default(),
            out_len: Default::default(),
            out_data: Default::default(),
            out_keep: Default::default(),
            out_last: Default::default(),
            walk_idx: Default::default(),
            walk_addr: Default::default(),
            cnt_short: Default::default(),
            cnt_long: Default::default(),
            boundary: Constant::new(DMA_BOUNDARY.into()),
            one32: Constant::new(1.into()),
            state: Default::default(),
            hdr_mode: Default::default(),
            hold: Default::default(),
            hold_last: Default::default(),
            off: Default::default(),
            rem: Default::default(),
            crem: Default::default(),
            n_r: Default::default(),
            ce_r: Default::default(),
            crem_nx: Default::default(),
            addr: Default::default(),
            page_left: Default::default(),
            pbl_idx: Default::default(),
            ps: Default::default(),
            crosses: Default::default(),
            short: Default::default(),
            c_short: Default::default(),
            c_long: Default::default(),
            to_bound: Default::default(),
            addr_lo: Default::default(),
            off_n: Default::default(),
            clen: Default::default(),
            n: Default::default(),
            need_in: Default::default(),
            can_take: Default::default(),
            win: Default::default(),
            shifted: Default::default(),
            fire: Default::default(),
            took: Default::default(),
            chunk_end: Default::default(),
        }
    }
}

impl<const PN: usize> Logic for Placement<PN> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, hdr_mode, hold, hold_last, off, rem, crem, n_r, ce_r, addr,
            page_left, pbl_idx, ps, crosses, short, c_short, c_long
        );
        self.cnt_short.next = self.c_short.q.val();
        self.cnt_long.next = self.c_long.q.val();
        self.walk_idx.next = self.pbl_idx.q.val() + 1;

        // Length of the next request: to the 4 KiB boundary, the page end
        // or the payload end, whichever is first.
        self.addr_lo.next = self.addr.q.val().get_bits::<12>(0);
        self.to_bound.next = self.boundary.val() - bit_cast::<16, 12>(self.addr_lo.val());
        self.clen.next = self.rem.q.val();
        if self.to_bound.val() < self.clen.val() {
            self.clen.next = self.to_bound.val();
        }
        if self.page_left.q.val() < bit_cast::<32, 16>(self.clen.val()) {
            self.clen.next = self.page_left.q.val().get_bits::<16>(0);
        }

        // Data beat: n = min(8, crem) octets from lane `off` of {in, hold}.
        self.n.next = self.n_r.q.val();
        self.crem_nx.next = self.crem.q.val();
        self.off_n.next = bit_cast::<5, 4>(self.off.q.val()) + bit_cast::<5, 4>(self.n.val());
        self.need_in.next = self.off_n.val() > 8;
        self.can_take.next = !self.hold_last.q.val() & (self.off_n.val() >= 8);
        self.win.next = (bit_cast::<128, 64>(self.in_data.val()) << 64)
            | bit_cast::<128, 64>(self.hold.q.val());
        self.chunk_end.next = self.ce_r.q.val();

        self.cmd_ready.next = false;
        self.in_ready.next = false;
        self.out_valid.next = false;
        self.out_hdr.next = false;
        self.out_len.next = self.clen.val();
        self.shifted.next = self.win.val() >> (bit_cast::<7, 4>(self.off.q.val()) << 3);
        self.out_data.next = self.shifted.val().get_bits::<64>(0);
        self.out_keep.next = self.n.val();
        self.out_last.next = self.chunk_end.val();
        self.fire.next = false;
        self.took.next = false;

        match self.state.q.val() {
            PlaceState::Idle => {
                self.cmd_ready.next = true;
                if self.cmd_valid.val() {
                    self.hdr_mode.d.next = self.cmd_hdr.val();
                    self.hold.d.next = self.cmd_hold.val();
                    self.hold_last.d.next = self.cmd_hold_last.val();
                    self.off.d.next = self.cmd_off.val();
                    self.rem.d.next = self.cmd_len.val();
                    self.crem_nx.next = self.cmd_len.val();
                    self.addr.d.next = self.cmd_addr.val();
                    self.page_left.d.next = self.cmd_page_left.val();
                    self.pbl_idx.d.next = self.cmd_pbl_idx.val();
                    self.ps.d.next = self.cmd_page_shift.val();
                    self.short.d.next = false;
                    if self.cmd_len.val() == 0 {
                        if !self.cmd_hold_last.val() {
                            self.state.d.next = PlaceState::Drain;
                        }
                    } else if self.cmd_hdr.val() {
                        self.state.d.next = PlaceState::Hdr;
                    } else {
                        // Raw mode: the whole payload is one "request".
                        self.rem.d.next = 0.into();
                        self.state.d.next = PlaceState::Data;
                    }
                }
            }
            PlaceState::Hdr => {
                self.out_valid.next = true;
                self.out_hdr.next = true;
                self.out_data.next = self.addr.q.val();
                self.out_keep.next = 0.into();
                self.out_last.next = false;
                if self.out_ready.val() {
                    self.crem_nx.next = self.clen.val();
                    self.rem.d.next = self.rem.q.val() - self.clen.val();
                    self.page_left.d.next =
                        self.page_left.q.val() - bit_cast::<32, 16>(self.clen.val());
                    self.crosses.d.next =
                        self.page_left.q.val() == bit_cast::<32, 16>(self.clen.val());
                    self.addr.d.next = self.addr.q.val() + bit_cast::<64, 16>(self.clen.val());
                    self.state.d.next = PlaceState::Data;
                }
            }
            PlaceState::Data => {
                self.out_valid.next =
                    !self.need_in.val() | self.in_valid.val() | self.hold_last.q.val();
                self.in_ready.next = self.out_ready.val() & self.can_take.val();
                self.fire.next = self.out_valid.val() & self.out_ready.val();
                self.took.next = self.fire.val() & self.in_valid.val() & self.can_take.val();
                if self.fire.val() {
                    self.crem_nx.next = self.crem.q.val() - bit_cast::<16, 4>(self.n.val());
                    if self.took.val() {
                        self.hold.d.next = self.in_data.val();
                        self.hold_last.d.next = self.in_last.val();
                        self.off.d.next = self.off.q.val() + self.n.val() - 8;
                    } else if self.need_in.val() {
                        // The segment ended early: octets past its end.
                        self.short.d.next = true;
                        self.off.d.next = 8.into();
                    } else {
                        self.off.d.next = self.off.q.val() + self.n.val();
                    }
                    if self.chunk_end.val() {
                        if self.crosses.q.val() {
                            self.addr.d.next = self.walk_addr.val();
                            self.pbl_idx.d.next = self.pbl_idx.q.val() + 1;
                            self.page_left.d.next = self.one32.val() << self.ps.q.val();
                        }
                        if self.rem.q.val() != 0 {
                            self.state.d.next = PlaceState::Hdr;
                        } else {
                            if self.short.q.val() | (self.need_in.val() & !self.took.val()) {
                                self.c_short.d.next = self.c_short.q.val() + 1;
                            }
                            if self.took.val() {
                                if self.in_last.val() {
                                    self.state.d.next = PlaceState::Idle;
                                } else {
                                    self.state.d.next = PlaceState::Drain;
                                }
                            } else if self.hold_last.q.val() {
                                self.state.d.next = PlaceState::Idle;
                            } else {
                                self.state.d.next = PlaceState::Drain;
                            }
                        }
                    }
                }
            }
            PlaceState::Drain => {
                self.in_ready.next = true;
                if self.in_valid.val() & self.in_last.val() {
                    self.state.d.next = PlaceState::Idle;
                    self.c_long.d.next = self.c_long.q.val() + 1;
                }
            }
        }

        self.crem.d.next = self.crem_nx.val();
        self.n_r.d.next = 8.into();
        if self.crem_nx.val() < 8 {
            self.n_r.d.next = self.crem_nx.val().get_bits::<4>(0);
        }
        self.ce_r.d.next = self.crem_nx.val() <= 8;

        if self.reset.val() {
            self.state.d.next = PlaceState::Idle;
            self.c_short.d.next = 0.into();
            self.c_long.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};
    use std::collections::VecDeque;

    const PN: usize = 12;

    /// One command and the segment beats after the held one.
    struct Job {
        hdr: bool,
        addr: u64,
        page_left: u64,
        pbl_idx: u32,
        ps: u8,
        hold: u64,
        off: u8,
        hold_last: bool,
        beats: Vec<(u64, bool)>,
        payload: Vec<u8>,
        /// The payload length the command claims (differs for bad input).
        len: usize,
    }

    /// What the DMA stream must carry: (address, octets) per request,
    /// split at 4 KiB and at page ends, pages from `pbl`.
    fn expected(job: &Job, pbl: &[u64]) -> Vec<(u64, Vec<u8>)> {
        let mut out = Vec::new();
        let (mut addr, mut left, mut idx) = (job.addr, job.page_left, job.pbl_idx);
        let mut p = 0;
        while p < job.len {
            let n = (job.len - p)
                .min((DMA_BOUNDARY - addr % DMA_BOUNDARY) as usize)
                .min(left as usize);
            out.push((addr, job.payload[p..p + n].to_vec()));
            p += n;
            left -= n as u64;
            addr += n as u64;
            if left == 0 {
                idx += 1;
                addr = pbl[idx as usize];
                left = 1 << job.ps;
            }
        }
        out
    }

    fn make_job(rng: &mut Rng, pbl: &[u64], hdr: bool) -> Job {
        let ps = [12u8, 13, 16][rng.below(3)];
        let len = match rng.below(6) {
            0 => 1 + rng.below(16),
            1 => 1 + rng.below(9000),
            _ => 1 + rng.below(3000),
        };
        let pbl_idx = rng.below(pbl.len() - 8) as u32;
        let in_page = rng.below(1 << ps) as u64;
        let off = rng.below(9) as u8;
        // The segment: `off` octets of header in the held beat, then the
        // payload.
        let mut seg = rng.bytes(off as usize);
        let payload = rng.bytes(len);
        seg.extend_from_slice(&payload);
        let mut beats: Vec<(u64, bool)> = seg
            .chunks(8)
            .map(|c| {
                let mut b = rng.bytes(8); // garbage above the segment's end
                b[..c.len()].copy_from_slice(c);
                (u64::from_le_bytes(b.try_into().unwrap()), false)
            })
            .collect();
        beats.last_mut().unwrap().1 = true;
        let (hold, hold_last) = beats.remove(0);
        Job {
            hdr,
            addr: pbl[pbl_idx as usize] + in_page,
            page_left: (1u64 << ps) - in_page,
            pbl_idx,
            ps,
            hold,
            off,
            hold_last,
            beats,
            payload,
            len,
        }
    }

    struct Bench {
        uut: Placement<PN>,
    }

    impl Bench {
        fn new() -> Self {
            let mut uut = Placement::<PN>::default();
            uut.clock.connect();
            uut.reset.connect();
            uut.cmd_valid.connect();
            uut.cmd_hdr.connect();
            uut.cmd_addr.connect();
            uut.cmd_len.connect();
            uut.cmd_page_left.connect();
            uut.cmd_pbl_idx.connect();
            uut.cmd_page_shift.connect();
            uut.cmd_hold.connect();
            uut.cmd_off.connect();
            uut.cmd_hold_last.connect();
            uut.in_data.connect();
            uut.in_last.connect();
            uut.in_valid.connect();
            uut.out_ready.connect();
            uut.walk_addr.connect();
            uut.connect_all();
            uut.reset.next = true;
            tick!(uut);
            tick!(uut);
            uut.reset.next = false;
            Bench { uut }
        }

        /// Runs `job`; returns the output as requests (addr, octets) — in
        /// raw mode one request with address 0 — and the clocks it took.
        fn run(
            &mut self,
            job: &Job,
            pbl: &[u64],
            rng: &mut Rng,
            in_pct: usize,
            out_pct: usize,
        ) -> (Vec<(u64, Vec<u8>)>, usize) {
            let uut = &mut self.uut;
            assert!(uut.cmd_ready.val());
            uut.cmd_valid.next = true;
            uut.cmd_hdr.next = job.hdr;
            uut.cmd_addr.next = job.addr.into();
            uut.cmd_len.next = (job.len as u64).into();
            uut.cmd_page_left.next = job.page_left.into();
            uut.cmd_pbl_idx.next = (job.pbl_idx as u64).into();
            uut.cmd_page_shift.next = (job.ps as u64).into();
            uut.cmd_hold.next = job.hold.into();
            uut.cmd_off.next = (job.off as u64).into();
            uut.cmd_hold_last.next = job.hold_last;
            let mut walk_idx = uut.walk_idx.val().to_u64() as usize;
            tick!(*uut);
            uut.walk_addr.next = pbl[walk_idx].into();
            uut.cmd_valid.next = false;
            let mut beats: VecDeque<(u64, bool)> = job.beats.iter().copied().collect();
            let mut got: Vec<(u64, Vec<u8>)> = if job.hdr {
                Vec::new()
            } else {
                vec![(0, Vec::new())]
            };
            let mut in_req = false;
            let mut cycles = 1;
            while !uut.cmd_ready.val() {
                let present = !beats.is_empty() && rng.below(100) < in_pct;
                uut.in_valid.next = present;
                if let Some(&(d, l)) = beats.front() {
                    uut.in_data.next = d.into();
                    uut.in_last.next = l;
                }
                let ready = rng.below(100) < out_pct;
                uut.out_ready.next = ready;
                // Settle the combinational outputs for these inputs.
                assert!(simulate(uut, 1000));
                if present && uut.in_ready.val() {
                    beats.pop_front();
                }
                if std::env::var("PL_TRACE").is_ok() {
                    eprintln!(
                        "c{cycles} st {:?} v{} r{} hdr{} d{:016x} k{} l{} | in v{} r{} d{:016x} l{}",
                        uut.state.q.val(),
                        uut.out_valid.val(),
                        ready,
                        uut.out_hdr.val(),
                        uut.out_data.val().to_u64(),
                        uut.out_keep.val().to_u64(),
                        uut.out_last.val(),
                        present,
                        uut.in_ready.val(),
                        uut.in_data.val().to_u64(),
                        uut.in_last.val()
                    );
                }
                if uut.out_valid.val() && ready {
                    if uut.out_hdr.val() {
                        assert!(job.hdr && !in_req, "header inside a request");
                        let len = uut.out_len.val().to_u64() as usize;
                        assert!((1..=4096).contains(&len));
                        got.push((uut.out_data.val().to_u64(), Vec::with_capacity(len)));
                        in_req = true;
                    } else {
                        assert!(!job.hdr || in_req, "data beat outside a request");
                        let k = uut.out_keep.val().to_u64() as usize;
                        let d = uut.out_data.val().to_u64().to_le_bytes();
                        got.last_mut().unwrap().1.extend_from_slice(&d[..k]);
                        if uut.out_last.val() {
                            in_req = false;
                        } else {
                            assert_eq!(k, 8);
                        }
                    }
                }
                walk_idx = uut.walk_idx.val().to_u64() as usize;
                tick!(*uut);
                uut.walk_addr.next = pbl[walk_idx].into();
                cycles += 1;
                assert!(cycles < 20_000, "placement hung");
            }
            assert!(beats.is_empty(), "segment not consumed to its end");
            uut.in_valid.next = false;
            (got, cycles)
        }
    }

    fn pbl(rng: &mut Rng) -> Vec<u64> {
        (0..1 << PN)
            .map(|_| (rng.next_u64() >> 8) & !0xffff)
            .collect()
    }

    /// Random payloads, offsets, pages and back-pressure: the DMA requests
    /// are exactly the split of the payload at 4 KiB boundaries and page
    /// ends, with the right addresses and octets.
    #[test]
    fn dma_requests_match_model() {
        let mut rng = Rng::new(5);
        let pbl = pbl(&mut rng);
        let mut b = Bench::new();
        for i in 0..60 {
            let job = make_job(&mut rng, &pbl, true);
            let (in_pct, out_pct) = if i % 3 == 0 { (100, 100) } else { (70, 60) };
            let (got, _) = b.run(&job, &pbl, &mut rng, in_pct, out_pct);
            let want = expected(&job, &pbl);
            assert_eq!(got.len(), want.len(), "job {i}: request count");
            for (r, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!(g.0, w.0, "job {i} request {r}: address");
                assert_eq!(g.1, w.1, "job {i} request {r}: octets");
            }
        }
        assert_eq!(b.uut.cnt_short.val().to_u64(), 0);
        assert_eq!(b.uut.cnt_long.val().to_u64(), 0);
    }

    /// Raw mode: the payload aligned to byte 0, one packet.
    #[test]
    fn raw_stream_is_the_payload() {
        let mut rng = Rng::new(6);
        let pbl = pbl(&mut rng);
        let mut b = Bench::new();
        for i in 0..40 {
            let job = make_job(&mut rng, &pbl, false);
            let (got, _) = b.run(&job, &pbl, &mut rng, 80, 80);
            assert_eq!(got.len(), 1);
            if got[0].1 != job.payload {
                eprintln!("hold {:016x} off {} len {}", job.hold, job.off, job.len);
                for k in got[0].1.chunks(8).zip(job.payload.chunks(8)).take(4) {
                    eprintln!("got {:02x?} want {:02x?}", k.0, k.1);
                }
                panic!("job {i}: raw stream differs");
            }
        }
    }

    /// Full rate: one output beat per clock plus one clock per request.
    #[test]
    fn full_rate() {
        let mut rng = Rng::new(7);
        let pbl = pbl(&mut rng);
        let mut b = Bench::new();
        let mut job = make_job(&mut rng, &pbl, true);
        while job.len < 1000 || expected(&job, &pbl).len() != 1 {
            job = make_job(&mut rng, &pbl, true);
        }
        let (_, cycles) = b.run(&job, &pbl, &mut rng, 100, 100);
        // command clock + header beat + data beats, idle right after.
        assert_eq!(cycles, 1 + 1 + job.len.div_ceil(8), "len {}", job.len);
    }

    /// A segment shorter or longer than the command says: exactly `len`
    /// octets are written (no more), the stream is consumed to its last
    /// beat, and the counters say so.
    #[test]
    fn bad_lengths_are_bounded() {
        let mut rng = Rng::new(8);
        let pbl = pbl(&mut rng);
        let mut b = Bench::new();
        let mut shorts = 0;
        let mut longs = 0;
        for i in 0..30 {
            let mut job = make_job(&mut rng, &pbl, true);
            if job.len < 20 {
                continue;
            }
            let real = job.len;
            if i % 2 == 0 {
                // Claim more than the segment holds.
                job.len = real + 1 + rng.below(30);
                job.payload.resize(job.len, 0);
                shorts += 1;
            } else {
                // Claim less: the tail beats must be dropped.
                job.len = real - 9 - rng.below(10);
                longs += 1;
            }
            let (got, _) = b.run(&job, &pbl, &mut rng, 80, 80);
            let want = expected(&job, &pbl);
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(g.0, w.0);
                assert_eq!(g.1.len(), w.1.len());
                let n = if i % 2 == 0 { 0 } else { w.1.len() };
                assert_eq!(g.1[..n], w.1[..n]);
            }
        }
        assert_eq!(b.uut.cnt_short.val().to_u64(), shorts);
        assert_eq!(b.uut.cnt_long.val().to_u64(), longs);
    }
}
