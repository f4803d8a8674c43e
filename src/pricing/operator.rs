//! Price tables an operator changes (docs/cost.md): a file named as the embedded one
//! (`price-table.<agent>.v1.json`) in `<data_dir>/price-tables/` replaces that agent's
//! embedded table. Read at start-up ([`PriceBook::load`]); checked without starting
//! anything by `sightline prices check`.
//!
//! Invariants: an operator's table is validated exactly as an embedded one (format,
//! agent, a `revision` date, sources, every price exact, every model priced by its own
//! entry); any `.json` file in the directory that names no agent, or does not parse,
//! stops the load with a message naming the file and the field, so a typo never falls
//! back to the embedded prices silently.

use std::path::{Path, PathBuf};

use super::{PriceBook, PriceTable, Prices, PricingError, embedded_json, file_name};
use crate::model::AgentType;

/// `<data_dir>/price-tables`.
pub fn overrides_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("price-tables")
}

/// One file of the operator's directory, as `prices check` reports it.
#[derive(Debug)]
pub struct OperatorTable {
    pub path: PathBuf,
    /// The table, or why it cannot be used.
    pub table: Result<PriceTable, PricingError>,
}

/// The `.json` files of the directory (none if it does not exist), sorted by name.
fn json_files(dir: &Path) -> Result<Vec<PathBuf>, PricingError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(err) => return Err(io_error(dir, &err)),
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    Ok(files)
}

fn io_error(path: &Path, err: &std::io::Error) -> PricingError {
    PricingError::Table { file: path.display().to_string(), field: "(file)".into(), problem: err.to_string() }
}

/// Reads and validates one operator file.
fn read_table(path: &Path) -> Result<PriceTable, PricingError> {
    let name = path.file_name().and_then(|name| name.to_str()).unwrap_or_default();
    let label = path.display().to_string();
    let agent =
        AgentType::ALL.iter().copied().find(|agent| file_name(*agent) == name).ok_or_else(|| PricingError::Table {
            file: label.clone(),
            field: "(file name)".into(),
            problem: format!(
                "names no agent: a table is named price-table.<agent>.v1.json, <agent> one of {}",
                AgentType::ALL.iter().map(|agent| agent.as_str()).collect::<Vec<_>>().join(", ")
            ),
        })?;
    let json = std::fs::read_to_string(path).map_err(|err| io_error(path, &err))?;
    parse_at(agent, path, &json)
}

/// `json` as `agent`'s table, validated as the operator's file at `path` would be.
fn parse_at(agent: AgentType, path: &Path, json: &str) -> Result<PriceTable, PricingError> {
    let mut table = PriceTable::parse_sharing(agent, json, path.display().to_string(), &mut Vec::new())?;
    table.source = Some(path.to_path_buf());
    Ok(table)
}

/// Every `.json` file of `<data_dir>/price-tables/`, each with its table or its error.
pub fn check(data_dir: &Path) -> Result<Vec<OperatorTable>, PricingError> {
    Ok(json_files(&overrides_dir(data_dir))?
        .into_iter()
        .map(|path| OperatorTable { table: read_table(&path), path })
        .collect())
}

/// The operator's usable tables in `<data_dir>/price-tables/`, or the first unusable
/// file's error (what [`PriceBook::load`] lays over the embedded tables).
pub fn operator_tables(data_dir: &Path) -> Result<Vec<PriceTable>, PricingError> {
    check(data_dir)?.into_iter().map(|found| found.table).collect()
}

impl PriceBook {
    /// The embedded tables, each replaced by the operator's file for its agent where
    /// `<data_dir>/price-tables/` has one. The first unusable file fails the load.
    pub fn load(data_dir: &Path) -> Result<PriceBook, PricingError> {
        let mut book = PriceBook::embedded()?;
        for table in operator_tables(data_dir)? {
            let at = table.agent() as usize;
            book.tables[at] = table;
        }
        Ok(book)
    }

    /// Each agent's table in force as `agent revision etag-prefix`, comma-separated: what
    /// a projection stamps on itself.
    pub fn provenance(&self) -> String {
        self.tables()
            .map(|t| {
                format!("{} {} {}", t.agent().as_str(), t.revision(), t.etag().trim_matches('"').get(..8).unwrap_or(""))
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Every agent's table, in [`AgentType::ALL`] order.
    pub fn tables(&self) -> impl Iterator<Item = &PriceTable> {
        self.tables.iter()
    }
}

/// A model's prices as `prices show` prints them: $ per million tokens, for the six
/// kinds in file order, and the long-context tier if the model has one.
#[derive(Debug, PartialEq, Eq)]
pub struct ModelPrices {
    pub id: String,
    pub usd_per_mtok: [String; 6],
    pub long_context: Option<(i64, [String; 6])>,
}

impl PriceTable {
    /// The table's models with their prices, in matching order.
    pub fn model_prices(&self) -> Vec<ModelPrices> {
        self.models
            .iter()
            .map(|model| ModelPrices {
                id: model.id.clone(),
                usd_per_mtok: usd_per_mtok(&model.prices),
                long_context: model.long_context.map(|tier| (tier.above_prompt_tokens, usd_per_mtok(&tier.prices))),
            })
            .collect()
    }

    /// Whether this table's `revision` is older than the embedded table of its agent
    /// (an operator's copy that missed a price update), with the embedded revision.
    pub fn older_than_embedded(&self) -> Option<String> {
        let embedded = PriceTable::parse(self.agent, embedded_json(self.agent)).ok()?;
        (self.revision.as_str() < embedded.revision()).then(|| embedded.revision().to_string())
    }
}

/// Pico-dollars per token back to the decimal $/MTok the files are written in (exact:
/// files allow six decimals, which is what a pico-dollar per token holds).
fn usd_per_mtok(prices: &Prices) -> [String; 6] {
    [prices.input, prices.output, prices.cache_read, prices.cache_write_5m, prices.cache_write_1h, prices.reasoning]
        .map(|pico| {
            let (whole, fraction) = (pico / super::PICO_PER_USD_PER_MTOK, pico % super::PICO_PER_USD_PER_MTOK);
            if fraction == 0 {
                whole.to_string()
            } else {
                format!("{whole}.{fraction:06}").trim_end_matches('0').to_string()
            }
        })
}

/// One model's difference between two tables of an agent.
#[derive(Debug, PartialEq, Eq)]
pub struct ModelDiff {
    pub model: String,
    /// `added`, `removed` or `changed`.
    pub change: &'static str,
    /// What differs, e.g. `input 3 → 2.5`.
    pub detail: String,
}

const PRICE_KINDS: [&str; 6] = ["input", "output", "cache read", "cache write 5m", "cache write 1h", "reasoning"];

/// How `table` differs from `base` (normally the embedded table), model by model.
pub fn diff(table: &PriceTable, base: &PriceTable) -> Vec<ModelDiff> {
    let (ours, theirs) = (table.model_prices(), base.model_prices());
    let mut diffs = Vec::new();
    for model in &ours {
        match theirs.iter().find(|other| other.id == model.id) {
            None => diffs.push(ModelDiff { model: model.id.clone(), change: "added", detail: String::new() }),
            Some(other) if other != model => {
                let mut parts: Vec<String> = PRICE_KINDS
                    .iter()
                    .zip(other.usd_per_mtok.iter().zip(&model.usd_per_mtok))
                    .filter(|(_, (was, now))| was != now)
                    .map(|(kind, (was, now))| format!("{kind} {was} → {now}"))
                    .collect();
                if other.long_context != model.long_context {
                    parts.push("long-context tier".into());
                }
                diffs.push(ModelDiff { model: model.id.clone(), change: "changed", detail: parts.join(", ") });
            }
            Some(_) => {}
        }
    }
    for other in theirs.iter().filter(|other| !ours.iter().any(|model| model.id == other.id)) {
        diffs.push(ModelDiff { model: other.id.clone(), change: "removed", detail: String::new() });
    }
    diffs
}

/// An operator table validated and written beside its place, waiting for [`Staged::commit`].
#[derive(Debug)]
pub struct Staged {
    pub table: PriceTable,
    temporary: PathBuf,
    path: PathBuf,
}

impl Staged {
    /// Renames the table into place: a reader sees the old file or the new, never half.
    pub fn commit(self) -> std::io::Result<()> {
        std::fs::rename(&self.temporary, &self.path)
    }

    /// Removes the written file (the upload was not recorded).
    pub fn discard(self) {
        let _ = std::fs::remove_file(&self.temporary);
    }
}

/// Validates `json` as `agent`'s table exactly as a file in the directory would be, and
/// writes it to a temporary file of its own there. Nothing is written when it does not
/// validate; `Err(Ok(_))` is an invalid table, `Err(Err(_))` a file-system failure.
pub fn stage(data_dir: &Path, agent: AgentType, json: &str) -> Result<Staged, Result<PricingError, std::io::Error>> {
    let (dir, name) = (overrides_dir(data_dir), file_name(agent));
    let path = dir.join(&name);
    let table = parse_at(agent, &path, json).map_err(Ok)?;
    std::fs::create_dir_all(&dir).map_err(Err)?;
    let temporary = dir.join(format!(".{name}.{}.uploading", uuid::Uuid::now_v7().simple()));
    std::fs::write(&temporary, json).map_err(Err)?;
    Ok(Staged { table, temporary, path })
}
