//! The codec of an event's bulky column, its redacted metadata JSON: compaction
//! writes `metadata_zst` with it and every read of a compacted partition decodes it.
//!
//! Invariant: a blob's first byte says how the rest was compressed (plain zstd, or
//! zstd with the partition's dictionary), so old blobs stay readable when a
//! partition gains a dictionary.

use crate::db::DbError;

/// Blob prefix: how the rest of `metadata_zst` was compressed.
const PLAIN_ZSTD: u8 = 0;
const DICTIONARY_ZSTD: u8 = 1;
const LEVEL: i32 = 9;
const MAX_METADATA_BYTES: usize = 1 << 20;

/// Compresses metadata for one partition, with its dictionary when it has one.
pub struct MetadataCompressor {
    compressor: zstd::bulk::Compressor<'static>,
    prefix: u8,
}

impl MetadataCompressor {
    pub fn new(dictionary: Option<&[u8]>) -> Result<Self, DbError> {
        let compressor = match dictionary {
            Some(dict) => zstd::bulk::Compressor::with_dictionary(LEVEL, dict),
            None => zstd::bulk::Compressor::new(LEVEL),
        }
        .map_err(|source| DbError::Io { context: "zstd compressor".into(), source })?;
        Ok(MetadataCompressor { compressor, prefix: if dictionary.is_some() { DICTIONARY_ZSTD } else { PLAIN_ZSTD } })
    }

    /// The `metadata_zst` blob of `metadata`.
    pub fn compress(&mut self, metadata: &str) -> Result<Vec<u8>, DbError> {
        let frame = self
            .compressor
            .compress(metadata.as_bytes())
            .map_err(|source| DbError::Io { context: "zstd compress".into(), source })?;
        let mut blob = Vec::with_capacity(frame.len() + 1);
        blob.push(self.prefix);
        blob.extend_from_slice(&frame);
        Ok(blob)
    }
}

/// [`decompress_metadata`] for storage code: a blob that does not decompress is a
/// storage error.
pub fn decompress(blob: &[u8], dictionary: Option<&[u8]>) -> Result<String, DbError> {
    decompress_metadata(blob, dictionary)
        .map_err(|cause| DbError::Io { context: "compressed metadata".into(), source: std::io::Error::other(cause) })
}

pub fn decompress_metadata(blob: &[u8], dictionary: Option<&[u8]>) -> Result<String, String> {
    let (kind, frame) = blob.split_first().ok_or("empty compressed metadata")?;
    let bytes = match *kind {
        PLAIN_ZSTD => zstd::bulk::decompress(frame, MAX_METADATA_BYTES).map_err(|e| e.to_string())?,
        DICTIONARY_ZSTD => {
            let dictionary = dictionary.ok_or("compressed with a dictionary the partition does not have")?;
            zstd::bulk::Decompressor::with_dictionary(dictionary)
                .and_then(|mut d| d.decompress(frame, MAX_METADATA_BYTES))
                .map_err(|e| e.to_string())?
        }
        other => return Err(format!("unknown metadata compression {other}")),
    };
    String::from_utf8(bytes).map_err(|e| e.to_string())
}
