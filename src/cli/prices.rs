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

fn load_book(config: &ConfigArgs) -> anyhow::Result<PriceBook> {
    let config = load_config(config, Overrides::default())?;
    Ok(PriceBook::load(&config.data_dir)?)
}
