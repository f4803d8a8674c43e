//! The redaction corpus: generated vendor keys and header credentials, each embedded in
//! the five line shapes where coding agents meet them (prose, a curl header, JSON, YAML,
//! a shell export), and near misses that must come through untouched.

use serde_json::json;

/// One line carrying a secret: the secret (which must be gone) and the line.
pub struct Planted {
    pub family: &'static str,
    pub shape: &'static str,
    pub secret: String,
    pub line: String,
}

const ALNUM: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const URLSAFE: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
const LETTERS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const HEX: &[u8] = b"0123456789abcdef";

fn random(rng: &mut fastrand::Rng, alphabet: &[u8], len: usize) -> String {
    (0..len).map(|_| alphabet[rng.usize(..alphabet.len())] as char).collect()
}

/// One generated secret of each family (fresh random bodies per call).
fn secrets(rng: &mut fastrand::Rng) -> Vec<(&'static str, String)> {
    vec![
        ("anthropic", format!("sk-ant-api03-{}AA", random(rng, URLSAFE, 93))),
        ("anthropic_admin", format!("sk-ant-admin01-{}AA", random(rng, URLSAFE, 93))),
        ("openai_project", format!("sk-proj-{}T3BlbkFJ{}", random(rng, URLSAFE, 74), random(rng, URLSAFE, 20))),
        ("openai_service_account", format!("sk-svcacct-{}", random(rng, URLSAFE, 120))),
        ("openai_admin", format!("sk-admin-{}", random(rng, URLSAFE, 80))),
        ("openai_legacy", format!("sk-{}T3BlbkFJ{}", random(rng, ALNUM, 20), random(rng, ALNUM, 20))),
        ("google_ai", format!("AIza{}", random(rng, URLSAFE, 35))),
        ("stripe_live", format!("sk_live_{}", random(rng, ALNUM, 24))),
        ("stripe_restricted", format!("rk_live_{}", random(rng, ALNUM, 99))),
        ("hugging_face", format!("hf_{}", random(rng, LETTERS, 34))),
        ("npm", format!("npm_{}", random(rng, ALNUM, 36))),
        ("pypi", format!("pypi-AgEIcHlwaS5vcmc{}", random(rng, URLSAFE, 70))),
        ("docker_hub", format!("dckr_pat_{}", random(rng, URLSAFE, 27))),
        ("bearer_opaque", random(rng, ALNUM, 40)),
        ("github", format!("ghp_{}", random(rng, ALNUM, 36))),
    ]
}

/// Every family in every shape, `rounds` times with fresh bodies.
pub fn corpus(seed: u64, rounds: usize) -> Vec<Planted> {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut out = Vec::new();
    for _ in 0..rounds {
        for (family, secret) in secrets(&mut rng) {
            for (shape, line) in shapes(family, &secret) {
                out.push(Planted { family, shape, secret: secret.clone(), line });
            }
        }
    }
    out
}

/// The five shapes of one secret. Opaque bearer tokens have no format of their own, so
/// every shape names them as a header credential.
fn shapes(family: &str, secret: &str) -> Vec<(&'static str, String)> {
    if family == "bearer_opaque" {
        return vec![
            ("prose", format!("the request had Authorization: Bearer {secret} and still got a 401")),
            ("curl", format!(r#"curl https://api.example.com/v1/items -H "Authorization: Bearer {secret}""#)),
            ("json", json!({"headers": {"Authorization": format!("Bearer {secret}")}}).to_string()),
            ("yaml", format!("headers:\n  x-api-key: {secret}\n")),
            ("shell", format!("export AUTH_HEADER=\"x-api-key: {secret}\"")),
        ];
    }
    let header = match family {
        f if f.starts_with("anthropic") => format!(r#"-H "x-api-key: {secret}""#),
        "google_ai" => format!(r#"-H "x-goog-api-key: {secret}""#),
        _ => format!(r#"-H "Authorization: Bearer {secret}""#),
    };
    vec![
        ("prose", format!("the key {secret} stopped working after rotation")),
        ("curl", format!("curl https://api.example.com/v1/messages {header} -d @body.json")),
        ("json", json!({"config": {"client": "cli", "key": format!("{secret}")}, "note": "rotated"}).to_string()),
        ("yaml", format!("provider:\n  name: {family}\n  credential: {secret}\n")),
        ("shell", format!("export {}_KEY={secret}", family.to_ascii_uppercase())),
    ]
}

/// Clean lines a coding agent writes every day, and near misses of every new pattern.
pub const CLEAN: &[&str] = &[
    "git checkout 4b825dc642cb6eb9a060e54bf8d69288fbee4904 -- src/main.rs",
    "request id 550e8400-e29b-41d4-a716-446655440000 took 120 ms",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk",
    "open /home/dev/projects/sk-learn-demo/src/sk_live_checks.py",
    "echo $OPENAI_API_KEY | wc -c",
    r#"curl -H "Authorization: Bearer $ANTHROPIC_API_KEY" https://api.anthropic.com/v1/messages"#,
    r#"curl -H "x-api-key: ${ANTHROPIC_API_KEY}" https://api.anthropic.com/v1/models"#,
    r#"-H "Authorization: Bearer <token>""#,
    "set the Authorization: Bearer header before calling the API",
    "from huggingface_hub import hf_hub_download, snapshot_download",
    "pip install scikit-learn && python -m sklearn --version",
    "npm_config_cache=/tmp/npm npm ci",
    "stripe listen --forward-to localhost:4242/webhook --events sk_live_ prefix is documented",
    "docker login registry.example.com --username ci; dckr_pat_ tokens start like this",
    "pypi-AgE is how an upload token begins",
    "the azure region is eastus and the key vault is kv-prod",
    "version 1.2.3-rc.4+build.5 released",
];
