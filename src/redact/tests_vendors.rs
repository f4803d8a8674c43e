//! Fixtures of the vendor-key and HTTP-header rules in the five contexts every rule has
//! (JSON, YAML, env file, shell export, prose), and the near misses they must leave alone.

use super::tests::{Case, case, fake};
use super::*;

const BODY: &str = "FAKEbody0123456789abcdefXYZ";

pub(super) fn positives() -> Vec<Case> {
    use Rule::*;
    let anthropic = fake("sk-ant-api03-", 93, "FAKE_anthropic-0123") + "AA";
    let openai = fake("sk-proj-", 74, "FAKEopenai_0123-") + "T3BlbkFJ" + &fake("", 20, BODY);
    let stripe = fake("sk_live_", 24, BODY);
    let hf = fake("hf_", 34, "FAKEhuggingfacetoken");
    let npm = fake("npm_", 36, BODY);
    let pypi = fake("pypi-AgEIcHlwaS5vcmc", 60, "FAKEpypi_0123-");
    let docker = fake("dckr_pat_", 27, "FAKE_docker-0123");
    let azure = fake("", 32, "0123456789abcdef");
    let bearer = fake("", 32, "FAKEopaque.token_0123");
    vec![
        case(AnthropicKey, "json", format!(r#"{{"note": "old key {anthropic}"}}"#), &anthropic),
        case(AnthropicKey, "yaml", format!("llm:\n  key: {anthropic}\n"), &anthropic),
        case(AnthropicKey, "env", format!("ANTHROPIC_API_KEY={anthropic}\n"), &anthropic),
        case(
            AnthropicKey,
            "shell",
            format!(r#"curl -H "x-api-key: {anthropic}" https://api.anthropic.com"#),
            &anthropic,
        ),
        case(AnthropicKey, "prose", format!("the key {anthropic} stopped working after rotation"), &anthropic),
        case(OpenAiKey, "json", format!(r#"{{"headers": "Authorization: Bearer {openai}"}}"#), &openai),
        case(OpenAiKey, "yaml", format!("openai:\n  api_key: {openai}\n"), &openai),
        case(OpenAiKey, "env", format!("OPENAI_API_KEY={openai}\n"), &openai),
        case(OpenAiKey, "shell", format!("export OPENAI_API_KEY='{openai}'"), &openai),
        case(OpenAiKey, "prose", format!("I pasted {openai} into the config by mistake."), &openai),
        case(StripeKey, "json", format!(r#"{{"stripe": "{stripe}"}}"#), &stripe),
        case(StripeKey, "yaml", format!("payments:\n  secret: {stripe}\n"), &stripe),
        case(StripeKey, "env", format!("STRIPE_SECRET_KEY={stripe}\n"), &stripe),
        case(StripeKey, "shell", format!("stripe login --api-key {stripe}"), &stripe),
        case(StripeKey, "prose", format!("Stripe live key: {stripe}"), &stripe),
        case(HuggingFaceToken, "json", format!(r#"{{"hf": "{hf}"}}"#), &hf),
        case(HuggingFaceToken, "yaml", format!("hub:\n  token: {hf}\n"), &hf),
        case(HuggingFaceToken, "env", format!("HF_TOKEN={hf}\n"), &hf),
        case(HuggingFaceToken, "shell", format!("huggingface-cli login --token {hf}"), &hf),
        case(HuggingFaceToken, "prose", format!("My token is {hf}, please revoke it."), &hf),
        case(NpmToken, "json", format!(r#"{{"npmAuth": "{npm}"}}"#), &npm),
        case(NpmToken, "yaml", format!("registry:\n  auth: {npm}\n"), &npm),
        case(NpmToken, "env", format!("NPM_TOKEN={npm}\n"), &npm),
        case(NpmToken, "shell", format!("echo //registry.npmjs.org/:_authToken={npm} >> ~/.npmrc"), &npm),
        case(NpmToken, "prose", format!("publish failed with {npm} as the token"), &npm),
        case(PypiToken, "json", format!(r#"{{"upload": "{pypi}"}}"#), &pypi),
        case(PypiToken, "yaml", format!("pypi:\n  password: {pypi}\n"), &pypi),
        case(PypiToken, "env", format!("TWINE_PASSWORD={pypi}\n"), &pypi),
        case(PypiToken, "shell", format!("twine upload -u __token__ -p {pypi} dist/*"), &pypi),
        case(PypiToken, "prose", format!("the upload token {pypi} was rejected"), &pypi),
        case(DockerHubToken, "json", format!(r#"{{"docker": "{docker}"}}"#), &docker),
        case(DockerHubToken, "yaml", format!("registry:\n  pat: {docker}\n"), &docker),
        case(DockerHubToken, "env", format!("DOCKERHUB_TOKEN={docker}\n"), &docker),
        case(DockerHubToken, "shell", format!("echo {docker} | docker login -u me --password-stdin"), &docker),
        case(DockerHubToken, "prose", format!("Use {docker} to pull the private image."), &docker),
        case(AzureKey, "json", format!(r#"{{"note": "azure openai key: {azure}"}}"#), &azure),
        case(AzureKey, "yaml", format!("azure_openai_key: {azure}\n"), &azure),
        case(AzureKey, "env", format!("AZURE_OPENAI_API_KEY={azure}\n"), &azure),
        case(AzureKey, "shell", format!("export AZURE_OPENAI_KEY=\"{azure}\""), &azure),
        case(AzureKey, "prose", format!("The Azure key is {azure} for the east-us deployment."), &azure),
        case(HttpCredential, "json", format!(r#"{{"log": "Authorization: Bearer {bearer}"}}"#), &bearer),
        case(HttpCredential, "yaml", format!("headers:\n  x-api-key: {bearer}\n"), &bearer),
        case(HttpCredential, "env", format!("CURL_HEADER=\"Authorization: Basic {bearer}\"\n"), &bearer),
        case(
            HttpCredential,
            "shell",
            format!("curl -H 'Authorization: token {bearer}' https://api.example.com"),
            &bearer,
        ),
        case(HttpCredential, "prose", format!("the request sent api-key: {bearer} and got 401"), &bearer),
    ]
}

#[test]
fn near_misses_of_vendor_keys_and_headers_are_left_alone() {
    let near_misses = [
        "pip install scikit-learn; import sklearn; sk-learn is not a package",
        "from huggingface_hub import hf_hub_download",
        "npm_config_registry=https://registry.npmjs.org",
        "sk_live_short and rk_test_ are prefixes only",
        "set the Authorization: Bearer header on every request",
        "Authorization: Bearer $OPENAI_API_KEY",
        "Authorization: Bearer ${TOKEN}",
        "-H \"Authorization: Bearer <token>\"",
        "x-api-key: $ANTHROPIC_API_KEY",
        "the azure deployment uses key vault",
        "commit 0123456789abcdef0123456789abcdef01234567 fixed it",
        "dckr_pat_ is the prefix of a Docker token",
        "pypi-AgE alone is not a token",
    ];
    for input in near_misses {
        assert_eq!(redact_text(input), input);
    }
}

#[test]
fn header_credentials_in_json_keep_the_scheme_and_vendor_labels() {
    let openai = fake("sk-proj-", 40, BODY);
    let mut value = serde_json::json!({"headers": {
        "Authorization": "Bearer opaque0123token",
        "x-api-key": openai,
        "Api-Key": "0123456789abcdef",
        "Proxy-Authorization": "Basic dXNlcjpwYXNz",
        "Accept": "application/json",
        "authorization": "Bearer $TOKEN",
    }});
    redact_json(&mut value);
    assert_eq!(
        value["headers"],
        serde_json::json!({
            "Authorization": "Bearer [REDACTED:http_credential]",
            "x-api-key": "[REDACTED:openai_key]",
            "Api-Key": "[REDACTED:http_credential]",
            "Proxy-Authorization": "Basic [REDACTED:http_credential]",
            "Accept": "application/json",
            "authorization": "Bearer $TOKEN",
        })
    );
}
