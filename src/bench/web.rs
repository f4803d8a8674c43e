//! `sightline bench web`: latency of a running server's own pages for one signed-in
//! person — `/me` (30 and 90 days), `/me/sessions` (pages and sorts), a session's
//! timeline, `/me/insights`, every `/org` page (30 and 90 days), and every page of the
//! first team the person may open (`/team/<slug>/*`, 30 and 90 days, and its roster),
//! `/install`, and every `/admin` page when the person is an administrator —
//! p50/p95/p99/max over N requests
//! each, measured from
//! request to full body, the way a browser would wait for them. Run it against a demo
//! organisation (`sightline demo`) to measure the spec's web targets.

use std::io::BufRead;
use std::time::{Duration, Instant};

use clap::Args;

#[derive(Debug, Clone, Args)]
pub struct WebBenchArgs {
    /// Base URL of the web listener, e.g. http://127.0.0.1:3000.
    #[arg(long)]
    pub url: String,
    /// Who to sign in as (with the password on standard input).
    #[arg(long)]
    pub email: String,
    /// Requests per page.
    #[arg(long, default_value_t = 200)]
    pub requests: usize,
    /// Only the pages whose name contains this, e.g. `/admin`.
    #[arg(long)]
    pub only: Option<String>,
}

type UrlFor = Box<dyn Fn(usize) -> String>;

pub fn run(args: &WebBenchArgs) -> anyhow::Result<i32> {
    let mut password = String::new();
    std::io::stdin().lock().read_line(&mut password)?;
    let password = password.trim_end_matches(['\r', '\n']);
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .max_redirects(0)
        .build()
        .new_agent();
    let base = args.url.trim_end_matches('/').to_string();
    let mut response = agent.post(format!("{base}/oauth/token")).send_form([
        ("grant_type", "password"),
        ("username", args.email.as_str()),
        ("password", password),
    ])?;
    let answer: serde_json::Value = serde_json::from_str(&response.body_mut().read_to_string()?)?;
    let token = answer["access_token"]
        .as_str()
        .ok_or_else(|| anyhow::anyhow!("sign-in of {} failed: {answer}", args.email))?
        .to_string();
    let fetch = |url: &str| -> anyhow::Result<(u16, String, f64)> {
        let started = Instant::now();
        let mut response =
            agent.get(url).header("Authorization", format!("Bearer {token}")).header("Accept", "text/html").call()?;
        let status = response.status().as_u16();
        let body = response.body_mut().with_config().limit(64 << 20).read_to_string()?;
        Ok((status, body, started.elapsed().as_secs_f64() * 1000.0))
    };
    // A session to open: the list's first.
    let (status, list, _) = fetch(&format!("{base}/me/sessions?sort=cost"))?;
    anyhow::ensure!(status == 200, "GET /me/sessions answered {status}");
    let total: usize = list
        .split(" sessions ·")
        .next()
        .and_then(|head| head.rsplit('>').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    let session = list.split("href=\"/sessions/").nth(1).and_then(|rest| rest.split('"').next()).map(str::to_string);
    let pages = total.div_ceil(50).max(1);
    println!("{} has {total} sessions ({pages} pages of the list); {} requests per page", args.email, args.requests);
    let sorts = ["started", "cost", "duration", "events", "tools", "friction"];
    // A team to open: the first of the list the person may see (with a team tree, a parent).
    let (status, teams, _) = fetch(&format!("{base}/team"))?;
    anyhow::ensure!(status == 200, "GET /team answered {status}");
    let team = teams.split("<td><a href=\"/team/").nth(1).and_then(|rest| rest.split('"').next()).map(str::to_string);
    let own_pages: Vec<(&str, UrlFor)> = vec![
        (
            "/me (30 days)",
            Box::new({
                let base = base.clone();
                move |_| format!("{base}/me")
            }),
        ),
        (
            "/me (90 days)",
            Box::new({
                let base = base.clone();
                move |_| format!("{base}/me?days=90")
            }),
        ),
        (
            "/me/sessions",
            Box::new({
                let base = base.clone();
                move |i| format!("{base}/me/sessions?sort={}&page={}", sorts[i % sorts.len()], i % pages + 1)
            }),
        ),
        (
            "/me/insights",
            Box::new({
                let base = base.clone();
                move |_| format!("{base}/me/insights")
            }),
        ),
    ];
    let mut scenarios: Vec<(String, UrlFor)> =
        own_pages.into_iter().map(|(name, url_for)| (name.to_string(), url_for)).collect();
    // A person with no session of their own (an administrator, finance) has none to open.
    if let Some(session) = session {
        let base = base.clone();
        scenarios.insert(3, ("/sessions/{id}".into(), Box::new(move |_| format!("{base}/sessions/{session}"))));
    }
    // Every organisation page at 30 and 90 days (search with a query, benchmarks once).
    let org_pages = [
        "",
        "/adoption",
        "/delivery",
        "/teams",
        "/tools",
        "/tool-servers",
        "/skills",
        "/agents",
        "/models",
        "/governance",
        "/roi",
        "/security",
        "/knowledge",
        "/search?q=test",
    ];
    for page in org_pages {
        for days in [30, 90] {
            let base = base.clone();
            let joint = if page.contains('?') { '&' } else { '?' };
            scenarios.push((
                format!("/org{page} ({days} days)"),
                Box::new(move |_| format!("{base}/org{page}{joint}days={days}")),
            ));
        }
    }
    let org_base = base.clone();
    scenarios.push(("/org/benchmarks".into(), Box::new(move |_| format!("{org_base}/org/benchmarks"))));
    // Calendar months have no rolling period.
    let org_base = base.clone();
    scenarios.push(("/org/months".into(), Box::new(move |_| format!("{org_base}/org/months"))));
    if let Some(team) = team {
        let team_pages = ["", "/sessions", "/pulls", "/adoption", "/tools", "/tool-servers", "/agents", "/skills"];
        for page in team_pages {
            for days in [30, 90] {
                let (base, team) = (base.clone(), team.clone());
                scenarios.push((
                    format!("/team/{team}{page} ({days} days)"),
                    Box::new(move |_| format!("{base}/team/{team}{page}?days={days}")),
                ));
            }
        }
        let (months_base, months_team) = (base.clone(), team.clone());
        scenarios.push((
            format!("/team/{team}/months"),
            Box::new(move |_| format!("{months_base}/team/{months_team}/months")),
        ));
        let base = base.clone();
        scenarios.push((format!("/team/{team}/roster"), Box::new(move |_| format!("{base}/team/{team}/roster"))));
    }
    // The console, for an administrator (anyone else is refused it), and the install page.
    let (status, _, _) = fetch(&format!("{base}/admin/slo"))?;
    let mut console = vec!["/install"];
    if status == 200 {
        console.extend([
            "/admin/jobs",
            "/admin/health",
            "/admin/people",
            "/admin/teams",
            "/admin/price-tables",
            "/admin/retention",
            "/admin/access-grants",
            "/admin/adapters",
            "/admin/alerts",
            "/admin/slo",
        ]);
    }
    for page in console {
        let base = base.clone();
        scenarios.push((page.to_string(), Box::new(move |_| format!("{base}{page}"))));
    }
    if let Some(only) = &args.only {
        scenarios.retain(|(name, _)| name.contains(only.as_str()));
    }
    println!("{:<40} {:>9} {:>9} {:>9} {:>9} {:>10}", "page", "p50 ms", "p95 ms", "p99 ms", "max ms", "bytes");
    let mut failed = false;
    for (name, url_for) in scenarios {
        let mut times = Vec::with_capacity(args.requests);
        let mut bytes = 0;
        for i in 0..args.requests.max(1) {
            let (status, body, ms) = fetch(&url_for(i))?;
            if status != 200 {
                failed = true;
                eprintln!("{name}: {} answered {status}", url_for(i));
            }
            bytes = body.len();
            times.push(ms);
        }
        times.sort_by(f64::total_cmp);
        let at = |p: f64| super::nearest_rank(&times, p).unwrap_or(0.0);
        println!("{name:<40} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {bytes:>10}", at(0.50), at(0.95), at(0.99), at(1.0));
    }
    Ok(if failed { 1 } else { 0 })
}
