//! DMA read arbiter: four requesters share the core's one DMA read port
//! (docs/rtl.md "Core interfaces", DMA read).
//!
//! * Requests: round robin per request, with the grant in a register. While
//!   no request is on offer, or the offered one is taken this clock, the
//!   arbiter picks among the clients with `cN_req_valid` — the one after the
//!   last granted (cyclically) first, where the last granted is the one on
//!   offer if there is one — and offers that client's request from the next
//!   clock. An offered request that is not taken keeps the grant, so it
//!   never changes under the host. A client that drops `cN_req_valid` while
//!   granted is offered nothing and loses the grant.
//!
//!   Why registered: the choice depends on every client's `valid`, and a
//!   combinational choice put every client's `valid` logic in front of every
//!   other client's `ready` — on the board that chained `tx_sched`,
//!   `tx_seg`, `read_resp`, `tx_log` and this block into one path of the
//!   62.5 MHz core clock (docs/fpga.md, "Why the core clock is 62.5 MHz"). Now `cN_req_ready` is
//!   the grant register and the host's `dma_rd_req_ready`. The cost is one
//!   clock from a `valid` on an idle arbiter to its offer; back-to-back
//!   requests, of one client or several, are offered on consecutive clocks.
//! * Tags: client `N` owns the tag range `TAG_BASE[N] ..= TAG_BASE[N] + 15`:
//!   the outgoing tag is `TAG_BASE[N] | (cN_req_tag & 0x0F)` — client 0
//!   (WQE fetch) 0x00–0x0F, client 1 (receive-queue WQE fetch) 0x40–0x4F,
//!   client 2 (payload reads, `TxSeg`) 0x80–0x8F, client 3 (Read Response
//!   payload, `ReadResp`) 0xC0–0xCF.
//! * Completions: routed by tag range to the owning client (`cN_cpl_valid`,
//!   the shared `cpl_*` beat, its `cN_cpl_ready`). A completion whose tag is in
//!   no range is consumed and dropped, counted per beat in `cnt_cpl_bad`.

use rust_hdl::prelude::*;

/// Tag range bases (upper nibble of the tag), per client.
pub const TAG_BASE: [u8; 4] = [0x00, 0x40, 0x80, 0xC0];

#[derive(LogicBlock, Default)]
pub struct DmaRdArb {
    pub clock: Signal<In, Clock>,
    pub reset: Signal<In, Bit>,
    // Client 0: WQE fetch (tags 0x00–0x0F).
    pub c0_req_valid: Signal<In, Bit>,
    pub c0_req_ready: Signal<Out, Bit>,
    pub c0_req_addr: Signal<In, Bits<64>>,
    pub c0_req_len: Signal<In, Bits<16>>,
    pub c0_req_tag: Signal<In, Bits<8>>,
    pub c0_cpl_valid: Signal<Out, Bit>,
    pub c0_cpl_ready: Signal<In, Bit>,
    // Client 1: receive-queue WQE fetch (tags 0x40–0x4F).
    pub c1_req_valid: Signal<In, Bit>,
    pub c1_req_ready: Signal<Out, Bit>,
    pub c1_req_addr: Signal<In, Bits<64>>,
    pub c1_req_len: Signal<In, Bits<16>>,
    pub c1_req_tag: Signal<In, Bits<8>>,
    pub c1_cpl_valid: Signal<Out, Bit>,
    pub c1_cpl_ready: Signal<In, Bit>,
    // Client 2: payload reads (tags 0x80–0x8F).
    pub c2_req_valid: Signal<In, Bit>,
    pub c2_req_ready: Signal<Out, Bit>,
    pub c2_req_addr: Signal<In, Bits<64>>,
    pub c2_req_len: Signal<In, Bits<16>>,
    pub c2_req_tag: Signal<In, Bits<8>>,
    pub c2_cpl_valid: Signal<Out, Bit>,
    pub c2_cpl_ready: Signal<In, Bit>,
    // Client 3: Read Response payload reads (tags 0xC0–0xCF).
    pub c3_req_valid: Signal<In, Bit>,
    pub c3_req_ready: Signal<Out, Bit>,
    pub c3_req_addr: Signal<In, Bits<64>>,
    pub c3_req_len: Signal<In, Bits<16>>,
    pub c3_req_tag: Signal<In, Bits<8>>,
    pub c3_cpl_valid: Signal<Out, Bit>,
    pub c3_cpl_ready: Signal<In, Bit>,
    // The core's DMA read port.
    pub dma_rd_req_valid: Signal<Out, Bit>,
    pub dma_rd_req_ready: Signal<In, Bit>,
    pub dma_rd_req_addr: Signal<Out, Bits<64>>,
    pub dma_rd_req_len: Signal<Out, Bits<16>>,
    pub dma_rd_req_tag: Signal<Out, Bits<8>>,
    pub dma_rd_cpl_valid: Signal<In, Bit>,
    pub dma_rd_cpl_ready: Signal<Out, Bit>,
    pub dma_rd_cpl_tag: Signal<In, Bits<8>>,
    /// Completion beats with a tag in no client's range (dropped).
    pub cnt_cpl_bad: Signal<Out, Bits<32>>,
    /// Last granted client (0..=3), once its request is taken.
    last: DFF<Bits<2>>,
    /// The grant: client `gsel`'s request is on offer while it is valid.
    gnt: DFF<Bit>,
    gsel: DFF<Bits<2>>,
    n_bad: DFF<Bits<32>>,
    /// Round robin starts after this client: the granted one, else `last`.
    base: Signal<Local, Bits<2>>,
    /// The next grant among the clients valid now.
    pick: Signal<Local, Bits<2>>,
    /// The granted client's `valid`.
    vsel: Signal<Local, Bit>,
    tag_lo: Signal<Local, Bits<8>>,
    cpl_hi: Signal<Local, Bits<4>>,
}

impl Logic for DmaRdArb {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, last, gnt, gsel, n_bad);
        // Round robin: preference order base+1, base+2, base+3, base.
        self.base.next = self.last.q.val();
        if self.gnt.q.val() {
            self.base.next = self.gsel.q.val();
        }
        if self.base.val() == 0 {
            if self.c1_req_valid.val() {
                self.pick.next = 1.into();
            } else if self.c2_req_valid.val() {
                self.pick.next = 2.into();
            } else if self.c3_req_valid.val() {
                self.pick.next = 3.into();
            } else {
                self.pick.next = 0.into();
            }
        } else if self.base.val() == 1 {
            if self.c2_req_valid.val() {
                self.pick.next = 2.into();
            } else if self.c3_req_valid.val() {
                self.pick.next = 3.into();
            } else if self.c0_req_valid.val() {
                self.pick.next = 0.into();
            } else {
                self.pick.next = 1.into();
            }
        } else if self.base.val() == 2 {
            if self.c3_req_valid.val() {
                self.pick.next = 3.into();
            } else if self.c0_req_valid.val() {
                self.pick.next = 0.into();
            } else if self.c1_req_valid.val() {
                self.pick.next = 1.into();
            } else {
                self.pick.next = 2.into();
            }
        } else if self.c0_req_valid.val() {
            self.pick.next = 0.into();
        } else if self.c1_req_valid.val() {
            self.pick.next = 1.into();
        } else if self.c2_req_valid.val() {
            self.pick.next = 2.into();
        } else {
            self.pick.next = 3.into();
        }
        // The offer: only the granted client's request, selected by
        // registers (no other client's `valid` on this path).
        self.c0_req_ready.next = false;
        self.c1_req_ready.next = false;
        self.c2_req_ready.next = false;
        self.c3_req_ready.next = false;
        self.dma_rd_req_addr.next = self.c0_req_addr.val();
        self.dma_rd_req_len.next = self.c0_req_len.val();
        self.tag_lo.next = self.c0_req_tag.val() & 0x0F;
        // TAG_BASE[N] in the upper nibble
        self.dma_rd_req_tag.next = self.tag_lo.val();
        self.vsel.next = self.c0_req_valid.val();
        if self.gsel.q.val() == 0 {
            self.c0_req_ready.next = self.gnt.q.val() & self.dma_rd_req_ready.val();
        } else if self.gsel.q.val() == 1 {
            self.vsel.next = self.c1_req_valid.val();
            self.c1_req_ready.next = self.gnt.q.val() & self.dma_rd_req_ready.val();
            self.dma_rd_req_addr.next = self.c1_req_addr.val();
            self.dma_rd_req_len.next = self.c1_req_len.val();
            self.tag_lo.next = self.c1_req_tag.val() & 0x0F;
            self.dma_rd_req_tag.next = self.tag_lo.val() | 0x40;
        } else if self.gsel.q.val() == 2 {
            self.vsel.next = self.c2_req_valid.val();
            self.c2_req_ready.next = self.gnt.q.val() & self.dma_rd_req_ready.val();
            self.dma_rd_req_addr.next = self.c2_req_addr.val();
            self.dma_rd_req_len.next = self.c2_req_len.val();
            self.tag_lo.next = self.c2_req_tag.val() & 0x0F;
            self.dma_rd_req_tag.next = self.tag_lo.val() | 0x80;
        } else {
            self.vsel.next = self.c3_req_valid.val();
            self.c3_req_ready.next = self.gnt.q.val() & self.dma_rd_req_ready.val();
            self.dma_rd_req_addr.next = self.c3_req_addr.val();
            self.dma_rd_req_len.next = self.c3_req_len.val();
            self.tag_lo.next = self.c3_req_tag.val() & 0x0F;
            self.dma_rd_req_tag.next = self.tag_lo.val() | 0xC0;
        }
        self.dma_rd_req_valid.next = self.gnt.q.val() & self.vsel.val();
        // An offer not taken keeps the grant; otherwise (idle, taken, or
        // the client dropped its valid) the next grant is this clock's pick.
        if !(self.dma_rd_req_valid.val() & !self.dma_rd_req_ready.val()) {
            self.gnt.d.next = self.c0_req_valid.val()
                | self.c1_req_valid.val()
                | self.c2_req_valid.val()
                | self.c3_req_valid.val();
            self.gsel.d.next = self.pick.val();
        }
        if self.dma_rd_req_valid.val() & self.dma_rd_req_ready.val() {
            self.last.d.next = self.gsel.q.val();
        }
        // Completions by tag range.
        self.cpl_hi.next = self.dma_rd_cpl_tag.val().get_bits::<4>(4);
        self.c0_cpl_valid.next = false;
        self.c1_cpl_valid.next = false;
        self.c2_cpl_valid.next = false;
        self.c3_cpl_valid.next = false;
        self.dma_rd_cpl_ready.next = true;
        if self.cpl_hi.val() == 0x0 {
            self.c0_cpl_valid.next = self.dma_rd_cpl_valid.val();
            self.dma_rd_cpl_ready.next = self.c0_cpl_ready.val();
        } else if self.cpl_hi.val() == 0x4 {
            self.c1_cpl_valid.next = self.dma_rd_cpl_valid.val();
            self.dma_rd_cpl_ready.next = self.c1_cpl_ready.val();
        } else if self.cpl_hi.val() == 0x8 {
            self.c2_cpl_valid.next = self.dma_rd_cpl_valid.val();
            self.dma_rd_cpl_ready.next = self.c2_cpl_ready.val();
        } else if self.cpl_hi.val() == 0xC {
            self.c3_cpl_valid.next = self.dma_rd_cpl_valid.val();
            self.dma_rd_cpl_ready.next = self.c3_cpl_ready.val();
        } else if self.dma_rd_cpl_valid.val() {
            self.n_bad.d.next = self.n_bad.q.val() + 1;
        }
        self.cnt_cpl_bad.next = self.n_bad.q.val();
        if self.reset.val() {
            self.last.d.next = 3.into();
            self.gnt.d.next = false;
            self.n_bad.d.next = 0.into();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::testutil::{tick, Rng};
    use std::collections::VecDeque;

    fn uut() -> DmaRdArb {
        let mut u = DmaRdArb::default();
        u.clock.connect();
        u.reset.connect();
        u.c0_req_valid.connect();
        u.c0_req_addr.connect();
        u.c0_req_len.connect();
        u.c0_req_tag.connect();
        u.c0_cpl_ready.connect();
        u.c1_req_valid.connect();
        u.c1_req_addr.connect();
        u.c1_req_len.connect();
        u.c1_req_tag.connect();
        u.c1_cpl_ready.connect();
        u.c2_req_valid.connect();
        u.c2_req_addr.connect();
        u.c2_req_len.connect();
        u.c2_req_tag.connect();
        u.c2_cpl_ready.connect();
        u.c3_req_valid.connect();
        u.c3_req_addr.connect();
        u.c3_req_len.connect();
        u.c3_req_tag.connect();
        u.c3_cpl_ready.connect();
        u.dma_rd_req_ready.connect();
        u.dma_rd_cpl_valid.connect();
        u.dma_rd_cpl_tag.connect();
        u.connect_all();
        u
    }

    /// Random request streams from the three clients and a random host:
    /// every request reaches the host exactly once, unchanged but for the
    /// tag range, in per-client order; an offered request never changes
    /// before it is taken; no client waits for more than three grants of the
    /// others; completions reach exactly the owner of their tag, with its
    /// back-pressure; tags in no range are dropped and counted.
    #[test]
    fn round_robin_tags_and_routing() {
        let mut u = uut();
        u.reset.next = true;
        tick!(u);
        tick!(u);
        u.reset.next = false;
        let mut rng = Rng::new(11);
        // Per client: queue of (addr, len, tag) still to issue.
        let mut q: [VecDeque<(u64, u64, u64)>; 4] = Default::default();
        let mut seen: [Vec<(u64, u64, u64)>; 4] = Default::default();
        let mut want: [Vec<(u64, u64, u64)>; 4] = Default::default();
        let mut offered: Option<(u64, u64, u64)> = None;
        let mut waited = [0u32; 4];
        let mut max_wait = 0;
        let mut bad_sent = 0u32;
        let mut idle = 0u32;
        for cycle in 0..4000 {
            for (c, qc) in q.iter_mut().enumerate() {
                if qc.len() < 3 && rng.below(3) == 0 && cycle < 3500 {
                    let r = (
                        rng.next_u64(),
                        1 + rng.below(4096) as u64,
                        rng.next_u64() & 0xFF,
                    );
                    want[c].push((r.0, r.1, TAG_BASE[c] as u64 | (r.2 & 0x0F)));
                    qc.push_back(r);
                }
            }
            let heads: Vec<_> = q.iter().map(|qc| qc.front().copied()).collect();
            u.c0_req_valid.next = heads[0].is_some();
            u.c1_req_valid.next = heads[1].is_some();
            u.c2_req_valid.next = heads[2].is_some();
            u.c3_req_valid.next = heads[3].is_some();
            let h = |i: usize| heads[i].unwrap_or((0, 0, 0));
            u.c0_req_addr.next = h(0).0.into();
            u.c0_req_len.next = h(0).1.into();
            u.c0_req_tag.next = h(0).2.into();
            u.c1_req_addr.next = h(1).0.into();
            u.c1_req_len.next = h(1).1.into();
            u.c1_req_tag.next = h(1).2.into();
            u.c2_req_addr.next = h(2).0.into();
            u.c2_req_len.next = h(2).1.into();
            u.c2_req_tag.next = h(2).2.into();
            u.c3_req_addr.next = h(3).0.into();
            u.c3_req_len.next = h(3).1.into();
            u.c3_req_tag.next = h(3).2.into();
            let ready = rng.below(3) != 0;
            u.dma_rd_req_ready.next = ready;
            // Completion side: random tag, random client readiness.
            let ctag = rng.next_u64() & 0xFF;
            let cvalid = rng.below(2) == 0;
            let crdy = [
                rng.below(2) == 0,
                rng.below(2) == 0,
                rng.below(2) == 0,
                rng.below(2) == 0,
            ];
            u.dma_rd_cpl_valid.next = cvalid;
            u.dma_rd_cpl_tag.next = ctag.into();
            u.c0_cpl_ready.next = crdy[0];
            u.c1_cpl_ready.next = crdy[1];
            u.c2_cpl_ready.next = crdy[2];
            u.c3_cpl_ready.next = crdy[3];
            assert!(simulate(&mut u, 1000));
            // Completion routing.
            let owner = TAG_BASE.iter().position(|&b| (ctag & 0xF0) as u8 == b);
            let valids = [
                u.c0_cpl_valid.val(),
                u.c1_cpl_valid.val(),
                u.c2_cpl_valid.val(),
                u.c3_cpl_valid.val(),
            ];
            for (c, &v) in valids.iter().enumerate() {
                assert_eq!(v, cvalid && owner == Some(c), "cycle {cycle}");
            }
            assert_eq!(
                u.dma_rd_cpl_ready.val(),
                owner.map(|c| crdy[c]).unwrap_or(true)
            );
            if cvalid && owner.is_none() {
                bad_sent += 1;
            }
            // Request side. The grant is registered: a request waits at
            // most one clock with nothing on offer (the clock it is picked).
            let any = heads.iter().any(|h| h.is_some());
            if u.dma_rd_req_valid.val() {
                idle = 0;
            } else if any {
                idle += 1;
                assert!(
                    idle <= 1,
                    "requests waiting, nothing offered, cycle {cycle}"
                );
                for rd in [
                    u.c0_req_ready.val(),
                    u.c1_req_ready.val(),
                    u.c2_req_ready.val(),
                    u.c3_req_ready.val(),
                ] {
                    assert!(!rd, "ready without an offer, cycle {cycle}");
                }
            }
            if u.dma_rd_req_valid.val() {
                let r = (
                    u.dma_rd_req_addr.val().to_u64(),
                    u.dma_rd_req_len.val().to_u64(),
                    u.dma_rd_req_tag.val().to_u64(),
                );
                if let Some(o) = offered {
                    assert_eq!(o, r, "offered request changed, cycle {cycle}");
                }
                let c = TAG_BASE
                    .iter()
                    .position(|&b| (r.2 & 0xF0) as u8 == b)
                    .unwrap();
                let readies = [
                    u.c0_req_ready.val(),
                    u.c1_req_ready.val(),
                    u.c2_req_ready.val(),
                    u.c3_req_ready.val(),
                ];
                for (i, &rd) in readies.iter().enumerate() {
                    assert_eq!(rd, i == c && ready);
                }
                if ready {
                    q[c].pop_front();
                    seen[c].push(r);
                    offered = None;
                    for i in 0..4 {
                        if i != c && heads[i].is_some() {
                            waited[i] += 1;
                            max_wait = max_wait.max(waited[i]);
                        }
                    }
                    waited[c] = 0;
                } else {
                    offered = Some(r);
                }
            }
            tick!(u);
        }
        for c in 0..4 {
            assert!(q[c].is_empty());
            assert_eq!(seen[c], want[c], "client {c}");
        }
        assert!(max_wait <= 3, "a client waited {max_wait} grants");
        assert_eq!(u.cnt_cpl_bad.val().index() as u32, bad_sent);
        assert!(bad_sent > 0);
    }

    /// A client that drops `valid` after it was picked is offered nothing
    /// and loses the grant; the next client's request is offered the clock
    /// after, and only that client sees `ready`.
    #[test]
    fn a_withdrawn_request_is_never_offered() {
        let mut u = uut();
        u.reset.next = true;
        tick!(u);
        u.reset.next = false;
        u.dma_rd_req_ready.next = false;
        u.c2_req_valid.next = true;
        u.c2_req_addr.next = 0x222.into();
        assert!(simulate(&mut u, 1000));
        assert!(!u.dma_rd_req_valid.val(), "offered before the grant");
        tick!(u);
        u.c2_req_valid.next = false;
        u.c0_req_valid.next = true;
        u.c0_req_addr.next = 0x100.into();
        u.c0_req_tag.next = 0x35.into();
        assert!(simulate(&mut u, 1000));
        assert!(!u.dma_rd_req_valid.val(), "a withdrawn request was offered");
        tick!(u);
        u.dma_rd_req_ready.next = true;
        assert!(simulate(&mut u, 1000));
        assert!(u.dma_rd_req_valid.val());
        assert_eq!(u.dma_rd_req_addr.val().to_u64(), 0x100);
        assert_eq!(u.dma_rd_req_tag.val().to_u64(), 0x05);
        assert!(u.c0_req_ready.val());
        assert!(!u.c2_req_ready.val());
    }

    #[test]
    fn generates_verilog() {
        let mut u = DmaRdArb::default();
        u.connect_all();
        let v = crate::gen::postprocess_as(&generate_verilog(&u), "dma_rd_arb");
        assert!(v.contains("module dma_rd_arb("));
    }
}
