//! Loading the layers, the env names, validation messages, and the default file.

use super::*;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn annotated_default_file_equals_the_defaults_in_code() {
    let parsed: Config = toml::from_str(DEFAULT_FILE).expect("default file parses");
    assert_eq!(parsed, Config::default());
}

#[test]
fn every_env_key_names_a_setting_of_the_default_file() {
    let table: toml::Table = DEFAULT_FILE.parse().expect("default file parses");
    for (name, key) in ENV_KEYS {
        let found = match key.split_once('.') {
            None => table.contains_key(*key),
            Some((section, field)) => table[section].as_table().is_some_and(|t| t.contains_key(field)),
        };
        assert!(found, "{name} maps to {key}, which the default file lacks");
        assert!(DEFAULT_FILE.contains(name), "{name} is not documented in the default file");
    }
}

#[test]
fn layers_apply_in_order_file_env_flags() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sightline.toml");
    std::fs::write(
        &file,
        "data_dir = \"/from/file\"\n[listen]\nweb = \"127.0.0.1:3100\"\n[storage]\nreader_pool = 3\n",
    )
    .unwrap();
    let overrides = Overrides { web_addr: Some("127.0.0.1:3300".parse().unwrap()), ..Default::default() };
    let config = Config::load(
        Some(&file),
        env(&[("SIGHTLINE_WEB_ADDR", "127.0.0.1:3200"), ("SIGHTLINE_STORAGE_READER_POOL", "5")]),
        &overrides,
    )
    .unwrap();
    assert_eq!(config.data_dir, PathBuf::from("/from/file"));
    assert_eq!(config.listen.web.port(), 3300, "flag beats env");
    assert_eq!(config.storage.reader_pool, 5, "env beats file");
    assert_eq!(config.listen.ingest.port(), 4000, "default stays");
}

#[test]
fn unknown_key_in_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.toml");
    std::fs::write(&file, "[storage]\nwal_soft_cap = 3\n").unwrap();
    let err = Config::load(Some(&file), env(&[]), &Overrides::default()).unwrap_err().to_string();
    assert!(err.contains("wal_soft_cap"), "{err}");
}

#[test]
fn malformed_env_value_is_an_error_naming_the_key() {
    let err = Config::load(None, env(&[("SIGHTLINE_STORAGE_READER_POOL", "many")]), &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("SIGHTLINE_STORAGE_READER_POOL"), "{err}");
}

#[test]
fn the_minimum_group_size_is_set_by_env_and_never_below_two() {
    assert_eq!(Config::default().analytics.min_group_size, 5);
    let config = Config::load(None, env(&[("SIGHTLINE_ANALYTICS_MIN_GROUP_SIZE", "8")]), &Overrides::default());
    assert_eq!(config.unwrap().analytics.min_group_size, 8);
    let err = Config::load(None, env(&[("SIGHTLINE_ANALYTICS_MIN_GROUP_SIZE", "1")]), &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("analytics.min_group_size must be between 2 and 1000, got 1"), "{err}");
}

#[test]
fn one_key_of_a_section_keeps_the_others_defaults() {
    let api = ("SIGHTLINE_AUTH_GITHUB_API_URL", "http://127.0.0.1:9000");
    let config = Config::load(None, env(&[api, ("SIGHTLINE_GITHUB_APP_ID", "12")]), &Overrides::default());
    let err = config.as_ref().err().map(ToString::to_string);
    assert_eq!(
        err.as_deref(),
        Some("invalid configuration: github.app_id and github.private_key_path are set together or not at all")
    );
    let config =
        Config::load(None, env(&[api, ("SIGHTLINE_GITHUB_PROCESS_DELIVERIES", "false")]), &Overrides::default())
            .unwrap();
    assert_eq!(config.auth.github_url, "https://github.com", "not emptied by the other [auth] key");
    assert!(!config.github.process_deliveries);
    assert_eq!(config.github.issue_key_pattern, Github::default().issue_key_pattern);
    let err = Config::load(None, env(&[("SIGHTLINE_GITHUB_PROCESS_DELIVERIES", "sometimes")]), &Overrides::default())
        .unwrap_err()
        .to_string();
    assert!(err.contains("SIGHTLINE_GITHUB_PROCESS_DELIVERIES"), "{err}");
}

#[test]
fn colliding_listeners_are_refused_but_port_zero_is_fine() {
    let same: SocketAddr = "127.0.0.1:5000".parse().unwrap();
    let overrides = Overrides { ingest_addr: Some(same), web_addr: Some(same), ..Default::default() };
    assert!(Config::load(None, env(&[]), &overrides).is_err());
    let zero: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let overrides =
        Overrides { ingest_addr: Some(zero), web_addr: Some(zero), github_addr: Some(zero), ..Default::default() };
    assert!(Config::load(None, env(&[]), &overrides).is_ok());
}

#[test]
fn hard_cap_must_exceed_soft_cap() {
    let mut config = Config::default();
    config.storage.wal_hard_cap_mb = config.storage.wal_soft_cap_mb;
    assert!(config.validate().unwrap_err().to_string().contains("wal_hard_cap_mb"));
}

#[test]
fn settings_of_the_services_outside_are_typed_and_unknown_variables_are_named() {
    let loaded = Config::load(
        Some(Path::new("/dev/null")),
        env(&[
            ("SIGHTLINE_JUDGE_DAILY_CAP_USD", " 2.5 "),
            ("SIGHTLINE_JUDGE_KEY", "sk-judge-secret"),
            ("SIGHTLINE_BILLING_RECONCILIATION_ENABLED", "Yes"),
            ("SIGHTLINE_ALERT_SMTP_URL", "smtps://user:pass@mail.example"),
            ("SIGHTLINE_JIRA_URLS", "https://typo.example"),
            ("SIGHTLINE_HOOK_TOKEN", "a command's own variable"),
            ("HOME", "/home/someone"),
        ]),
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(loaded.judge.daily_cap_usd, 2.5);
    assert!(loaded.billing.reconciliation_enabled);
    assert_eq!(loaded.unknown_variables, vec!["SIGHTLINE_JIRA_URLS".to_string()]);
    let shown = format!("{loaded:#?}");
    assert!(!shown.contains("sk-judge-secret") && !shown.contains("user:pass"), "secrets stay hidden: {shown}");
    let err = Config::load(
        Some(Path::new("/dev/null")),
        env(&[("SIGHTLINE_BILLING_DRIFT_TOLERANCE_PCT", "five")]),
        &Overrides::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("SIGHTLINE_BILLING_DRIFT_TOLERANCE_PCT"), "{err}");
}

#[test]
fn the_otlp_settings_are_read_from_the_environment_and_checked() {
    let config = Config::load(
        None,
        env(&[("SIGHTLINE_INGEST_OTLP_PATH_PREFIX", "/collector"), ("SIGHTLINE_LISTEN_OTLP_GRPC", "127.0.0.1:4317")]),
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(config.ingest.otlp_path_prefix, "/collector");
    assert_eq!(config.listen.otlp_grpc_addr().unwrap(), Some("127.0.0.1:4317".parse().unwrap()));
    assert_eq!(Config::default().listen.otlp_grpc_addr().unwrap(), None, "no gRPC listener unless asked");
    for (variable, value, named) in [
        ("SIGHTLINE_INGEST_OTLP_PATH_PREFIX", "otel/", "ingest.otlp_path_prefix"),
        ("SIGHTLINE_INGEST_OTLP_PATH_PREFIX", "/v1", "ingest.otlp_path_prefix"),
        ("SIGHTLINE_LISTEN_OTLP_GRPC", "localhost", "listen.otlp_grpc"),
        ("SIGHTLINE_LISTEN_OTLP_GRPC", "127.0.0.1:4000", "listen.ingest and listen.otlp_grpc"),
    ] {
        let err = Config::load(None, env(&[(variable, value)]), &Overrides::default()).unwrap_err().to_string();
        assert!(err.contains(named), "{variable}={value}: {err}");
    }
}
