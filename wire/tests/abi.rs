//! Round trips and robustness of the host/device ABI records.

use proptest::prelude::*;
use rnic_wire::abi::cqe::*;
use rnic_wire::abi::mailbox::*;
use rnic_wire::abi::tpt::*;
use rnic_wire::abi::wqe::*;
use rnic_wire::Error;

/// An SGE whose length is at most 2^32 / MAX_SGE_PER_WQE, so every list's
/// total fits 32 bits.
fn sge() -> impl Strategy<Value = Sge> {
    (
        any::<u64>(),
        0..=(u32::MAX / MAX_SGE_PER_WQE as u32),
        any::<u32>(),
    )
        .prop_map(|(addr, length, lkey)| Sge { addr, length, lkey })
}

fn sges() -> impl Strategy<Value = SgeList> {
    prop::collection::vec(sge(), 0..=MAX_SGE_PER_WQE).prop_map(|v| SgeList::new(&v).unwrap())
}

fn send_opcode() -> impl Strategy<Value = SendOpcode> {
    (0u8..6).prop_map(|v| SendOpcode::from_u8(v).unwrap())
}

prop_compose! {
    fn send_wqe()(wr_id in any::<u64>(), opcode in send_opcode(), signaled in any::<bool>(), solicited in any::<bool>(), fence in any::<bool>(),
                  imm_or_inv in any::<u32>(), remote_offset in any::<u64>(), remote_stag in any::<u32>(), sges in sges(),
                  inline in prop::option::of(prop::collection::vec(any::<u8>(), 0..=MAX_INLINE_DATA))) -> SendWqe {
        let mut flags = 0;
        if signaled { flags |= WQE_FLAG_SIGNALED; }
        if solicited && opcode.is_send() { flags |= WQE_FLAG_SOLICITED; }
        if fence { flags |= WQE_FLAG_FENCE; }
        // Inline: Write and the Send family, no SGEs (the flag follows).
        let inline = inline.filter(|_| opcode != SendOpcode::RdmaRead).map(|d| InlineData::new(&d).unwrap());
        let sges = if inline.is_some() { SgeList::default() } else { sges };
        if inline.is_some() { flags |= WQE_FLAG_INLINE; }
        SendWqe { wr_id, opcode, flags, imm_or_inv, remote_offset, remote_stag, sges, inline }
    }
}

proptest! {
    #[test]
    fn send_wqe_round_trip(w in send_wqe()) {
        let mut b = [0u8; WQE_SIZE];
        w.emit(&mut b).unwrap();
        prop_assert_eq!(SendWqe::parse(&b).unwrap(), w);
    }

    #[test]
    fn recv_wqe_round_trip(wr_id in any::<u64>(), sges in sges()) {
        let w = RecvWqe { wr_id, sges };
        let mut b = [0u8; WQE_SIZE];
        w.emit(&mut b).unwrap();
        prop_assert_eq!(RecvWqe::parse(&b).unwrap(), w);
    }

    #[test]
    fn cqe_round_trip(wr_id in any::<u64>(), byte_len in any::<u32>(), qpn in any::<u32>(), op in prop::sample::select(vec![0u8, 1, 2, 0x80, 0x81]),
                      st in prop::sample::select(vec![0u8, 1, 2, 4, 5, 7, 8, 9, 10, 11, 12, 19, 21]), flags in 0u8..8, imm in any::<u32>(), term in any::<u32>(), phase in any::<bool>()) {
        let c = Cqe { wr_id, byte_len, qpn, opcode: WcOpcode::from_u8(op).unwrap(), status: WcStatus::from_u8(st).unwrap(), flags, imm_or_inv: imm, term_cause: term, phase };
        let mut b = [0u8; CQE_SIZE];
        c.emit(&mut b).unwrap();
        prop_assert_eq!(Cqe::phase_of(&b).unwrap(), phase);
        prop_assert_eq!(Cqe::parse(&b).unwrap(), c);
    }

    #[test]
    fn tpt_round_trip(state in 0u8..3, key in any::<u8>(), access in 0u8..8, page_shift in 12u8..=30, pd in any::<u32>(), va in any::<u64>(), length in any::<u64>(), pbl_base in any::<u32>(), npages in any::<u32>()) {
        let state = [TptState::Free, TptState::Valid, TptState::Invalid][state as usize];
        let e = TptEntry { state, key, access, page_shift, pd, va, length, pbl_base, npages };
        let mut b = [0u8; TPT_ENTRY_SIZE];
        e.emit(&mut b).unwrap();
        prop_assert_eq!(TptEntry::parse(&b).unwrap(), e);
    }

    /// Random bytes never panic any ABI parser; they parse or give a typed error.
    #[test]
    fn random_bytes_never_panic(b in prop::collection::vec(any::<u8>(), 0..128), op in any::<u16>()) {
        let _ = SendWqe::parse(&b);
        let _ = RecvWqe::parse(&b);
        let _ = Cqe::parse(&b);
        let _ = TptEntry::parse(&b);
        let _ = Event::parse(&b);
        if let Ok(op) = Opcode::from_u16(op) {
            if let Ok(cmd) = Command::parse(op, &b) {
                // Whatever parses re-emits to the same octets.
                let mut out = [0u8; 1024];
                let n = cmd.emit(&mut out).unwrap();
                prop_assert_eq!(&out[..n], &b[..]);
            }
        }
    }

    #[test]
    fn connect_round_trip(qpn in any::<u32>(), peer_ip in any::<u32>(), peer_port in any::<u16>(), local_port in any::<u16>(), ird in any::<u16>(), ord in any::<u16>(),
                          revision in 1u8..=2, crc in any::<bool>(), markers in any::<bool>(), pd in prop::collection::vec(any::<u8>(), 0..=PRIVATE_DATA_MAX)) {
        let c = Command::Connect { qpn, peer_ip, peer_port, local_port, ird, ord, mpa: MpaOptions { revision, crc, markers }, private_data: &pd };
        let mut out = [0u8; 1024];
        let n = c.emit(&mut out).unwrap();
        prop_assert_eq!(Command::parse(Opcode::Connect, &out[..n]).unwrap(), c);
        // Any truncation is a typed error, never a panic or a shorter command.
        for cut in 0..n {
            prop_assert!(Command::parse(Opcode::Connect, &out[..cut]).is_err());
        }
    }
}

#[test]
fn private_data_over_512_is_refused() {
    let pd = [0u8; PRIVATE_DATA_MAX + 1];
    let c = Command::Reject {
        conn_id: 1,
        private_data: &pd,
    };
    let mut out = [0u8; 1024];
    assert_eq!(c.emit(&mut out), Err(Error::BadLength));
    // And on the parse side: a length field of 513.
    let mut raw = [0u8; 4 + 2 + 513];
    raw[4..6].copy_from_slice(&513u16.to_le_bytes());
    assert_eq!(Command::parse(Opcode::Reject, &raw), Err(Error::BadLength));
}

#[test]
fn trailing_octets_are_refused() {
    let mut out = [0u8; 16];
    let n = Command::DestroyQp { qpn: 7 }.emit(&mut out).unwrap();
    assert_eq!(n, 4);
    assert_eq!(
        Command::parse(Opcode::DestroyQp, &out[..5]),
        Err(Error::BadLength)
    );
}

#[test]
fn every_command_round_trips() {
    let pbl = [0x11u8; 16];
    let rule = FilterRule {
        peer_prefix: 0x0A00_0000,
        prefix_len: 8,
        local_ports: (1, 1000),
        peer_ports: (0, 65535),
        action: FilterAction::DenyReset,
    };
    let cmds = [
        Command::Nop,
        Command::CreateCq {
            ring: 0x1000,
            entries: 256,
        },
        Command::DestroyCq { cqn: 3 },
        Command::AllocStag { pd: 1, npages: 4 },
        Command::WritePbl {
            stag: 0x100,
            offset: 2,
            addrs: &pbl,
        },
        Command::RegMr {
            stag: 0x100,
            pd: 1,
            access: ACCESS_ALL,
            page_shift: 12,
            va: 0xdead_0000,
            length: 4096 * 4,
        },
        Command::DeregMr { stag: 0x100 },
        Command::CreateQp {
            pd: 1,
            send_cqn: 0,
            recv_cqn: 1,
            sq_ring: 0x2000,
            sq_entries: 64,
            rq_ring: 0x3000,
            rq_entries: 64,
        },
        Command::ModifyQp {
            qpn: 2,
            state: QpState::Error,
        },
        Command::QueryQp { qpn: 2 },
        Command::DestroyQp { qpn: 2 },
        Command::Listen {
            port: 7174,
            backlog: 8,
        },
        Command::Unlisten { listen_id: 0 },
        Command::Accept {
            conn_id: 9,
            qpn: 2,
            ird: 1,
            ord: 1,
            private_data: b"hello",
        },
        Command::Reject {
            conn_id: 9,
            private_data: b"",
        },
        Command::Disconnect {
            qpn: 2,
            abortive: true,
        },
        Command::GetEventData { conn_id: 9 },
        Command::FilterSet { index: 0, rule },
        Command::FilterClear,
        Command::FilterDefault {
            action: FilterAction::Allow,
        },
        Command::FilterStats { index: 0 },
        Command::RouteUpdate {
            ip: 0x0A00_0001,
            mac: [2, 0, 0, 0, 0, 1],
        },
        Command::SetRetx {
            rto_init_us: 1_000_000,
            rto_min_us: 200_000,
            rto_max_us: 60_000_000,
            max_retries: 8,
        },
    ];
    for c in cmds {
        let mut out = [0u8; 1024];
        let n = c.emit(&mut out).unwrap();
        assert_eq!(Command::parse(c.opcode(), &out[..n]).unwrap(), c, "{c:?}");
        assert_eq!(Opcode::from_u16(c.opcode() as u16).unwrap(), c.opcode());
    }
}

#[test]
fn filter_rule_matching() {
    let rule = FilterRule {
        peer_prefix: 0x0A01_0000,
        prefix_len: 16,
        local_ports: (7000, 7999),
        peer_ports: (1024, 65535),
        action: FilterAction::DenyDrop,
    };
    assert!(rule.matches(0x0A01_0203, 7174, 40000));
    assert!(!rule.matches(0x0A02_0203, 7174, 40000), "other /16");
    assert!(
        !rule.matches(0x0A01_0203, 8000, 40000),
        "local port out of range"
    );
    assert!(
        !rule.matches(0x0A01_0203, 7174, 80),
        "peer port out of range"
    );
    let any = FilterRule {
        prefix_len: 0,
        ..rule
    };
    assert!(
        any.matches(0xC0A8_0001, 7174, 40000),
        "/0 matches every address"
    );
}

fn region() -> TptEntry {
    TptEntry {
        state: TptState::Valid,
        key: 0x5a,
        access: ACCESS_REMOTE_WRITE,
        page_shift: 12,
        pd: 3,
        va: 0x1_0000_0800,
        length: 3 * 4096,
        pbl_base: 10,
        npages: 4,
    }
}

#[test]
fn tpt_check_each_fault() {
    let e = region();
    let stag = Stag::new(7, 0x5a).unwrap();
    assert_eq!(
        e.check(stag, 3, ACCESS_REMOTE_WRITE, 0x1_0000_0800, 3 * 4096),
        Ok(())
    );
    assert_eq!(
        e.check(
            Stag::new(7, 0x5b).unwrap(),
            3,
            ACCESS_REMOTE_WRITE,
            0x1_0000_0800,
            1
        ),
        Err(TptFault::InvalidStag)
    );
    assert_eq!(
        e.check(stag, 4, ACCESS_REMOTE_WRITE, 0x1_0000_0800, 1),
        Err(TptFault::WrongPd)
    );
    assert_eq!(
        e.check(stag, 3, ACCESS_REMOTE_READ, 0x1_0000_0800, 1),
        Err(TptFault::AccessRights)
    );
    assert_eq!(
        e.check(stag, 3, ACCESS_REMOTE_WRITE, 0x1_0000_07ff, 1),
        Err(TptFault::Bounds),
        "one before the base"
    );
    assert_eq!(
        e.check(stag, 3, ACCESS_REMOTE_WRITE, 0x1_0000_0800, 3 * 4096 + 1),
        Err(TptFault::Bounds),
        "one past the end"
    );
    assert_eq!(
        e.check(stag, 3, ACCESS_REMOTE_WRITE, u64::MAX, 2),
        Err(TptFault::OffsetWrap)
    );
    assert_eq!(
        e.check(stag, 3, ACCESS_REMOTE_WRITE, 0, 0),
        Ok(()),
        "zero length checks no bounds"
    );
    let inv = TptEntry {
        state: TptState::Invalid,
        ..e
    };
    assert_eq!(
        inv.check(stag, 3, ACCESS_REMOTE_WRITE, 0x1_0000_0800, 1),
        Err(TptFault::InvalidStag)
    );
}

#[test]
fn tpt_page_translation() {
    let e = region();
    // The region starts 0x800 into its first page.
    assert_eq!(e.page_of(0x1_0000_0800), Some((10, 0x800)));
    assert_eq!(e.page_of(0x1_0000_1000), Some((11, 0)));
    assert_eq!(e.page_of(0x1_0000_3fff), Some((13, 0xfff)));
    assert_eq!(e.page_of(0x1_0000_4000), None);
    assert_eq!(e.page_of(0x0_ffff_ffff), None);
}

#[test]
fn stag_fields() {
    let s = Stag::new(0xabcdef, 0x12).unwrap();
    assert_eq!(s.0, 0xabcd_ef12);
    assert_eq!((s.index(), s.key()), (0xabcdef, 0x12));
    assert!(Stag::new(1 << 24, 0).is_none());
}

#[test]
fn event_round_trip() {
    let e = Event {
        kind: EventKind::ConnectRequest,
        handle: 4,
        status: 0,
        peer_ip: 0x0A00_0002,
        peer_port: 40000,
        local_port: 7174,
        ird: 1,
        ord: 1,
        private_data_len: 4,
        mpa_revision: 2,
        crc: false,
        markers: true,
        listen_id: 0,
        phase: true,
    };
    let mut b = [0u8; EVENT_SIZE];
    e.emit(&mut b).unwrap();
    assert_eq!(b[EVENT_SIZE - 1], 1, "owner bit in the last octet");
    assert_eq!(Event::parse(&b).unwrap(), e);
    assert_eq!(Event::parse(&b[..EVENT_SIZE - 1]), Err(Error::Truncated));
}

#[test]
fn wqe_rejects_bad_fields() {
    let w = SendWqe {
        wr_id: 1,
        opcode: SendOpcode::RdmaWrite,
        flags: WQE_FLAG_SIGNALED,
        imm_or_inv: 0,
        remote_offset: 0,
        remote_stag: 0,
        sges: SgeList::new(&[]).unwrap(),
        inline: None,
    };
    let mut b = [0u8; WQE_SIZE];
    w.emit(&mut b).unwrap();
    let mut bad = b;
    bad[8] = 9;
    assert_eq!(SendWqe::parse(&bad), Err(Error::BadOpcode));
    let mut bad = b;
    bad[9] = 0x80;
    assert_eq!(SendWqe::parse(&bad), Err(Error::BadField));
    let mut bad = b;
    bad[9] = WQE_FLAG_SOLICITED;
    assert_eq!(
        SendWqe::parse(&bad),
        Err(Error::BadField),
        "solicited only on Sends"
    );
    let mut bad = b;
    bad[10] = MAX_SGE_PER_WQE as u8 + 1;
    assert_eq!(SendWqe::parse(&bad), Err(Error::BadLength));
    let mut bad = b;
    bad[11] = 1;
    assert_eq!(
        SendWqe::parse(&bad),
        Err(Error::BadField),
        "an inline length without the flag"
    );
    assert_eq!(SendWqe::parse(&b[..WQE_SIZE - 1]), Err(Error::Truncated));
}

#[test]
fn inline_wqe_layout_and_refusals() {
    let msg: Vec<u8> = (0..MAX_INLINE_DATA as u8).map(|i| i ^ 0x5A).collect();
    let w = SendWqe {
        wr_id: 7,
        opcode: SendOpcode::Send,
        flags: WQE_FLAG_SIGNALED,
        imm_or_inv: 0,
        remote_offset: 0,
        remote_stag: 0,
        sges: SgeList::default(),
        inline: Some(InlineData::new(&msg).unwrap()),
    };
    let mut b = [0u8; WQE_SIZE];
    w.emit(&mut b).unwrap();
    assert_eq!(
        b[9],
        WQE_FLAG_SIGNALED | WQE_FLAG_INLINE,
        "emit sets the flag"
    );
    assert_eq!((b[10], b[11]), (0, MAX_INLINE_DATA as u8));
    assert_eq!(&b[INLINE_DATA_OFFSET..], &msg[..]);
    let p = SendWqe::parse(&b).unwrap();
    assert_eq!(p.inline.unwrap().as_slice(), &msg[..]);
    assert_eq!(p.message_len(), MAX_INLINE_DATA as u64);
    assert_eq!(
        InlineData::new(&[0; MAX_INLINE_DATA + 1]),
        Err(Error::BadLength)
    );
    let mut bad = b;
    bad[11] = MAX_INLINE_DATA as u8 + 1;
    assert_eq!(SendWqe::parse(&bad), Err(Error::BadLength), "too long");
    let mut bad = b;
    bad[10] = 1;
    assert_eq!(
        SendWqe::parse(&bad),
        Err(Error::BadField),
        "inline with SGEs"
    );
    let mut bad = b;
    bad[8] = SendOpcode::RdmaRead as u8;
    assert_eq!(SendWqe::parse(&bad), Err(Error::BadField), "inline Read");
    let read = SendWqe {
        opcode: SendOpcode::RdmaRead,
        ..w
    };
    assert_eq!(read.emit(&mut b), Err(Error::BadField));
}

#[test]
fn wqe_holds_six_sges_at_fixed_offsets() {
    assert_eq!((WQE_SIZE, MAX_SGE_PER_WQE, SGE_SIZE), (128, 6, 16));
    let list: Vec<Sge> = (0..6u64)
        .map(|i| Sge {
            addr: 0x1111_0000_0000 + i,
            length: 0x100 + i as u32,
            lkey: 0xA0 + i as u32,
        })
        .collect();
    let w = RecvWqe {
        wr_id: 7,
        sges: SgeList::new(&list).unwrap(),
    };
    let mut b = [0u8; WQE_SIZE];
    w.emit(&mut b).unwrap();
    assert_eq!(b[10], 6);
    for (i, s) in list.iter().enumerate() {
        let o = 32 + 16 * i;
        assert_eq!(b[o..o + 8], s.addr.to_le_bytes());
        assert_eq!(b[o + 8..o + 12], s.length.to_le_bytes());
        assert_eq!(b[o + 12..o + 16], s.lkey.to_le_bytes());
    }
    assert_eq!(RecvWqe::parse(&b).unwrap(), w);
    assert!(SgeList::new(&[Sge::default(); 7]).is_err());
}

#[test]
fn wqe_refuses_sges_over_32_bit_total() {
    let big = Sge {
        addr: 0,
        length: u32::MAX,
        lkey: 1,
    };
    let one = Sge { length: 1, ..big };
    assert_eq!(SgeList::new(&[big, one]), Err(Error::BadLength));
    let ok = SgeList::new(&[big]).unwrap();
    let w = SendWqe {
        wr_id: 1,
        opcode: SendOpcode::Send,
        flags: 0,
        imm_or_inv: 0,
        remote_offset: 0,
        remote_stag: 0,
        sges: ok,
        inline: None,
    };
    let mut b = [0u8; WQE_SIZE];
    w.emit(&mut b).unwrap();
    // A second SGE of 1 octet written by hand: 2^32 octets in all.
    b[10] = 2;
    b[48 + 8..48 + 12].copy_from_slice(&1u32.to_le_bytes());
    assert_eq!(SendWqe::parse(&b), Err(Error::BadLength));
    assert_eq!(
        RecvWqe::parse(&{
            let mut r = b;
            r[8] = 0;
            r[12..32].fill(0);
            r
        }),
        Err(Error::BadLength)
    );
}

#[test]
fn term_cause_encoding_keeps_none_apart_from_cause_zero() {
    use rnic_wire::terminate::TerminateCause;
    assert_eq!(decode_term_cause(0), Ok(None));
    // 0/0/0 is RDMAP local catastrophic, code 0: a real cause, not "none".
    let zero = TerminateCause::from_raw(0, 0, 0).unwrap();
    let raw = encode_term_cause(Some(zero));
    assert_eq!(raw, TERM_CAUSE_PRESENT);
    assert_eq!(decode_term_cause(raw), Ok(Some(zero)));
    // DDP tagged buffer error, invalid STag (RFC 5041 §7.2: layer 1, type 1, code 0).
    let inv = TerminateCause::from_raw(1, 1, 0).unwrap();
    assert_eq!(encode_term_cause(Some(inv)), TERM_CAUSE_PRESENT | 0x1100);
    assert_eq!(
        decode_term_cause(0x1100),
        Err(Error::BadField),
        "cause bits without the present bit"
    );
    assert_eq!(
        decode_term_cause(TERM_CAUSE_PRESENT | 0x1_1100),
        Err(Error::BadField)
    );
}
