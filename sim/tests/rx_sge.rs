//! Receive WQE SGEs checked and translated by the device (issue 3: "every
//! access checked", "never a stray DMA write"), in the Verilated
//! `rnic_core`: the firmware registers regions (TPT entry + page list
//! through `fw_*`), the host writes receive WQEs whose SGEs carry an lkey
//! and a virtual address in the region, the peer's Sends arrive on
//! `mac_rx_*`.
//!
//! * Good SGEs in a region of scattered 4 KiB pages (virtual addresses far
//!   from the bus addresses): every octet at the bus address
//!   `TptEntry::page_of` and the page list give, the CQE `Success`, and no
//!   other octet of host memory changed (the whole sparse memory compared
//!   before/after).
//! * Each kind of bad SGE (bad index, bad key, wrong PD, no LOCAL_WRITE,
//!   below / beyond the region, length overflow, invalidated entry, a bad
//!   second SGE behind a good first one, a multi-segment Send whose buffer
//!   ends outside the region): the CQE `LocalProtectionError` with the
//!   Terminate cause, a Terminate request DDP Local Catastrophic (1/0/0,
//!   decoded with `rnic_wire::terminate::TerminateCause::from_bits`), the
//!   QP in error (a later Send dropped), and nothing but the CQE written.

mod rxs_rig;
use rnic_wire::abi::cqe::{decode_term_cause, WcStatus, CQE_SIZE};
use rnic_wire::abi::tpt::{
    Stag, TptEntry, TptState, ACCESS_LOCAL_WRITE, ACCESS_REMOTE_READ, ACCESS_REMOTE_WRITE,
};
use rnic_wire::abi::wqe::Sge;
use rnic_wire::terminate::{DdpError, TerminateCause};
use rxs_rig::*;
use std::collections::BTreeMap;

/// Every non-zero octet of host memory.
fn image(r: &Rig) -> BTreeMap<u64, u8> {
    r.mem.nonzero_outside(&[]).into_iter().collect()
}

/// Addresses whose octet differs between two images.
fn changed(a: &BTreeMap<u64, u8>, b: &BTreeMap<u64, u8>) -> Vec<u64> {
    let mut c: Vec<u64> = a
        .iter()
        .filter(|(k, v)| b.get(k) != Some(v))
        .map(|(k, _)| *k)
        .collect();
    c.extend(b.keys().filter(|k| !a.contains_key(k)));
    c.sort();
    c.dedup();
    c
}

fn sge(lkey: u32, addr: u64, length: u32) -> Sge {
    Sge { addr, length, lkey }
}

#[test]
fn sends_into_scattered_pages_land_at_translated_addresses() {
    let mut r = Rig::new(0x5ce7);
    // 7 pages, the region starting 0x123 into its first page
    let va = 0x7f00_1234_5123;
    let reg = r.sparse_region(0x40, 0x9a, ACCESS_LOCAL_WRITE, va, 6 * 4096 + 77, |_| {});
    assert!(
        reg.pages.windows(2).any(|w| w[1] != w[0] + 4096),
        "scattered"
    );
    // WQE 0: two SGEs, each crossing pages; WQE 1: one SGE over 3 pages;
    // WQE 2: an SGE in the identity region (the driver's case) and one here.
    let s0 = sge(reg.lkey, va + 4000, 2500);
    let s1 = sge(reg.lkey, va + 9000, 1500);
    let s2 = sge(reg.lkey, va + 13000, 9000);
    let ident = r.mem.alloc_dma(256, 8).unwrap();
    let s3 = sge(IDENT_LKEY, ident + 3, 200);
    let s4 = sge(reg.lkey, reg.entry.va + reg.entry.length - 300, 300);
    let w0 = r.post_sges(&[s0, s1]);
    let w1 = r.post_sges(&[s2]);
    let w2 = r.post_sges(&[s3, s4]);
    r.ring_rq();
    r.run(100_000);
    let before = image(&r);
    let msgs = [r.rng.bytes(3900), r.rng.bytes(8500), r.rng.bytes(480)];
    let t0 = r.node.borrow().core.0.cycle();
    for m in &msgs {
        r.send(m, false);
    }
    let clocks = r.run(400_000);
    let after = image(&r);
    // expected: each message octet at its SGE's translated bus address
    let mut want: BTreeMap<u64, u8> = BTreeMap::new();
    for (m, sges) in msgs.iter().zip([&[s0, s1][..], &[s2][..], &[s3, s4][..]]) {
        let mut i = 0;
        for s in sges {
            for k in 0..(s.length as usize).min(m.len() - i) {
                let a = if s.lkey == IDENT_LKEY {
                    s.addr + k as u64
                } else {
                    reg.bus(s.addr + k as u64)
                };
                want.insert(a, m[i + k]);
            }
            i += (s.length as usize).min(m.len() - i);
        }
        assert_eq!(i, m.len());
    }
    for (&a, &b) in &want {
        let got = r.rd(a, 1)[0];
        assert_eq!(got, b, "octet at {a:#x}");
    }
    let cq = (r.cq, 3 * CQE_SIZE as u64);
    for a in changed(&before, &after) {
        assert!(
            want.contains_key(&a) || (a >= cq.0 && a < cq.0 + cq.1),
            "stray write at {a:#x}"
        );
    }
    for (ci, (w, m)) in [w0, w1, w2].iter().zip(&msgs).enumerate() {
        let c = r.cqe(ci as u32);
        assert_eq!(
            (c.wr_id, c.status, c.byte_len),
            (*w, WcStatus::Success, m.len() as u32),
            "CQE {ci}"
        );
    }
    assert!(r.dma.faults().is_empty(), "DMA faults {:?}", r.dma.faults());
    assert_eq!(r.terms, 0);
    let n = r.node.borrow();
    assert_eq!(n.core.0.get_cnt_rxs_prot(), 0);
    assert_eq!(n.core.0.get_cnt_rxs_cqe(), 3);
    println!(
        "rx_sge: 3 Sends (12880 octets) into scattered pages: {clocks} clocks from clock {t0} to quiet"
    );
}

/// Scatter (docs/rtl.md "Completions"): receive WQEs of 6 and 4 SGEs
/// (empty ones among them, SGEs crossing pages of the scattered region,
/// one in the identity region, out of address order), filled in SGE order
/// by Sends of one segment and of several (the later segments start in the
/// middle of an SGE); every octet where the SGE list puts it, nothing else
/// written, CQEs `Success` with the message length.
#[test]
fn sends_scatter_into_six_sges_in_order() {
    let mut r = Rig::new(0x5ca7);
    let va = 0x7f00_1234_5123;
    let reg = r.sparse_region(0x40, 0x9a, ACCESS_LOCAL_WRITE, va, 8 * 4096 + 77, |_| {});
    let ident = r.mem.alloc_dma(512, 8).unwrap();
    let six = [
        sge(reg.lkey, va + 9000, 3000),
        sge(reg.lkey, va + 100, 0),
        sge(IDENT_LKEY, ident + 5, 300),
        sge(reg.lkey, va + 4000, 1),
        sge(reg.lkey, va + 20000, 5000),
        sge(reg.lkey, va + 50, 2000),
    ];
    let four = [
        sge(reg.lkey, va + 30000, 100),
        sge(reg.lkey, va + 12500, 0),
        sge(reg.lkey, va + 12100, 300),
        sge(IDENT_LKEY, ident + 400, 64),
    ];
    let w0 = r.post_sges(&six);
    let w1 = r.post_sges(&four);
    let w2 = r.post_sges(&six[2..5]);
    r.ring_rq();
    r.run(100_000);
    let before = image(&r);
    // 10301 octets: the whole six-SGE buffer, several segments; 464: all
    // of the four; 301: the first two octets of SGE 4 of `six[2..5]`.
    let msgs = [r.rng.bytes(10301), r.rng.bytes(464), r.rng.bytes(303)];
    for m in &msgs {
        r.send(m, false);
    }
    r.run(400_000);
    let after = image(&r);
    let mut want: BTreeMap<u64, u8> = BTreeMap::new();
    for (m, sges) in msgs.iter().zip([&six[..], &four[..], &six[2..5]]) {
        let mut i = 0;
        for s in sges {
            for k in 0..(s.length as usize).min(m.len() - i) {
                let a = if s.lkey == IDENT_LKEY {
                    s.addr + k as u64
                } else {
                    reg.bus(s.addr + k as u64)
                };
                want.insert(a, m[i + k]);
            }
            i += (s.length as usize).min(m.len() - i);
        }
        assert_eq!(i, m.len());
    }
    for (&a, &b) in &want {
        assert_eq!(r.rd(a, 1)[0], b, "octet at {a:#x}");
    }
    let cq = (r.cq, 3 * CQE_SIZE as u64);
    for a in changed(&before, &after) {
        assert!(
            want.contains_key(&a) || (a >= cq.0 && a < cq.0 + cq.1),
            "stray write at {a:#x}"
        );
    }
    for (ci, (w, m)) in [w0, w1, w2].iter().zip(&msgs).enumerate() {
        let c = r.cqe(ci as u32);
        assert_eq!(
            (c.wr_id, c.status, c.byte_len),
            (*w, WcStatus::Success, m.len() as u32),
            "CQE {ci}"
        );
    }
    assert!(r.dma.faults().is_empty(), "DMA faults {:?}", r.dma.faults());
    assert_eq!(r.terms, 0);
    assert_eq!(r.node.borrow().core.0.get_cnt_rxs_prot(), 0);
}

/// One refused receive WQE: its SGEs, the Send's length.
struct Bad {
    what: &'static str,
    sges: Vec<Sge>,
    len: usize,
}

#[test]
fn bad_sges_complete_with_protection_error_and_write_nothing() {
    let prot: TerminateCause = DdpError::LocalCatastrophic.into();
    let kinds = [
        "bad index",
        "bad key",
        "wrong PD",
        "no LOCAL_WRITE",
        "below the region",
        "beyond the region",
        "length overflow",
        "invalidated",
        "second SGE bad",
        "sixth SGE bad",
        "multi-segment Send, buffer ends outside",
    ];
    for (n, what) in kinds.into_iter().enumerate() {
        let mut r = Rig::new(0xbad0 + n as u64);
        let va = 0x5555_0000_0800;
        let good = r.sparse_region(7, 0x21, ACCESS_LOCAL_WRITE, va, 3 * 4096, |_| {});
        let nolw = r.sparse_region(
            8,
            0x22,
            ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ,
            va,
            4096,
            |_| {},
        );
        let other = r.sparse_region(9, 0x23, ACCESS_LOCAL_WRITE, va, 4096, |e| e.pd = PD + 1);
        let inval = r.sparse_region(10, 0x24, ACCESS_LOCAL_WRITE, va, 4096, |e| {
            e.state = TptState::Invalid
        });
        let end = va + 3 * 4096;
        let b = match what {
            "bad index" => Bad {
                what,
                sges: vec![sge(Stag::new(200, 0x21).unwrap().0, va, 64)],
                len: 40,
            },
            "bad key" => Bad {
                what,
                sges: vec![sge(good.lkey ^ 0x80, va, 64)],
                len: 40,
            },
            "wrong PD" => Bad {
                what,
                sges: vec![sge(other.lkey, va, 64)],
                len: 40,
            },
            "no LOCAL_WRITE" => Bad {
                what,
                sges: vec![sge(nolw.lkey, va, 64)],
                len: 40,
            },
            "below the region" => Bad {
                what,
                sges: vec![sge(good.lkey, va - 1, 64)],
                len: 40,
            },
            "beyond the region" => Bad {
                what,
                sges: vec![sge(good.lkey, end - 63, 64)],
                len: 40,
            },
            "length overflow" => Bad {
                what,
                sges: vec![sge(good.lkey, u64::MAX - 20, 64)],
                len: 40,
            },
            "invalidated" => Bad {
                what,
                sges: vec![sge(inval.lkey, va, 64)],
                len: 40,
            },
            "second SGE bad" => Bad {
                what,
                sges: vec![sge(good.lkey, va, 100), sge(good.lkey, end, 100)],
                len: 150,
            },
            // five good SGEs (one empty) and a bad last one the message
            // does not even reach: the whole WQE is checked first
            "sixth SGE bad" => Bad {
                what,
                sges: vec![
                    sge(good.lkey, va, 100),
                    sge(good.lkey, va + 5000, 0),
                    sge(good.lkey, va + 4000, 100),
                    sge(good.lkey, va + 200, 100),
                    sge(good.lkey, va + 8000, 100),
                    sge(nolw.lkey, va, 64),
                ],
                len: 150,
            },
            _ => Bad {
                what,
                sges: vec![sge(good.lkey, end - 5000, 6000)],
                len: 4000,
            },
        };
        // the reference refuses it too
        let entries = [&good, &nolw, &other, &inval];
        let refused = b.sges.iter().any(|s| {
            let st = Stag(s.lkey);
            match entries.iter().find(|g| Stag(g.lkey).index() == st.index()) {
                None => true,
                Some(g) => {
                    let e: &TptEntry = &g.entry;
                    e.check(st, PD, ACCESS_LOCAL_WRITE, s.addr, s.length as u64)
                        .is_err()
                        || e.page_of(s.addr + s.length as u64 - 1).is_none()
                }
            }
        });
        assert!(refused, "{what}: rnic_wire's TptEntry::check refuses it");
        let w = r.post_sges(&b.sges);
        r.ring_rq();
        r.run(100_000);
        let before = image(&r);
        let data = r.rng.bytes(b.len);
        r.send(&data, false);
        r.run(200_000);
        // a later Send of the QP (now in error) is dropped
        let more = r.rng.bytes(30);
        r.send(&more, false);
        r.run(200_000);
        let after = image(&r);
        let c = r.cqe(0);
        assert_eq!(
            (c.wr_id, c.status, c.qpn, c.byte_len),
            (w, WcStatus::LocalProtectionError, QPN, 0),
            "{}",
            b.what
        );
        assert_eq!(
            decode_term_cause(c.term_cause).unwrap(),
            Some(prot),
            "{what}"
        );
        assert_eq!(r.term_causes.len(), 1, "{what}: one Terminate");
        assert_eq!(
            TerminateCause::from_bits(r.term_causes[0]).unwrap(),
            prot,
            "{what}: DDP Local Catastrophic"
        );
        for a in changed(&before, &after) {
            assert!(
                a >= r.cq && a < r.cq + CQE_SIZE as u64,
                "{what}: write at {a:#x} outside the CQE"
            );
        }
        assert!(
            r.dma.faults().is_empty(),
            "{what}: DMA faults {:?}",
            r.dma.faults()
        );
        let n = r.node.borrow();
        let m = &n.core.0;
        assert_eq!(m.get_cnt_rxs_prot(), 1, "{what}");
        assert_eq!(m.get_cnt_rxs_cqe(), 1, "{what}");
        assert_eq!(m.get_cnt_rxs_send(), 0, "{what}");
        assert!(m.get_cnt_rxs_drop_qp() >= 1, "{what}: later Send dropped");
    }
}

/// A message too long for a good buffer keeps its RFC 5041 §7.2 answer
/// (DDP 1/2/5, `LocalLengthError`): the length check comes before the TPT.
#[test]
fn message_too_long_keeps_its_terminate() {
    use rnic_wire::terminate::UntaggedBufferError;
    let mut r = Rig::new(0x7001);
    let reg = r.sparse_region(7, 0x21, ACCESS_LOCAL_WRITE, 0x9000_0000, 8192, |_| {});
    let w = r.post_sges(&[sge(reg.lkey, 0x9000_0000, 100)]);
    r.ring_rq();
    r.run(100_000);
    let before = image(&r);
    let data = r.rng.bytes(101);
    r.send(&data, false);
    r.run(200_000);
    let after = image(&r);
    let c = r.cqe(0);
    let long: TerminateCause = UntaggedBufferError::MessageTooLong.into();
    assert_eq!((c.wr_id, c.status), (w, WcStatus::LocalLengthError));
    assert_eq!(decode_term_cause(c.term_cause).unwrap(), Some(long));
    assert_eq!(r.term_causes, vec![long.to_bits()]);
    for a in changed(&before, &after) {
        assert!(a >= r.cq && a < r.cq + CQE_SIZE as u64, "write at {a:#x}");
    }
    assert_eq!(r.node.borrow().core.0.get_cnt_rxs_prot(), 0);
}

/// Measurement: one 64 KiB Send (45 full segments of 1460 octets at
/// 10GbE line rate) into one SGE of a scattered-page region; clocks per
/// segment from the first MAC beat to the last DMA write.
#[test]
fn throughput_64k_send_into_scattered_pages() {
    let mut r = Rig::new(0x64e);
    let n = 65536usize;
    let va = 0x3333_0000_0000;
    let reg = r.sparse_region(0x41, 0x5a, ACCESS_LOCAL_WRITE, va, n as u64, |_| {});
    let w = r.post_sges(&[sge(reg.lkey, va, n as u32)]);
    r.ring_rq();
    r.run(100_000);
    let data = r.rng.bytes(n);
    let t0 = r.node.borrow().core.0.cycle();
    r.send(&data, false);
    r.run(2_000_000);
    for (i, &b) in data.iter().enumerate().step_by(7) {
        assert_eq!(r.rd(reg.bus(va + i as u64), 1)[0], b, "octet {i}");
    }
    let c = r.cqe(0);
    assert_eq!(
        (c.wr_id, c.status, c.byte_len),
        (w, WcStatus::Success, n as u32)
    );
    let segs = n.div_ceil(1460);
    let clocks = r.last_wr - t0;
    println!(
        "rx_sge: 64 KiB Send, {segs} segments, scattered 4 KiB pages: {clocks} clocks \
         first MAC beat -> last DMA write, {:.1} clocks/segment, {:.2} octets/clock",
        clocks as f64 / segs as f64,
        n as f64 / clocks as f64
    );
}
