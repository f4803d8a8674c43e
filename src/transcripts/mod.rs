//! Transcripts on the server: the chunked upload the hook CLI's shipper sends
//! ([`upload`]), the stored, redacted, zstd-compressed file per session and its row in
//! `transcript_index` ([`store`]), each agent's format read into the normalised
//! [`model`] ([`parse`]), read a segment at a time ([`segments`]) by people a page at a
//! time ([`pages`]), the full-text [`index`] kept by [`indexing`], [`search`] over it,
//! and re-redaction under newer rules ([`backfill`]).
//!
//! Invariants: a transcript is stored only whole (every chunk present and the whole
//! digest checked) and only redacted again here with the current rules, whatever the
//! laptop did; the file is written and renamed into place before the session row points
//! at it, so a crash leaves either the old transcript or the new one, never half of one.
//! The index is derived from the stored files and can always be rebuilt from them.

pub mod backfill;
pub mod index;
pub mod indexing;
pub mod model;
pub mod offline;
pub mod pages;
pub mod parse;
pub mod search;
pub mod segments;
pub mod store;
pub mod title;
pub mod upload;
