//! Where a small RDMA Write's latency goes: one Write at a time between two
//! co-simulated nodes ([`crate::rtl_run::with_write_rig`]: MTU 1500, MPA rev 2 with CRC,
//! the default link: 10 Gb/s, 1 µs), its latency measured as `make sim`
//! measures it (post → B's placement records cover the message and B's DMA
//! writes have landed), and cut into stages from both nodes' DMA logs and
//! the frames A hands to the link:
//!
//! | stage | from | to |
//! |---|---|---|
//! | doorbell | `post_send` is called | A's WQE read is accepted by the DMA server; pushed: `post_send` returns (the push's MMIO writes and the doorbell, a clock each) |
//! | WQE read | that request | its completion's last beat; pushed: none (0) |
//! | WQE → payload read | the WQE in | A's payload read is accepted |
//! | payload read | that request | its completion's last beat |
//! | framing | the payload in | the frame's last beat leaves A's MAC (headers, MPA CRC, TCP checksum: store and forward) |
//! | link | that beat | the frame's last octet reaches B (the frame went on the wire with its first beat; the link adds its propagation delay) |
//! | receive → placement | the frame at B | B's placement write's last beat is accepted (the co-simulation hands B's MAC the frame whole when its last octet arrives and streams it in at line rate, so this stage holds the frame's beats once more than a MAC receiving as the octets arrive would) |
//! | placement write | that beat | the write has landed in B's memory |
//! | measurement | that | the clock the run loop sees it (granularity of one round) |
//!
//! With the WQE pushed (`abi::doorbell::QP_SQ_PUSH`, [`Source::push`]) A
//! reads no WQE, and the stage after the doorbell counts from the doorbell:
//! the grant, the push's copy into the WQE store and what follows.
//!
//! The stages add up to the latency exactly ([`WriteSample::stages`]);
//! `sim/tests/latency.rs` checks that on every sample, and `make bench`
//! reports the medians (`target/bench/latency.json`).

use std::cell::RefCell;
use std::rc::Rc;

use crate::dma::DmaEvent;
use crate::link::{LinkConfig, Side};
use crate::msg_rate::{PAY_TAGS, WQE_TAGS};
use crate::rtl_run::{run_until, tcp_of, with_write_rig_link};
use rnic_driver::WcStatus;

/// The stages' names, in order ([`WriteSample::stages`]).
pub const STAGES: [&str; 9] = [
    "doorbell → WQE read request (pushed: post → doorbell written)",
    "WQE read (DMA round trip; pushed: none)",
    "WQE → payload read request",
    "payload read (DMA round trip)",
    "framing (store and forward) → last beat out of A's MAC",
    "link (propagation; the frame is on the wire from its first beat)",
    "B: receive → placement write",
    "placement write lands",
    "measurement granularity",
];

/// One Write's clocks, absolute (core clocks of the world).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteSample {
    pub post: u64,
    pub wqe_req: u64,
    pub wqe_done: u64,
    pub pay_req: u64,
    pub pay_done: u64,
    pub tx_last_beat: u64,
    pub at_b: u64,
    pub b_write: u64,
    pub b_lands: u64,
    pub seen: u64,
}

impl WriteSample {
    /// Clocks post → seen.
    pub fn latency(&self) -> u64 {
        self.seen - self.post
    }

    /// The stages' clocks ([`STAGES`]); they add up to [`Self::latency`].
    /// `None` if the events are out of order (a stage would be negative).
    pub fn stages(&self) -> Option<[u64; 9]> {
        let t = [
            self.post,
            self.wqe_req,
            self.wqe_done,
            self.pay_req,
            self.pay_done,
            self.tx_last_beat,
            self.at_b,
            self.b_write,
            self.b_lands,
            self.seen,
        ];
        let mut s = [0u64; 9];
        for i in 0..9 {
            s[i] = t[i + 1].checked_sub(t[i])?;
        }
        Some(s)
    }
}

/// How the measured Writes are posted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Source {
    /// The message in the WQE (`SendWr::inline_data`), not in a buffer.
    pub inline: bool,
    /// The WQE pushed through the doorbell page (`Context::set_wqe_push`).
    pub push: bool,
}

impl Source {
    /// A registered buffer, the WQE read from the ring.
    pub const BUFFER: Source = Source {
        inline: false,
        push: false,
    };
    /// Inline, the WQE read from the ring.
    pub const INLINE: Source = Source {
        inline: true,
        push: false,
    };
    /// Inline and pushed: no DMA read at A at all.
    pub const INLINE_PUSHED: Source = Source {
        inline: true,
        push: true,
    };

    /// What the source is called in reports.
    pub fn name(&self) -> &'static str {
        match (self.inline, self.push) {
            (false, false) => "from a registered buffer",
            (false, true) => "from a registered buffer, WQE pushed",
            (true, false) => "inline",
            (true, true) => "inline, WQE pushed",
        }
    }
}

/// `samples` RDMA Writes of `size` octets (≤ one frame's payload) from a
/// registered buffer, the WQE read from the ring, one at a time, each
/// checked byte-exact in B's memory and its completion polled after the
/// measurement.
pub fn write_samples(samples: usize, size: usize) -> Result<Vec<WriteSample>, String> {
    write_samples_as(samples, size, Source::BUFFER)
}

/// [`write_samples`], the Writes posted as `src` says. An inline Write must
/// read no payload from A's memory: a payload read is an error, and its two
/// payload stages are zero (`pay_req` = `pay_done` = the WQE's arrival). A
/// pushed Write must read no WQE: a WQE read is an error, and the WQE's
/// arrival is taken as the clock `post_send` returns.
pub fn write_samples_as(
    samples: usize,
    size: usize,
    src: Source,
) -> Result<Vec<WriteSample>, String> {
    write_samples_over(LinkConfig::default(), samples, size, src)
}

/// [`write_samples_as`] over `link` (e.g. no propagation delay: two
/// RNICs back to back on a short cable).
pub fn write_samples_over(
    link: LinkConfig,
    samples: usize,
    size: usize,
    src: Source,
) -> Result<Vec<WriteSample>, String> {
    let inline = src.inline;
    with_write_rig_link(
        link,
        None,
        1500,
        size,
        None,
        |i| (i * 7 + 3) as u8,
        |rig| {
            let world = rig.world;
            let stag = rig.mr_b.rkey();
            // A's data frames handed to the link, and their arrival at B.
            let frames: Rc<RefCell<Vec<u64>>> = Rc::default();
            let arrivals: Rc<RefCell<Vec<u64>>> = Rc::default();
            {
                let (frames, arrivals) = (frames.clone(), arrivals.clone());
                let mut w = world.borrow_mut();
                w.tx_hook = Some(Box::new(move |side, t, f| {
                    if side == Side::A && tcp_of(f).is_some_and(|(_, _, len)| len > 0) {
                        frames.borrow_mut().push(t);
                    }
                    true
                }));
                w.rx_hook = Some(Box::new(move |side, t, f| {
                    if side == Side::B && tcp_of(f).is_some_and(|(_, _, len)| len > 0) {
                        arrivals.borrow_mut().push(t);
                    }
                }));
                for n in &w.nodes {
                    n.hw.borrow_mut().dma.set_log(true);
                }
            }
            rig.a.set_wqe_push(src.push);
            if rig.a.wqe_push() != src.push {
                return Err("A's device has no WQE push (CAP_WQE_PUSH)".into());
            }
            let mut out = Vec::with_capacity(samples);
            for k in 0..samples {
                // Quiet first: B's ACK of the previous Write and its DMA done.
                run_until(world, 20_000, |w| {
                    w.nodes.iter().all(|n| n.hw.borrow().dma.idle())
                })
                .map_err(|c| format!("sample {k}: not idle after {c} clocks"))?;
                // A gap of 2,000 to 2,511 rounds, varied so the samples
                // do not all fall in one phase of B's periodic work (its
                // ACK timer): with one fixed gap the median followed it.
                for _ in 0..2_000 + (k * 211) % 512 {
                    world.borrow_mut().round();
                }
                let (log0, placed0, offs) = {
                    let w = world.borrow();
                    let now = w.cycle();
                    let h: Vec<_> = w.nodes.iter().map(|n| n.hw.borrow()).collect();
                    (
                        [h[0].dma.log().len(), h[1].dma.log().len()],
                        h[1].placed.len(),
                        // DMA clocks → world clocks.
                        [now - h[0].dma.cycle(), now - h[1].dma.cycle()],
                    )
                };
                frames.borrow_mut().clear();
                arrivals.borrow_mut().clear();
                // Each of the driver's BAR0 writes (the doorbell, the push)
                // is one clock of A (the co-simulation's bus).
                let post = world.borrow().cycle();
                // Signaled: the send queue (8 deep) is freed by the
                // completions, which come after the measurement (B's ACK).
                rig.post_write_as(1000 + k as u64, true, inline)?;
                let rung = world.borrow().cycle();
                run_until(world, 20_000, |w| {
                    let b = w.nodes[1].hw.borrow();
                    let placed: usize = b.placed[placed0..]
                        .iter()
                        .filter(|p| p.0 == stag)
                        .map(|p| p.2 as usize)
                        .sum();
                    placed >= size && b.dma.idle()
                })
                .map_err(|c| format!("sample {k}: not placed within {c} clocks"))?;
                let seen = world.borrow().cycle();
                if let Some(i) = rig.first_wrong_octet() {
                    return Err(format!("sample {k}: B's octet {i} wrong"));
                }
                match rig.await_completion(20_000) {
                    (Some(wc), _)
                        if wc.wr_id == 1000 + k as u64 && wc.status == WcStatus::Success => {}
                    (wc, c) => {
                        return Err(format!("sample {k}: completion {wc:?} after {c} clocks"))
                    }
                }
                let w = world.borrow();
                let a = w.nodes[0].hw.borrow();
                let b = w.nodes[1].hw.borrow();
                let first_read = |tags: &std::ops::RangeInclusive<u8>| {
                    let mut req = None;
                    for e in &a.dma.log()[log0[0]..] {
                        match *e {
                            DmaEvent::ReadReq { cycle, tag, .. }
                                if req.is_none() && tags.contains(&tag) =>
                            {
                                req = Some((cycle, tag))
                            }
                            DmaEvent::CplEnd { cycle, tag } if req.is_some_and(|r| r.1 == tag) => {
                                return Some((req?.0 + offs[0], cycle + offs[0]));
                            }
                            _ => {}
                        }
                    }
                    None
                };
                let (wqe_req, wqe_done) = match (first_read(&WQE_TAGS), src.push) {
                    (Some(r), false) => r,
                    (None, true) => (rung, rung),
                    (None, false) => return Err("no WQE read at A".into()),
                    (Some(_), true) => return Err(format!("sample {k}: a pushed WQE was read")),
                };
                let (pay_req, pay_done) = match (first_read(&PAY_TAGS), inline) {
                    (Some(r), false) => r,
                    (None, true) => (wqe_done, wqe_done),
                    (None, false) => return Err("no payload read at A".into()),
                    (Some(_), true) => {
                        return Err(format!("sample {k}: an inline Write read its payload"))
                    }
                };
                let tx_last_beat = *frames.borrow().first().ok_or("no data frame from A")?;
                let at_b = *arrivals.borrow().first().ok_or("no data frame at B")?;
                let (b_write, b_lands) = b.dma.log()[log0[1]..]
                    .iter()
                    .find_map(|e| match *e {
                        DmaEvent::Write { cycle, lands, .. } => {
                            Some((cycle + offs[1], lands + offs[1]))
                        }
                        _ => None,
                    })
                    .ok_or("no DMA write at B")?;
                out.push(WriteSample {
                    post,
                    wqe_req,
                    wqe_done,
                    pay_req,
                    pay_done,
                    tx_last_beat,
                    at_b,
                    b_write,
                    b_lands,
                    seen,
                });
            }
            Ok(out)
        },
    )?
}

/// Median of each stage and of the latency over `samples`.
pub fn medians(samples: &[WriteSample]) -> ([u64; 9], u64) {
    let med = |mut v: Vec<u64>| {
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0)
    };
    let st: Vec<[u64; 9]> = samples.iter().filter_map(WriteSample::stages).collect();
    let mut m = [0u64; 9];
    for (i, slot) in m.iter_mut().enumerate() {
        *slot = med(st.iter().map(|s| s[i]).collect());
    }
    (m, med(samples.iter().map(WriteSample::latency).collect()))
}
