//! Jobs in the server (its scheduler, or a trigger over HTTP): the server's [`Host`]
//! over its own handles (the writer thread for main.db, the indexer thread for the
//! transcript index, the reader pool, the price tables in force, the sign-in
//! throttles in memory), and [`execute`], which runs a job's work on a blocking thread.
//!
//! Invariant: a job answers the rows it touched only when its work is done; any error
//! is the run's failure. Jobs that rewrite or remove partition files take the store's
//! rewrite lock themselves (`events::store`), so they run one at a time here and beside
//! any command of the same data directory.

use std::sync::Arc;

use tokio::runtime::Handle;

use crate::db::{self, DbError};
use crate::deletion::runner::DeletionTarget;
use crate::deletion::server::ServerTarget;
use crate::jobs::context::{Conn, Done, Host, JobContext, JobError};
use crate::jobs::registry::JobSpec;
use crate::pricing::PriceBook;
use crate::state::AppState;

/// Does the job's work; what it did, or why it failed.
pub async fn execute(state: &Arc<AppState>, job: &'static JobSpec) -> Result<Done, JobError> {
    let (state, runtime) = (state.clone(), Handle::current());
    tokio::task::spawn_blocking(move || {
        let host = ServerHost { state: &state, target: ServerTarget::of(&state, runtime) };
        (job.run)(&JobContext { config: &state.config, host: &host })
    })
    .await
    .map_err(|err| JobError::stopped(format!("{} stopped: {err}", job.name)))?
}

/// The server's handles, lent to one run on a blocking thread.
struct ServerHost<'a> {
    state: &'a AppState,
    target: ServerTarget,
}

impl Host for ServerHost<'_> {
    fn target(&self) -> &dyn DeletionTarget {
        &self.target
    }

    fn store(&self) -> &crate::events::store::Store {
        &self.state.events
    }

    fn github_resting_until_ms(&self) -> crate::github::app_client::RestingUntil {
        self.state.github_resting_until_ms.clone()
    }

    fn reader(&self) -> Result<Conn<'_>, DbError> {
        Ok(Conn::Pooled(self.state.readers.get()?))
    }

    fn own_connection(&self) -> Result<Conn<'_>, DbError> {
        Ok(Conn::Owned(db::side_door::open_in_server(&self.state.config.main_db_path())?))
    }

    fn index_transcripts(&self) -> Result<usize, JobError> {
        self.target.runtime.block_on(self.state.indexer.drain_now()).map_err(JobError::Stopped)
    }

    fn prices(&self) -> Result<Arc<PriceBook>, JobError> {
        Ok(self.state.prices.clone())
    }

    fn prune_throttles(&self, now_ms: i64) -> usize {
        self.state.login_throttle.prune(now_ms) + self.state.device_throttle.prune(now_ms)
    }
}
