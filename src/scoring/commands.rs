//! What a session's transcript adds to its events: the command line of each shell call.
//! An event keeps only a digest of a tool's input and the program's name (`cargo`), so it
//! cannot tell `cargo test` from `cargo build`; the stored transcript can. A call is found
//! in its transcript by the agent's call id (Claude Code's `toolu_…`, Codex's `call_…`),
//! else by the digest of its input (Gemini CLI gives no id, and digests the same JSON),
//! and the command is read from the usual fields of the agents' shell tools.
//!
//! Invariants: nothing of a transcript leaves this module but "this call ran tests" or
//! "it did not"; a call the transcript does not hold (no transcript, redacted input, an
//! agent that digests differently) is decided by the program's name, as without one.

use std::collections::HashMap;

use serde_json::Value;

use crate::model::{json_digest, sha256};
use crate::transcripts::model::Message;

/// Command lines of a transcript's tool calls, by the digest of the call's input.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Commands {
    by_id: HashMap<String, String>,
    by_input: HashMap<[u8; 32], String>,
}

impl Commands {
    /// Every call of `messages` that carries a command line.
    pub fn of_transcript(messages: &[Message]) -> Commands {
        let (mut by_id, mut by_input) = (HashMap::new(), HashMap::new());
        for call in messages.iter().flat_map(|m| &m.tool_calls) {
            let parsed = serde_json::from_str::<Value>(&call.input).ok();
            let Some(command) = command_line(parsed.as_ref(), &call.input) else { continue };
            if let Some(id) = &call.id {
                by_id.insert(id.clone(), command.clone());
            }
            // The hooks digest the input as the agent sent it: a JSON object (Claude Code,
            // Gemini CLI) or a string of JSON text (Codex's arguments). Either may match.
            by_input.insert(sha256(call.input.as_bytes()), command.clone());
            if let Some(value) = parsed {
                by_input.insert(json_digest(&value).0, command);
            }
        }
        Commands { by_id, by_input }
    }

    /// Whether the call with this id (or, failing that, input digest) ran tests; `None`
    /// if the transcript does not hold it.
    pub fn runs_tests(&self, use_id: Option<&str>, input: Option<&[u8; 32]>) -> Option<bool> {
        let by_id = use_id.and_then(|id| self.by_id.get(id));
        let command = by_id.or_else(|| input.and_then(|digest| self.by_input.get(digest)))?;
        Some(runs_tests(command))
    }
}

/// The command line of a shell call's input: `command` or `cmd`, as a string or as an
/// argument list (`["bash", "-lc", "cargo test"]` is its script). Input that is not JSON
/// is a command line already (Codex's local shell records the words).
fn command_line(parsed: Option<&Value>, raw: &str) -> Option<String> {
    let Some(value) = parsed else {
        return (!raw.trim().is_empty()).then(|| raw.trim().to_string());
    };
    let field = ["command", "cmd"].iter().find_map(|key| value.get(key))?;
    match field {
        Value::String(line) => Some(line.clone()),
        Value::Array(words) => {
            let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [shell, flag, script] if is_shell(shell) && flag.starts_with('-') && flag.contains('c') => {
                    Some(script.to_string())
                }
                _ => Some(words.join(" ")),
            }
        }
        _ => None,
    }
}

fn is_shell(program: &str) -> bool {
    matches!(program.rsplit('/').next(), Some("bash" | "sh" | "zsh" | "dash" | "fish"))
}

/// Words that only wrap the command they precede.
const WRAPPERS: [&str; 8] = ["sudo", "time", "env", "nice", "nohup", "command", "exec", "xvfb-run"];

/// Whether a command line runs a test suite: any of its commands (split at `&&`, `||`,
/// `;`, `|` and new lines), once environment assignments and wrappers (`timeout 60`,
/// `uv run`, `npx`, `python -m`) are set aside, is a test runner or a package manager's
/// test script. `cargo build`, `npm run build` and `go vet` are not.
pub fn runs_tests(line: &str) -> bool {
    line.split(['\n', ';', '|', '&']).any(|part| {
        let words: Vec<&str> = part.split_whitespace().collect();
        is_test_command(unwrap(&words))
    })
}

/// The words of a command without its leading assignments and wrappers.
fn unwrap<'a, 'b>(mut words: &'a [&'b str]) -> &'a [&'b str] {
    loop {
        match words {
            [first, rest @ ..] if first.contains('=') && !first.starts_with('-') => words = rest,
            [first, rest @ ..] if WRAPPERS.contains(first) => words = rest,
            // `timeout [options] DURATION command`.
            ["timeout", rest @ ..] => {
                let duration_at = rest.iter().position(|w| !w.starts_with('-')).unwrap_or(rest.len());
                words = rest.get(duration_at + 1..).unwrap_or(&[]);
            }
            ["uv" | "poetry" | "pipenv" | "hatch" | "pdm" | "rye", "run", rest @ ..] => words = rest,
            ["npx" | "bunx" | "pnpx", rest @ ..] => words = rest,
            ["pnpm" | "yarn", "exec" | "dlx", rest @ ..] => words = rest,
            ["python" | "python3" | "py", "-m", rest @ ..] => words = rest,
            ["bundle", "exec", rest @ ..] => words = rest,
            _ => return words,
        }
    }
}

fn is_test_command(words: &[&str]) -> bool {
    let Some((program, args)) = words.split_first() else { return false };
    let program = program.rsplit('/').next().unwrap_or(program);
    let sub = args.iter().copied().find(|a| !a.starts_with('-'));
    // A script or target named for tests: `test`, `t`, `test:unit`, `unit-test`.
    let named_test = |word: &str| {
        word == "t" || word.starts_with("test") || [":test", "-test", "_test"].iter().any(|end| word.ends_with(end))
    };
    match program {
        "pytest" | "py.test" | "tox" | "nox" | "jest" | "vitest" | "mocha" | "ava" | "tap" | "rspec" | "phpunit"
        | "ctest" | "unittest" | "nextest" | "playwright" | "cypress" | "karma" | "bats" | "prove" => true,
        "cargo" => matches!(sub, Some("test" | "t" | "nextest" | "tarpaulin" | "llvm-cov" | "miri")),
        "go" | "dotnet" | "swift" | "deno" | "bun" | "mix" | "lein" | "zig" | "dart" | "flutter" => sub == Some("test"),
        // `npm test`, `npm run test:unit`, and (yarn, pnpm) a test runner by its name.
        "npm" | "pnpm" | "yarn" => match sub {
            Some("run" | "run-script") => {
                args.iter().skip_while(|a| !matches!(**a, "run" | "run-script")).nth(1).is_some_and(|s| named_test(s))
            }
            Some(script) => named_test(script) || is_test_command(&[script]),
            None => false,
        },
        "make" | "just" | "task" | "rake" => {
            args.iter().any(|target| !target.starts_with('-') && (named_test(target) || *target == "check"))
        }
        "mvn" | "mvnw" | "gradle" | "gradlew" | "sbt" | "bazel" | "bazelisk" => args
            .iter()
            .any(|goal| matches!(*goal, "test" | "verify" | "check" | "integrationTest") || goal.ends_with(":test")),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcripts::parse::parse;

    #[test]
    fn test_runs_are_told_from_builds() {
        for line in [
            "cargo test",
            "cargo test login -- --nocapture",
            "cd crates/api && cargo nextest run",
            "RUST_LOG=debug cargo test -p core",
            "timeout 600 cargo test",
            "pytest -x tests/test_parser.py",
            "uv run pytest",
            "python -m pytest -q",
            "npm test",
            "npm run test:unit",
            "pnpm test -- --watch=false",
            "yarn jest src",
            "npx vitest run",
            "go test ./...",
            "make check",
            "./gradlew test",
            "mvn -q verify",
            "bundle exec rspec",
            "dotnet test",
            "cargo build && cargo test",
            "git stash; pytest | tail -5",
        ] {
            assert!(runs_tests(line), "{line} runs tests");
        }
        for line in [
            "cargo build --release",
            "cargo clippy -- -D warnings",
            "npm run build",
            "npm install",
            "go vet ./...",
            "make",
            "make install",
            "ls tests/",
            "cat test_output.log",
            "git commit -m 'test'",
            "grep -r test src",
            "",
        ] {
            assert!(!runs_tests(line), "{line} runs no tests");
        }
    }

    #[test]
    fn a_command_is_read_from_each_shape_of_shell_input() {
        let of = |raw: &str| command_line(serde_json::from_str(raw).ok().as_ref(), raw);
        assert_eq!(of(r#"{"command":"cargo test"}"#).as_deref(), Some("cargo test"));
        assert_eq!(
            of(r#"{"command":["bash","-lc","go test ./..."],"workdir":"/w"}"#).as_deref(),
            Some("go test ./...")
        );
        assert_eq!(of(r#"{"cmd":"pytest -q"}"#).as_deref(), Some("pytest -q"));
        assert_eq!(of(r#"{"command":["pytest","-q"]}"#).as_deref(), Some("pytest -q"));
        assert_eq!(of(r#"{"file_path":"src/lib.rs"}"#), None);
        assert_eq!(of("npm test"), Some("npm test".into()));
    }

    /// A call is found by the digest the hook recorded: of the input object with its keys
    /// sorted (Claude Code, Gemini CLI), or of the arguments string (Codex).
    #[test]
    fn calls_are_found_by_the_digest_the_hooks_record() {
        let claude = r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"description":"run","command":"cargo test"}}]}}"#;
        let commands = Commands::of_transcript(&parse("claude_code", claude));
        let hook_digest = json_digest(&serde_json::json!({"command": "cargo test", "description": "run"})).0;
        assert_eq!(commands.runs_tests(None, Some(&hook_digest)), Some(true));
        assert_eq!(commands.runs_tests(Some("t1"), None), Some(true));
        assert_eq!(commands.runs_tests(Some("t2"), Some(&[0; 32])), None);

        let arguments = r#"{"command":["bash","-lc","cargo build"]}"#;
        let codex = serde_json::json!({"type":"response_item","payload":{"type":"function_call","name":"shell",
            "arguments": arguments, "call_id":"c1"}})
        .to_string();
        let commands = Commands::of_transcript(&parse("codex", &codex));
        assert_eq!(commands.runs_tests(None, Some(&json_digest(&Value::String(arguments.into())).0)), Some(false));
        assert_eq!(commands.runs_tests(Some("c1"), None), Some(false));
    }
}
