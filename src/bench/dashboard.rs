//! `sightline bench dashboard`: latency of a running dashboard's paged API (random
//! pages, filters and sorts) and of its run detail page, p50/p95/p99/max over N
//! requests each, measured from request to full body.

use std::time::{Duration, Instant};

use clap::Args;

use crate::model::percent_encode as encode;

#[derive(Debug, Clone, Args)]
pub struct DashboardBenchArgs {
    /// Base URL of the dashboard, e.g. http://127.0.0.1:8700.
    #[arg(long)]
    pub url: String,
    /// The run to read.
    #[arg(long)]
    pub run: String,
    /// Requests per scenario.
    #[arg(long, default_value_t = 200)]
    pub requests: usize,
    /// Bearer token, if the dashboard has one.
    #[arg(long, env = "SIGHTLINE_DASHBOARD_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

/// Builds the URL of the i-th request of a scenario.
type UrlFor<'a> = Box<dyn Fn(usize) -> String + 'a>;

fn percentile(sorted_ms: &[f64], p: f64) -> f64 {
    super::nearest_rank(sorted_ms, p).unwrap_or(0.0)
}

pub fn run(args: &DashboardBenchArgs) -> anyhow::Result<i32> {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .new_agent();
    let base = args.url.trim_end_matches('/');
    let encoded_run = encode(&args.run);
    let run = encoded_run.as_str();
    let fetch = |url: &str| -> anyhow::Result<(u16, usize, f64)> {
        let mut request = agent.get(url);
        if let Some(token) = &args.token {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let started = Instant::now();
        let mut response = request.call()?;
        let status = response.status().as_u16();
        let body = response.body_mut().with_config().limit(256 << 20).read_to_vec()?;
        Ok((status, body.len(), started.elapsed().as_secs_f64() * 1000.0))
    };
    let (status, _, _) = fetch(&format!("{base}/api/run/{run}?per_page=1"))?;
    anyhow::ensure!(status == 200, "GET /api/run/{} answered {status}", args.run);
    let page: serde_json::Value =
        serde_json::from_slice(&agent_body(&agent, &format!("{base}/api/run/{run}?per_page=1"), &args.token)?)?;
    let total = page["total"].as_u64().unwrap_or(0).max(1);
    let sorts = ["cell_id", "success", "total_cost", "latency_ms", "harness", "tokens"];
    let scenarios: Vec<(&str, UrlFor<'_>)> = vec![
        (
            "paged API, 50 per page, random page",
            Box::new(move |_| {
                format!("{base}/api/run/{run}?per_page=50&page={}", 1 + fastrand::u64(..total.div_ceil(50)))
            }),
        ),
        (
            "paged API, random sort and order",
            Box::new(move |i| {
                format!(
                    "{base}/api/run/{run}?per_page=50&page={}&sort={}&order={}",
                    1 + fastrand::u64(..20),
                    sorts[i % sorts.len()],
                    if i % 2 == 0 { "desc" } else { "asc" }
                )
            }),
        ),
        ("run detail page", Box::new(move |_| format!("{base}/run/{run}?page={}", 1 + fastrand::u64(..20)))),
    ];
    for (name, url_for) in &scenarios {
        let mut times = Vec::with_capacity(args.requests);
        let mut errors = 0;
        for i in 0..args.requests {
            let (status, _, ms) = fetch(&url_for(i))?;
            if status != 200 {
                errors += 1;
            }
            times.push(ms);
        }
        times.sort_by(f64::total_cmp);
        println!(
            "{name}: {} requests, p50 {:.1} ms, p95 {:.1} ms, p99 {:.1} ms, max {:.1} ms, {errors} errors",
            times.len(),
            percentile(&times, 0.5),
            percentile(&times, 0.95),
            percentile(&times, 0.99),
            percentile(&times, 1.0)
        );
    }
    Ok(0)
}

fn agent_body(agent: &ureq::Agent, url: &str, token: &Option<String>) -> anyhow::Result<Vec<u8>> {
    let mut request = agent.get(url);
    if let Some(token) = token {
        request = request.header("Authorization", format!("Bearer {token}"));
    }
    Ok(request.call()?.body_mut().read_to_vec()?)
}
