//! TLS in the binary, for organisations without a reverse proxy: `listen.tls_cert` and
//! `listen.tls_key` (PEM files) make the ingest, web and GitHub listeners speak HTTPS
//! (rustls, HTTP/1.1 by ALPN).
//!
//! Invariants: both settings or neither (the configuration refuses one alone); a
//! certificate or key that cannot be read or used stops the start with the file and the
//! reason named, never a server quietly on plain HTTP; a renewed certificate (a new
//! file at the same path, as certbot and acme.sh write it) is taken up by new
//! connections within [`RECHECK`] without a restart, and a renewal that cannot be read
//! keeps the one in use and says so in the log.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use tokio_rustls::TlsAcceptor;

/// How often a handshake looks at the files' modification times.
pub const RECHECK: Duration = Duration::from_secs(60);

/// The acceptor for `cert` and `key`, or why they cannot be used; a handshake looks for
/// renewed files at most every `recheck`.
pub fn acceptor(cert: &Path, key: &Path, recheck: Duration) -> anyhow::Result<TlsAcceptor> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let resolver = Reloading::load(cert, key, recheck, provider.clone())?;
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(resolver));
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

#[derive(Debug)]
struct Files {
    cert: PathBuf,
    key: PathBuf,
}

impl Files {
    fn load(&self, provider: &CryptoProvider) -> anyhow::Result<Arc<CertifiedKey>> {
        let cert_name = self.cert.display();
        let chain = CertificateDer::pem_file_iter(&self.cert)
            .map_err(|e| anyhow::anyhow!("listen.tls_cert: cannot read {cert_name}: {e}"))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| anyhow::anyhow!("listen.tls_cert: {cert_name} is not PEM: {e}"))?;
        anyhow::ensure!(!chain.is_empty(), "listen.tls_cert: {cert_name} holds no certificate (BEGIN CERTIFICATE)");
        let key_name = self.key.display();
        let key = PrivateKeyDer::from_pem_file(&self.key)
            .map_err(|e| anyhow::anyhow!("listen.tls_key: {key_name} holds no usable private key: {e}"))?;
        let signing = provider
            .key_provider
            .load_private_key(key)
            .map_err(|e| anyhow::anyhow!("listen.tls_key: {key_name}: {e}"))?;
        let certified = CertifiedKey::new(chain, signing);
        certified.keys_match().map_err(|e| {
            anyhow::anyhow!("listen.tls_key {key_name} is not the key of listen.tls_cert {cert_name}: {e}")
        })?;
        Ok(Arc::new(certified))
    }

    /// Both files' modification times, to notice a renewal.
    fn stamp(&self) -> Option<(SystemTime, SystemTime)> {
        let modified = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
        Some((modified(&self.cert)?, modified(&self.key)?))
    }
}

#[derive(Debug)]
struct State {
    key: Arc<CertifiedKey>,
    stamp: Option<(SystemTime, SystemTime)>,
    checked: Instant,
}

/// Serves the certificate in use, reloading it when the files change.
#[derive(Debug)]
struct Reloading {
    files: Files,
    recheck: Duration,
    provider: Arc<CryptoProvider>,
    state: Mutex<State>,
}

impl ResolvesServerCert for Reloading {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.current()
    }
}

impl Reloading {
    fn load(cert: &Path, key: &Path, recheck: Duration, provider: Arc<CryptoProvider>) -> anyhow::Result<Reloading> {
        let files = Files { cert: cert.to_path_buf(), key: key.to_path_buf() };
        let stamp = files.stamp();
        let key = files.load(&provider)?;
        Ok(Reloading { files, recheck, provider, state: Mutex::new(State { key, stamp, checked: Instant::now() }) })
    }

    /// The certificate to present now, reloaded first when the files changed.
    fn current(&self) -> Option<Arc<CertifiedKey>> {
        let mut state = self.state.lock().ok()?;
        if state.checked.elapsed() >= self.recheck {
            state.checked = Instant::now();
            let stamp = self.files.stamp();
            if stamp.is_some() && stamp != state.stamp {
                match self.files.load(&self.provider) {
                    Ok(key) => {
                        tracing::info!(cert = %self.files.cert.display(), "loaded the renewed TLS certificate");
                        state.key = key;
                        state.stamp = stamp;
                    }
                    Err(err) => {
                        tracing::error!(error = %err, "cannot load the changed TLS certificate; keeping the one in use")
                    }
                }
            }
        }
        Some(state.key.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-signed certificate for `name` and its key, made by the openssl command as
    /// an operator would.
    fn self_signed(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
        let (cert, key) = (dir.join(format!("{name}.crt")), dir.join(format!("{name}.key")));
        let made = std::process::Command::new("openssl")
            .args(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"])
            .args(["-subj", &format!("/CN={name}"), "-keyout"])
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .output()
            .unwrap();
        assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
        (cert, key)
    }

    fn provider() -> Arc<CryptoProvider> {
        Arc::new(rustls::crypto::ring::default_provider())
    }

    #[test]
    fn a_renewed_certificate_is_taken_up_and_a_broken_renewal_keeps_the_one_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = self_signed(dir.path(), "first");
        let resolver = Reloading::load(&cert, &key, Duration::ZERO, provider()).unwrap();
        let first = resolver.current().unwrap();
        assert!(Arc::ptr_eq(&first, &resolver.current().unwrap()), "unchanged files are not reloaded");

        let (new_cert, new_key) = self_signed(dir.path(), "second");
        std::thread::sleep(Duration::from_millis(20));
        std::fs::copy(&new_cert, &cert).unwrap();
        std::fs::copy(&new_key, &key).unwrap();
        let renewed = resolver.current().unwrap();
        assert_ne!(renewed.cert, first.cert, "the renewal is served");

        std::thread::sleep(Duration::from_millis(20));
        std::fs::write(&cert, "half a certificate").unwrap();
        assert_eq!(resolver.current().unwrap().cert, renewed.cert, "a broken file does not replace a working one");
    }

    #[test]
    fn unusable_files_are_refused_naming_the_file_and_the_reason() {
        let dir = tempfile::tempdir().unwrap();
        let (cert, key) = self_signed(dir.path(), "one");
        let (_, other_key) = self_signed(dir.path(), "two");
        let refused = |cert: &Path, key: &Path| acceptor(cert, key, RECHECK).err().unwrap().to_string();
        let missing = refused(&dir.path().join("none.crt"), &key);
        assert!(missing.contains("listen.tls_cert: cannot read") && missing.contains("none.crt"), "{missing}");
        let swapped = refused(&key, &key);
        assert!(swapped.contains("holds no certificate"), "{swapped}");
        let no_key = refused(&cert, &cert);
        assert!(no_key.contains("listen.tls_key") && no_key.contains("one.crt"), "{no_key}");
        let mismatched = refused(&cert, &other_key);
        assert!(mismatched.contains("is not the key of listen.tls_cert"), "{mismatched}");
        assert!(acceptor(&cert, &key, RECHECK).is_ok());
    }
}
