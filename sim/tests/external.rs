//! The external port over loopback sockets (127.0.0.1 and a Unix socket in
//! a temp dir), against plain std sockets speaking QEMU's stream framing
//! (4-byte big-endian length + frame), written here independently.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixListener;
use std::time::{Duration, Instant};

use rnic_sim::external::{ExternalPort, MAX_FRAME};
use rnic_sim::rng::Rng;

fn framed(f: &[u8]) -> Vec<u8> {
    let mut v = (f.len() as u32).to_be_bytes().to_vec();
    v.extend_from_slice(f);
    v
}

fn read_frame(s: &mut impl Read) -> Vec<u8> {
    let mut l = [0u8; 4];
    s.read_exact(&mut l).unwrap();
    let mut f = vec![0u8; u32::from_be_bytes(l) as usize];
    s.read_exact(&mut f).unwrap();
    f
}

/// Polls until `cond` or 10 s.
fn poll_until(p: &mut ExternalPort, mut cond: impl FnMut(&mut ExternalPort) -> bool) {
    let t = Instant::now();
    while !cond(p) {
        p.poll().unwrap();
        assert!(t.elapsed() < Duration::from_secs(10), "timed out");
        std::thread::sleep(Duration::from_micros(50));
    }
}

#[test]
fn tcp_frames_both_ways_with_partial_reads() {
    let mut port = ExternalPort::listen_tcp("127.0.0.1:0").unwrap();
    let addr = port.local_addr().unwrap();
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_nodelay(true).unwrap();
    poll_until(&mut port, |p| p.connected());

    // Client → port, written one octet at a time with polls in between, so
    // the port sees the length and the frame split everywhere.
    let mut rng = Rng::new(1);
    let frames: Vec<Vec<u8>> = [0usize, 1, 60, 1514, 9000]
        .iter()
        .map(|&n| rng.bytes(n))
        .collect();
    let mut bytes = Vec::new();
    for f in &frames[..3] {
        bytes.extend(framed(f));
    }
    for b in &bytes {
        c.write_all(&[*b]).unwrap();
        port.poll().unwrap();
    }
    // ...and the rest in one write.
    c.write_all(&[framed(&frames[3]), framed(&frames[4])].concat())
        .unwrap();
    let mut got = Vec::new();
    poll_until(&mut port, |p| {
        while let Some(f) = p.recv() {
            got.push(f);
        }
        got.len() == frames.len()
    });
    assert_eq!(got, frames);

    // Port → client.
    for f in &frames {
        port.send(f);
    }
    poll_until(&mut port, |p| p.tx_pending() == 0);
    for f in &frames {
        // What leaves is a wire frame: at least 64 octets with the FCS
        // (IEEE 802.3 minFrameSize), so 60 here, zero-padded.
        let mut want = f.clone();
        if want.len() < 60 {
            want.resize(60, 0);
        }
        assert_eq!(read_frame(&mut c), want, "{}-octet frame", f.len());
    }
    let st = port.stats();
    assert_eq!((st.frames_in, st.frames_out, st.connections), (5, 5, 1));
}

#[test]
fn partial_writes_resume_in_order() {
    let mut port = ExternalPort::listen_tcp("127.0.0.1:0").unwrap();
    port.set_tx_limit(64 << 20);
    let addr = port.local_addr().unwrap();
    let mut c = TcpStream::connect(addr).unwrap();
    poll_until(&mut port, |p| p.connected());
    // 24 MB while the client is not reading: the socket fills, the port
    // keeps the rest and resumes.
    let mut rng = Rng::new(2);
    let frames: Vec<Vec<u8>> = (0..16_000u32)
        .map(|i| {
            let mut f = rng.bytes(1500);
            f[..4].copy_from_slice(&i.to_le_bytes());
            f
        })
        .collect();
    for f in &frames {
        port.send(f);
    }
    port.poll().unwrap();
    assert!(port.tx_pending() > 0, "the socket took everything at once");
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        for _ in 0..16_000 {
            out.push(read_frame(&mut c));
        }
        out
    });
    poll_until(&mut port, |p| p.tx_pending() == 0);
    let got = reader.join().unwrap();
    assert!(got == frames, "frames differ");
    assert!(port.stats().partial_writes > 0);
}

#[test]
fn unix_socket_peer_and_reconnect() {
    let dir = std::env::temp_dir().join(format!("rnic-sim-ext-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The port as client of a listening peer.
    let path = dir.join("peer.sock");
    let l = UnixListener::bind(&path).unwrap();
    let mut port = ExternalPort::connect_unix(&path).unwrap();
    let (mut s, _) = l.accept().unwrap();
    s.write_all(&framed(b"hello from the peer")).unwrap();
    let mut got = None;
    poll_until(&mut port, |p| {
        got = p.recv();
        got.is_some()
    });
    assert_eq!(got.unwrap(), b"hello from the peer");
    port.send(b"hello from the node");
    poll_until(&mut port, |p| p.tx_pending() == 0);
    let f = read_frame(&mut s);
    assert_eq!(f.len(), 60, "padded to the Ethernet minimum");
    assert_eq!(&f[..19], b"hello from the node");
    assert!(f[19..].iter().all(|&x| x == 0));
    drop(s);
    poll_until(&mut port, |p| !p.connected());
    port.send(b"nobody listens");
    assert_eq!(port.stats().frames_dropped, 1);

    // The port listening on a Unix socket; a peer comes, goes, comes back.
    let path2 = dir.join("node.sock");
    let mut port = ExternalPort::listen_unix(&path2).unwrap();
    for round in 0..2u8 {
        let mut c = std::os::unix::net::UnixStream::connect(&path2).unwrap();
        poll_until(&mut port, |p| p.connected());
        c.write_all(&framed(&[round; 7])).unwrap();
        let mut got = None;
        poll_until(&mut port, |p| {
            got = p.recv();
            got.is_some()
        });
        assert_eq!(got.unwrap(), vec![round; 7]);
        drop(c);
        poll_until(&mut port, |p| !p.connected());
    }
    assert_eq!(port.stats().connections, 2);
    drop(port);
    assert!(!path2.exists(), "socket file removed");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn oversize_length_closes_the_connection() {
    let mut port = ExternalPort::listen_tcp("127.0.0.1:0").unwrap();
    let mut c = TcpStream::connect(port.local_addr().unwrap()).unwrap();
    poll_until(&mut port, |p| p.connected());
    c.write_all(&((MAX_FRAME as u32 + 1).to_be_bytes()))
        .unwrap();
    let t = Instant::now();
    loop {
        if port.poll().is_err() {
            break;
        }
        assert!(t.elapsed() < Duration::from_secs(10));
    }
    assert!(!port.connected());
    assert_eq!(port.stats().protocol_errors, 1);
    assert!(port.recv().is_none());
    // The next peer is served.
    let mut c = TcpStream::connect(port.local_addr().unwrap()).unwrap();
    c.write_all(&framed(&[1, 2, 3])).unwrap();
    let mut got = None;
    poll_until(&mut port, |p| {
        got = p.recv();
        got.is_some()
    });
    assert_eq!(got.unwrap(), vec![1, 2, 3]);
}

/// A peer that sends its last frames and closes at once: the frames that
/// arrived before the end of the stream are delivered, then the port waits
/// for the next peer.
#[test]
fn last_frames_before_close_are_delivered() {
    let mut port = ExternalPort::listen_tcp("127.0.0.1:0").unwrap();
    let addr = port.local_addr().unwrap();
    let mut c = TcpStream::connect(addr).unwrap();
    poll_until(&mut port, |p| p.connected());
    let frames = [vec![1u8; 60], vec![2u8; 1514]];
    let mut bytes = framed(&frames[0]);
    bytes.extend(framed(&frames[1]));
    c.write_all(&bytes).unwrap();
    drop(c);
    // the data and the end of the stream arrive together
    std::thread::sleep(Duration::from_millis(20));
    poll_until(&mut port, |p| !p.connected());
    assert_eq!(port.recv(), Some(frames[0].clone()));
    assert_eq!(port.recv(), Some(frames[1].clone()));
    assert_eq!(port.recv(), None);
    assert_eq!(port.stats().frames_in, 2);
}
