//! The default scenario (`rnic-sim run`) with frames of more than 256 beats
//! (over 2 KiB): two Verilated cores with firmware and driver on a clean
//! link, MTU 4008 (full FPDUs of 3968 TCP payload octets, 502 beats).
//!
//! Regression: the core learns each connection's SND.NXT (the `seq` of its
//! pure ACKs and conn_table's SND.NXT) from the data frames leaving on the
//! MAC, reading the IPv4 length and the TCP sequence number at beats 2, 4
//! and 5. Its beat counter was 8 bits wide and wrapped inside a frame of
//! more than 256 beats, so payload octets were taken for the sequence
//! number: pure ACKs then carried random sequence numbers, each side found
//! the other's ACKs outside its window and answered them, the ACKs never
//! moved SND.UNA, and the session stalled in an ACK storm (the 16 KiB
//! Write at MTU 4008, the 8 KiB Send at MTU 9000).
//!
//! Checked independently of the RTL, from the capture parsed with smoltcp:
//! every segment's sequence number is in the sender's own sequence space
//! (at most the highest `seq + len` it has sent), and every pure ACK carries
//! exactly that highest `seq + len` (RFC 9293 §3.10.7.4: an ACK is sent as
//! <SEQ=SND.NXT>) — no replay is needed on a clean link.

use std::collections::HashMap;

use rnic_sim::rtl_run::{run, RtlConfig};
use rnic_wire::net::{EthernetFrame, EthernetProtocol, IpProtocol, Ipv4Packet, TcpPacket};

#[test]
fn frames_over_256_beats_keep_snd_nxt() {
    let pcap = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("big_frames.pcap");
    let cfg = RtlConfig {
        mtu: 4008,
        max_size: 32 << 10,
        ops: 1,
        seed: 2,
        pcap: Some(pcap.clone()),
        ..Default::default()
    };
    let r = run(&cfg).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.terminates, 0, "no Terminate");
    // The JSON report (`rnic-sim run --json`) parses and says the same.
    let j: serde_json::Value = serde_json::from_str(&r.json()).expect("JSON report");
    assert_eq!(j["total_cycles"].as_u64(), Some(r.total_cycles));
    assert_eq!(j["mtu"].as_u64(), Some(4008));
    assert_eq!(
        j["pcap"].as_str(),
        Some(pcap.display().to_string().as_str())
    );
    assert_eq!(j["disconnect"].as_str(), Some("clean"));
    let rows = j["rows"].as_array().expect("rows");
    assert_eq!(rows.len(), r.rows.len());
    assert!(rows
        .iter()
        .all(|row| row["gbps"].as_f64().is_some_and(|g| g > 0.0)));
    assert_eq!(r.disconnect_note, None, "clean disconnect");
    assert_eq!(
        r.retx_requests, 0,
        "nothing lost on a clean link: no replay"
    );

    let mut f = pcap_file::pcap::PcapReader::new(std::fs::File::open(&pcap).unwrap()).unwrap();
    // per sender MAC: the highest seq + len of its data segments
    let mut high: HashMap<[u8; 6], u32> = HashMap::new();
    let (mut acks, mut big) = (0, 0);
    while let Some(p) = f.next_packet() {
        let p = p.unwrap();
        let Ok(eth) = EthernetFrame::new_checked(&p.data[..]) else {
            continue;
        };
        if eth.ethertype() != EthernetProtocol::Ipv4 {
            continue;
        }
        let ip = Ipv4Packet::new_checked(eth.payload()).unwrap();
        if ip.next_header() != IpProtocol::Tcp {
            continue;
        }
        let tcp = TcpPacket::new_checked(ip.payload()).unwrap();
        let (seq, len) = (tcp.seq_number().0 as u32, tcp.payload().len() as u32);
        if tcp.syn() || tcp.rst() {
            // the SYN starts the sender's sequence space (it takes one number)
            if tcp.syn() {
                high.insert(eth.src_addr().0, seq.wrapping_add(1));
            }
            continue;
        }
        let h = *high.get(&eth.src_addr().0).expect("a SYN first");
        // seq <= high in sequence space (RFC 9293 §3.4: modular compare)
        assert!(
            (h.wrapping_sub(seq) as i32) >= 0,
            "frame {} of {:02x?}: seq {seq} beyond the sender's SND.NXT {h}",
            p.data.len(),
            eth.src_addr().0
        );
        if len == 0 && !tcp.fin() {
            assert_eq!(
                seq,
                h,
                "pure ACK of {:02x?} not at SND.NXT",
                eth.src_addr().0
            );
            acks += 1;
        }
        if p.data.len() > 256 * 8 {
            big += 1;
        }
        let end = seq.wrapping_add(len).wrapping_add(tcp.fin() as u32);
        if (end.wrapping_sub(h) as i32) > 0 {
            high.insert(eth.src_addr().0, end);
        }
    }
    println!("{acks} pure ACKs at SND.NXT, {big} frames over 256 beats");
    assert!(big > 10, "the run has frames over 256 beats ({big})");
    assert!(acks > 10, "and pure ACKs after them ({acks})");
}
