//! Process-wide logging setup for the server commands: a `tracing` subscriber
//! with the configured filter, as text for people or JSON for log shippers.
//! Installed once per process by `main`'s command dispatch, never by the library.

use crate::config::{Log, LogFormat};

pub fn init(log: &Log) {
    let filter = tracing_subscriber::EnvFilter::try_new(&log.level).unwrap_or_else(|_| "info".into());
    // Colours only for a person at a terminal: a file or journald would keep the codes.
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(colour);
    // A second init (tests) keeps the first subscriber.
    let _ = match log.format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
