//! Prices that keep up with the vendors (issue 53), on the real binary: LiteLLM's price
//! catalogue of a pinned release (`tests/pins/litellm.txt`, fetched by scripts/test)
//! imported into new table revisions that price each agent's current default model, its
//! history priced again; a model no table prices is never silently $0 (its tokens, by
//! kind, and the cost its agent reported are listed on `/admin/health` and
//! `/admin/price-tables` until a price arrives).

use crate::common;

use common::*;

const ADMIN: &str = "root@example.com";

fn admin_page(server: &TestServer, token: &str, path: &str) -> String {
    let agent = ureq::Agent::config_builder().http_status_as_error(false).build().new_agent();
    let mut response =
        agent.get(format!("{}{path}", server.web)).header("Authorization", format!("Bearer {token}")).call().unwrap();
    assert_eq!(response.status().as_u16(), 200, "{path}");
    response.body_mut().read_to_string().unwrap()
}

/// The row of `section`'s table that names `model`.
fn row_of<'a>(body: &'a str, section: &str, model: &str) -> Option<&'a str> {
    let start = body.find(&format!("id=\"{section}\""))?;
    let section = &body[start..];
    let section = &section[..section.find("</section>").unwrap_or(section.len())];
    let at = section.find(&format!("<td>{model}</td>"))?;
    let row_start = section[..at].rfind("<tr").unwrap();
    Some(&section[row_start..at + section[at..].find("</tr>").unwrap()])
}

#[test]
fn an_unpriced_models_tokens_and_reported_cost_are_shown_to_administrators() {
    let server = TestServer::spawn();
    add_user(&server.data_dir, ADMIN, "ADMIN");
    let admin = access_token(&server, ADMIN);
    // Two requests of a model no embedded table prices, one with the cost Claude Code
    // reported, and one of a priced model.
    let mut events = Vec::new();
    for (n, cost) in [(0, Some(0.0125)), (1, None)] {
        let mut turn = event("turn_end", "unpriced", now_ms() - 60_000 + n * 1_000);
        turn["model"] = serde_json::json!("claude-nova-9-preview");
        turn["usage"] = serde_json::json!({"input_tokens": 1200, "output_tokens": 300, "cache_read_tokens": 5000,
                                           "cache_write_5m_tokens": 100, "reasoning_tokens": 40});
        if let Some(cost) = cost {
            turn["client_cost_usd"] = serde_json::json!(cost);
        }
        events.push(turn);
    }
    events.push(event("turn_end", "priced", now_ms() - 30_000));
    let (status, answer) = server.post_events(&server.token, &envelope(events));
    assert_eq!(status, 200, "{answer}");

    let health = admin_page(&server, &admin, "/admin/health");
    let check = &health[health.find(">Prices</a>").expect("a Prices check")..];
    let check = &check[..check.find("</tr>").unwrap()];
    assert!(check.contains("<td>problem</td>"), "{check}");
    assert!(
        check.contains("1 model(s) without a price, 13,280 tokens counted at $0 (claude-nova-9-preview)"),
        "{check}"
    );
    // The organisation's cost figures say what they leave out.
    let org = admin_page(&server, &admin, "/org");
    let note = &org[org.find("id=\"unpriced-note\"").unwrap_or_else(|| panic!("the note: {org}"))..];
    let note = &note[..note.find("</p>").unwrap()];
    assert!(
        note.contains("leave out 13,280 tokens of a model without a price (claude-nova-9-preview), counted at $0"),
        "{note}"
    );
    for page in ["/admin/health", "/admin/price-tables"] {
        let body = admin_page(&server, &admin, page);
        let row = row_of(&body, "unpriced", "claude-nova-9-preview").unwrap_or_else(|| panic!("{page}: {body}"));
        let cells: Vec<&str> = row.split("<td").skip(1).map(|cell| cell.split_once('>').unwrap().1).collect();
        let cells: Vec<&str> = cells.iter().map(|cell| cell.split("</td>").next().unwrap()).collect();
        assert_eq!(
            &cells[..9],
            ["claude_code", "claude-nova-9-preview", "2", "2,400", "600", "10,000", "200", "80", "$0.01"],
            "{page}: {row}"
        );
        assert!(
            row_of(&body, "unpriced", "claude-sonnet-4-5-20250929").is_none(),
            "{page}: a priced model is not listed"
        );
    }
}

/// The pinned release's catalogue file, which scripts/test fetches.
fn catalogue() -> (std::path::PathBuf, serde_json::Value) {
    let path = std::env::var_os("SIGHTLINE_LITELLM_CATALOGUE").map(std::path::PathBuf::from).expect(
        "SIGHTLINE_LITELLM_CATALOGUE names the pinned LiteLLM catalogue: run the tests with scripts/test, which fetches it",
    );
    let value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    (path, value)
}

/// What `usage` costs at the catalogue entry `key`'s per-token prices, in nano-dollars
/// (a float sum, rounded: the server's integer arithmetic must agree to the nano-dollar).
fn catalogue_cost(catalogue: &serde_json::Value, key: &str, usage: &serde_json::Value) -> i64 {
    let entry = &catalogue[key];
    let price = |field: &str, or: &str| entry[field].as_f64().or_else(|| entry[or].as_f64()).unwrap();
    let count = |kind: &str| usage[kind].as_f64().unwrap_or(0.0);
    let input = price("input_cost_per_token", "input_cost_per_token");
    let write_5m = entry["cache_creation_input_token_cost"].as_f64().unwrap_or(input);
    let usd = count("input_tokens") * input
        + count("output_tokens") * price("output_cost_per_token", "output_cost_per_token")
        + count("cache_read_tokens") * entry["cache_read_input_token_cost"].as_f64().unwrap_or(input)
        + count("cache_write_5m_tokens") * write_5m
        + count("cache_write_1h_tokens")
            * entry["cache_creation_input_token_cost_above_1hr"].as_f64().unwrap_or(write_5m)
        + count("reasoning_tokens")
            * entry["output_cost_per_reasoning_token"]
                .as_f64()
                .unwrap_or(price("output_cost_per_token", "output_cost_per_token"));
    (usd * 1e9).round() as i64
}

fn session_cost(server: &TestServer, session: &str) -> i64 {
    server
        .main_db()
        .query_row("SELECT cost_nusd FROM sessions WHERE agent_session_id = ?1", [session], |r| r.get(0))
        .unwrap()
}

/// A request of `model` by `agent` in `session`, with the usage an agent of that vendor reports.
fn request(agent: &str, session: &str, model: &str, ts_ms: i64) -> serde_json::Value {
    let mut turn = event("turn_end", session, ts_ms);
    turn["agent_type"] = serde_json::json!(agent);
    turn["model"] = serde_json::json!(model);
    if agent != "claude_code" {
        // OpenAI and Google bill no cache writes.
        turn["usage"] = serde_json::json!({"input_tokens": 20000, "output_tokens": 1500, "cache_read_tokens": 60000, "reasoning_tokens": 800});
    }
    turn
}

#[test]
fn the_pinned_litellm_catalogue_prices_every_agents_default_model_and_its_history() {
    let (file, catalogue) = catalogue();
    let file = file.to_str().unwrap().to_string();
    let mut server = TestServer::spawn();
    let path = server.data_dir.to_str().unwrap().to_string();
    add_user(&server.data_dir, ADMIN, "ADMIN");
    // Claude Code's default model before any table prices it: counted, $0.
    let history = request("claude_code", "history", "claude-opus-5-5", now_ms() - 120_000);
    assert_eq!(server.post_events(&server.token, &envelope(vec![history.clone()])).0, 200);
    assert_eq!(session_cost(&server, "history"), 0);
    server.terminate();

    // Shown first, written only when asked.
    let shown = sightline(&["prices", "import", "--litellm", &file, "--data-dir", &path]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    let text = stdout(&shown);
    for (agent, model) in [
        ("claude_code", "claude-opus-5-5"),
        ("gemini_cli", "gemini-3.8-flash"),
        ("gemini_cli", "gemini-3.5-flash-lite"),
    ] {
        let section = &text[text.find(&format!("\n{agent} revision ")).unwrap_or_else(|| panic!("{agent}: {text}"))..];
        let section = &section[..section[1..].find("\n\n").map_or(section.len(), |end| end + 1)];
        assert!(
            section.lines().any(|line| line.starts_with(&format!("added\t{model}\t"))),
            "{agent} {model}: {section}"
        );
    }
    assert!(text.contains("nothing written: run again with --apply"), "{text}");
    assert!(!server.data_dir.join("price-tables").exists(), "nothing is written without --apply");

    let applied = sightline(&["prices", "import", "--litellm", &file, "--data-dir", &path, "--apply"]);
    assert!(applied.status.success(), "{}", stderr(&applied));
    assert!(stdout(&applied).contains("stored claude_code's table"), "{}", stdout(&applied));
    let check = sightline(&["prices", "check", "--data-dir", &path]);
    assert_eq!(check.status.code(), Some(0), "{}", stdout(&check));
    let audited: i64 = server
        .main_db()
        .query_row(
            "SELECT count(*) FROM audit_log WHERE action = 'PRICE_TABLE_UPLOADED' AND json_extract(detail, '$.source') = 'litellm'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(audited >= 3, "one audited revision per table the catalogue changed: {audited}");
    // The same catalogue again changes nothing.
    let again = sightline(&["prices", "import", "--litellm", &file, "--data-dir", &path]);
    assert!(stdout(&again).contains("already price every model as the catalogue does"), "{}", stdout(&again));

    // After a restart, each agent's default model is priced as the catalogue prices it;
    // Codex's, which the catalogue does not list, is counted and shown unpriced.
    server.start();
    let now = now_ms() - 60_000;
    let requests = [
        ("claude_code", "opus", "claude-opus-5-5", "claude-opus-5-5"),
        ("gemini_cli", "flash", "gemini-3.8-flash", "gemini/gemini-3.8-flash"),
        ("gemini_cli", "router", "gemini-3.5-flash-lite", "gemini/gemini-3.5-flash-lite"),
    ];
    let mut events: Vec<serde_json::Value> = requests
        .iter()
        .enumerate()
        .map(|(n, (agent, session, model, _))| request(agent, session, model, now + n as i64))
        .collect();
    events.push(request("codex", "sol", "gpt-6.2-sol", now + 10));
    let (status, answer) = server.post_events(&server.token, &envelope(events.clone()));
    assert_eq!(status, 200, "{answer}");
    for ((_, session, model, key), sent) in requests.iter().zip(&events) {
        let expected = catalogue_cost(&catalogue, key, &sent["usage"]);
        assert!(expected > 0, "{key}");
        assert_eq!(session_cost(&server, session), expected, "{model} at the catalogue's prices");
    }
    assert_eq!(session_cost(&server, "sol"), 0);
    let admin = access_token(&server, ADMIN);
    let health = admin_page(&server, &admin, "/admin/health");
    assert!(row_of(&health, "unpriced", "gpt-6.2-sol").is_some(), "{health}");
    assert!(row_of(&health, "unpriced", "claude-opus-5-5").is_none(), "priced now: {health}");
    server.terminate();

    // The history is priced once the price is in force.
    let repriced = sightline(&["jobs", "run", "--data-dir", &path, "reprice-events-apply"]);
    assert!(repriced.status.success(), "{}", stderr(&repriced));
    assert_eq!(session_cost(&server, "history"), catalogue_cost(&catalogue, "claude-opus-5-5", &history["usage"]));
}

/// Posts `file` as the `catalogue` field of a `multipart/form-data` form, as a browser's
/// file chooser sends it: (status, body).
fn upload(server: &TestServer, token: &str, file: &[u8]) -> (u16, String) {
    let boundary = "----sightline-conformance-7d3f";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"catalogue\"; filename=\"model_prices_and_context_window.json\"\r\nContent-Type: application/json\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(file);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let agent = ureq::Agent::config_builder().http_status_as_error(false).max_redirects(0).build().new_agent();
    let mut response = agent
        .post(format!("{}/admin/price-tables/catalogue", server.web))
        .header("Authorization", format!("Bearer {token}"))
        .header("Content-Type", format!("multipart/form-data; boundary={boundary}"))
        .send(&body[..])
        .unwrap();
    (response.status().as_u16(), response.body_mut().read_to_string().unwrap())
}

#[test]
fn an_administrator_uploads_the_catalogue_sees_its_changes_and_applies_them_audited() {
    let (file, _) = catalogue();
    let bytes = std::fs::read(&file).unwrap();
    let server = TestServer::spawn();
    add_user(&server.data_dir, ADMIN, "ADMIN");
    add_user(&server.data_dir, "mia@example.com", "MEMBER");
    let admin = access_token(&server, ADMIN);
    // Only an administrator: a member's upload is refused before its body is read (a
    // small body, so the refusal is read before the server closes the connection).
    let (status, _) = upload(&server, &access_token(&server, "mia@example.com"), b"{}");
    assert_eq!(status, 403);
    let (status, body) = upload(&server, &admin, b"{\"not\": \"litellm\"}");
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("sample_spec"), "the error names what is wrong: {body}");

    let (status, body) = upload(&server, &admin, &bytes);
    assert_eq!(status, 200, "{body}");
    let preview = row_of(&body, "catalogue-preview", "claude-opus-5-5").expect("Claude Code's default model is added");
    assert!(preview.contains("<td>added</td>") && preview.contains("<td>claude_code</td>"), "{preview}");
    assert!(
        !server.data_dir.join("price-tables/price-table.claude_code.v1.json").exists(),
        "a preview stores no table"
    );
    let sha = hex::encode(ring::digest::digest(&ring::digest::SHA256, &bytes));
    assert!(body.contains(&format!("name=\"sha256\" value=\"{sha}\"")), "the apply button names the file");

    // A made-up or path-like name is refused; the previewed file is applied.
    let agent = ureq::Agent::config_builder().http_status_as_error(false).max_redirects(0).build().new_agent();
    let apply = |sha: &str| {
        let response = agent
            .post(format!("{}/admin/price-tables/catalogue/apply", server.web))
            .header("Authorization", format!("Bearer {admin}"))
            .send_form([("sha256", sha)])
            .unwrap();
        let location = response.headers().get("location").map(|l| l.to_str().unwrap().to_string());
        (response.status().as_u16(), location.unwrap_or_default())
    };
    assert_eq!(apply("../../etc/passwd").0, 400);
    assert_eq!(apply(&"0".repeat(64)).0, 400, "no catalogue with that digest waits");
    let (status, location) = apply(&sha);
    assert_eq!(status, 303, "{location}");
    assert!(location.starts_with("/admin/price-tables?done="), "{location}");
    let stored = std::fs::read_to_string(server.data_dir.join("price-tables/price-table.claude_code.v1.json")).unwrap();
    assert!(stored.contains("\"claude-opus-5-5\"") && stored.contains(&sha), "the table names its catalogue");
    let audited: i64 = server
        .main_db()
        .query_row(
            "SELECT count(*) FROM audit_log WHERE action = 'PRICE_TABLE_UPLOADED' AND json_extract(detail, '$.source') = 'litellm'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(audited >= 3, "one audited revision per agent table the catalogue changed: {audited}");
    assert_eq!(std::fs::read_dir(server.data_dir.join("catalogue")).unwrap().count(), 0, "the waiting file is gone");
}
