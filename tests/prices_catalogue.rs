//! Prices that keep up with the vendors (issue 53), on the real binary: a model no table
//! prices is never silently $0 (its tokens, by kind, and the cost its agent reported are
//! listed on `/admin/health` and `/admin/price-tables` until a price arrives).

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
