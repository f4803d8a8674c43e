//! TLS in the binary (`listen.tls_cert`, `listen.tls_key`): the real server with a
//! certificate made by the openssl command speaks HTTPS on its ingest and web listeners,
//! signs a person in with a `Secure` cookie, ingests a hook's batch, answers
//! `healthcheck`, and gives nothing to a plain-HTTP client; a missing half of the
//! setting or an unusable file stops the start with the reason named.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::common::*;

fn self_signed(dir: &Path) -> (PathBuf, PathBuf) {
    let (cert, key) = (dir.join("server.crt"), dir.join("server.key"));
    let made = std::process::Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"])
        .args(["-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"])
        .args(["-addext", "basicConstraints=critical,CA:FALSE", "-keyout"])
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", String::from_utf8_lossy(&made.stderr));
    (cert, key)
}

/// A client that trusts exactly this certificate, as a laptop given the organisation's CA.
fn trusting(cert: &Path) -> ureq::Agent {
    let pem = std::fs::read(cert).unwrap();
    let root = ureq::tls::Certificate::from_pem(&pem).unwrap().to_owned();
    let tls = ureq::tls::TlsConfig::builder().root_certs(ureq::tls::RootCerts::Specific(Arc::new(vec![root]))).build();
    ureq::Agent::config_builder().tls_config(tls).http_status_as_error(false).max_redirects(0).build().new_agent()
}

#[test]
fn the_listeners_speak_https_with_the_configured_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = self_signed(dir.path());
    let server = TestServer::spawn_with_env(&[
        ("SIGHTLINE_LISTEN_TLS_CERT", cert.to_str().unwrap()),
        ("SIGHTLINE_LISTEN_TLS_KEY", key.to_str().unwrap()),
    ]);
    assert!(server.ingest.starts_with("https://127.0.0.1:") && server.web.starts_with("https://"), "{}", server.ingest);
    let client = trusting(&cert);
    assert_eq!(client.get(format!("{}/readyz", server.ingest)).call().unwrap().status(), 200);
    // Every listener's answers say HTTPS only, the operators' endpoints included.
    for url in
        [format!("{}/readyz", server.ingest), format!("{}/health", server.web), format!("{}/health", server.github)]
    {
        let answer = client.get(&url).call().unwrap();
        let hsts = answer.headers().get("strict-transport-security").map(|v| v.to_str().unwrap().to_string());
        assert_eq!(hsts.as_deref(), Some("max-age=63072000; includeSubDomains"), "{url}");
    }

    // A hook's batch over HTTPS.
    let batch = envelope(vec![event("session_start", "tls-1", now_ms())]);
    let answer = client
        .post(format!("{}/v1/events", server.ingest))
        .header("Authorization", format!("Bearer {}", server.token))
        .header("Content-Type", "application/json")
        .send(batch.to_string())
        .unwrap();
    assert_eq!(answer.status(), 200);

    // Signing in: the cookie is Secure, since the scheme carries it.
    add_user(&server.data_dir, "ada@example.com", "MEMBER");
    let signed_in = client
        .post(format!("{}/login", server.web))
        .header("Sec-Fetch-Site", "same-origin")
        .send_form([("email", "ada@example.com"), ("password", TEST_PASSWORD)])
        .unwrap();
    assert_eq!(signed_in.status(), 303);
    let cookie = signed_in.headers()["set-cookie"].to_str().unwrap().to_string();
    assert!(cookie.contains("; Secure"), "{cookie}");
    let login_page = client.get(format!("{}/login", server.web)).call().unwrap().into_body().read_to_string().unwrap();
    assert!(!login_page.contains("in clear"), "no cleartext warning over HTTPS");

    // The operator's probe, and a client that does not speak TLS.
    let probe = sightline(&["healthcheck", "--data-dir", server.data_dir.to_str().unwrap()]);
    assert!(stdout(&probe).contains("healthy: https://127.0.0.1:"), "{}", stdout(&probe));
    let plain = agent().get(server.ingest.replace("https://", "http://") + "/readyz").call();
    assert!(plain.is_err() || plain.unwrap().status() != 200, "plain HTTP gets no answer from a TLS listener");
    // A client that does not trust the certificate is refused by its own check.
    assert!(agent().get(format!("{}/readyz", server.ingest)).call().is_err());
}

#[test]
fn half_a_setting_or_an_unusable_file_stops_the_start_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, _key) = self_signed(dir.path());
    let data = dir.path().join("data");
    let serve = |env: &[(&str, &str)]| {
        let mut command = std::process::Command::new(BIN);
        command.args(["serve", "--data-dir", data.to_str().unwrap()]);
        command.args(["--ingest-addr", "127.0.0.1:0", "--web-addr", "127.0.0.1:0", "--github-addr", "127.0.0.1:0"]);
        command.env_remove("SIGHTLINE_CONFIG").envs(env.iter().copied());
        let output = command.output().unwrap();
        (output.status.code(), String::from_utf8_lossy(&output.stderr).into_owned())
    };
    let (code, stderr) = serve(&[("SIGHTLINE_LISTEN_TLS_CERT", cert.to_str().unwrap())]);
    assert_ne!(code, Some(0));
    assert!(stderr.contains("listen.tls_cert and listen.tls_key go together"), "{stderr}");
    let (code, stderr) = serve(&[
        ("SIGHTLINE_LISTEN_TLS_CERT", cert.to_str().unwrap()),
        ("SIGHTLINE_LISTEN_TLS_KEY", cert.to_str().unwrap()),
    ]);
    assert_ne!(code, Some(0));
    assert!(stderr.contains("listen.tls_key") && stderr.contains("server.crt"), "{stderr}");
}
