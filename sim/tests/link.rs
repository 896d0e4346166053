//! The link model: order and bytes on a clean link, seeded fault rates
//! within statistical bounds (observed at the receiver against the frames
//! sent, not from the link's own counters), the rate limit, and the pcap as
//! read by tshark and by pcap-file's reader.

use std::collections::HashMap;
use std::process::Command;

#[path = "../../testdata/support.rs"]
mod support;

use rnic_sim::link::{Link, LinkConfig, RxFrame, Side, MIN_FRAME, WIRE_OVERHEAD};
use rnic_sim::rng::Rng;

/// An Ethernet II frame (IPv4 ethertype, so tshark shows it as such) whose
/// sequence number is at both ends, so a frame with one flipped bit is still
/// identified.
fn frame(seq: u64, len: usize, rng: &mut Rng) -> Vec<u8> {
    assert!(len >= 30);
    let mut f = rng.bytes(len);
    f[..6].copy_from_slice(&[0x02, 0, 0, 0, 0, 0xB]);
    f[6..12].copy_from_slice(&[0x02, 0, 0, 0, 0, 0xA]);
    f[12..14].copy_from_slice(&[0x88, 0xB5]); // local experimental ethertype
    f[14..22].copy_from_slice(&seq.to_le_bytes());
    f[len - 8..].copy_from_slice(&seq.to_le_bytes());
    f
}

fn seq_of(f: &[u8]) -> (u64, u64) {
    (
        u64::from_le_bytes(f[14..22].try_into().unwrap()),
        u64::from_le_bytes(f[f.len() - 8..].try_into().unwrap()),
    )
}

/// Sends `frames` from A as fast as the link takes them (and B's frames
/// from B), stepping until everything arrived. Returns what arrived at B
/// and at A.
fn run(link: &mut Link, a: &[Vec<u8>], b: &[Vec<u8>]) -> (Vec<RxFrame>, Vec<RxFrame>) {
    let (mut ia, mut ib) = (0, 0);
    let (mut at_b, mut at_a) = (Vec::new(), Vec::new());
    for _ in 0..50_000_000u64 {
        if ia < a.len() && !link.busy(Side::A) {
            link.send(Side::A, a[ia].clone());
            ia += 1;
        }
        if ib < b.len() && !link.busy(Side::B) {
            link.send(Side::B, b[ib].clone());
            ib += 1;
        }
        link.step();
        while let Some(f) = link.recv(Side::B) {
            at_b.push(f);
        }
        while let Some(f) = link.recv(Side::A) {
            at_a.push(f);
        }
        if ia == a.len() && ib == b.len() && link.pending() == 0 {
            return (at_b, at_a);
        }
    }
    panic!("link did not drain");
}

#[test]
fn zero_fault_link_preserves_order_and_bytes() {
    let mut rng = Rng::new(1);
    let a: Vec<Vec<u8>> = (0..2000)
        .map(|i| frame(i, 30 + rng.below(1485) as usize, &mut rng))
        .collect();
    let b: Vec<Vec<u8>> = (0..1000)
        .map(|i| frame(i, 30 + rng.below(200) as usize, &mut rng))
        .collect();
    let mut link = Link::new(LinkConfig {
        delay: 50,
        ..LinkConfig::default()
    });
    let (at_b, at_a) = run(&mut link, &a, &b);
    assert_eq!(
        at_b.iter().map(|f| &f.data).collect::<Vec<_>>(),
        a.iter().collect::<Vec<_>>()
    );
    assert_eq!(
        at_a.iter().map(|f| &f.data).collect::<Vec<_>>(),
        b.iter().collect::<Vec<_>>()
    );
    assert!(at_a.iter().chain(&at_b).all(|f| !f.fcs_bad && !f.corrupted));
    // Arrival: at least serialization + delay after the first send (cycle 0).
    let first = (a[0].len().max(MIN_FRAME) as u64 + WIRE_OVERHEAD).div_ceil(8) + 50;
    assert_eq!(at_b[0].cycle, first);
}

#[test]
fn seeded_fault_rates_within_statistical_bounds() {
    const N: u64 = 10_000;
    let (loss, corrupt, dup, reorder) = (0.05, 0.03, 0.02, 0.04);
    let mut rng = Rng::new(2);
    let sent: Vec<Vec<u8>> = (0..N)
        .map(|i| frame(i, 64 + rng.below(200) as usize, &mut rng))
        .collect();
    let cfg = LinkConfig {
        delay: 10,
        loss,
        corrupt,
        duplicate: dup,
        reorder,
        seed: 77,
        ..LinkConfig::default()
    };
    let mut link = Link::new(cfg.clone());
    let (got, _) = run(&mut link, &sent, &[]);

    // Observe at the receiver.
    let mut seen: HashMap<u64, u32> = HashMap::new();
    let (mut corrupted, mut late, mut max_seq) = (0u64, 0u64, None::<u64>);
    for f in &got {
        let (s1, s2) = seq_of(&f.data);
        let diff = |seq: u64| -> Option<u32> {
            let orig = sent.get(seq as usize)?;
            (orig.len() == f.data.len()).then(|| {
                orig.iter()
                    .zip(&f.data)
                    .map(|(a, b)| (a ^ b).count_ones())
                    .sum()
            })
        };
        // One of the two copies of the sequence number is intact.
        let seq = [s1, s2]
            .into_iter()
            .find(|&s| diff(s).is_some_and(|b| b <= 1))
            .expect("frame not identified");
        let orig = &sent[seq as usize];
        let bits: u32 = orig
            .iter()
            .zip(&f.data)
            .map(|(a, b)| (a ^ b).count_ones())
            .sum();
        assert_eq!(f.data.len(), orig.len());
        assert_eq!(bits, f.fcs_bad as u32, "one flipped bit iff fcs_bad");
        assert_eq!(f.fcs_bad, f.corrupted);
        let n = seen.entry(seq).or_default();
        *n += 1;
        if *n == 1 {
            corrupted += f.fcs_bad as u64;
            if max_seq.is_some_and(|m| seq < m) {
                late += 1;
            }
            max_seq = max_seq.max(Some(seq));
        }
    }
    let lost = N - seen.len() as u64;
    let dups = seen.values().filter(|&&n| n == 2).count() as u64;
    assert!(seen.values().all(|&n| n <= 2));
    // Five sigma of a binomial(N, p) around N p.
    let within = |what: &str, x: u64, p: f64, n: u64| {
        let (mean, sd) = (n as f64 * p, (n as f64 * p * (1.0 - p)).sqrt());
        assert!(
            (x as f64 - mean).abs() <= 5.0 * sd,
            "{what}: {x} vs expected {mean:.0} ± {:.0}",
            5.0 * sd
        );
    };
    within("lost", lost, loss, N);
    let survivors = N - lost;
    within("corrupted", corrupted, corrupt, survivors);
    within("duplicated", dups, dup, survivors);
    // A held frame is overtaken by exactly one frame; two reorders in a row
    // overlap, so the observed count is slightly below N' p.
    within("reordered", late, reorder * (1.0 - reorder), survivors);
    assert!(late > 0 && dups > 0);
    // The link's own counters agree with what was observed.
    let st = link.stats(Side::A);
    assert_eq!((st.sent, st.lost, st.duplicated), (N, lost, dups));
    assert_eq!(st.delivered, got.len() as u64);
    assert!(st.corrupted >= corrupted);

    // Same seed, same run.
    let mut again = Link::new(cfg);
    let (got2, _) = run(&mut again, &sent, &[]);
    assert_eq!(got, got2);
}

#[test]
fn rate_limit_in_octets_per_cycle() {
    for rate in [8.0, 0.8, 3.3] {
        let mut rng = Rng::new(3);
        let frames: Vec<Vec<u8>> = (0..500)
            .map(|i| frame(i, if i % 2 == 0 { 1000 } else { 40 }, &mut rng))
            .collect();
        let mut link = Link::new(LinkConfig {
            delay: 0,
            rate,
            ..LinkConfig::default()
        });
        let (got, _) = run(&mut link, &frames, &[]);
        assert_eq!(got.len(), 500);
        // Wire octets computed here: 40-octet frames are padded to 60.
        let wire: u64 = frames.iter().map(|f| f.len().max(60) as u64 + 24).sum();
        let cycles = got.last().unwrap().cycle as f64;
        let measured = wire as f64 / cycles;
        assert!(
            (measured - rate).abs() / rate < 0.01,
            "{measured} octets/cycle vs {rate}"
        );
    }
}

#[test]
fn pcap_is_readable_with_the_right_frames() {
    let dir = std::env::temp_dir().join(format!("rnic-sim-link-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("link.pcap");
    let mut rng = Rng::new(4);
    let a: Vec<Vec<u8>> = (0..300)
        .map(|i| frame(i, 64 + rng.below(100) as usize, &mut rng))
        .collect();
    let b: Vec<Vec<u8>> = (0..200).map(|i| frame(1000 + i, 64, &mut rng)).collect();
    let mut link = Link::new(LinkConfig {
        loss: 0.1,
        duplicate: 0.1,
        corrupt: 0.2,
        seed: 5,
        ..LinkConfig::default()
    });
    link.pcap_to(&path).unwrap();
    let (at_b, at_a) = run(&mut link, &a, &b);
    link.flush_pcap().unwrap();
    let delivered = link.stats(Side::A).delivered + link.stats(Side::B).delivered;
    assert_eq!(delivered as usize, at_a.len() + at_b.len());

    // Read back with pcap-file's reader: every arrival, in cycle order, as
    // received (corrupted frames corrupted), at 6.4 ns per cycle.
    let mut all: Vec<&RxFrame> = at_a.iter().chain(&at_b).collect();
    all.sort_by_key(|f| f.cycle);
    let mut r = pcap_file::pcap::PcapReader::new(std::fs::File::open(&path).unwrap()).unwrap();
    assert_eq!(r.header().datalink, pcap_file::DataLink::ETHERNET);
    let mut n = 0;
    let mut cyc_frames: HashMap<u64, Vec<Vec<u8>>> = HashMap::new();
    for f in &all {
        cyc_frames.entry(f.cycle).or_default().push(f.data.clone());
    }
    while let Some(p) = r.next_packet() {
        let p = p.unwrap();
        let ns = p.timestamp.as_nanos() as u64;
        let cycle = (ns * 10).div_ceil(64);
        assert_eq!(cycle * 64 / 10, ns, "timestamp = cycle x 6.4 ns");
        let list = cyc_frames.get_mut(&cycle).expect("frame at that cycle");
        let pos = list
            .iter()
            .position(|d| d[..] == p.data[..])
            .expect("same octets");
        list.remove(pos);
        n += 1;
    }
    assert_eq!(n, delivered);
    assert!(all.iter().any(|f| f.corrupted));

    if support::have_tool("tshark") {
        let out = Command::new("tshark")
            .args(["-n", "-r"])
            .arg(&path)
            .args(["-T", "fields", "-e", "frame.number", "-e", "eth.type"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text.lines().count() as u64, delivered);
        assert!(text.lines().all(|l| l.ends_with("0x88b5")), "{text}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
