//! An external MAC port: Ethernet frames (no FCS) carried over a stream
//! socket, each as a 4-byte big-endian length followed by the frame — the
//! framing of QEMU's `-netdev stream` / `-netdev socket` — so a VM or
//! another process can be a node's peer.
//!
//! The port is non-blocking and polled by the scheduler ([`ExternalPort::poll`]):
//! it accepts a connection (when listening), reads whatever arrived
//! (frames may be split across reads anywhere, even inside the length), and
//! writes as much of its queue as the socket takes (partial writes resume on
//! the next poll). One peer at a time; when it goes away a listening port
//! waits for the next one. Frames sent while no peer is connected, or while
//! the send queue is over its limit, are dropped and counted, like frames
//! on an unplugged cable. A length above [`MAX_FRAME`] is a protocol error:
//! the connection is closed and counted.
//!
//! [`ExternalPort::pcap_to`] records every frame that crosses the socket,
//! both ways, stamped with the wall-clock time since the capture began (the
//! peer on the other end, a VM, lives in wall-clock time).

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::mac_port::{pad_to_min, ETH_MIN_FRAME_NO_FCS};
use crate::pcap::PcapSink;

/// Largest frame accepted from the peer (octets after the length field).
pub const MAX_FRAME: usize = 65_535;
/// Default limit of the send queue, octets.
pub const DEFAULT_TX_LIMIT: usize = 4 << 20;

enum Conn {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Read for Conn {
    fn read(&mut self, b: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.read(b),
            Conn::Unix(s) => s.read(b),
        }
    }
}

impl Write for Conn {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.write(b),
            Conn::Unix(s) => s.write(b),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

enum Listener {
    None,
    Tcp(TcpListener),
    Unix(UnixListener, PathBuf),
}

/// Counters of an external port.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExternalStats {
    pub connections: u64,
    pub frames_in: u64,
    pub frames_out: u64,
    /// Frames dropped because no peer was connected or the queue was full.
    pub frames_dropped: u64,
    /// Connections closed for a length above [`MAX_FRAME`].
    pub protocol_errors: u64,
    /// Writes that took only part of what was offered, or would block.
    pub partial_writes: u64,
}

/// A MAC port over a socket.
pub struct ExternalPort {
    listener: Listener,
    conn: Option<Conn>,
    rx_buf: Vec<u8>,
    rx: VecDeque<Vec<u8>>,
    tx_buf: VecDeque<u8>,
    tx_limit: usize,
    stats: ExternalStats,
    pcap: Option<(PcapSink, Instant)>,
}

impl ExternalPort {
    fn with(listener: Listener, conn: Option<Conn>) -> Self {
        let mut p = ExternalPort {
            listener,
            conn: None,
            rx_buf: Vec::new(),
            rx: VecDeque::new(),
            tx_buf: VecDeque::new(),
            tx_limit: DEFAULT_TX_LIMIT,
            stats: ExternalStats::default(),
            pcap: None,
        };
        if let Some(c) = conn {
            p.stats.connections += 1;
            p.conn = Some(c);
        }
        p
    }

    /// Listens on a TCP address (use `127.0.0.1:0` for any free port; see
    /// [`ExternalPort::local_addr`]). QEMU: `-netdev stream,id=n,server=off,
    /// addr.type=inet,addr.host=127.0.0.1,addr.port=<port>`.
    pub fn listen_tcp(addr: &str) -> io::Result<Self> {
        let l = TcpListener::bind(addr)?;
        l.set_nonblocking(true)?;
        Ok(Self::with(Listener::Tcp(l), None))
    }

    /// Listens on a Unix socket at `path` (removed again on drop).
    pub fn listen_unix(path: &Path) -> io::Result<Self> {
        let l = UnixListener::bind(path)?;
        l.set_nonblocking(true)?;
        Ok(Self::with(Listener::Unix(l, path.to_path_buf()), None))
    }

    /// Connects to a TCP peer that listens (QEMU with `server=on`).
    pub fn connect_tcp(addr: &str) -> io::Result<Self> {
        let s = TcpStream::connect(addr)?;
        s.set_nonblocking(true)?;
        s.set_nodelay(true)?;
        Ok(Self::with(Listener::None, Some(Conn::Tcp(s))))
    }

    /// Connects to a Unix socket peer.
    pub fn connect_unix(path: &Path) -> io::Result<Self> {
        let s = UnixStream::connect(path)?;
        s.set_nonblocking(true)?;
        Ok(Self::with(Listener::None, Some(Conn::Unix(s))))
    }

    /// The TCP address listened on.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        match &self.listener {
            Listener::Tcp(l) => l.local_addr().ok(),
            _ => None,
        }
    }

    /// Records every frame sent to and received from the peer into a pcap
    /// at `path` (wall-clock timestamps from now, microseconds).
    pub fn pcap_to(&mut self, path: &Path) -> io::Result<()> {
        self.pcap = Some((PcapSink::create(path)?, Instant::now()));
        Ok(())
    }

    /// Flushes the capture (it stays open).
    pub fn flush_pcap(&mut self) -> io::Result<()> {
        match &mut self.pcap {
            Some((p, _)) => p.flush(),
            None => Ok(()),
        }
    }

    fn record(&mut self, frame: &[u8]) {
        if let Some((p, t0)) = &mut self.pcap {
            // A capture that cannot be written is not the session's failure.
            let _ = p.write_at(frame, t0.elapsed());
        }
    }

    /// Sets the send queue limit in octets.
    pub fn set_tx_limit(&mut self, octets: usize) {
        self.tx_limit = octets;
    }

    pub fn connected(&self) -> bool {
        self.conn.is_some()
    }

    pub fn stats(&self) -> ExternalStats {
        self.stats
    }

    /// Octets queued for the peer and not yet written.
    pub fn tx_pending(&self) -> usize {
        self.tx_buf.len()
    }

    /// Queues a frame for the peer (written by [`ExternalPort::poll`]),
    /// padded to the Ethernet minimum as a MAC sends it
    /// ([`crate::mac_port::ETH_MIN_FRAME_NO_FCS`]).
    pub fn send(&mut self, frame: &[u8]) {
        let mut padded;
        let frame = if frame.len() < ETH_MIN_FRAME_NO_FCS {
            padded = frame.to_vec();
            pad_to_min(&mut padded);
            &padded[..]
        } else {
            frame
        };
        if self.conn.is_none()
            || frame.len() > MAX_FRAME
            || self.tx_buf.len() + 4 + frame.len() > self.tx_limit
        {
            self.stats.frames_dropped += 1;
            return;
        }
        self.tx_buf
            .extend((frame.len() as u32).to_be_bytes().iter().chain(frame));
        self.stats.frames_out += 1;
        self.record(frame);
    }

    /// The next frame received from the peer.
    pub fn recv(&mut self) -> Option<Vec<u8>> {
        self.rx.pop_front()
    }

    /// Accepts, reads and writes without blocking. Errors other than
    /// "would block" end the connection (and are returned); the port stays
    /// usable (a listening port waits for the next peer).
    pub fn poll(&mut self) -> io::Result<()> {
        if self.conn.is_none() {
            self.accept()?;
        }
        if self.conn.is_none() {
            return Ok(());
        }
        let r = self.read_some().and_then(|()| self.write_some());
        if let Err(e) = r {
            self.drop_conn();
            if e.kind() != io::ErrorKind::UnexpectedEof {
                return Err(e);
            }
        }
        Ok(())
    }

    fn accept(&mut self) -> io::Result<()> {
        let conn = match &self.listener {
            Listener::None => return Ok(()),
            Listener::Tcp(l) => match l.accept() {
                Ok((s, _)) => {
                    s.set_nonblocking(true)?;
                    s.set_nodelay(true)?;
                    Conn::Tcp(s)
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            },
            Listener::Unix(l, _) => match l.accept() {
                Ok((s, _)) => {
                    s.set_nonblocking(true)?;
                    Conn::Unix(s)
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            },
        };
        self.stats.connections += 1;
        self.conn = Some(conn);
        Ok(())
    }

    fn drop_conn(&mut self) {
        self.conn = None;
        self.rx_buf.clear();
        self.tx_buf.clear();
    }

    fn read_some(&mut self) -> io::Result<()> {
        let conn = self.conn.as_mut().expect("connected");
        let mut chunk = [0u8; 16384];
        // A peer that sends its last frames and closes: the frames read
        // before the end of the stream are delivered, then it is dropped.
        let mut eof = false;
        loop {
            match conn.read(&mut chunk) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => self.rx_buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        let mut at = 0;
        while self.rx_buf.len() - at >= 4 {
            let len = u32::from_be_bytes(self.rx_buf[at..at + 4].try_into().unwrap()) as usize;
            if len > MAX_FRAME {
                self.stats.protocol_errors += 1;
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("external port: frame length {len} above {MAX_FRAME}"),
                ));
            }
            if self.rx_buf.len() - at - 4 < len {
                break;
            }
            let frame = self.rx_buf[at + 4..at + 4 + len].to_vec();
            self.record(&frame);
            self.rx.push_back(frame);
            self.stats.frames_in += 1;
            at += 4 + len;
        }
        self.rx_buf.drain(..at);
        if eof {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        Ok(())
    }

    fn write_some(&mut self) -> io::Result<()> {
        let conn = self.conn.as_mut().expect("connected");
        while !self.tx_buf.is_empty() {
            let (a, _) = self.tx_buf.as_slices();
            match conn.write(a) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    if n < a.len() {
                        self.stats.partial_writes += 1;
                    }
                    self.tx_buf.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.stats.partial_writes += 1;
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl Drop for ExternalPort {
    fn drop(&mut self) {
        if let Listener::Unix(_, p) = &self.listener {
            let _ = std::fs::remove_file(p);
        }
    }
}
