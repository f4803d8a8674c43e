//! A loopback HTTP receiver standing in for a chat or generic webhook, or a small JSON
//! API: it keeps every request's headers and body and answers with the status (and
//! body) its closure chooses.

use std::io::{BufRead, BufReader, Read, Write};
use std::sync::{Arc, Mutex};

/// A received request: its headers (names in lower case, the request target as `:path`)
/// and body.
pub type Request = (Vec<(String, String)>, String);

/// A loopback HTTP receiver: each request's headers and body, answered by `answer`.
pub struct Receiver {
    pub url: String,
    pub got: Arc<Mutex<Vec<Request>>>,
}

impl Receiver {
    pub fn start(answer: impl Fn(&[(String, String)], &str, usize) -> u16 + Send + 'static) -> Receiver {
        Self::answering(move |headers, body, seen| (answer(headers, body, seen), String::new()))
    }

    /// A receiver that answers each request with a status and a JSON body.
    pub fn answering(answer: impl Fn(&[(String, String)], &str, usize) -> (u16, String) + Send + 'static) -> Receiver {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let got: Arc<Mutex<Vec<Request>>> = Arc::default();
        let kept = got.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                // The request target, as a pseudo-header (a GET API's query is in it).
                let target = line.split(' ').nth(1).unwrap_or_default().to_string();
                let mut headers = vec![(":path".to_string(), target)];
                loop {
                    line.clear();
                    reader.read_line(&mut line).unwrap();
                    let Some((name, value)) = line.trim_end().split_once(": ") else { break };
                    headers.push((name.to_ascii_lowercase(), value.to_string()));
                }
                let length = headers.iter().find(|(n, _)| n == "content-length").map_or(0, |(_, v)| v.parse().unwrap());
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                let body = String::from_utf8(body).unwrap();
                let (status, answer_body) = answer(&headers, &body, kept.lock().unwrap().len());
                kept.lock().unwrap().push((headers, body));
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer_body}",
                    answer_body.len()
                );
            }
        });
        Receiver { url, got }
    }

    pub fn bodies(&self) -> Vec<String> {
        self.got.lock().unwrap().iter().map(|(_, body)| body.clone()).collect()
    }
}
