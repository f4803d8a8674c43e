//! `evaluate-alerts`: every enabled rule measured, its events moved through the state
//! machine in one transaction, then the transitions sent to their channels and the
//! attempts logged (docs/alerts.md).

use crate::alerts::{channel_configs, channels, store};
use crate::jobs::context::{Done, JobContext, JobError};

pub fn evaluate_alerts(ctx: &JobContext<'_>) -> Result<Done, JobError> {
    let now_ms = ctx.now_ms();
    let transitions = ctx.write(move |tx| store::evaluate(tx, now_ms))?;
    let described = store::describe(&transitions);
    let configured = channel_configs::in_use(&*ctx.reader()?, &ctx.config.alerts)?
        .map_err(|err| JobError::Configuration(format!("{described}; notifications not sent: {err}")))?;
    let (attempts, summary) = channels::notify(&configured, &transitions, &|| ctx.now_ms(), &std::thread::sleep);
    ctx.write(move |tx| channels::log(tx, &attempts))?;
    Ok(Done::described(transitions.len() as i64, summary))
}
