//! `sightline prices …`: the price tables in force (`list`), one agent's prices
//! (`show`), and a check of the operator's files in `<data_dir>/price-tables/`
//! (`check`: exits 1 naming the file and field of the first problem in each bad file).

use clap::Subcommand;

use super::{ConfigArgs, load_config};
use crate::config::Overrides;
use crate::model::AgentType;
use crate::pricing::{self, PriceBook};

#[derive(Debug, Subcommand)]
pub enum PricesCommand {
    /// Every agent's table in force: where it comes from (embedded, or the operator's
    /// file), its revision, its models and its ETag.
    List {
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// One agent's models and prices ($ per million tokens).
    Show {
        #[command(flatten)]
        config: ConfigArgs,
        /// The agent, e.g. claude_code.
        agent: String,
    },
    /// Validate the operator's tables in <data_dir>/price-tables/ (what the server
    /// would refuse to start with); exits 1 if any is unusable.
    Check {
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Read a vendor price catalogue into a new revision of each agent's table: shows
    /// what it adds and changes against the tables on disk, and writes them (audited)
    /// only with --apply. The server prices with them after a restart; run
    /// reprice-events-apply then to price the history.
    Import {
        #[command(flatten)]
        config: ConfigArgs,
        /// LiteLLM's model_prices_and_context_window.json (in the litellm Python
        /// package: litellm/model_prices_and_context_window_backup.json).
        #[arg(long, value_name = "FILE")]
        litellm: std::path::PathBuf,
        /// Write the new tables to <data_dir>/price-tables/ (otherwise only show them).
        #[arg(long)]
        apply: bool,
    },
}

pub fn prices(command: PricesCommand) -> anyhow::Result<i32> {
    match command {
        PricesCommand::List { config } => {
            let book = load_book(&config)?;
            let headers = ["agent", "source", "revision", "models", "etag"].map(str::to_string);
            let rows = book.tables().map(|table| {
                vec![
                    table.agent().as_str().to_string(),
                    table.source().map_or("embedded".to_string(), |path| path.display().to_string()),
                    table.revision().to_string(),
                    table.model_ids().count().to_string(),
                    table.etag().trim_matches('"').to_string(),
                ]
            });
            print!("{}", crate::evals::console::lines(&headers, rows));
            Ok(0)
        }
        PricesCommand::Show { config, agent } => {
            let Some(agent) = AgentType::parse(&agent) else {
                anyhow::bail!(
                    "there is no agent {agent:?}; one of {}",
                    AgentType::ALL.iter().map(|agent| agent.as_str()).collect::<Vec<_>>().join(", ")
                );
            };
            let book = load_book(&config)?;
            let table = book.table(agent);
            let source = table.source().map_or("embedded".to_string(), |path| path.display().to_string());
            println!("{} revision {} ({source})", agent.as_str(), table.revision());
            let headers = [
                "model",
                "input",
                "output",
                "cache_read",
                "cache_write_5m",
                "cache_write_1h",
                "reasoning",
                "long context",
            ]
            .map(str::to_string);
            let rows = table.model_prices().into_iter().map(|model| {
                let mut row = vec![model.id];
                row.extend(model.usd_per_mtok);
                row.push(model.long_context.map_or(String::new(), |(above, prices)| {
                    format!("above {above} prompt tokens: {}", prices.join(" / "))
                }));
                row
            });
            print!("{}", crate::evals::console::lines(&headers, rows));
            Ok(0)
        }
        PricesCommand::Import { config, litellm, apply } => import(&config, &litellm, apply),
        PricesCommand::Check { config } => {
            let config = load_config(&config, Overrides::default())?;
            let found = pricing::operator_check(&config.data_dir)?;
            if found.is_empty() {
                println!(
                    "no operator tables in {}: every agent uses its embedded table",
                    pricing::overrides_dir(&config.data_dir).display()
                );
                return Ok(0);
            }
            let mut bad = 0;
            for file in found {
                match file.table {
                    Ok(table) => {
                        let older = table.older_than_embedded().map_or(String::new(), |embedded| {
                            format!(" (warning: older than the embedded table's revision {embedded})")
                        });
                        println!(
                            "ok: {} replaces {}'s table, revision {}, {} models{older}",
                            file.path.display(),
                            table.agent().as_str(),
                            table.revision(),
                            table.model_ids().count()
                        );
                    }
                    Err(err) => {
                        bad += 1;
                        println!("error: {err}");
                    }
                }
            }
            Ok(if bad == 0 { 0 } else { 1 })
        }
    }
}

/// `prices import`: the catalogue's tables against those on disk, written with `apply`.
fn import(config: &ConfigArgs, file: &std::path::Path, apply: bool) -> anyhow::Result<i32> {
    use anyhow::Context;
    let config = load_config(config, Overrides::default())?;
    let bytes = std::fs::read(file).with_context(|| format!("cannot read the catalogue {}", file.display()))?;
    let now_ms = crate::clock::system_now_ms();
    let today = crate::model::rfc3339_ms(now_ms)[..10].to_string();
    let catalogue = pricing::Catalogue::litellm(&bytes, &today).with_context(|| file.display().to_string())?;
    println!(
        "{}: {} chat models of Anthropic, OpenAI and Google, sha256 {}",
        file.display(),
        catalogue.len(),
        catalogue.sha256
    );
    let on_disk = PriceBook::load(&config.data_dir)?;
    let mut staged = Vec::new();
    for planned in catalogue.plan(&on_disk, &today).map_err(|why| anyhow::anyhow!(why))? {
        let (agent, changes) = (planned.agent, &planned.changes);
        println!(
            "\n{} revision {} -> {} ({} changes)",
            agent.as_str(),
            on_disk.table(agent).revision(),
            planned.table.revision(),
            changes.len()
        );
        let rows = changes.iter().map(|diff| vec![diff.change.to_string(), diff.model.clone(), diff.detail.clone()]);
        print!(
            "{}",
            crate::evals::console::lines(
                &["change", "model", "prices ($ per million tokens)"].map(str::to_string),
                rows
            )
        );
        staged.push((agent, planned.json, changes.len()));
    }
    if staged.is_empty() {
        println!("the tables on disk already price every model as the catalogue does");
        return Ok(0);
    }
    if !apply {
        println!(
            "\nnothing written: run again with --apply to store these tables in {}",
            pricing::overrides_dir(&config.data_dir).display()
        );
        return Ok(0);
    }
    let conn = super::operator::open_main(&config)?;
    for (agent, json, changes) in staged {
        let placed = pricing::stage_operator_table(&config.data_dir, agent, &json).map_err(|err| match err {
            Ok(invalid) => anyhow::anyhow!("{invalid}"),
            Err(io) => anyhow::anyhow!("cannot write {}'s table: {io}", agent.as_str()),
        })?;
        crate::db::side_door::write(&conn, |tx| -> anyhow::Result<()> {
            let entry = crate::audit::Entry {
                actor_id: None,
                action: crate::audit::Action::PriceTableUploaded,
                subject_user_id: None,
                target: Some(agent.as_str()),
                detail: serde_json::json!({
                    "agent": agent.as_str(), "revision": placed.table.revision(), "models": placed.table.model_ids().count(),
                    "source": "litellm", "catalogue_sha256": catalogue.sha256, "changes": changes,
                }),
            };
            if let Err(err) = crate::audit::record(tx, &entry, now_ms) {
                placed.discard();
                return Err(err.into());
            }
            // The audit row, then the rename, then the commit: a failed rename rolls the row back.
            placed.commit().with_context(|| format!("placing {}'s table", agent.as_str()))?;
            Ok(())
        })?;
        println!("stored {}'s table", agent.as_str());
    }
    println!(
        "restart the server to price with them, then run `sightline jobs run reprice-events-apply` to price the history"
    );
    Ok(0)
}

fn load_book(config: &ConfigArgs) -> anyhow::Result<PriceBook> {
    let config = load_config(config, Overrides::default())?;
    Ok(PriceBook::load(&config.data_dir)?)
}
