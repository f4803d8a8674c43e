//! `sightline demo`: fills a data directory with a demo organisation through the real
//! product: people and teams are added as `sightline user add` and `team add` add them;
//! then a server is started on loopback and every event goes through `POST /v1/events`
//! (validated, redacted, priced, stored, folded), some transcripts through the upload
//! route, a grant through the grants API and a deletion request through the person's
//! own API, all as the hook and the web would send them. It waits until the aggregates
//! have caught up, stops the server and prints how to sign in as one person of each role.
//!
//! Invariants: the data directory must have no people yet (a demo never mixes with real
//! data); the same `--seed` and `--until` give the same organisation; every demo person has the one
//! password printed at the end (or read with `--password-stdin`).

mod activity;
mod alerting;
mod cost;
mod evals;
mod history;
mod otlp;
mod otlp_signals;
mod people;
mod pulls;

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::{Value, json};

use crate::config::Config;
use history::send_history;
use people::Person;

/// What to make.
#[derive(Debug, Clone)]
pub struct Options {
    /// Developers, besides an administrator, an investigator and a viewer of aggregates.
    pub developers: usize,
    /// Days of history, ending today.
    pub days: i64,
    /// Every demo person's password.
    pub password: String,
    /// Whether the person chose the password (then it is not printed).
    pub password_chosen: bool,
    /// The same seed, the same organisation.
    pub seed: u64,
    /// When the history ends (Unix ms): the same seed and moment, the same organisation.
    pub until_ms: i64,
}

const DAY_MS: i64 = 86_400_000;

/// Fills `config.data_dir` (which must have no people) and prints how to sign in.
pub fn run(config: &Config, options: &Options) -> anyhow::Result<()> {
    let hash = crate::auth::passwords::hash(&options.password).context("the demo password")?;
    crate::app::serve::prepare_main_db(config)?;
    let now_ms = options.until_ms;
    let conn = crate::db::side_door::open(&config.main_db_path())?;
    fastrand::seed(options.seed);
    let people = people::add_people(&conn, options.developers, &hash, now_ms)?;
    drop(conn);
    eprintln!(
        "{} people in {} teams; starting a server to send their history through",
        people.len(),
        people::TEAMS.len()
    );

    let server = Server::start(config)?;
    let started = Instant::now();
    let sent = send_history(&server, &people, options.days, now_ms)?;
    eprintln!(
        "sent {} events in {} sessions ({} with a transcript; {} by the agents' OTLP only, {} by OTLP and the hook) in {:.0} s",
        sent.events,
        sent.sessions,
        sent.transcripts,
        sent.otlp_only,
        sent.otlp_and_hook,
        started.elapsed().as_secs_f64()
    );
    let developers: Vec<&Person> = people.iter().filter(|p| p.team.is_some()).collect();
    let prs = pulls::send(&server, &developers, &sent.branches, now_ms)?;
    eprintln!("{} pull requests through the GitHub App's webhook ({} merged)", prs.opened, prs.merged);
    let ran = governance(&server, &people, &options.password)?;
    otlp_signals::collector(&server, config, &people, now_ms)?;
    server.wait_for_aggregates(Duration::from_secs(600))?;
    alerting::set_up(&server, &people, &options.password)?;
    alerting::new_hire(&server, &options.password)?;
    // Scored beside the running server (as `sightline jobs run` would be), so its
    // refresh carries the friction into the daily aggregate before it stops.
    let scored = score_sessions(config, now_ms)?;
    eprintln!("{}", crate::scoring::run::describe(&scored));
    eprintln!("vendors' bills reconciled: {}", cost::reconcile(config, options.days, now_ms)?);
    server.wait_for_aggregates(Duration::from_secs(600))?;
    cost::projections(&server, &options.password, options.days, now_ms)?;
    // Evaluation results beside it, for /org/benchmarks and the eval dashboard, with the
    // agent sessions the harness linked to their cells.
    let results = config.data_dir.join("results.db");
    if !results.exists() {
        let options = crate::evals::demo::DemoOptions { seed: options.seed, scale: crate::evals::demo::Scale::Demo };
        crate::evals::demo::write_demo(&results, &options)?;
    }
    let harness = people.iter().find(|p| p.email == people::HARNESS).context("the harness account")?;
    let linked = evals::link(&server, harness, &results, now_ms, options.days)?;
    eprintln!(
        "{} evaluation sessions linked to {} cells of {} ({} with a transcript)",
        linked.sessions,
        linked.cells,
        results.display(),
        linked.transcripts
    );
    // Machines' runs reach no figure, but their hours are refreshed like any other.
    server.wait_for_aggregates(Duration::from_secs(600))?;
    server.stop();
    print_sign_in(&people, options, config, ran)
}

/// Closes the sessions gone quiet, then scores every ended interactive session, as the
/// server's sweep and the morning's `compute-trajectory-scores` run by hand beside it
/// would: through main.db's side door (`db::side_door`), whose writes queue behind the
/// server's writer however long it holds main.db.
fn score_sessions(config: &Config, now_ms: i64) -> anyhow::Result<crate::scoring::run::Report> {
    let conn = crate::db::side_door::open(&config.main_db_path())?;
    let change_main = |change: crate::events::writer::MainChange| crate::db::side_door::write(&conn, change);
    // Sessions left open are closed first, as the server's `sweep-abandoned` would: its
    // schedule is the wall clock's tens of minutes, so left to it, whether they were
    // closed before or after this scoring depended on the time of day.
    let quiet_ms = config.jobs.abandon_after_mins * 60_000;
    change_main(Box::new(move |tx| crate::sessions::abandon::close_abandoned(tx, quiet_ms, now_ms).map(|_| ())))?;
    let report = crate::scoring::run::compute(&config.data_dir, &conn, &change_main, now_ms, false)?;
    crate::scoring::bands::refresh(&conn, &change_main, now_ms)?;
    Ok(report)
}

/// A server on loopback in this process, stopped when dropped.
struct Server {
    ingest: String,
    web: String,
    github: String,
    /// The webhook secret this server checks (the operator's, or one made for the demo).
    webhook_secret: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
    data_dir: PathBuf,
    /// For the console's forms: it answers a change with a redirect, which is what the
    /// demo checks, so redirects are not followed.
    console: ureq::Agent,
}

impl Server {
    fn start(config: &Config) -> anyhow::Result<Server> {
        let mut config = config.clone();
        for addr in [&mut config.listen.ingest, &mut config.listen.web, &mut config.listen.github] {
            *addr = "127.0.0.1:0".parse().expect("a literal address");
        }
        config.log.level = "warn".into();
        if config.github.webhook_secret.0.is_empty() {
            config.github.webhook_secret.0 = format!("demo-{}", uuid::Uuid::new_v4().simple());
        }
        let webhook_secret = config.github.webhook_secret.0.clone();
        let addresses = crate::app::serve::addresses_path(&config.data_dir);
        let _ = std::fs::remove_file(&addresses);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let data_dir = config.data_dir.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new()?;
            runtime.block_on(crate::app::serve::serve_with_clock(config, crate::clock::Clock::system(), async {
                let _ = stopped.await;
            }))
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        let bound: Value = loop {
            if let Some(value) =
                std::fs::read_to_string(&addresses).ok().and_then(|text| serde_json::from_str(&text).ok())
            {
                break value;
            }
            anyhow::ensure!(Instant::now() < deadline && !thread.is_finished(), "the demo server did not start");
            std::thread::sleep(Duration::from_millis(50));
        };
        let address = |listener: &str| format!("http://{}", bound[listener].as_str().unwrap_or_default());
        Ok(Server {
            console: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .max_redirects(0)
                .timeout_global(Some(Duration::from_secs(60)))
                .build()
                .new_agent(),
            ingest: address("ingest"),
            web: address("web"),
            github: address("github"),
            webhook_secret,
            stop: Some(stop),
            thread: Some(thread),
            data_dir,
        })
    }

    fn agent() -> ureq::Agent {
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(120)))
            .build()
            .new_agent()
    }

    /// An access token for `email` by the password grant.
    fn sign_in(&self, email: &str, password: &str) -> anyhow::Result<String> {
        let mut response = Server::agent().post(format!("{}/oauth/token", self.ingest)).send_form([
            ("grant_type", "password"),
            ("username", email),
            ("password", password),
        ])?;
        let answer: Value = serde_json::from_str(&response.body_mut().read_to_string()?)?;
        answer["access_token"].as_str().map(str::to_string).with_context(|| format!("sign-in of {email}: {answer}"))
    }

    /// Posts a console form as the administrator (`token`); its status and body.
    fn post_console(&self, token: &str, path: &str, fields: &[(&str, &str)]) -> anyhow::Result<(u16, String)> {
        let mut response = self
            .console
            .post(format!("{}{path}", self.web))
            .header("Authorization", format!("Bearer {token}"))
            .header("Accept", "text/html")
            .send_form(fields.iter().copied())?;
        Ok((response.status().as_u16(), response.body_mut().read_to_string()?))
    }

    /// Posts a console form that changes one thing (the console answers 303).
    fn form(&self, token: &str, path: &str, fields: &[(&str, &str)]) -> anyhow::Result<()> {
        let (status, body) = self.post_console(token, path, fields)?;
        anyhow::ensure!(status == 303, "{path} answered {status}: {body}");
        Ok(())
    }

    /// Posts a console form that answers with a page (a one-time link shown once).
    fn form_page(&self, token: &str, path: &str, fields: &[(&str, &str)]) -> anyhow::Result<String> {
        let (status, body) = self.post_console(token, path, fields)?;
        anyhow::ensure!(status == 200, "{path} answered {status}: {body}");
        Ok(body)
    }

    /// Starts `job` as the administrator (`token`) and waits up to 5 minutes for it to succeed.
    fn run_job(&self, token: &str, job: &str) -> anyhow::Result<()> {
        let agent = Server::agent();
        let mut response = agent
            .post(format!("{}/admin/jobs/{job}/run", self.web))
            .header("Authorization", format!("Bearer {token}"))
            .content_type("application/json")
            .send("{}")?;
        let started: Value = serde_json::from_str(&response.body_mut().read_to_string()?)?;
        let run_id = started["run_id"].as_str().with_context(|| format!("{job} did not start: {started}"))?.to_string();
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            let mut response = agent
                .get(format!("{}/admin/jobs/{job}/runs", self.web))
                .header("Authorization", format!("Bearer {token}"))
                .call()?;
            let runs: Value = serde_json::from_str(&response.body_mut().read_to_string()?)?;
            let this =
                runs["runs"].as_array().and_then(|runs| runs.iter().find(|r| r["id"] == run_id.as_str())).cloned();
            match this.as_ref().and_then(|r| r["outcome"].as_str()) {
                Some("succeeded") => return Ok(()),
                Some("running") | None => {}
                Some(other) => anyhow::bail!("the {job} run ended {other}: {this:?}"),
            }
            anyhow::ensure!(Instant::now() < deadline, "the {job} run did not end");
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Waits until no aggregate hour is dirty (the scheduler refreshes every 15 s).
    fn wait_for_aggregates(&self, limit: Duration) -> anyhow::Result<()> {
        let conn = rusqlite::Connection::open(self.data_dir.join("main.db"))?;
        let deadline = Instant::now() + limit;
        loop {
            let dirty: i64 = conn.query_row("SELECT count(*) FROM aggregate_dirty_buckets", [], |row| row.get(0))?;
            if dirty == 0 {
                return Ok(());
            }
            anyhow::ensure!(Instant::now() < deadline, "the aggregates did not catch up ({dirty} hours waiting)");
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// What [`governance`] did, for the closing message.
struct Ran {
    granted_on: String,
    deleted: Option<String>,
}

/// A grant (the investigator asks to read a developer's sessions, the administrator
/// approves) and a deletion request (a developer asks for their data to go), through
/// the same API a browser or script would use.
fn governance(server: &Server, people: &[Person], password: &str) -> anyhow::Result<Ran> {
    let agent = Server::agent();
    let sign_in = |email: &str| server.sign_in(email, password);
    let call = |method: &str, path: &str, token: &str, body: Value| -> anyhow::Result<Value> {
        let url = format!("{}{path}", server.web);
        let request = agent.post(&url).header("Authorization", format!("Bearer {token}"));
        anyhow::ensure!(method == "POST", "the demo only posts");
        let mut response = request.content_type("application/json").send(body.to_string())?;
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        anyhow::ensure!((200..300).contains(&status), "{method} {path} answered {status}: {text}");
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    };
    // Developers who lead no team; in a tiny demo, where everyone leads, every member.
    let mut developers: Vec<&Person> = people.iter().filter(|p| p.team.is_some() && !p.lead).collect();
    if developers.is_empty() {
        developers = people.iter().filter(|p| p.team.is_some()).collect();
    }
    let subject = developers.first().context("the demo has no developer")?;
    let investigator = sign_in("investigator@demo.example")?;
    let admin = sign_in("admin@demo.example")?;
    let grant = call(
        "POST",
        "/api/grants",
        &investigator,
        json!({"subject": subject.email, "justification": "Demo: a support ticket about failing deploys needs the session history.", "duration_hours": 72}),
    )?;
    let grant_id =
        grant["id"].as_str().or_else(|| grant["grant"]["id"].as_str()).context("the grant has no id")?.to_string();
    call("POST", &format!("/api/grants/{grant_id}/approve"), &admin, json!({"note": "approved for the demo"}))?;
    // Every third developer shares their transcripts (their lead and grant holders may read
    // them, and find them in /org/search); one turns team drill-in off.
    let set_visibility = |email: &str, body: Value| -> anyhow::Result<()> {
        let token = sign_in(email)?;
        let mut response = agent
            .patch(format!("{}/api/me/visibility", server.web))
            .header("Authorization", format!("Bearer {token}"))
            .content_type("application/json")
            .send(body.to_string())?;
        let status = response.status().as_u16();
        anyhow::ensure!(
            status == 200,
            "{email}: visibility answered {status}: {}",
            response.body_mut().read_to_string()?
        );
        Ok(())
    };
    // Neither the first (the pattern's owner) nor the last (the leaver); none in a tiny demo.
    let middle = developers.get(1..developers.len().saturating_sub(1)).unwrap_or_default();
    for developer in middle.iter().step_by(3) {
        set_visibility(&developer.email, json!({"share_transcripts": true}))?;
    }
    if let Some(private) = middle.get(1).or(developers.first()) {
        set_visibility(&private.email, json!({"team_drill_in": false}))?;
    }
    // The leaver is never the grant's subject, so a demo of one developer has none.
    let leaver = developers.last().filter(|_| developers.len() > 1);
    if let Some(leaver) = leaver {
        let leaver_token = sign_in(&leaver.email)?;
        call("POST", "/api/me/deletion", &leaver_token, json!({}))?;
        server.run_job(&admin, "run-deletions")?;
    }
    // A second request, left for an administrator to decide on /admin/access-grants.
    if let Some(other) = developers.get(1) {
        call(
            "POST",
            "/api/grants",
            &investigator,
            json!({"subject": other.email, "justification": "Demo: a billing question about last month's spend.", "duration_hours": 4}),
        )?;
    }
    Ok(Ran { granted_on: subject.email.clone(), deleted: leaver.map(|leaver| leaver.email.clone()) })
}

fn print_sign_in(people: &[Person], options: &Options, config: &Config, ran: Ran) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    let pick = |role: &str, lead: bool| {
        people.iter().find(|p| p.org_role == role && p.lead == lead && p.team.is_some() == (role == "MEMBER"))
    };
    writeln!(out, "The demo organisation is in {}.", config.data_dir.display())?;
    writeln!(out, "Start it with: sightline serve --data-dir {}", config.data_dir.display())?;
    writeln!(out, "then sign in at http://{}/login as:", config.listen.web)?;
    for (what, person) in [
        ("a developer", pick("MEMBER", false)),
        ("a team lead", pick("MEMBER", true)),
        ("an administrator", pick("ADMIN", false)),
        ("an investigator", pick("INVESTIGATOR", false)),
        ("a viewer of aggregates", pick("VIEWER_AGGREGATE", false)),
        ("an eval engineer", pick("EVAL_ENGINEER", false)),
    ] {
        if let Some(person) = person {
            writeln!(out, "  {what:<24} {:<36} ({})", person.email, person.name)?;
        }
    }
    if options.password_chosen {
        writeln!(out, "with the password you gave (every demo person has it).")?;
    } else {
        writeln!(out, "with the password {} (every demo person has it).", options.password)?;
    }
    write!(out, "The investigator holds an approved grant on {}", ran.granted_on)?;
    match ran.deleted {
        Some(deleted) => writeln!(out, "; {deleted} asked for their data to be deleted, and it was.")?,
        None => writeln!(out, ".")?,
    }
    let results = config.data_dir.join("results.db");
    writeln!(
        out,
        "Evaluation results are in {0}: serve with SIGHTLINE_ANALYTICS_RESULTS_DB={0} (and \
         SIGHTLINE_ANALYTICS_EVAL_DASHBOARD_URL=http://127.0.0.1:8700 beside `sightline dashboard --db {0}`) \
         to see them on /org/benchmarks.",
        results.display()
    )?;
    writeln!(
        out,
        "The harness's agent sessions are linked to their cells: give the eval engineer a token \
         (sightline token create --data-dir {0} --user eve@demo.example --kind eval) and start the dashboard \
         with SIGHTLINE_PLATFORM_URL=http://{1}, SIGHTLINE_PLATFORM_TOKEN set to it and a \
         SIGHTLINE_DASHBOARD_TOKEN of your choosing, to see each cell's agent on its page.",
        config.data_dir.display(),
        config.listen.web
    )?;
    Ok(())
}
