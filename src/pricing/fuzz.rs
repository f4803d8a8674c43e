//! Generated price tables (`fuzz_*`, see `model::arbitrary`): the embedded tables bent by
//! edits and damage, as an operator's hand-edited file might be. Reading one never
//! panics; a table refused is refused with a message that names the file.

use proptest::prelude::*;
use serde_json::Value;

use super::{PriceTable, file_name};
use crate::model::AgentType;
use crate::model::arbitrary::{damage, damaged, edited, edits};

const TABLES: &[(AgentType, &str)] = &[
    (AgentType::ClaudeCode, include_str!("../../assets/price-tables/price-table.claude_code.v1.json")),
    (AgentType::Codex, include_str!("../../assets/price-tables/price-table.codex.v1.json")),
    (AgentType::GeminiCli, include_str!("../../assets/price-tables/price-table.gemini_cli.v1.json")),
    (AgentType::Droid, include_str!("../../assets/price-tables/price-table.droid.v1.json")),
];

proptest! {
    #[test]
    fn fuzz_price_tables(which in any::<usize>(), edits in edits(), (cut, flips) in damage()) {
        let (agent, text) = TABLES[which % TABLES.len()];
        let table: Value = serde_json::from_str(text).unwrap();
        let bent = serde_json::to_vec(&edited(&table, &edits)).unwrap();
        let bent = String::from_utf8_lossy(&damaged(&bent, cut, &flips)).to_string();
        if let Err(err) = PriceTable::parse(agent, &bent) {
            let said = err.to_string();
            prop_assert!(said.starts_with(&file_name(agent)), "the refusal names the file: {said}");
        }
    }
}
