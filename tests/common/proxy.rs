//! A loopback TCP proxy standing between the hook CLI and a real server: it can slow
//! every response (so a killed flusher dies mid-POST), drop every n-th response (the
//! server did the work, the client never hears of it: the connection just closes), and
//! go down (refusing every connection) while the server behind it keeps running or
//! restarts on another port.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

pub struct Proxy {
    pub url: String,
    upstream: Arc<Mutex<String>>,
    down: Arc<AtomicBool>,
    delay_ms: Arc<AtomicU64>,
    drop_every: Arc<AtomicU64>,
}

/// What every connection of one proxy shares.
#[derive(Clone)]
struct Faults {
    delay_ms: Arc<AtomicU64>,
    drop_every: Arc<AtomicU64>,
    responses: Arc<AtomicU64>,
}

impl Proxy {
    /// Forwards to `upstream` (`host:port`), delaying each response by `delay_ms`.
    pub fn start(upstream: &str, delay_ms: u64) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let upstream = Arc::new(Mutex::new(upstream.to_string()));
        let down = Arc::new(AtomicBool::new(false));
        let delay = Arc::new(AtomicU64::new(delay_ms));
        let drop_every = Arc::new(AtomicU64::new(0));
        let faults =
            Faults { delay_ms: delay.clone(), drop_every: drop_every.clone(), responses: Arc::new(AtomicU64::new(0)) };
        let (up, is_down) = (upstream.clone(), down.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if is_down.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let target = up.lock().unwrap().clone();
                let faults = faults.clone();
                std::thread::spawn(move || {
                    if let Ok(server) = TcpStream::connect(&target) {
                        pipe(client, server, &faults);
                    }
                });
            }
        });
        Proxy { url, upstream, down, delay_ms: delay, drop_every }
    }

    pub fn set_upstream(&self, upstream: &str) {
        *self.upstream.lock().unwrap() = upstream.to_string();
    }

    pub fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }

    pub fn set_delay_ms(&self, delay_ms: u64) {
        self.delay_ms.store(delay_ms, Ordering::SeqCst);
    }

    /// Drops every `n`-th response from now on (0: none).
    pub fn set_drop_every(&self, n: u64) {
        self.drop_every.store(n, Ordering::SeqCst);
    }
}

/// Copies both ways; each response (the first bytes from the server after the client
/// sent something) waits the delay, so keep-alive connections are slowed per request, and
/// a response the drop count picks closes both sides instead.
fn pipe(client: TcpStream, server: TcpStream, faults: &Faults) {
    let (mut client_read, mut server_write) = (client.try_clone().unwrap(), server.try_clone().unwrap());
    let asked = Arc::new(AtomicBool::new(false));
    let asked_up = asked.clone();
    let upward = std::thread::spawn(move || {
        let mut buf = [0u8; 16 * 1024];
        while let Ok(n) = client_read.read(&mut buf) {
            if n == 0 || server_write.write_all(&buf[..n]).is_err() {
                break;
            }
            asked_up.store(true, Ordering::SeqCst);
        }
        let _ = server_write.shutdown(Shutdown::Write);
    });
    let (mut server_read, mut client_write) = (server, client);
    let mut buf = [0u8; 16 * 1024];
    while let Ok(n) = server_read.read(&mut buf) {
        if n == 0 {
            break;
        }
        if asked.swap(false, Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(faults.delay_ms.load(Ordering::SeqCst)));
            let every = faults.drop_every.load(Ordering::SeqCst);
            let nth = faults.responses.fetch_add(1, Ordering::SeqCst) + 1;
            if every > 0 && nth.is_multiple_of(every) {
                let _ = client_write.shutdown(Shutdown::Both);
                let _ = server_read.shutdown(Shutdown::Both);
                break;
            }
        }
        if client_write.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = client_write.shutdown(Shutdown::Both);
    let _ = upward.join();
}
