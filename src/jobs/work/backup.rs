//! `backup`: a backup of the data directory into `backup.dir`, keeping the newest
//! `backup.keep` (docs/operations.md), recorded in `backups` once complete.

use super::super::context::{Done, JobContext, JobError};
use crate::backup::{self, BackupError, history};

pub fn backup(ctx: &JobContext<'_>) -> Result<Done, JobError> {
    let options = backup::Options::configured(ctx.config, None, None).map_err(job_error)?;
    let taken = backup::take(ctx.data_dir(), &options, &|| ctx.now_ms()).map_err(job_error)?;
    let recorded = history::Recorded::of(&taken);
    ctx.write(move |tx| history::record(tx, &recorded))?;
    Ok(Done::described(taken.manifest.files.len() as i64, taken.summary()))
}

fn job_error(err: BackupError) -> JobError {
    match err {
        BackupError::Options(message) => JobError::Configuration(message),
        other => JobError::Stopped(other.to_string()),
    }
}
