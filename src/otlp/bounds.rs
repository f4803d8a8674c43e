//! What one OTLP export may hold, counted before it is decoded. A protobuf message of a
//! few bytes (an empty `LogRecord` is two) decodes to a Rust value of a few hundred, so
//! a body within the size limit can still ask for gigabytes: an 8 KB gzip body of 4
//! million empty records took the server to a gigabyte. So the body is first walked as
//! it lies (protobuf by its wire format, JSON by its tokens) along `schema`, counting
//! the records (log records, spans, metric data points), the attributes of each list,
//! the nesting and what the decoded value will weigh, and refused at the first limit
//! passed; only a body within every limit is decoded.
//!
//! Invariants: the walk allocates nothing in proportion to the body (JSON keys and
//! strings are borrowed or skipped); its figure for the decoded size is never below
//! what `prost` or `serde` allocate for the value's fields (a scalar counts eight bytes
//! even where it is stored inline); HTTP and gRPC take the same walk.

mod json;
mod schema;

pub use schema::Msg;
use schema::{Holds, shape};

/// The most an export may hold (`[ingest]` in the configuration).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Log records, spans and metric data points in one export.
    pub max_records: u64,
    /// Attributes (key-value pairs) in one list: a record's, a resource's, a map value's.
    pub max_attributes: u64,
    /// What the decoded export may weigh in memory.
    pub max_decoded_memory: u64,
}

/// Nesting deeper than any agent sends (a map in an array in a map …), and shallow
/// enough for the decoders' own recursion.
pub const MAX_DEPTH: u32 = 48;

/// Why an export is refused before it is decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Past one of the [`Limits`]: the message says which and by how much.
    TooLarge(String),
    /// Not a well-formed export (or nested past [`MAX_DEPTH`]).
    Malformed(String),
    /// Not in an encoding OTLP/HTTP names (`otlp::wire::Encoding::of`).
    UnsupportedEncoding(String),
}

/// What a walk counted.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub records: u64,
    pub decoded_memory: u64,
    pub largest_list: u64,
}

/// Walks a protobuf-encoded export of `root`'s type within `limits`.
pub fn check_protobuf(body: &[u8], root: Msg, limits: &Limits) -> Result<Tally, Refusal> {
    let mut walk = Walk { limits, tally: Tally::default() };
    walk.memory(shape(root).size as u64)?;
    walk.protobuf(body, root, 0).map_err(|refusal| match refusal {
        Refusal::Malformed(what) => {
            Refusal::Malformed(format!("the body is not a protobuf OTLP {} export: {what}", root.signal()))
        }
        too_large => too_large,
    })?;
    Ok(walk.tally)
}

/// Walks an OTLP/JSON export of `root`'s type within `limits`.
pub fn check_json(body: &[u8], root: Msg, limits: &Limits) -> Result<Tally, Refusal> {
    let mut walk = Walk { limits, tally: Tally::default() };
    walk.memory(shape(root).size as u64)?;
    json::walk(body, root, &mut walk).map_err(|refusal| match refusal {
        Refusal::Malformed(what) => {
            Refusal::Malformed(format!("the body is not an OTLP/JSON {} export: {what}", root.signal()))
        }
        too_large => too_large,
    })?;
    Ok(walk.tally)
}

/// One walk's counts against its limits.
pub(super) struct Walk<'a> {
    limits: &'a Limits,
    tally: Tally,
}

impl Walk<'_> {
    fn memory(&mut self, bytes: u64) -> Result<(), Refusal> {
        self.tally.decoded_memory = self.tally.decoded_memory.saturating_add(bytes);
        if self.tally.decoded_memory > self.limits.max_decoded_memory {
            return Err(Refusal::TooLarge(format!(
                "the export would take more than {} bytes of memory decoded (three times ingest.max_decoded_bytes); \
                 send smaller batches",
                self.limits.max_decoded_memory
            )));
        }
        Ok(())
    }

    /// One message of type `msg` entered, at `depth` (the caller's list counts it).
    fn enter(&mut self, msg: Msg, depth: u32) -> Result<(), Refusal> {
        if depth >= MAX_DEPTH {
            return Err(Refusal::Malformed(format!("it nests deeper than {MAX_DEPTH} levels")));
        }
        let shape = shape(msg);
        if shape.record {
            self.tally.records += 1;
            if self.tally.records > self.limits.max_records {
                return Err(Refusal::TooLarge(format!(
                    "the export holds more than {} records (ingest.max_otlp_records); send smaller batches",
                    self.limits.max_records
                )));
            }
        }
        self.memory(shape.size as u64)
    }

    /// One more attribute in a list that now holds `count`.
    fn attribute(&mut self, count: u64) -> Result<(), Refusal> {
        self.tally.largest_list = self.tally.largest_list.max(count);
        if count > self.limits.max_attributes {
            return Err(Refusal::TooLarge(format!(
                "an attribute list holds more than {} attributes (ingest.max_otlp_attributes)",
                self.limits.max_attributes
            )));
        }
        Ok(())
    }

    fn protobuf(&mut self, mut bytes: &[u8], msg: Msg, depth: u32) -> Result<(), Refusal> {
        let shape = shape(msg);
        // Attributes per field of this message, by the field's place in its shape.
        let mut attributes = [0u64; 8];
        while !bytes.is_empty() {
            let key = varint(&mut bytes)?;
            let (number, wire_type) = ((key >> 3) as u32, key & 7);
            if number == 0 {
                return Err(malformed("a field numbered 0"));
            }
            match wire_type {
                0 => {
                    varint(&mut bytes)?;
                    self.memory(8)?;
                }
                1 | 5 => {
                    let width = if wire_type == 1 { 8 } else { 4 };
                    bytes = bytes.get(width..).ok_or_else(|| malformed("a fixed-width field cut short"))?;
                    self.memory(8)?;
                }
                2 => {
                    let length = usize::try_from(varint(&mut bytes)?).map_err(|_| malformed("a length too large"))?;
                    let (field, rest) = (
                        bytes.get(..length).ok_or_else(|| malformed("a length-delimited field cut short"))?,
                        &bytes[length..],
                    );
                    bytes = rest;
                    match shape.by_number(number).map(|f| f.holds) {
                        Some(Holds::Message(child)) => {
                            if child == Msg::KeyValue {
                                let slot = shape.fields.iter().position(|f| f.number == number).unwrap_or(0);
                                attributes[slot] += 1;
                                self.attribute(attributes[slot])?;
                            }
                            self.enter(child, depth + 1)?;
                            self.protobuf(field, child, depth + 1)?;
                        }
                        Some(Holds::PackedVarints) => {
                            // Each varint ends in a byte below 0x80: one decoded u64 each.
                            let count = field.iter().filter(|byte| **byte < 0x80).count() as u64;
                            self.memory(count.saturating_mul(8))?;
                        }
                        // A string, bytes, or a packed fixed-width array: as large decoded.
                        _ => self.memory(length as u64)?,
                    }
                }
                _ => return Err(malformed("a group or an unknown wire type, which OTLP never sends")),
            }
        }
        Ok(())
    }
}

/// What is wrong with a protobuf body (`check_protobuf` says which export it is not).
fn malformed(what: &str) -> Refusal {
    Refusal::Malformed(what.to_string())
}

/// Reads one base-128 varint (at most ten bytes).
fn varint(bytes: &mut &[u8]) -> Result<u64, Refusal> {
    let mut value = 0u64;
    for (i, byte) in bytes.iter().enumerate().take(10) {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            *bytes = &bytes[i + 1..];
            return Ok(value);
        }
    }
    Err(malformed("a varint cut short or longer than ten bytes"))
}

#[cfg(test)]
mod tests;
